/**
 * The orchestrator: `createBaton(options)` -> a Baton for one namespace in this tab, and
 * `baton.lead(resource, options)` -> a handle on this tab's leadership of one resource.
 *
 * The Baton owns the environment, the lifecycle listeners and the current Runtime (one
 * Core). When the page goes into the bfcache (`pagehide`), the Runtime is disposed (locks
 * released, goodbye said); when it comes back (`pageshow` persisted), a new Runtime with
 * the next generation re-joins every resource. Handles stay valid throughout.
 *
 * App code (onChange listeners, `run`, the term's AbortSignal) never runs inside a browser
 * handler Baton is serving (a lock grant, a message, a timer, `pagehide`): the state changes
 * at once, and the callbacks are queued and run in a microtask, in order, once the handler's
 * work (releasing the lock, saying goodbye) is done; after `pagehide`, in a later task (see
 * `suspend`). Only the app's own `release()` and
 * `dispose()` call back before they return: queued callbacks first, then the signal's abort
 * and the 'released' change. Every public method may be called from every callback.
 *
 * @module tab-baton/baton
 */
import { Runtime } from './runtime.js';
import { coreStatus, load } from './core.js';
import { Database, STORAGE_TIMEOUT_MS } from './idb.js';
import { EpochStore } from './epoch-store.js';
import { StorageHealth } from './storage-health.js';
import {
  aloneNote,
  authorityReason,
  chooseAuthority,
  fallbackAuthority,
  isNodeWithoutEnv,
  randomId,
  randomSeed,
  refusalReason,
  refusedWords,
  resolveEnv,
  storageReadable,
  supportOf,
} from './env.js';
import { namesFor } from './names.js';
import { watchLifecycle } from './lifecycle.js';
import { leaderState, loadTalk } from './talk-lazy.js';
import { deposed, disposedError, EpochNotDurableError, reportError, staleOwner } from './errors.js';
import { AUTHORITY_NAMES, DEFAULT_HEARTBEAT_MS, DEFAULT_LEASE_MS, DEFAULT_LOG_CAPACITY, EVENT_KIND_ABDICATE, EVENT_KIND_LEAVE, SUSPECT_HEARTBEATS } from './constants.js';
import {
  LIMITS,
  NAMESPACE_BYTES,
  booleanOption,
  checkString,
  envOption,
  functionOption,
  numberOption,
  oneOfOption,
  optionsObject,
  stringListOption,
  stringOption,
} from './options.js';

const BATON_OPTIONS = [
  'namespace',
  'protocolVersion',
  'appVersion',
  'capabilities',
  'id',
  'heartbeatMs',
  'suspectMs',
  'leaseMs',
  'authority',
  'env',
  'testHooks',
  'seed',
];
/** The option `authority` (also of the compatibility layers): 'auto' or one of the core's. */
export const AUTHORITY_CHOICES = ['auto', ...AUTHORITY_NAMES];
const LEAD_OPTIONS = ['eligible', 'preferVisible', 'run', 'serve', 'accept'];
/** Lead options of requests: with either, the entry answers requests (talk.js, loaded then). */
const TALK_OPTIONS = ['serve', 'accept'];
const ELIGIBLE_OPTIONS = ['capability', 'hidden', 'network', 'newestAppOnly'];
/** Transitions kept from earlier generations (bfcache restores). */

/**
 * Installs the test hooks on a Baton; set by `enableTestHooks()`, so that an app that never
 * enables them does not ship them.
 * @type {((baton: Baton) => {remove(): void}) | null}
 */
let testHooksInstaller = null;

/** Called by `enableTestHooks()` (test-hooks.js). */
export function setTestHooksInstaller(install) {
  testHooksInstaller = install;
}

/** Internal access for the compatibility layers: public objects -> their internals. */
const batons = new WeakMap();
const handles = new WeakMap();

/**
 * Creates a Baton: this tab's participant in the elections of one namespace.
 * @param {object} options see index.d.ts (`BatonOptions`)
 */
export function createBaton(options) {
  return makeBaton('createBaton', options, null, true);
}

/**
 * A Baton whose Web Locks are named by `lockName(resource)` instead of Baton's own names,
 * for the compatibility APIs that document their lock name (so that tabs still running the
 * original library and Baton tabs exclude each other). Baton's own lock name then marks
 * that the holder is a Baton tab: only such a holder is ever stolen from (see WebLocks).
 * @param {string} where the API's name, for option errors
 * @param {object} options as for createBaton
 * @param {(resource: string) => string} lockName
 */
export function createBatonWithLockName(where, options, lockName, { leaseFallback = true } = {}) {
  return makeBaton(where, options, lockName, leaseFallback);
}

function makeBaton(where, options, lockName, leaseFallback) {
  const o = optionsObject(where, 'options', options, BATON_OPTIONS);
  const namespace = stringOption(where, o, 'namespace', { required: true, maxBytes: NAMESPACE_BYTES });
  const protocolVersion = numberOption(where, o, 'protocolVersion', { fallback: 1, integer: true });
  const appVersion = stringOption(where, o, 'appVersion', { fallback: '0', maxBytes: LIMITS.versionBytes });
  const capabilities = stringListOption(where, o, 'capabilities', { maxItems: LIMITS.capabilities, maxBytes: LIMITS.capabilityBytes });
  const id = stringOption(where, o, 'id', { maxBytes: LIMITS.idBytes }) ?? randomId();
  const heartbeatMs = numberOption(where, o, 'heartbeatMs', { fallback: DEFAULT_HEARTBEAT_MS, above: 0 });
  const suspectMs = numberOption(where, o, 'suspectMs', { fallback: SUSPECT_HEARTBEATS * heartbeatMs, above: heartbeatMs });
  const leaseMs = numberOption(where, o, 'leaseMs', { fallback: DEFAULT_LEASE_MS, above: 0 });
  const requested = oneOfOption(where, o, 'authority', AUTHORITY_CHOICES, 'auto');
  const envSource = envOption(where, o);
  const testHooks = booleanOption(where, o, 'testHooks', false);
  if (testHooks && !testHooksInstaller) {
    throw new TypeError(`${where}: option "testHooks" needs the hooks enabled first: import { enableTestHooks } from 'tab-baton' and call enableTestHooks()`);
  }
  const seed = numberOption(where, o, 'seed', { fallback: undefined, integer: true, max: 2 ** 32 - 1 }) ?? randomSeed();
  const env = resolveEnv(envSource);
  let authority;
  try {
    authority = chooseAuthority(env, requested);
  } catch (error) {
    throw new TypeError(`${where}: ${error.message}`);
  }
  // The core's load first, once no option can throw: its chain (fetch, compile, instantiate,
  // the first steps) is the longest a start-up waits for, longer than the lock's or the storage's.
  load();
  const reason = authorityReason(env, requested, authority);
  if (isNodeWithoutEnv(env)) warnOnceInNode(`tab-baton: ${where}() in Node without env: ${authority} mode, ${reason}`);
  const baton = new Baton({
    config: { id, appVersion, capabilities, heartbeatMs, suspectMs, leaseMs, seed },
    env,
    requested,
    leaseFallback,
    authority,
    reason,
    names: lockNames(namesFor(namespace, protocolVersion), lockName),
  });
  const api = Object.freeze({
    id,
    namespace,
    protocolVersion,
    lead: (resource, leadOptions) => baton.lead(resource, leadOptions),
    // A promise in every case: a wrong resource rejects, as wrong options do (talk.js checks them).
    request: async (resource, message, requestOptions) => baton.talk('request', resourceName('baton.request', resource), message, requestOptions),
    leaderState: (resource) => {
      if (baton.disposed) throw disposedError('baton.leaderState()');
      return leaderState(baton, resourceName('baton.leaderState', resource));
    },
    presence: () => baton.presence(),
    metrics: () => baton.metrics(),
    log: () => baton.log(),
    support: () => baton.support(),
    dispose: () => baton.dispose(),
  });
  batons.set(api, baton);
  if (testHooks) baton.hooks = testHooksInstaller(baton);
  return api;
}

/** Baton's names, with the lock renamed for a compatibility API (the marker keeps Baton's name). */
function lockNames(names, lockName) {
  return lockName ? { ...names, lock: lockName } : names;
}

/** The internals behind a public Baton (for the compatibility layers). */
export function batonOf(api) {
  return batons.get(api);
}

/** The internal entry behind a public lead handle (for the compatibility layers). */
export function entryOf(handle) {
  return handles.get(handle);
}

let warnedInNode = false;
/** Says once per process which mode Baton chose in Node, and why (support().reason says it too). */
function warnOnceInNode(message) {
  if (warnedInNode) return;
  warnedInNode = true;
  console.warn(message);
}

class Baton {
  constructor({ config, env, requested, leaseFallback, authority, reason, names }) {
    this.config = config;
    this.env = env;
    this.requested = requested;
    /** Whether 'auto' may fall back from refused Web Locks to the lease (not for awaforge). */
    this.leaseFallback = leaseFallback;
    /** The authority chosen: at creation, or the one 'auto' fell back to (authorityRefused). */
    this.authority = authority;
    this.reason = reason;
    /** What refused this context for good, and how: 'web-locks' or 'lease' (IndexedDB) -> error. */
    this.refused = new Map();
    /** The first authority this Baton chose that refused it (given up, or kept when explicit). */
    this.refusal_ = null;
    this.names = names;
    this.counters = {
      droppedNotBinary: 0,
      postFailures: 0,
      framesUnsent: 0,
      staleGrants: 0,
      locksLost: 0,
      lockErrors: 0,
      foreignHolderWaits: 0,
      markersLost: 0,
      droppedSideMessages: 0,
      epochAllocations: 0,
      epochsNotDurable: 0,
      storageErrors: 0,
      leaseTransactions: 0,
      leaseFailures: 0,
      timerFires: 0,
      listenerErrors: 0,
      restores: 0,
      authorityFallbacks: 0,
    };
    /** @type {Map<string, Entry>} */
    this.entries = new Map();
    this.generation = 1;
    this.disposed = false;
    this.suspended_ = false;
    this.history_ = [];
    this.hooks = null;
    /** @type {Array<() => void>} app callbacks not yet run (see `later`) */
    this.callbacks = [];
    this.callbacksScheduled_ = false;
    /** @type {{runtime: Runtime, timer: any} | null} a runtime suspend() left to retire */
    this.retiring = null;
    this.storage = this.openStorage();
    this.lifecycleState_ = 'active';
    this.watch = watchLifecycle(env, {
      lifecycle: (state) => this.onLifecycle(state),
      network: (online) => this.runtime_.network(online),
      pagehide: () => this.suspend(),
      pageshow: () => this.restore(),
      storage: (key, value) => this.storage.epochs.mirrored(key, value),
    });
    this.lifecycleState_ = this.watch.visibility();
    this.runtime_ = this.startRuntime();
  }

  /** The database, the epoch counter and their health, shared by every generation. */
  openStorage() {
    const { env, names, config, counters } = this;
    const database = env.indexedDB
      ? new Database({
          indexedDB: env.indexedDB,
          name: names.database,
          timeoutMs: STORAGE_TIMEOUT_MS,
          now: env.monotonic,
          setTimeout: env.setTimeout,
          clearTimeout: env.clearTimeout,
          refused: (error) => this.refuse('lease', error),
        })
      : null;
    const health = new StorageHealth(database !== null);
    const epochs = new EpochStore({
      localStorage: env.localStorage,
      database,
      key: names.epochKey,
      health,
      counters,
      read: (resource, top) => this.runtime_?.epochRead(resource, top),
      setTimeout: env.setTimeout,
      clearTimeout: env.clearTimeout,
    });
    return { database, health, epochs };
  }

  /**
   * The browser refused `api` to this context for good (SecurityError), or navigator.locks
   * did not answer: no lock will be granted, or no IndexedDB opened (no durable epoch).
   * @param {'web-locks'|'lease'} api 'lease' for IndexedDB
   */
  refuse(api, error) {
    if (this.disposed || this.refused.has(api)) return;
    this.refused.set(api, error);
    if (api === 'lease') this.storage.health.failed(error);
    if (api === this.authority) this.authorityRefused(api, error);
  }

  /**
   * An explicit 'web-locks' whose lock manager did not answer in time, or kept failing,
   * granted a lock after all: it works. ('auto' gave it up then; that runtime no longer
   * reports.)
   */
  locksAnswered() {
    if (this.refusal_?.authority !== 'web-locks') return;
    this.refusal_ = null;
    this.refused.delete('web-locks');
  }

  /**
   * The authority in use refused this context. 'auto' gives it up for the next one (see
   * fallbackAuthority) in a new generation, which joins every resource again; an explicit
   * authority is kept, and the Baton stays degraded saying why.
   */
  authorityRefused(authority, error) {
    this.refusal_ ??= { authority, error };
    if (this.requested !== 'auto') return;
    this.authority = fallbackAuthority(this.env, authority, error, this.leaseFallback && !this.refused.has('lease'));
    this.counters.authorityFallbacks += 1;
    if (this.suspended_) return; // pageshow starts the next generation with it
    this.retireRuntime();
    this.generation += 1;
    this.runtime_ = this.startRuntime();
  }

  /** Why this authority (`support().reason`), with what refused this context since. */
  reasonNow() {
    if (!this.refusal_) return this.reason;
    const refused = refusedWords(this.refused);
    if (this.requested !== 'auto') {
      // An explicit lease still ends in broadcast only after three failures (the core's fallback).
      const mode = this.runtime_.authority();
      return `${this.reason}; ${refused}: kept${mode === this.authority ? ', so this tab cannot lead by it' : `, running ${mode}`}`;
    }
    return `${refused}: ${this.authority === 'lease' ? 'an IndexedDB lease' : 'broadcast only'}${aloneNote(this.env, this.authority)}`;
  }

  /** Why epochs may repeat now or the authority chosen failed, or null. */
  degradedReason() {
    if (this.refusal_) return refusalReason(this.refusal_.authority, this.refusal_.error);
    if (this.runtime_.authority() !== this.authority) return `${this.authority}-fallback`;
    const { health } = this.storage;
    if (health.failure) return health.failure;
    for (const entry of this.entries.values()) {
      const why = entry.token ? entry.termDegraded() : null;
      if (why) return why;
    }
    return null;
  }

  startRuntime() {
    const runtime = new Runtime({
      config: this.config,
      generation: this.generation,
      authority: this.authority,
      env: this.env,
      names: this.names,
      storage: this.storage,
      counters: this.counters,
      notify: (effect) => this.entries.get(effect.resource)?.onEffect(effect),
      locksRefused: (error) => runtime === this.runtime_ && this.refuse('web-locks', error),
      locksAnswered: () => runtime === this.runtime_ && this.locksAnswered(),
      lifecycle: this.lifecycleState_,
      online: this.watch.online(),
    });
    for (const entry of this.entries.values()) runtime.join(entry.resource, entry.policy);
    return runtime;
  }

  onLifecycle(state) {
    this.lifecycleState_ = state;
    if (!this.suspended_) this.runtime_.lifecycle(state);
  }

  /**
   * `pagehide`: leave at once, keep the handles. The lock goes back only once this handler
   * has returned, so it does one thing: the closing step (Runtime.leave), which releases the
   * lock, then says goodbye (naming the successor). The rest (the leadership notices and
   * the app's callbacks, the dispose step, copying the final metrics and log out of the
   * core) waits for a later task: a page being closed is torn down first and never does it;
   * a page kept in the bfcache does it on its way back, or when its log is asked for.
   */
  suspend() {
    if (this.disposed || this.suspended_) return;
    this.suspended_ = true;
    this.runtime_.leave();
    const runtime = this.runtime_;
    const timer = this.env.setTimeout(() => this.finishRetiring(), 0);
    this.retiring = { runtime, timer };
  }

  /** Retires the runtime left by `suspend()` now, if that has not happened yet. */
  finishRetiring() {
    const { retiring } = this;
    if (!retiring) return;
    this.retiring = null;
    this.env.clearTimeout(retiring.timer);
    this.retireRuntime(retiring.runtime);
  }

  /** `pageshow` from the bfcache: a new generation re-joins every resource. */
  restore() {
    if (this.disposed || !this.suspended_) return;
    this.finishRetiring();
    this.suspended_ = false;
    this.generation += 1;
    this.counters.restores += 1;
    this.lifecycleState_ = this.watch.visibility();
    this.runtime_ = this.startRuntime();
  }

  retireRuntime(old = this.runtime_) {
    old.dispose();
    this.history_.push(...old.log().map((t) => ({ ...t, generation: old.generation })));
    if (this.history_.length > DEFAULT_LOG_CAPACITY) this.history_.splice(0, this.history_.length - DEFAULT_LOG_CAPACITY);
  }

  /**
   * @param {string} resource
   * @param {object} [options] the public `lead` options
   * @param {boolean} [observeOnly] (compatibility layers only) follow the election without
   *   running in it, until `setPolicy` says otherwise
   */
  lead(resource, options, observeOnly = false) {
    const where = 'baton.lead';
    if (this.disposed) throw disposedError('baton.lead()');
    resourceName(where, resource);
    const o = optionsObject(where, 'options', options, LEAD_OPTIONS, { optional: true });
    const eligible = optionsObject(where, 'eligible', o.eligible, ELIGIBLE_OPTIONS, { optional: true });
    const policy = { ...policyOf(where, eligible, booleanOption(where, o, 'preferVisible', false)), observeOnly };
    const run = functionOption(where, o, 'run');
    const [serve, accept] = TALK_OPTIONS.map((key) => functionOption(where, o, key));
    if (this.entries.has(resource)) throw new Error(`${where}: this Baton already leads "${resource}"; release() that handle first`);
    // A frame carries at most this many claims: a tab leading more would look to its peers
    // as if it had stepped down from the rest.
    if (this.entries.size >= LIMITS.claims) throw new Error(`${where}: at most ${LIMITS.claims} resources per Baton`);
    const entry = new Entry(this, resource, policy, run);
    this.entries.set(resource, entry);
    if (!this.suspended_) this.runtime_.join(resource, policy);
    handles.set(entry.handle, entry);
    if (serve || accept) {
      entry.talkOptions = { serve, accept };
      this.talk('attach', entry).catch(reportError);
    } else if (this.talks?.has(resource)) {
      this.talk('follow', entry).catch(reportError);
    }
    return entry.handle;
  }

  /** Changes the eligibility policy of a resource already led (re-joins with it). */
  setPolicy(entry, policy) {
    entry.policy = policy;
    if (!this.suspended_ && !this.disposed && !entry.released) this.runtime_.join(entry.resource, policy);
  }

  /**
   * The core leaves first, so that a listener of the ending term may lead the resource
   * again; then the app hears of it, before release() returns.
   */
  release(entry) {
    if (entry.released) return;
    entry.released = true;
    if (this.entries.get(entry.resource) === entry) this.entries.delete(entry.resource);
    if (!this.disposed && !this.suspended_) this.runtime_.resourceEvent(EVENT_KIND_LEAVE, entry.resource);
    entry.finish('released');
  }

  /** Runs `talk.js`'s `name(baton, ...args)` once it is loaded (requests, state). */
  talk(name, ...args) {
    return loadTalk().then((talk) => talk[name](this, ...args));
  }

  presence() {
    return this.disposed || this.suspended_ ? [] : this.runtime_.presence();
  }

  metrics() {
    const runtime = this.runtime_;
    return {
      ...runtime.metrics(),
      mode: runtime.authority(),
      degraded: this.degradedReason() !== null,
      degradedReason: this.degradedReason(),
      generation: this.generation,
      core: coreStatus(),
      glue: { ...this.counters },
      talk: Object.fromEntries([...(this.talks ?? [])].map(([resource, talk]) => [resource, talk.metrics()])),
    };
  }

  log() {
    this.finishRetiring();
    const current = this.runtime_.log().map((t) => ({ ...t, generation: this.runtime_.generation }));
    return this.suspended_ || this.disposed ? [...this.history_] : [...this.history_, ...current];
  }

  support() {
    const available = supportOf(this.env);
    return {
      ...available,
      webLocks: available.webLocks && !this.refused.has('web-locks'),
      indexedDB: available.indexedDB && !this.refused.has('lease'),
      localStorage: storageReadable(this.env.localStorage),
      authority: this.authority,
      reason: this.reasonNow(),
      mode: this.runtime_.authority(),
      degraded: this.degradedReason() !== null,
      degradedReason: this.degradedReason(),
      core: coreStatus(),
    };
  }

  /**
   * Marked disposed first: a callback of the teardown that calls dispose() again returns,
   * and one that calls lead() gets a DISPOSED error instead of a handle that never runs.
   */
  dispose() {
    if (this.disposed) return;
    this.disposed = true;
    const ending = [...this.entries.values()];
    this.entries.clear();
    for (const entry of ending) entry.released = true;
    this.watch.stop();
    this.hooks?.remove();
    if (this.suspended_) this.finishRetiring();
    else this.retireRuntime();
    const { database, epochs } = this.storage;
    epochs.close();
    if (database) this.runtime_.retired.then(() => database.close());
    for (const entry of ending) entry.finish('dispose');
    for (const talk of this.talks?.values() ?? []) talk.close();
  }

  /** Queues app code to run in a microtask, after the browser handler that caused it. */
  later(callback) {
    this.callbacks.push(callback);
    if (this.callbacksScheduled_) return;
    this.callbacksScheduled_ = true;
    queueMicrotask(() => {
      this.callbacksScheduled_ = false;
      this.runCallbacks();
    });
  }

  /** Runs the queued app callbacks in order; a throwing one is counted and reported. */
  runCallbacks() {
    while (this.callbacks.length > 0) {
      const callback = this.callbacks.shift();
      try {
        callback();
      } catch (error) {
        this.counters.listenerErrors += 1;
        reportError(error);
      }
    }
  }
}

/** Checks a resource name (the wire format's limit); returns it. */
function resourceName(where, resource) {
  return checkString(where, 'resource', resource, LIMITS.resourceBytes);
}

/** The core's policy from the `eligible` and `preferVisible` options. */
function policyOf(where, eligible, preferVisible) {
  return {
    requiredCapability: stringOption(where, eligible, 'capability', { fallback: '', maxBytes: LIMITS.capabilityBytes }),
    allowHidden: booleanOption(where, eligible, 'hidden', true),
    preferVisible,
    requiresNetwork: booleanOption(where, eligible, 'network', false),
    newestAppOnly: booleanOption(where, eligible, 'newestAppOnly', true),
  };
}

/** This tab's participation in one resource's election, behind a public handle. */
class Entry {
  constructor(baton, resource, policy, run) {
    this.baton = baton;
    this.resource = resource;
    this.policy = policy;
    this.run = run;
    this.released = false;
    /** `serve` and `accept` of requests (talk.js), null when this entry does not talk. */
    this.talkOptions = null;
    /** @type {{resource: string, owner: string, epoch: number} | null} */
    this.token = null;
    /** @type {AbortController | null} */
    this.controller_ = null;
    this.listeners = new Set();
    this.handle = this.makeHandle();
  }

  makeHandle() {
    return Object.freeze({
      resource: this.resource,
      state: () => this.state(),
      token: () => (this.state() === 'leader' ? this.token : null),
      leader: () => this.leaderInfo(),
      abdicate: () => {
        if (!this.released && !this.baton.suspended_) this.baton.runtime_.resourceEvent(EVENT_KIND_ABDICATE, this.resource);
      },
      onChange: (fn) => {
        if (typeof fn !== 'function') throw new TypeError('onChange: "fn" must be a function');
        if (this.released) return () => {};
        const listener = (change) => fn(change);
        this.listeners.add(listener);
        return () => this.listeners.delete(listener);
      },
      fenced: (fn) => this.fenced(fn),
      setState: (value) => this.baton.talk('setState', this, value),
      release: () => this.baton.release(this),
    });
  }

  /** @returns {'follower'|'candidate'|'leader'|'stepping-down'|'released'} */
  state() {
    if (this.released) return 'released';
    const view = this.baton.runtime_.view(this.resource);
    const role = view?.role ?? 'follower';
    // Between the core's step and the delivery of its `elected` notice the term has no
    // token yet: report it as still acquiring, so that state() and token() always agree.
    if (role === 'leader' && !this.token) return 'candidate';
    // A lease term past the time others may take its record over (this tab was frozen, its
    // renewal has not committed yet, or the wall clock jumped forward) is in doubt, even
    // before the core's next step looks at it: no token, fenced() refuses, until a renewal
    // confirms the same term.
    const env = this.baton.env;
    if (role === 'leader' && (env.monotonic() >= view.validUntil || env.now() >= view.validUntilWall)) return 'candidate';
    return role;
  }

  leaderInfo() {
    const view = this.released ? null : this.baton.runtime_.view(this.resource);
    if (!view || !view.leader) return null;
    return { id: view.leader, epoch: view.leaderEpoch, since: view.leaderSince, isMe: view.leader === this.baton.config.id };
  }

  /** A core notice for this resource: a term begins or ends, or the known leader changed. */
  onEffect(effect) {
    if (this.released) return;
    if (effect.kind === 'elected') {
      this.endTerm(effect.reason); // defensive: a term never starts inside another
      this.token = Object.freeze({ resource: this.resource, owner: this.baton.config.id, epoch: effect.epoch });
      this.controller_ = new AbortController();
      this.queueChange('elected', this.token, effect.reason);
      this.queueWork();
    } else if (effect.kind === 'deposed') {
      if (!this.token || this.token.epoch !== effect.epoch) return; // not this term
      const ended = this.endTerm(effect.reason);
      this.queueChange('deposed', ended, effect.reason);
    } else {
      this.queueChange('leader-changed', this.state() === 'leader' ? this.token : null, 'leader-changed');
    }
  }

  /** Queues the app's leader work for this term; its failure is reported, it does not end the term. */
  queueWork() {
    if (!this.run) return;
    const { token } = this;
    const controller = this.controller_;
    this.baton.later(() => {
      if (controller.signal.aborted) return; // the term ended before its work could start
      try {
        Promise.resolve(this.run(token, controller.signal)).catch((error) => {
          if (!controller.signal.aborted) reportError(error);
        });
      } catch (error) {
        reportError(error);
      }
    });
  }

  /**
   * Ends the current term on this side: the leader's signal aborts, in a microtask unless
   * `now` (the app's own release() or dispose()). Returns the ended token.
   */
  endTerm(reason, { now = false } = {}) {
    const ended = this.token;
    this.token = null;
    if (this.controller_) {
      const controller = this.controller_;
      this.controller_ = null;
      // The error is made when the signal aborts: capturing its stack is work a pagehide
      // or a lock grant does not need to wait for.
      const abort = () => controller.abort(deposed(this.resource, ended ? ended.epoch : 0, reason));
      if (now) abort();
      else this.baton.later(abort);
    }
    return ended;
  }

  /**
   * The handle was released (or its Baton disposed), `released` already set: callbacks
   * still queued run first, then the term ends and listeners hear 'released' last.
   */
  finish(reason) {
    this.baton.runCallbacks();
    const ended = this.endTerm(reason, { now: true });
    const listeners = [...this.listeners];
    this.listeners.clear();
    this.deliver(listeners, this.change('released', ended, reason));
  }

  change(type, token, reason) {
    return Object.freeze({ type, resource: this.resource, state: this.state(), token, leader: this.leaderInfo(), reason });
  }

  /** Queues a change for the listeners subscribed now (one unsubscribed meanwhile is skipped). */
  queueChange(type, token, reason) {
    if (this.listeners.size === 0) return;
    const listeners = [...this.listeners];
    const change = this.change(type, token, reason);
    this.baton.later(() => this.deliver(listeners.filter((l) => this.listeners.has(l)), change));
  }

  deliver(listeners, change) {
    for (const listener of listeners) {
      try {
        listener(change);
      } catch (error) {
        this.baton.counters.listenerErrors += 1;
        reportError(error);
      }
    }
  }

  /**
   * Why the current term's epoch may repeat an earlier one, or null: the core judged the
   * term degraded (a claim it could not confirm is above it, its store timed out or went
   * backwards), or the glue could not commit the epoch in IndexedDB.
   */
  termDegraded() {
    const { token } = this;
    if (!token) return null;
    const view = this.baton.runtime_.view(this.resource);
    if (view && view.degraded !== 'none' && view.epoch === token.epoch) return view.degraded;
    return this.baton.storage.health.isDurable(this.resource, token.epoch) ? null : 'epoch-not-durable';
  }

  /** Runs `fn(token, signal)` only while this tab leads with a term the fence admits. */
  fenced(fn) {
    // Rejects rather than throws, like every refusal of this promise-returning call.
    if (typeof fn !== 'function') return Promise.reject(new TypeError('fenced: "fn" must be a function'));
    const token = this.state() === 'leader' ? this.token : null;
    // Without a term the core refuses too, and says the highest term it saw.
    const { admitted, highest } = this.baton.runtime_.fenceCheck(this.resource, token?.epoch ?? 0);
    if (!admitted) return Promise.reject(staleOwner(this.resource, token?.epoch ?? null, highest));
    // An epoch that may repeat an earlier term's: no effect runs under it.
    const why = this.termDegraded();
    if (why) return Promise.reject(new EpochNotDurableError(this.resource, token.epoch, this.baton.storage.health.failure ?? why));
    const { signal } = this.controller_;
    return new Promise((resolve) => resolve(fn(token, signal)));
  }
}
