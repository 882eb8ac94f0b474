// Generated from the C++ core by tests/constants/constants_js.cc: do not edit.
// Regenerate: build/native/tests/constants_js --write js-glue/src/constants.js

/** Authority in wasm/core/types.h. */
export const Authority = {
  web_locks: 0,
  lease: 1,
  broadcast: 2,
};
export const AUTHORITY_NAMES = [
  'web-locks',
  'lease',
  'broadcast',
];

/** Lifecycle in wasm/core/types.h. */
export const Lifecycle = {
  active: 0,
  hidden: 1,
  frozen: 2,
  restored: 3,
  closing: 4,
};
export const LIFECYCLE_NAMES = [
  'active',
  'hidden',
  'frozen',
  'restored',
  'closing',
];

/** Liveness in wasm/core/types.h. */
export const Liveness = {
  alive: 0,
  suspect: 1,
  expired: 2,
  removed: 3,
};
export const LIVENESS_NAMES = [
  'alive',
  'suspect',
  'expired',
  'removed',
];

/** Role in wasm/core/types.h. */
export const Role = {
  follower: 0,
  candidate: 1,
  leader: 2,
  stepping_down: 3,
};
export const ROLE_NAMES = [
  'follower',
  'candidate',
  'leader',
  'stepping-down',
];

/** Reason in wasm/core/types.h. */
export const Reason = {
  none: 0,
  startup: 1,
  not_eligible: 2,
  lock_granted: 3,
  lock_lost: 4,
  lease_acquired: 5,
  lease_lost: 6,
  lease_expired: 7,
  takeover: 8,
  steal: 9,
  epoch_ready: 10,
  frozen: 11,
  closing: 12,
  hidden: 13,
  offline: 14,
  app_version: 15,
  session_changed: 16,
  newer_epoch: 17,
  conflict: 18,
  stalled: 19,
  abdicate: 20,
  prefer_visible: 21,
  leader_goodbye: 22,
  dispose: 23,
  storage_failed: 24,
};
export const REASON_NAMES = [
  'none',
  'startup',
  'not-eligible',
  'lock-granted',
  'lock-lost',
  'lease-acquired',
  'lease-lost',
  'lease-expired',
  'takeover',
  'steal',
  'epoch-ready',
  'frozen',
  'closing',
  'hidden',
  'offline',
  'app-version',
  'session-changed',
  'newer-epoch',
  'conflict',
  'stalled',
  'abdicate',
  'prefer-visible',
  'leader-goodbye',
  'dispose',
  'storage-failed',
];

/** Degraded in wasm/core/types.h. */
export const Degraded = {
  none: 0,
  not_durable: 1,
  storage_timeout: 2,
  store_regressed: 3,
  behind_claim: 4,
  storage_failed: 5,
};
export const DEGRADED_NAMES = [
  'none',
  'not-durable',
  'storage-timeout',
  'store-regressed',
  'behind-claim',
  'storage-failed',
];

/** EventKind in wasm/core/node.h. */
export const EventKind = {
  tick: 0,
  message: 1,
  join: 2,
  leave: 3,
  lock_granted: 4,
  lock_lost: 5,
  lock_unavailable: 6,
  epoch_allocated: 7,
  lease_result: 8,
  lease_failed: 9,
  lifecycle: 10,
  online: 11,
  offline: 12,
  session_changed: 13,
  abdicate: 14,
  force_election: 15,
  dispose: 16,
  lease_aborted: 17,
};
export const EVENT_KIND_NAMES = [
  'tick',
  'message',
  'join',
  'leave',
  'lock-granted',
  'lock-lost',
  'lock-unavailable',
  'epoch-allocated',
  'lease-result',
  'lease-failed',
  'lifecycle',
  'online',
  'offline',
  'session-changed',
  'abdicate',
  'force-election',
  'dispose',
  'lease-aborted',
];

/** EffectKind in wasm/core/node.h. */
export const EffectKind = {
  broadcast: 0,
  lock_request: 1,
  lock_release: 2,
  allocate_epoch: 3,
  lease_try: 4,
  elected: 5,
  deposed: 6,
  leader_changed: 7,
};
export const EFFECT_KIND_NAMES = [
  'broadcast',
  'lock-request',
  'lock-release',
  'allocate-epoch',
  'lease-try',
  'elected',
  'deposed',
  'leader-changed',
];

/** LockMode in wasm/core/node.h. */
export const LockMode = {
  queue: 0,
  steal: 1,
};
export const LOCK_MODE_NAMES = [
  'queue',
  'steal',
];

/** wire::Kind in wasm/core/wire.h. */
export const FrameKind = {
  hello: 1,
  presence: 2,
  heartbeat: 3,
  goodbye: 4,
  abdicate_request: 5,
};
export const FRAME_KIND_NAMES = [
  null,
  'hello',
  'presence',
  'heartbeat',
  'goodbye',
  'abdicate-request',
];

/** The counters of the core's metrics, in the order the boundary writes them (BATON_COUNTERS in wasm/boundary.h). */
export const COUNTER_NAMES = [
  'framesSent',
  'framesReceived',
  'droppedMalformed',
  'droppedOversized',
  'droppedForeignVersion',
  'droppedStaleGeneration',
  'droppedOldFrame',
  'droppedForgedEpoch',
  'droppedTableFull',
  'duplicateId',
  'ticks',
  'elections',
  'triggers',
  'termsWon',
  'stepDowns',
  'steals',
  'abdicateRequestsSent',
  'lockRequests',
  'leaseAttempts',
  'backoffs',
  'epochConflicts',
  'clockJumps',
  'storageFailures',
];

/** What the wire format carries (wasm/core/wire.h); longer names are rejected up front. */
export const LIMITS = {
  idBytes: 64, // kMaxIdBytes
  resourceBytes: 48, // kMaxResourceBytes
  capabilityBytes: 32, // kMaxCapabilityBytes
  capabilities: 8, // kMaxCapabilities
  versionBytes: 32, // kMaxVersionBytes
  claims: 8, // kMaxClaims: resources one tab can lead at once
};
export const PROTOCOL_VERSION = 1; // wire::kProtocolVersion
export const MAX_FRAME_BYTES = 1024; // wire::kMaxFrameBytes
export const MAX_EPOCH = 9007199254740991; // kMaxEpoch: the largest epoch exact as a double
export const PLAUSIBLE_EPOCH = 1099511627776; // kPlausibleEpoch: claims at or above it are forged

// Config's defaults in wasm/core/node.h.
export const DEFAULT_HEARTBEAT_MS = 1000; // heartbeat_ms
export const DEFAULT_SUSPECT_MS = 3000; // suspect_ms
export const DEFAULT_LEASE_MS = 5000; // lease_ms
export const DEFAULT_STEAL_GRACE_MS = 200; // steal_grace_ms
export const DEFAULT_RANK_STAGGER_MS = 150; // rank_stagger_ms
export const DEFAULT_TRIGGER_JITTER_MS = 10; // trigger_jitter_ms
export const DEFAULT_BACKOFF_BASE_MS = 250; // backoff_base_ms
export const DEFAULT_BACKOFF_MAX_MS = 10000; // backoff_max_ms
export const DEFAULT_LOG_CAPACITY = 128; // kLogCapacity
