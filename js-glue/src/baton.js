/**
 * The orchestrator: `createBaton(options)` -> a Baton for one namespace in this tab, and
 * `baton.lead(resource, options)` -> a handle on this tab's leadership of one resource.
 *
 * The Baton owns the environment, the lifecycle listeners and the current Runtime (one
 * Core). When the page goes into the bfcache (`pagehide`), the Runtime is disposed (locks
 * released, goodbye said); when it comes back (`pageshow` persisted), a new Runtime with
 * the next generation re-joins every resource. Handles stay valid throughout.
 *
 * @module tab-baton/baton
 */
import { Runtime } from './runtime.js';
import { Database, storageTimeoutMs } from './idb.js';
import { EpochStore } from './epoch-store.js';
import { StorageHealth } from './storage-health.js';
import { chooseAuthority, namesFor, randomId, randomSeed, resolveEnv, supportOf } from './env.js';
import { watchLifecycle } from './lifecycle.js';
import { installTestHooks } from './test-hooks.js';
import { deposed, disposedError, epochNotDurable, reportError, staleOwner } from './errors.js';
import {
  LIMITS,
  booleanOption,
  envOption,
  functionOption,
  numberOption,
  oneOfOption,
  optionsObject,
  stringListOption,
  stringOption,
  utf8Length,
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
const LEAD_OPTIONS = ['eligible', 'preferVisible', 'run'];
const ELIGIBLE_OPTIONS = ['capability', 'hidden', 'network', 'newestAppOnly'];
/** Transitions kept from earlier generations (bfcache restores). */
const LOG_HISTORY = 128;

/** Internal access for the compatibility layers: public objects -> their internals. */
const batons = new WeakMap();
const handles = new WeakMap();

/**
 * Creates a Baton: this tab's participant in the elections of one namespace.
 * @param {object} options see index.d.ts (`BatonOptions`)
 */
export function createBaton(options) {
  const where = 'createBaton';
  const o = optionsObject(where, 'options', options, BATON_OPTIONS);
  const namespace = stringOption(where, o, 'namespace', { required: true });
  const protocolVersion = numberOption(where, o, 'protocolVersion', { fallback: 1, integer: true });
  const appVersion = stringOption(where, o, 'appVersion', { fallback: '0', maxBytes: LIMITS.versionBytes });
  const capabilities = stringListOption(where, o, 'capabilities', { maxItems: LIMITS.capabilities, maxBytes: LIMITS.capabilityBytes });
  const id = stringOption(where, o, 'id', { maxBytes: LIMITS.idBytes }) ?? randomId();
  const heartbeatMs = numberOption(where, o, 'heartbeatMs', { fallback: 1000, above: 0 });
  const suspectMs = numberOption(where, o, 'suspectMs', { fallback: 3 * heartbeatMs, above: heartbeatMs });
  const leaseMs = numberOption(where, o, 'leaseMs', { fallback: 5000, above: 0 });
  const requested = oneOfOption(where, o, 'authority', ['auto', 'web-locks', 'lease', 'broadcast'], 'auto');
  const envSource = envOption(where, o);
  const testHooks = booleanOption(where, o, 'testHooks', false);
  const seed = numberOption(where, o, 'seed', { fallback: undefined, integer: true, max: 2 ** 32 - 1 }) ?? randomSeed();

  const env = resolveEnv(envSource);
  let authority;
  try {
    authority = chooseAuthority(env, requested);
  } catch (error) {
    throw new TypeError(`${where}: ${error.message}`);
  }
  const baton = new Baton({
    config: { id, appVersion, capabilities, heartbeatMs, suspectMs, leaseMs, seed },
    env,
    authority,
    names: namesFor(namespace, protocolVersion),
  });
  const api = Object.freeze({
    id,
    namespace,
    protocolVersion,
    lead: (resource, leadOptions) => baton.lead(resource, leadOptions),
    presence: () => baton.presence(),
    metrics: () => baton.metrics(),
    log: () => baton.log(),
    support: () => baton.support(),
    dispose: () => baton.dispose(),
  });
  batons.set(api, baton);
  if (testHooks) baton.hooks = installTestHooks(baton);
  return api;
}

/** The internals behind a public Baton (for the compatibility layers). */
export function batonOf(api) {
  return batons.get(api);
}

/** The internal entry behind a public lead handle (for the compatibility layers). */
export function entryOf(handle) {
  return handles.get(handle);
}

class Baton {
  constructor({ config, env, authority, names }) {
    this.config = config;
    this.env = env;
    this.authority = authority;
    this.names = names;
    this.counters = {
      droppedNotBinary: 0,
      postFailures: 0,
      framesUnsent: 0,
      staleGrants: 0,
      locksLost: 0,
      lockErrors: 0,
      epochAllocations: 0,
      epochsNotDurable: 0,
      storageErrors: 0,
      leaseTransactions: 0,
      leaseFailures: 0,
      timerFires: 0,
      listenerErrors: 0,
      restores: 0,
    };
    /** @type {Map<string, Entry>} */
    this.entries = new Map();
    this.generation = 1;
    this.disposed = false;
    this.suspended = false;
    this.history = [];
    this.hooks = null;
    this.storage = this.openStorage();
    this.lifecycleState = 'active';
    this.watch = watchLifecycle(env, {
      lifecycle: (state) => this.onLifecycle(state),
      network: (online) => this.runtime.network(online),
      pagehide: () => this.suspend(),
      pageshow: () => this.restore(),
    });
    this.lifecycleState = this.watch.visibility();
    this.runtime = this.startRuntime();
  }

  /** The database, the epoch counter and their health, shared by every generation. */
  openStorage() {
    const { env, names, config, counters } = this;
    const database = env.indexedDB
      ? new Database({ indexedDB: env.indexedDB, name: names.database, timeoutMs: storageTimeoutMs(config.suspectMs), setTimeout: env.setTimeout, clearTimeout: env.clearTimeout })
      : null;
    const health = new StorageHealth(database !== null);
    const epochs = new EpochStore({ localStorage: env.localStorage, database, key: names.epochKey, health, counters });
    return { database, health, epochs };
  }

  /** Why epochs may repeat now, or null: a fallen-back authority or untrusted storage. */
  degradedReason() {
    if (this.runtime.authority() !== this.authority) return `${this.authority}-fallback`;
    const { health } = this.storage;
    if (health.failure) return health.failure;
    for (const entry of this.entries.values()) {
      if (entry.token && !health.isDurable(entry.resource, entry.token.epoch)) return 'epoch-not-durable';
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
      lifecycle: this.lifecycleState,
      online: this.watch.online(),
    });
    for (const entry of this.entries.values()) runtime.join(entry.resource, entry.policy);
    return runtime;
  }

  onLifecycle(state) {
    this.lifecycleState = state;
    if (!this.suspended) this.runtime.lifecycle(state);
  }

  /** `pagehide`: leave at once (locks released, goodbye said), keep the handles. */
  suspend() {
    if (this.disposed || this.suspended) return;
    this.suspended = true;
    this.runtime.lifecycle('closing');
    this.retireRuntime();
  }

  /** `pageshow` from the bfcache: a new generation re-joins every resource. */
  restore() {
    if (this.disposed || !this.suspended) return;
    this.suspended = false;
    this.generation += 1;
    this.counters.restores += 1;
    this.lifecycleState = this.watch.visibility();
    this.runtime = this.startRuntime();
  }

  retireRuntime() {
    const old = this.runtime;
    old.dispose();
    this.history.push(...old.log().map((t) => ({ ...t, generation: old.generation })));
    if (this.history.length > LOG_HISTORY) this.history.splice(0, this.history.length - LOG_HISTORY);
  }

  lead(resource, options) {
    const where = 'baton.lead';
    if (this.disposed) throw disposedError('baton.lead()');
    if (typeof resource !== 'string' || resource === '' || utf8Length(resource) > LIMITS.resourceBytes) {
      throw new TypeError(`${where}: "resource" must be a non-empty string of at most ${LIMITS.resourceBytes} bytes of UTF-8 (got ${typeof resource === 'string' ? JSON.stringify(resource.slice(0, 40)) : String(resource)})`);
    }
    const o = optionsObject(where, 'options', options, LEAD_OPTIONS, { optional: true });
    const eligible = optionsObject(where, 'eligible', o.eligible, ELIGIBLE_OPTIONS, { optional: true });
    const policy = policyOf(where, eligible, booleanOption(where, o, 'preferVisible', false));
    const run = functionOption(where, o, 'run');
    if (this.entries.has(resource)) throw new Error(`${where}: this Baton already leads "${resource}"; release() that handle first`);
    // A frame carries at most this many claims: a tab leading more would look to its peers
    // as if it had stepped down from the rest.
    if (this.entries.size >= LIMITS.claims) throw new Error(`${where}: at most ${LIMITS.claims} resources per Baton`);
    const entry = new Entry(this, resource, policy, run);
    this.entries.set(resource, entry);
    if (!this.suspended) this.runtime.join(resource, policy);
    handles.set(entry.handle, entry);
    return entry.handle;
  }

  /** Changes the eligibility policy of a resource already led (re-joins with it). */
  setPolicy(entry, policy) {
    entry.policy = policy;
    if (!this.suspended && !this.disposed && !entry.released) this.runtime.join(entry.resource, policy);
  }

  release(entry) {
    if (entry.released) return;
    entry.end('released');
    if (this.entries.get(entry.resource) === entry) this.entries.delete(entry.resource);
    if (!this.disposed && !this.suspended) this.runtime.resourceEvent('leave', entry.resource);
  }

  presence() {
    return this.disposed || this.suspended ? [] : this.runtime.presence();
  }

  metrics() {
    const runtime = this.runtime;
    return {
      ...runtime.metrics(),
      mode: runtime.authority(),
      degraded: this.degradedReason() !== null,
      degradedReason: this.degradedReason(),
      generation: this.generation,
      glue: { ...this.counters },
    };
  }

  log() {
    const current = this.runtime.log().map((t) => ({ ...t, generation: this.runtime.generation }));
    return this.suspended || this.disposed ? [...this.history] : [...this.history, ...current];
  }

  support() {
    return {
      ...supportOf(this.env),
      authority: this.authority,
      mode: this.runtime.authority(),
      degraded: this.degradedReason() !== null,
      degradedReason: this.degradedReason(),
    };
  }

  dispose() {
    if (this.disposed) return;
    for (const entry of [...this.entries.values()]) entry.end('dispose');
    this.entries.clear();
    this.watch.stop();
    this.hooks?.remove();
    if (!this.suspended) this.retireRuntime();
    this.disposed = true;
    const { database } = this.storage;
    if (database) this.runtime.retired.then(() => database.close());
  }
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
    /** @type {{resource: string, owner: string, epoch: number} | null} */
    this.token = null;
    /** @type {AbortController | null} */
    this.controller = null;
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
        if (!this.released && !this.baton.suspended) this.baton.runtime.resourceEvent('abdicate', this.resource);
      },
      onChange: (fn) => {
        if (typeof fn !== 'function') throw new TypeError('onChange: "fn" must be a function');
        if (this.released) return () => {};
        const listener = (change) => fn(change);
        this.listeners.add(listener);
        return () => this.listeners.delete(listener);
      },
      fenced: (fn) => this.fenced(fn),
      release: () => this.baton.release(this),
    });
  }

  /** @returns {'follower'|'candidate'|'leader'|'stepping-down'|'released'} */
  state() {
    if (this.released) return 'released';
    const role = this.baton.runtime.view(this.resource)?.role ?? 'follower';
    // Between the core's step and the delivery of its `elected` notice the term has no
    // token yet: report it as still acquiring, so that state() and token() always agree.
    return role === 'leader' && !this.token ? 'candidate' : role;
  }

  leaderInfo() {
    const view = this.released ? null : this.baton.runtime.view(this.resource);
    if (!view || !view.leader) return null;
    return { id: view.leader, epoch: view.leaderEpoch, since: view.leaderSince, isMe: view.leader === this.baton.config.id };
  }

  /** A core notice for this resource: a term begins or ends, or the known leader changed. */
  onEffect(effect) {
    if (this.released) return;
    if (effect.kind === 'elected') {
      this.endTerm(effect.reason); // defensive: a term never starts inside another
      this.token = Object.freeze({ resource: this.resource, owner: this.baton.config.id, epoch: effect.epoch });
      this.controller = new AbortController();
      this.emit('elected', this.token, effect.reason);
      this.startWork();
    } else if (effect.kind === 'deposed') {
      if (!this.token || this.token.epoch !== effect.epoch) return; // not this term
      const ended = this.endTerm(effect.reason);
      this.emit('deposed', ended, effect.reason);
    } else {
      this.emit('leader-changed', this.state() === 'leader' ? this.token : null, 'leader-changed');
    }
  }

  /** Runs the app's leader work; its failure is reported, it does not end the term. */
  startWork() {
    if (!this.run) return;
    const { token, controller } = this;
    try {
      Promise.resolve(this.run(token, controller.signal)).catch((error) => {
        if (!controller.signal.aborted) reportError(error);
      });
    } catch (error) {
      reportError(error);
    }
  }

  /** Ends the current term on this side: the leader's signal aborts. Returns the ended token. */
  endTerm(reason) {
    const ended = this.token;
    this.token = null;
    if (this.controller) {
      const controller = this.controller;
      this.controller = null;
      controller.abort(deposed(this.resource, ended ? ended.epoch : 0, reason));
    }
    return ended;
  }

  /** The handle is released (or its Baton disposed): the term ends now, listeners hear it last. */
  end(reason) {
    const ended = this.endTerm(reason);
    this.released = true;
    this.emit('released', ended, reason);
    this.listeners.clear();
  }

  emit(type, token, reason) {
    if (this.listeners.size === 0) return;
    const change = Object.freeze({ type, resource: this.resource, state: this.state(), token, leader: this.leaderInfo(), reason });
    for (const listener of [...this.listeners]) {
      try {
        listener(change);
      } catch (error) {
        this.baton.counters.listenerErrors += 1;
        reportError(error);
      }
    }
  }

  /** Runs `fn(token, signal)` only while this tab leads with a term the fence admits. */
  fenced(fn) {
    if (typeof fn !== 'function') throw new TypeError('fenced: "fn" must be a function');
    const token = this.state() === 'leader' ? this.token : null;
    const runtime = this.baton.runtime;
    if (!token) return Promise.reject(staleOwner(this.resource, null, runtime.fenceHighest(this.resource)));
    if (!runtime.fenceAdmit(this.resource, token.epoch)) {
      return Promise.reject(staleOwner(this.resource, token.epoch, runtime.fenceHighest(this.resource)));
    }
    // An epoch that was not committed durably may repeat: no effect runs under it.
    const { health } = this.baton.storage;
    if (!health.isDurable(this.resource, token.epoch)) {
      return Promise.reject(epochNotDurable(this.resource, token.epoch, this.baton.degradedReason() ?? 'epoch-not-durable'));
    }
    const { signal } = this.controller;
    return new Promise((resolve) => resolve(fn(token, signal)));
  }
}
