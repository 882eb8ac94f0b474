/**
 * The WebAssembly core: loaded once, on first use or on `load()`, and a JS wrapper that
 * speaks its byte protocol (wasm/boundary.h).
 *
 * Importing this module does nothing: `load()` starts fetching and compiling, `ready`
 * settles when that is done. A failed load rejects `ready` and is kept in `coreStatus()`
 * for `support()` and `metrics()`; it never throws where the package is imported.
 *
 * Each event is one record written into the module's shared buffer and one call; the
 * answer, in the same buffer, carries the effects, the next deadline and every resource
 * view that changed, which this wrapper keeps so that queries need no call.
 *
 * @module tab-baton/core
 */
import createBatonCore from '../../build/wasm/baton-core.js';
import { instantiate } from './wasm-loader.js';
import {
  AUTHORITY_NAMES,
  COUNTER_NAMES,
  DEGRADED_NAMES,
  EFFECT_KIND_ALLOCATE_EPOCH,
  EFFECT_KIND_BROADCAST,
  EFFECT_KIND_DEPOSED,
  EFFECT_KIND_ELECTED,
  EFFECT_KIND_FENCE_VERDICT,
  EFFECT_KIND_LEASE_WRITE,
  EFFECT_KIND_LOCK_REQUEST,
  EFFECT_KIND_NAMES,
  EVENT_KIND_EPOCH_ALLOCATED,
  EVENT_KIND_EPOCH_READ,
  EVENT_KIND_FENCE_CHECK,
  EVENT_KIND_JOIN,
  EVENT_KIND_LEASE_READ,
  EVENT_KIND_LEASE_RESULT,
  EVENT_KIND_LIFECYCLE,
  EVENT_KIND_MESSAGE,
  EVENT_KIND_TICK,
  LIFECYCLE_NAMES,
  LIVENESS_NAMES,
  LOCK_MODE_NAMES,
  REASON_NAMES,
  ROLE_NAMES,
} from './constants.js';
import {
  FENCE_QUERY_ADMIT,
  FENCE_QUERY_HIGHEST,
  JOIN_ALLOW_HIDDEN,
  JOIN_NEWEST_APP_ONLY,
  JOIN_OBSERVE_ONLY,
  JOIN_PREFER_VISIBLE,
  JOIN_REQUIRES_NETWORK,
  QUERY_LOG,
  QUERY_METRICS,
  QUERY_PRESENCE,
  RECORD_FIELD_BYTES,
  RECORD_MAGIC,
  RECORD_VERSION,
} from './boundary-constants.js';

/** @type {any} the Emscripten module, once loaded */
let M = null;
/** @type {{state: 'idle'|'loading'|'ready'|'failed', error: string | null}} */
const status = { state: 'idle', error: null };
/** @type {Array<() => void>} */
const waiting = [];
let settle;
/** Resolves once the core is loaded; rejects with an Error naming the fix if it cannot be. */
export const ready = new Promise((resolve, reject) => {
  settle = { resolve, reject };
});
// A failure is reported through support() and metrics(); an app that never awaits `ready`
// must not get an unhandled rejection for it.
ready.catch(() => {});
/** Cores created and not yet deleted (an internal leak check for tests). */
let liveCores = 0;

/** What `load({ wasm })` takes (a Response by its `arrayBuffer`, as Node's and browsers' have). */
function isWasmSource(value) {
  return typeof value === 'string' || value instanceof URL || value instanceof ArrayBuffer || ArrayBuffer.isView(value)
    || value instanceof WebAssembly.Module || typeof value?.arrayBuffer === 'function';
}

/**
 * Starts loading the core, once; later calls return the same promise.
 * @param {{wasm?: string | URL | Response | BufferSource | WebAssembly.Module}} [options]
 *   where the wasm is served, when not next to the script (bundlers that do not copy it)
 * @returns {Promise<void>} `ready`
 */
export function load(options) {
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    throw new TypeError('load: "options" must be an object like { wasm: url }');
  }
  for (const key of Object.keys(options ?? {})) {
    if (key !== 'wasm') throw new TypeError(`load: unknown option "${key}" (known: wasm)`);
  }
  const wasm = options?.wasm;
  if (wasm !== undefined && !isWasmSource(wasm)) {
    throw new TypeError('load: option "wasm" must be a URL (string or URL), a Response, the bytes or a WebAssembly.Module');
  }
  if (status.state !== 'idle') return ready;
  status.state = 'loading';
  const failed = (error) => {
    status.state = 'failed';
    status.error = error.message;
    waiting.length = 0;
    settle.reject(error);
  };
  // The module asks for the instance (wasm/module-pre.js); a failure is ours to report, and
  // the module, which has no error path, just never finishes.
  const instantiateHook = (imports) =>
    new Promise((resolve) => {
      instantiate(wasm, imports).then((instance) => resolve({ instance }), failed);
    });
  createBatonCore({ instantiate: instantiateHook }).then((module) => {
    M = module;
    status.state = 'ready';
    settle.resolve();
    for (const fn of waiting.splice(0)) fn();
  }, failed);
  return ready;
}

/** @returns {{state: 'idle'|'loading'|'ready'|'failed', error: string | null}} */
export function coreStatus() {
  return { ...status };
}

/** @returns {boolean} whether the core is loaded. */
export function isLoaded() {
  return M !== null;
}

/**
 * Runs `fn` once the core is loaded: now if it is, else when it is (never, if it fails).
 * Starts loading if nothing has yet.
 */
export function whenLoaded(fn) {
  if (M) {
    fn();
    return;
  }
  waiting.push(fn);
  load();
}

// ------------------------------------------------------------------ the shared buffer

let heap = null; // Uint8Array over wasm memory (replaced when the memory grows)
let data = null; // DataView over the same
let io = 0; // the buffer's address
let pos = 0;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Starts a record at the buffer. */
function begin() {
  if (heap !== M.heap()) {
    heap = M.heap();
    data = new DataView(heap.buffer);
    io = M.buffer();
  }
  pos = io;
  heap[pos++] = RECORD_MAGIC;
  heap[pos++] = RECORD_VERSION;
}
const length = () => pos - io;
function u8(v) {
  heap[pos++] = v;
}
function u16(v) {
  heap[pos++] = v & 0xff;
  heap[pos++] = v >>> 8;
}
function u32(v) {
  data.setUint32(pos, v, true);
  pos += 4;
}
function f64(v) {
  data.setFloat64(pos, v, true);
  pos += 8;
}
function str(s) {
  const at = pos;
  pos += 2;
  // Strings are bounded by option validation; 3 bytes per UTF-16 unit is the worst case.
  // Never more than the length field holds: a longer string (a caller that skipped the
  // validation) is cut, and the core refuses it as over its limit, inside the buffer.
  const { written } = encoder.encodeInto(s, heap.subarray(pos, pos + Math.min(3 * s.length, RECORD_FIELD_BYTES)));
  heap[at] = written & 0xff;
  heap[at + 1] = written >>> 8;
  pos += written;
}
/** A message longer than a field holds is cut; its head is still oversized for the core. */
function bytes(b) {
  const n = Math.min(b.length, RECORD_FIELD_BYTES);
  u16(n);
  heap.set(n === b.length ? b : b.subarray(0, n), pos);
  pos += n;
}
function lease(rec) {
  if (!rec) {
    u8(0);
    return;
  }
  u8(1);
  str(rec.owner);
  u32(rec.generation >>> 0);
  f64(rec.epoch);
  f64(rec.expiresMs);
  f64(rec.takeoverMs);
}

// Reading an answer: `at` walks it.
let at = 0;
/** Starts reading an answer of `n` bytes; -1 means the core refused the record (a bug here). */
function answer(n) {
  if (n < 0) throw new Error('tab-baton: the core refused a record (internal error)');
  // A step may grow wasm memory, which replaces the views.
  if (heap !== M.heap()) {
    heap = M.heap();
    data = new DataView(heap.buffer);
  }
  at = io + 2;
}
const r8 = () => heap[at++];
function r16() {
  const v = heap[at] | (heap[at + 1] << 8);
  at += 2;
  return v;
}
function r32() {
  const v = data.getUint32(at, true);
  at += 4;
  return v;
}
function rf64() {
  const v = data.getFloat64(at, true);
  at += 8;
  return v;
}
function rstr() {
  const n = r16();
  if (n === 0) return '';
  const s = decoder.decode(heap.subarray(at, at + n));
  at += n;
  return s;
}
function rlist(n, read) {
  const out = new Array(n);
  for (let i = 0; i < n; i += 1) out[i] = read();
  return out;
}
function rlease() {
  if (r8() === 0) return null;
  return { owner: rstr(), generation: r32(), epoch: rf64(), expiresMs: rf64(), takeoverMs: rf64() };
}

const registry =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry((handle) => {
        liveCores -= 1;
        M.close(handle);
      })
    : null;

/**
 * @typedef {object} Effect One thing the core asks the glue to do.
 * @property {'broadcast'|'lock-request'|'lock-release'|'allocate-epoch'|'lease-try'|'elected'|'deposed'|'leader-changed'|'lease-write'|'fence-verdict'} kind
 * @property {string} resource Empty for `broadcast`.
 * @property {Uint8Array} [bytes] `broadcast`: the frame (a copy, owned by the caller).
 * @property {'queue'|'steal'} [mode] `lock-request`.
 * @property {number} [floor] `allocate-epoch`: the new epoch must exceed this.
 * @property {LeaseRecord} [record] `lease-write`: the record to write.
 * @property {boolean} [unread] `lease-write`: in answer to no `leaseRead`: write it in a
 *   transaction of its own that reads nothing, and commit at once (a closing page's release).
 * @property {boolean} [admitted] `fence-verdict`: the guarded effect may run.
 * @property {number} [highest] `fence-verdict`: the highest epoch admitted for the resource.
 * @property {number} [epoch] `elected`, `deposed`: the term.
 * @property {string} [reason] `elected`, `deposed`: why.
 * @property {string} [degraded] `elected`, `deposed`: why the term's epoch may repeat an
 *   earlier one ('none' when it cannot).
 *
 * @typedef {object} LeaseRecord The lease record kept in IndexedDB, one per resource.
 * @property {string} owner
 * @property {number} generation
 * @property {number} epoch
 * @property {number} expiresMs
 * @property {number} takeoverMs from then on another tab may take the record over (its owner
 *   did not renew it in time); the owner no longer leads on it
 */

const NO_EFFECTS = Object.freeze([]);

/** One tab's election core. Internal: never handed to users. Needs the core loaded. */
export class Core {
  /**
   * @param {object} config id, generation, appVersion, capabilities, authority (AUTHORITY_*
   *   in constants.js), startMs, seed; and heartbeatMs, suspectMs, leaseMs, each of which
   *   keeps the core's default (election.h Config) when missing
   * @param {() => number} [wallClock] wall-clock ms; the times given to events are monotonic
   */
  constructor(config, wallClock = Date.now) {
    if (!M) throw new Error('tab-baton: the WebAssembly core is not loaded yet; await load() first');
    begin();
    str(config.id);
    u32(config.generation);
    str(config.appVersion);
    u8(config.capabilities.length);
    for (const c of config.capabilities) str(c);
    u8(config.authority);
    f64(config.heartbeatMs ?? NaN);
    f64(config.suspectMs ?? NaN);
    f64(config.leaseMs ?? NaN);
    f64(config.startMs);
    u32(config.seed >>> 0);
    this.handle = M.open(length());
    /** Read beside every monotonic `now` given (see `event`). */
    this.wall = wallClock;
    if (this.handle === 0) throw new Error('tab-baton: the core refused its configuration (internal error)');
    /** @type {Map<string, object>} the latest view of each joined resource */
    this.views_ = new Map();
    this.deadline_ = Infinity;
    this.authorityCode_ = config.authority;
    /** Degraded in types.h: the latest storage failure (0: none). */
    this.degradation_ = 0;
    liveCores += 1;
    registry?.register(this, this.handle, this);
  }

  /** Frees the C++ object. Idempotent; later steps return no effects. */
  dispose() {
    if (!this.handle) return;
    registry?.unregister(this);
    M.close(this.handle);
    this.handle = 0;
    liveCores -= 1;
  }

  /** Sends the event record just written; reads the effects and the changed views. */
  run() {
    answer(M.step(this.handle, length()));
    this.deadline_ = rf64();
    this.authorityCode_ = r8();
    this.degradation_ = r8();
    const count = r16();
    const effects = count === 0 ? NO_EFFECTS : new Array(count);
    for (let i = 0; i < count; i += 1) {
      const kind = r8();
      /** @type {Effect} */
      const effect = { kind: EFFECT_KIND_NAMES[kind], resource: rstr() };
      switch (kind) {
        case EFFECT_KIND_BROADCAST: {
          const n = r16();
          effect.bytes = heap.slice(at, at + n); // a copy: the buffer is reused by the next call
          at += n;
          break;
        }
        case EFFECT_KIND_LOCK_REQUEST:
          effect.mode = LOCK_MODE_NAMES[r8()];
          break;
        case EFFECT_KIND_ALLOCATE_EPOCH:
          effect.floor = rf64();
          break;
        case EFFECT_KIND_ELECTED:
        case EFFECT_KIND_DEPOSED:
          effect.epoch = rf64();
          effect.reason = REASON_NAMES[r8()];
          effect.degraded = DEGRADED_NAMES[r8()];
          break;
        case EFFECT_KIND_LEASE_WRITE:
          effect.unread = r8() === 1;
          effect.record = rlease();
          break;
        case EFFECT_KIND_FENCE_VERDICT:
          effect.admitted = r8() === 1;
          effect.highest = rf64();
          break;
        default:
          break;
      }
      effects[i] = effect;
    }
    for (let n = r8(); n > 0; n -= 1) {
      const present = r8() === 1;
      const resource = rstr();
      if (!present) {
        this.views_.delete(resource);
        continue;
      }
      this.views_.set(resource, {
        role: ROLE_NAMES[r8()],
        reason: REASON_NAMES[r8()],
        epoch: rf64(),
        leader: rstr(),
        leaderEpoch: rf64(),
        leaderSince: rf64(),
        degraded: DEGRADED_NAMES[r8()],
        validUntil: rf64(),
        validUntilWall: rf64(),
      });
    }
    return effects;
  }

  /**
   * Starts an event record of `kind` at `now` (monotonic ms: local deadlines) and the wall
   * clock read now (lease records, ages); false when the core is gone.
   */
  event(kind, now) {
    if (!this.handle) return false;
    begin();
    u8(kind);
    f64(now);
    f64(this.wall());
    return true;
  }

  // Events. Each returns the step's effects; a disposed core returns none.

  tick(now) {
    return this.event(EVENT_KIND_TICK, now) ? this.run() : NO_EFFECTS;
  }

  /** @param {Uint8Array} frame a frame from the channel */
  message(now, frame) {
    if (!this.event(EVENT_KIND_MESSAGE, now)) return NO_EFFECTS;
    bytes(frame);
    return this.run();
  }

  /**
   * @param {{requiredCapability: string, allowHidden: boolean, preferVisible: boolean,
   *   requiresNetwork: boolean, newestAppOnly: boolean, observeOnly?: boolean}} policy
   */
  join(now, resource, policy) {
    if (!this.event(EVENT_KIND_JOIN, now)) return NO_EFFECTS;
    str(resource);
    str(policy.requiredCapability ?? '');
    u8((policy.allowHidden ? JOIN_ALLOW_HIDDEN : 0) | (policy.preferVisible ? JOIN_PREFER_VISIBLE : 0)
      | (policy.requiresNetwork ? JOIN_REQUIRES_NETWORK : 0) | (policy.newestAppOnly ? JOIN_NEWEST_APP_ONLY : 0)
      | (policy.observeOnly ? JOIN_OBSERVE_ONLY : 0));
    return this.run();
  }

  /**
   * @param {number} kind an event about one resource (constants.js): EVENT_KIND_LEAVE,
   *   _LOCK_GRANTED, _LOCK_LOST, _LOCK_UNAVAILABLE, _LEASE_FAILED, _LEASE_ABORTED, _ABDICATE
   *   or _FORCE_ELECTION
   */
  resourceEvent(kind, now, resource) {
    if (!this.event(kind, now)) return NO_EFFECTS;
    str(resource);
    return this.run();
  }

  epochAllocated(now, resource, epoch, durable) {
    if (!this.event(EVENT_KIND_EPOCH_ALLOCATED, now)) return NO_EFFECTS;
    str(resource);
    f64(epoch);
    u8(durable ? 1 : 0);
    return this.run();
  }

  /** The epoch counter of `resource`, read outside an allocation: a confirmed floor. */
  epochRead(now, resource, epoch) {
    if (!this.event(EVENT_KIND_EPOCH_READ, now)) return NO_EFFECTS;
    str(resource);
    f64(epoch);
    return this.run();
  }

  /**
   * Inside the read-write transaction of a `lease-try`: the record read there. The step
   * answers with the `lease-write` to apply to that transaction, or none (write nothing).
   * A new term's epoch is above `counter`, the epoch counter read in the same transaction.
   * @param {LeaseRecord | null} record
   * @param {number} counter
   */
  leaseRead(now, resource, record, counter) {
    if (!this.event(EVENT_KIND_LEASE_READ, now)) return NO_EFFECTS;
    str(resource);
    lease(record);
    f64(counter);
    return this.run();
  }

  /**
   * A guarded effect of term `epoch` (0: none) asks this tab's fence; the step answers with a
   * `fence-verdict`.
   */
  fenceCheck(now, resource, epoch) {
    if (!this.event(EVENT_KIND_FENCE_CHECK, now)) return NO_EFFECTS;
    str(resource);
    f64(epoch);
    return this.run();
  }

  /** @param {LeaseRecord | null} record the record now in the store */
  leaseResult(now, resource, record) {
    if (!this.event(EVENT_KIND_LEASE_RESULT, now)) return NO_EFFECTS;
    str(resource);
    lease(record);
    return this.run();
  }

  /** @param {'active'|'hidden'|'frozen'|'restored'|'closing'} state */
  lifecycle(now, state) {
    if (!this.event(EVENT_KIND_LIFECYCLE, now)) return NO_EFFECTS;
    u8(LIFECYCLE_NAMES.indexOf(state));
    return this.run();
  }

  /** @param {number} kind EVENT_KIND_TICK, _ONLINE, _OFFLINE, _SESSION_CHANGED or _DISPOSE (constants.js) */
  plainEvent(kind, now) {
    return this.event(kind, now) ? this.run() : NO_EFFECTS;
  }

  /** @returns {number} when the next `tick` is due (Infinity: none). */
  nextDeadline() {
    return this.handle ? this.deadline_ : Infinity;
  }

  /** Starts a query record; false when the core is gone. */
  query(kind) {
    if (!this.handle) return false;
    begin();
    u8(kind);
    return true;
  }

  // Queries. The views come from the last step; the rest asks the core.

  view(resource) {
    if (!this.handle) return null;
    return this.views_.get(resource) ?? { role: 'follower', reason: 'none', epoch: 0, leader: '', leaderEpoch: 0, leaderSince: 0, degraded: 'none', validUntil: Infinity, validUntilWall: Infinity };
  }

  presence(now) {
    if (!this.query(QUERY_PRESENCE)) return [];
    f64(now);
    f64(this.wall());
    answer(M.ask(this.handle, length()));
    return rlist(r16(), () => ({
      id: rstr(),
      generation: r32(),
      lifecycle: LIFECYCLE_NAMES[r8()],
      liveness: LIVENESS_NAMES[r8()],
      appVersion: rstr(),
      capabilities: rlist(r8(), rstr),
      lastSeen: rf64(),
      lastProgress: rf64(),
    }));
  }

  metrics() {
    if (!this.query(QUERY_METRICS)) return null;
    answer(M.ask(this.handle, length()));
    const out = {};
    for (const name of COUNTER_NAMES) out[name] = rf64();
    const reasons = {};
    for (const name of REASON_NAMES) {
      const n = rf64();
      if (n) reasons[name] = n;
    }
    out.stepDownReasons = reasons;
    return out;
  }

  log() {
    if (!this.query(QUERY_LOG)) return [];
    answer(M.ask(this.handle, length()));
    return rlist(r16(), () => ({
      at: rf64(),
      resource: rstr(),
      from: ROLE_NAMES[r8()],
      to: ROLE_NAMES[r8()],
      reason: REASON_NAMES[r8()],
      epoch: rf64(),
    }));
  }

  /** @returns {'web-locks'|'lease'|'broadcast'} the authority in use (lease may fall back to broadcast). */
  authority() {
    return AUTHORITY_NAMES[this.authorityCode_];
  }

  degraded() {
    return this.degradation_ !== 0;
  }

  /** @returns {string} the latest storage failure's kind ('none', 'not-durable', ...: types.cc). */
  degradationKind() {
    return DEGRADED_NAMES[this.degradation_];
  }
}

/** Frees the fences dropped undisposed; made with the first one, so an app that makes none does not carry it. */
let fenceRegistry = null;

/**
 * A fence of its own in the core (tab-baton's Fence): the core's comparison (core/fence.h),
 * without an election core. Internal: never handed to users. Needs the core loaded.
 */
export class FenceTable {
  constructor() {
    if (!M) throw new Error('tab-baton: the WebAssembly core is not loaded yet; await load() first');
    if (!fenceRegistry && typeof FinalizationRegistry === 'function') fenceRegistry = new FinalizationRegistry((handle) => M.fenceClose(handle));
    this.handle = M.fenceOpen();
    fenceRegistry?.register(this, this.handle, this);
  }

  /** Frees the C++ object. Idempotent. */
  dispose() {
    if (!this.handle) return;
    fenceRegistry?.unregister(this);
    M.fenceClose(this.handle);
    this.handle = 0;
  }

  /** Starts a fence query record on `resource`. */
  query(kind, resource) {
    begin();
    u8(kind);
    str(resource);
  }

  /** @returns {boolean} true when `epoch` is at least the highest seen for `resource` (then it becomes the highest). */
  admit(resource, epoch) {
    this.query(FENCE_QUERY_ADMIT, resource);
    f64(epoch);
    answer(M.fenceAsk(this.handle, length()));
    return r8() === 1;
  }

  /** @returns {number} the highest epoch admitted for `resource` (0: none). */
  highest(resource) {
    this.query(FENCE_QUERY_HIGHEST, resource);
    answer(M.fenceAsk(this.handle, length()));
    return rf64();
  }
}

/**
 * Leak checks for tests (exported as `__internal` from the main entry, not documented API).
 */
export const internals = {
  /** Cores created and not yet deleted. */
  liveCores: () => liveCores,
  /** Sessions open in the core (boundary.cc): must match liveCores. */
  coreSessions: () => M.live(),
  /** Size of the WebAssembly heap in bytes (it only grows: a leak shows here). */
  heapBytes: () => M.heap().length,
  /** The Emscripten module (bench/wasm-throughput.mjs times its boundary call alone). */
  module: () => M,
};
