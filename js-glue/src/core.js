/**
 * The WebAssembly core, loaded once, and a JS wrapper around its embind `Core` class.
 *
 * The embind members are raw (`_tick`, `_effectKind`, ...). This wrapper turns each step
 * into a plain array of effect objects, so nothing outside this file touches an embind
 * handle. The effects of a step live in wasm memory only until the next step, which is
 * why they are copied out at once (`bytes` with `.slice()`).
 *
 * Every `Core` is deleted by its owner (`dispose()`); a FinalizationRegistry deletes the
 * ones an owner forgot, as a backstop only (it may run late or never).
 *
 * @module tab-baton/core
 */
import createBatonCore from '../../build/wasm/baton-core.js';
import { LOCK_MODE_NAMES } from './constants.js';

/** @type {any} the Emscripten module, once loaded */
let wasm = null;
/** @type {Promise<void> | null} */
let loading = null;
/** Cores created and not yet deleted (an internal leak check for tests). */
let liveCores = 0;

/**
 * Loads and instantiates the WebAssembly core. Safe to call many times: the module is
 * instantiated once and every call returns the same promise.
 * @returns {Promise<void>}
 */
export function load() {
  if (!loading) {
    loading = createBatonCore().then((module) => {
      wasm = module;
    });
    // A failed load may be retried (e.g. a transient CSP or memory error).
    loading.catch(() => {
      loading = null;
    });
  }
  return loading;
}

/** @returns {boolean} whether `load()` has completed. */
export function isLoaded() {
  return wasm !== null;
}

function module() {
  if (!wasm) throw new Error('tab-baton: the WebAssembly core is not loaded yet; await load() first');
  return wasm;
}

const registry =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry((raw) => {
        liveCores -= 1;
        try {
          raw.delete();
        } catch {
          // Already deleted: nothing to free.
        }
      })
    : null;

/** EventKind in wasm/core/node.h (numeric values cross the boundary). */
const EVENT = {
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
};

/** EffectKind in node.h, by numeric value. */
const EFFECTS = ['broadcast', 'lock-request', 'lock-release', 'allocate-epoch', 'lease-try', 'elected', 'deposed', 'leader-changed'];
/** Lifecycle in types.h. */
export const LIFECYCLE = { active: 0, hidden: 1, frozen: 2, restored: 3, closing: 4 };
/** Authority in types.h. */
export const AUTHORITIES = ['web-locks', 'lease', 'broadcast'];

/**
 * @typedef {object} Effect One thing the core asks the glue to do.
 * @property {'broadcast'|'lock-request'|'lock-release'|'allocate-epoch'|'lease-try'|'elected'|'deposed'|'leader-changed'} kind
 * @property {string} resource Empty for `broadcast`.
 * @property {Uint8Array} [bytes] `broadcast`: the frame (a copy, owned by the caller).
 * @property {'queue'|'steal'} [mode] `lock-request`.
 * @property {number} [floor] `allocate-epoch`: the new epoch must exceed this.
 * @property {number} [epoch] `elected`, `deposed`: the term.
 * @property {string} [reason] `elected`, `deposed`: why.
 *
 * @typedef {object} LeaseRecord The lease record kept in IndexedDB, one per resource.
 * @property {string} owner
 * @property {number} generation
 * @property {number} epoch
 * @property {number} expiresMs
 */

/** One tab's election core. Internal: never handed to users. */
export class Core {
  /**
   * @param {object} config `Config` of node.h in camelCase (see wasm/bindings.cc).
   */
  constructor(config) {
    const M = module();
    this.raw = new M.Core(config);
    liveCores += 1;
    registry?.register(this, this.raw, this);
  }

  /** Deletes the C++ object. Idempotent; later steps return no effects. */
  dispose() {
    if (!this.raw) return;
    registry?.unregister(this);
    this.raw.delete();
    this.raw = null;
    liveCores -= 1;
  }

  /** Copies the effects of the step that just ran into plain objects. */
  effects(count) {
    const raw = this.raw;
    const out = new Array(count);
    for (let i = 0; i < count; i += 1) {
      const kind = raw._effectKind(i);
      /** @type {Effect} */
      const effect = { kind: EFFECTS[kind], resource: raw._effectResource(i) };
      switch (kind) {
        case 0:
          effect.bytes = raw._effectBytes(i).slice(); // a view into wasm memory until the next step
          break;
        case 1:
          effect.mode = LOCK_MODE_NAMES[raw._effectLockMode(i)];
          break;
        case 3:
          effect.floor = raw._effectEpoch(i);
          break;
        case 5:
        case 6:
          effect.epoch = raw._effectEpoch(i);
          effect.reason = raw._effectReason(i);
          break;
        default:
          break;
      }
      out[i] = effect;
    }
    return out;
  }

  // Events. Each returns the step's effects; a disposed core returns none.

  tick(now) {
    return this.raw ? this.effects(this.raw._tick(now)) : [];
  }

  /** @param {Uint8Array} bytes a frame from the channel (copied into wasm memory by embind) */
  message(now, bytes) {
    return this.raw ? this.effects(this.raw._message(now, bytes)) : [];
  }

  /**
   * @param {{requiredCapability: string, allowHidden: boolean, preferVisible: boolean,
   *   requiresNetwork: boolean, newestAppOnly: boolean}} policy
   */
  join(now, resource, policy) {
    return this.raw ? this.effects(this.raw._join(now, resource, policy)) : [];
  }

  /** @param {'leave'|'lock_granted'|'lock_lost'|'lock_unavailable'|'lease_failed'|'abdicate'|'force_election'} kind */
  resourceEvent(kind, now, resource) {
    return this.raw ? this.effects(this.raw._resourceEvent(EVENT[kind], now, resource)) : [];
  }

  epochAllocated(now, resource, epoch, durable) {
    return this.raw ? this.effects(this.raw._epochAllocated(now, resource, epoch, durable)) : [];
  }

  /** @param {LeaseRecord | null} record the record now in the store */
  leaseResult(now, resource, record) {
    return this.raw ? this.effects(this.raw._leaseResult(now, resource, record)) : [];
  }

  /** @param {keyof typeof LIFECYCLE} state */
  lifecycle(now, state) {
    return this.raw ? this.effects(this.raw._lifecycle(now, LIFECYCLE[state])) : [];
  }

  /** @param {'tick'|'online'|'offline'|'session_changed'|'dispose'} kind */
  plainEvent(kind, now) {
    return this.raw ? this.effects(this.raw._plainEvent(EVENT[kind], now)) : [];
  }

  /** @returns {number} when the next `tick` is due (Infinity: none). */
  nextDeadline() {
    return this.raw ? this.raw._nextDeadline() : Infinity;
  }

  /**
   * Called inside the lease's read-write transaction.
   * @param {LeaseRecord | null} record
   * @returns {LeaseRecord | null} the record to write, or null to write nothing
   */
  leaseDecide(resource, record, now) {
    return this.raw ? this.raw._leaseDecide(resource, record, now) : null;
  }

  // Queries.

  view(resource) {
    return this.raw ? this.raw._view(resource) : null;
  }

  presence(now) {
    return this.raw ? this.raw._presence(now) : [];
  }

  metrics() {
    return this.raw ? this.raw._metrics() : null;
  }

  log() {
    return this.raw ? this.raw._log() : [];
  }

  /** @returns {'web-locks'|'lease'|'broadcast'} the authority in use (lease may fall back to broadcast). */
  authority() {
    return this.raw ? AUTHORITIES[this.raw._authority()] : 'broadcast';
  }

  degraded() {
    return this.raw ? this.raw._degraded() : false;
  }

  /** @returns {boolean} true when `epoch` is at least the highest seen for `resource` (then it becomes the highest). */
  fenceAdmit(resource, epoch) {
    return this.raw ? this.raw._fenceAdmit(resource, epoch) : false;
  }

  fenceHighest(resource) {
    return this.raw ? this.raw._fenceHighest(resource) : 0;
  }
}

/**
 * Leak checks for tests (exported as `__internal` from the main entry, not documented API).
 */
export const internals = {
  /** Live embind value handles (`count_emval_handles()` of the module). */
  emvalHandles: () => module().count_emval_handles(),
  /** Cores created and not yet deleted. */
  liveCores: () => liveCores,
  /** Size of the WebAssembly heap in bytes (it only grows: a leak shows here). */
  heapBytes: () => module().HEAP8.length,
};
