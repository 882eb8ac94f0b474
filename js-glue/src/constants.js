// Generated from the C++ core by tests/constants/constants_js.cc: do not edit.
// Regenerate: build/native/tests/constants_js --write js-glue/src/constants.js

/** Authority in wasm/core/types.h. */
export const AUTHORITY_WEB_LOCKS = 0;
export const AUTHORITY_LEASE = 1;
export const AUTHORITY_BROADCAST = 2;
export const AUTHORITY_NAMES = [
  'web-locks',
  'lease',
  'broadcast',
];

/** Lifecycle in wasm/core/types.h. */
export const LIFECYCLE_ACTIVE = 0;
export const LIFECYCLE_HIDDEN = 1;
export const LIFECYCLE_FROZEN = 2;
export const LIFECYCLE_RESTORED = 3;
export const LIFECYCLE_CLOSING = 4;
export const LIFECYCLE_NAMES = [
  'active',
  'hidden',
  'frozen',
  'restored',
  'closing',
];

/** Liveness in wasm/core/types.h. */
export const LIVENESS_ALIVE = 0;
export const LIVENESS_SUSPECT = 1;
export const LIVENESS_EXPIRED = 2;
export const LIVENESS_REMOVED = 3;
export const LIVENESS_NAMES = [
  'alive',
  'suspect',
  'expired',
  'removed',
];

/** Role in wasm/core/types.h. */
export const ROLE_FOLLOWER = 0;
export const ROLE_CANDIDATE = 1;
export const ROLE_LEADER = 2;
export const ROLE_STEPPING_DOWN = 3;
export const ROLE_NAMES = [
  'follower',
  'candidate',
  'leader',
  'stepping-down',
];

/** Reason in wasm/core/types.h. */
export const REASON_NONE = 0;
export const REASON_STARTUP = 1;
export const REASON_NOT_ELIGIBLE = 2;
export const REASON_LOCK_GRANTED = 3;
export const REASON_LOCK_LOST = 4;
export const REASON_LEASE_ACQUIRED = 5;
export const REASON_LEASE_LOST = 6;
export const REASON_LEASE_EXPIRED = 7;
export const REASON_TAKEOVER = 8;
export const REASON_STEAL = 9;
export const REASON_EPOCH_READY = 10;
export const REASON_FROZEN = 11;
export const REASON_CLOSING = 12;
export const REASON_HIDDEN = 13;
export const REASON_OFFLINE = 14;
export const REASON_APP_VERSION = 15;
export const REASON_SESSION_CHANGED = 16;
export const REASON_NEWER_EPOCH = 17;
export const REASON_CONFLICT = 18;
export const REASON_STALLED = 19;
export const REASON_ABDICATE = 20;
export const REASON_PREFER_VISIBLE = 21;
export const REASON_LEADER_GOODBYE = 22;
export const REASON_DISPOSE = 23;
export const REASON_STORAGE_FAILED = 24;
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
export const DEGRADED_NONE = 0;
export const DEGRADED_NOT_DURABLE = 1;
export const DEGRADED_STORAGE_TIMEOUT = 2;
export const DEGRADED_STORE_REGRESSED = 3;
export const DEGRADED_BEHIND_CLAIM = 4;
export const DEGRADED_STORAGE_FAILED = 5;
export const DEGRADED_NAMES = [
  'none',
  'not-durable',
  'storage-timeout',
  'store-regressed',
  'behind-claim',
  'storage-failed',
];

/** EventKind in wasm/core/election.h. */
export const EVENT_KIND_TICK = 0;
export const EVENT_KIND_MESSAGE = 1;
export const EVENT_KIND_JOIN = 2;
export const EVENT_KIND_LEAVE = 3;
export const EVENT_KIND_LOCK_GRANTED = 4;
export const EVENT_KIND_LOCK_LOST = 5;
export const EVENT_KIND_LOCK_UNAVAILABLE = 6;
export const EVENT_KIND_EPOCH_ALLOCATED = 7;
export const EVENT_KIND_LEASE_RESULT = 8;
export const EVENT_KIND_LEASE_FAILED = 9;
export const EVENT_KIND_LIFECYCLE = 10;
export const EVENT_KIND_ONLINE = 11;
export const EVENT_KIND_OFFLINE = 12;
export const EVENT_KIND_SESSION_CHANGED = 13;
export const EVENT_KIND_ABDICATE = 14;
export const EVENT_KIND_FORCE_ELECTION = 15;
export const EVENT_KIND_DISPOSE = 16;
export const EVENT_KIND_LEASE_ABORTED = 17;
export const EVENT_KIND_LEASE_READ = 18;
export const EVENT_KIND_FENCE_CHECK = 19;
export const EVENT_KIND_EPOCH_READ = 20;
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
  'lease-read',
  'fence-check',
  'epoch-read',
];

/** EffectKind in wasm/core/election.h. */
export const EFFECT_KIND_BROADCAST = 0;
export const EFFECT_KIND_LOCK_REQUEST = 1;
export const EFFECT_KIND_LOCK_RELEASE = 2;
export const EFFECT_KIND_ALLOCATE_EPOCH = 3;
export const EFFECT_KIND_LEASE_TRY = 4;
export const EFFECT_KIND_ELECTED = 5;
export const EFFECT_KIND_DEPOSED = 6;
export const EFFECT_KIND_LEADER_CHANGED = 7;
export const EFFECT_KIND_LEASE_WRITE = 8;
export const EFFECT_KIND_FENCE_VERDICT = 9;
export const EFFECT_KIND_NAMES = [
  'broadcast',
  'lock-request',
  'lock-release',
  'allocate-epoch',
  'lease-try',
  'elected',
  'deposed',
  'leader-changed',
  'lease-write',
  'fence-verdict',
];

/** LockMode in wasm/core/election.h. */
export const LOCK_MODE_QUEUE = 0;
export const LOCK_MODE_STEAL = 1;
export const LOCK_MODE_NAMES = [
  'queue',
  'steal',
];

/** wire::Kind in wasm/core/wire.h. */
export const FRAME_KIND_HELLO = 1;
export const FRAME_KIND_PRESENCE = 2;
export const FRAME_KIND_HEARTBEAT = 3;
export const FRAME_KIND_GOODBYE = 4;
export const FRAME_KIND_ABDICATE_REQUEST = 5;
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
export const PROTOCOL_VERSION = 2; // wire::kProtocolVersion
export const MAX_FRAME_BYTES = 1024; // wire::kMaxFrameBytes
export const MAX_EPOCH = 9007199254740991; // kMaxEpoch: the largest epoch exact as a double
export const PLAUSIBLE_EPOCH = 1099511627776; // kPlausibleEpoch: claims at or above it are forged

// Config's defaults in wasm/core/election.h.
export const DEFAULT_HEARTBEAT_MS = 1000; // heartbeat_ms
export const DEFAULT_SUSPECT_MS = 3000; // suspect_ms
export const DEFAULT_LEASE_MS = 5000; // lease_ms
export const DEFAULT_STEAL_GRACE_MS = 200; // steal_grace_ms
export const DEFAULT_RANK_STAGGER_MS = 150; // rank_stagger_ms
export const DEFAULT_TRIGGER_JITTER_MS = 10; // trigger_jitter_ms
export const DEFAULT_BACKOFF_BASE_MS = 250; // backoff_base_ms
export const DEFAULT_BACKOFF_MAX_MS = 10000; // backoff_max_ms
export const DEFAULT_STORAGE_TIMEOUT_MS = 3000; // storage_timeout_ms
export const DEFAULT_LOG_CAPACITY = 128; // kLogCapacity
export const SUSPECT_HEARTBEATS = 3; // suspect_ms / heartbeat_ms: the suspect timeout in heartbeats
