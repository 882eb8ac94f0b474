// Generated from the C++ core by tests/constants/constants_js.cc: do not edit.
// Regenerate: build/native/tests/constants_js --write js-glue/src/constants.js

/** The record header in wasm/boundary.h (kMagic, kVersion), and its longest string or message (kMaxFieldBytes). */
export const RECORD_MAGIC = 187;
export const RECORD_VERSION = 1;
export const RECORD_FIELD_BYTES = 65535;

/** Query in wasm/boundary.h. */
export const QUERY_PRESENCE = 0;
export const QUERY_METRICS = 1;
export const QUERY_LOG = 2;

/** FenceQuery in wasm/boundary.h. */
export const FENCE_QUERY_ADMIT = 0;
export const FENCE_QUERY_HIGHEST = 1;

/** JoinFlag in wasm/boundary.h: a join's policy, one bit each. */
export const JOIN_ALLOW_HIDDEN = 1;
export const JOIN_PREFER_VISIBLE = 2;
export const JOIN_REQUIRES_NETWORK = 4;
export const JOIN_NEWEST_APP_ONLY = 8;
export const JOIN_OBSERVE_ONLY = 16;
