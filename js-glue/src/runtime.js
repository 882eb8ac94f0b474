/**
 * One tab's engine for one generation: owns one Core, feeds it events, executes its
 * effects, and keeps ONE timer, set from the core's next deadline.
 *
 * Stepping is never re-entrant. Events go into a queue; `pump()` steps them one at a
 * time, copies each step's effects out and executes them. Effects that answer at once
 * (a synchronous epoch allocation) queue their event, which is stepped next. Leadership
 * notices (elected, deposed, leader changed) are delivered to the app only once the queue
 * is empty, so app callbacks see a settled state and may call back into Baton freely.
 * What a caller needs before it goes on (the lease decision inside its transaction, the
 * fence's verdict) is a step too: `answer()` runs the queue up to it at once.
 *
 * A page restored from the bfcache gets a new Runtime with the next generation; the old
 * one is disposed in `pagehide`.
 *
 * The WebAssembly core may still be loading when a Runtime starts: events queue until it
 * is there, and queries answer as a follower that knows nothing yet. Under Web Locks the
 * lock of a joined resource is requested at once, in the task that joins it and before
 * anything else the join does (the storage's read and open), not when the loaded core asks
 * for it: a start-up then waits for the wasm, the storage and the lock side by side. Nothing is decided early: the grant
 * waits in the queue like any event, the core's first request for the lock takes the early
 * one over, and an early request the core did not make once it has stepped its first
 * events (the tab is not eligible) is given back.
 *
 * A lock's grant begins the epoch's transaction in the grant's own task, before the core
 * steps the grant (and, for an early grant, while the core loads): only the lock's holder
 * allocates, and the core's request for that epoch uses the answer while the grant stands.
 *
 * @module tab-baton/runtime
 */
import { Core, coreStatus, ready, whenLoaded } from './core.js';
import { Channel } from './channel.js';
import { WebLocks } from './web-locks.js';
import { LOCKS_PROBE_TIMEOUT_MS, probeLocks } from './locks-probe.js';
import { reportError } from './errors.js';
import { storedEpoch, successorKey } from './epoch-store.js';
import {
  AUTHORITY_NAMES,
  EVENT_KIND_DISPOSE,
  EVENT_KIND_LEASE_ABORTED,
  EVENT_KIND_LEASE_FAILED,
  EVENT_KIND_LOCK_GRANTED,
  EVENT_KIND_LOCK_UNAVAILABLE,
  EVENT_KIND_OFFLINE,
  EVENT_KIND_ONLINE,
} from './constants.js';

let leaseModule = null;
/**
 * The IndexedDB lease (lease.js), imported when a runtime leads by lease: an app under Web
 * Locks never loads it (it is a chunk of its own in dist/).
 * @returns {Promise<typeof import('./lease.js')>}
 */
function loadLease() {
  leaseModule ??= import('./lease.js');
  return leaseModule;
}

export class Runtime {
  /**
   * @param {object} deps
   * @param {object} deps.config id, appVersion, capabilities, heartbeatMs, suspectMs, leaseMs, seed
   * @param {number} deps.generation
   * @param {'web-locks'|'lease'|'broadcast'} deps.authority
   * @param {import('./env.js').Env} deps.env
   * @param {ReturnType<import('./names.js').namesFor>} deps.names
   * @param {object} deps.storage shared by every generation of one Baton
   * @param {import('./idb.js').Database | null} deps.storage.database
   * @param {import('./epoch-store.js').EpochStore} deps.storage.epochs
   * @param {import('./storage-health.js').StorageHealth} deps.storage.health
   * @param {Record<string, number>} deps.counters glue counters, shared across generations
   * @param {(effect: import('./core.js').Effect) => void} deps.notify elected/deposed/leader-changed
   * @param {(error: Error) => void} deps.locksRefused navigator.locks refused this context, kept
   *   failing or did not answer (see web-locks.js)
   * @param {() => void} deps.locksAnswered navigator.locks granted a request after all
   * @param {'active'|'hidden'|'frozen'|'restored'} deps.lifecycle the state to start in
   * @param {boolean} deps.online
   */
  constructor({ config, generation, authority, env, names, storage, counters, notify, locksRefused, locksAnswered, lifecycle, online }) {
    this.env = env;
    this.counters = counters;
    this.notify = notify;
    this.generation = generation;
    /** @type {Array<(core: Core, now: number) => import('./core.js').Effect[]>} */
    this.queue = [];
    /** @type {import('./core.js').Effect[]} */
    this.notices = [];
    this.pumping_ = false;
    this.timer = null;
    this.timerAt_ = Infinity;
    this.timersFrozen_ = false;
    /**
     * While `leave()` steps the closing: the frames it would post (broadcast effects), held
     * until the lock is back; notices and the timer wait too (until a later task pumps).
     * Null otherwise.
     * @type {import('./core.js').Effect[] | null}
     */
    this.leaving = null;
    this.disposing_ = false;
    this.closed = false;
    /** Storage operations in flight; the core lives until they have reported. */
    this.inFlight_ = 0;
    /** Resolves once the core has been freed (after dispose and the last storage report). */
    this.retired = new Promise((resolve) => {
      this.retire = resolve;
    });

    this.authorityName_ = authority;
    /** @type {Core | null} null until the WebAssembly core is loaded */
    this.core = null;
    /**
     * Resources whose lock is requested before the core is loaded, until the core takes the
     * request over.
     * @type {Set<string>}
     */
    this.early = new Set();
    this.channel = null;
    const heard = (bytes) => {
      // A frozen page still handles messages, not timers: its storage deadlines are kept here.
      storage.database?.expireOverdue();
      this.step((core, now) => core.message(now, bytes));
    };
    try {
      if (env.BroadcastChannel) this.channel = new Channel(env.BroadcastChannel, names.channel, heard, counters);
    } catch (error) {
      // A constructor that throws (an opaque origin): this tab runs as if it had none, and says so.
      env.BroadcastChannel = null;
      reportError(error);
    }
    const report = (kind, resource) => {
      if (kind === EVENT_KIND_LOCK_GRANTED) this.allocateEarly(resource);
      this.step((core, now) => core.resourceEvent(kind, now, resource));
    };
    const probe = {
      refused: locksRefused,
      answered: locksAnswered,
      run: () =>
        probeLocks({
          locks: env.locks,
          name: names.lockProbe,
          timeoutMs: LOCKS_PROBE_TIMEOUT_MS,
          setTimeout: env.setTimeout,
          clearTimeout: env.clearTimeout,
          // Not once closed: a disposed Baton has no use for an answer after activation.
          deferred: () => !this.closed && env.document?.prerendering === true,
        }),
    };
    this.locks = env.locks ? new WebLocks(env.locks, names.lock, report, counters, names.marker, probe) : null;
    this.epochs = storage.epochs;
    const { database, health } = storage;
    /** @type {Promise<import('./lease.js').LeaseAuthority> | null} made on the first lease try */
    this.lease = null;
    /** @type {import('./lease.js').LeaseAuthority | null} once made, for the freeze handler */
    this.leaseAuthority_ = null;
    this.makeLease = database
      ? () =>
          loadLease().then(({ LeaseAuthority }) => {
            this.leaseAuthority_ = new LeaseAuthority({
              database,
              health,
              owner: config.id,
              key: names.leaseKey,
              successorKey,
              storedEpoch,
              read: (resource, record, counter) =>
                this.answer((core, now) => core.leaseRead(now, resource, record, counter), 'lease-write')?.record ?? null,
              committed: (resource, record) => this.step((core, now) => core.leaseResult(now, resource, record)),
              failed: (resource) => report(EVENT_KIND_LEASE_FAILED, resource),
              counters,
            });
            return this.leaseAuthority_;
          })
      : null;
    // Fetched while the core loads, so that the first lease try does not wait for it.
    if (database && authority === 'lease') loadLease().catch(() => {});

    if (lifecycle !== 'active') this.step((core, now) => core.lifecycle(now, lifecycle));
    if (!online) this.step((core, now) => core.plainEvent(EVENT_KIND_OFFLINE, now));
    whenLoaded(() => {
      if (this.closed) return;
      this.core = new Core({
        id: config.id,
        generation,
        appVersion: config.appVersion,
        capabilities: config.capabilities,
        authority: AUTHORITY_NAMES.indexOf(authority),
        heartbeatMs: config.heartbeatMs,
        suspectMs: config.suspectMs,
        leaseMs: config.leaseMs,
        startMs: env.startMs,
        seed: (config.seed + generation) >>> 0,
      }, env.now);
      this.pump();
      this.settleEarlyRequests();
    });
    // A core that failed to load never takes the early requests over.
    ready.catch(() => this.settleEarlyRequests());
  }

  // ------------------------------------------------------------------ events in

  /**
   * Queues one core step and runs the queue unless it is already running.
   * @param {(core: Core, now: number) => import('./core.js').Effect[]} event
   */
  step(event) {
    // A core that failed to load never comes: nothing to queue for.
    if (this.closed || (!this.core && coreStatus().state === 'failed')) return;
    this.queue.push(event);
    this.pump();
  }

  join(resource, policy) {
    // The lock first: the browser answers it while this tab reads and opens its storage and
    // loads its core. An observe-only join never runs for leadership: it must not hold the
    // lock even briefly.
    const early = !this.core && !policy.observeOnly && coreStatus().state !== 'failed';
    if (early && this.authorityName_ === 'web-locks' && this.locks && !this.early.has(resource)) {
      this.early.add(resource);
      this.locks.request(resource, 'queue');
    }
    this.epochs.warm(resource);
    this.step((core, now) => core.join(now, resource, policy));
  }

  /** The epoch counter of `resource`, read from the store off the grant path (EpochStore.readTop). */
  epochRead(resource, epoch) {
    this.step((core, now) => core.epochRead(now, resource, epoch));
  }

  /**
   * A lock was granted: its epoch's transaction begins now, in the grant's task, before the
   * core steps the grant (or, for a request made before the core was loaded, while it
   * loads), rather than once the core asks for it (EpochStore.allocateEarly): on a loaded
   * machine every step before the first request to the store is one more chance to lose the
   * processor. The core still decides: its request uses the answer only while this grant
   * stands.
   */
  allocateEarly(resource) {
    const request = this.locks.requests.get(resource);
    this.epochs.allocateEarly(resource, () => !this.closed && this.locks.requests.get(resource) === request);
  }

  /**
   * The core has stepped the events queued while it loaded: an early lock request it did
   * not take over is not wanted (the tab is not eligible for that resource now).
   */
  settleEarlyRequests() {
    for (const resource of this.early) this.locks.release(resource);
    this.early.clear();
  }

  /** @param {number} kind EVENT_KIND_LEAVE, EVENT_KIND_ABDICATE or EVENT_KIND_FORCE_ELECTION (constants.js) */
  resourceEvent(kind, resource) {
    this.step((core, now) => core.resourceEvent(kind, now, resource));
  }

  /** @param {'active'|'hidden'|'frozen'|'restored'|'closing'} state */
  lifecycle(state) {
    this.step((core, now) => core.lifecycle(now, state));
    if (state === 'frozen' || state === 'closing') this.abortLeaseTransactions();
  }

  /**
   * `pagehide`: the closing step, then the goodbye, and nothing else. A held lock goes back
   * when the promise its grant returned settles, i.e. in the first microtask after this
   * handler, whatever the handler does after resolving it. So the handler does only the step
   * and its lock releases (and, under the lease, begins the release's transaction, which
   * must reach the store before the goodbye); the goodbye and the other frames follow in a
   * microtask queued after the release. The leadership notices (and so the app's callbacks)
   * and the next timer wait for the next task that pumps (the retirement Baton queues, or a
   * message): a page being closed never runs it, a page kept in the bfcache runs it on its
   * way back. Nothing the app does can delay the release or the goodbye.
   */
  leave() {
    this.leaving = [];
    this.lifecycle('closing');
    const frames = this.leaving;
    this.leaving = null;
    queueMicrotask(() => {
      for (const frame of frames) this.execute(frame);
    });
  }

  /**
   * In the `freeze` and `pagehide` handlers, once the core has stepped the freeze or the
   * close (from then on it starts no transaction that waits on the page): a lease
   * transaction left open would hold the store while this page is frozen or being torn down
   * (no other tab could take the lease over), so the ones in flight are aborted, and the
   * core hears of it now, not when the page thaws. A closing leader's unread release is
   * not aborted: it waits for nothing, and runs once the renewal before it is aborted.
   */
  abortLeaseTransactions() {
    for (const resource of this.leaseAuthority_?.abortAll() ?? []) {
      this.step((core, now) => core.resourceEvent(EVENT_KIND_LEASE_ABORTED, now, resource));
    }
  }

  network(online) {
    this.step((core, now) => core.plainEvent(online ? EVENT_KIND_ONLINE : EVENT_KIND_OFFLINE, now));
  }

  /**
   * Test hook: stops (true) or restarts (false) this tab's timer, as freezing a page does.
   * Messages are still handled meanwhile, as in a frozen Chromium tab.
   */
  freezeTimers(frozen) {
    this.timersFrozen_ = frozen;
    if (frozen) this.disarm();
    else this.arm();
  }

  /**
   * Leaves gracefully: the core steps down everywhere, releases its locks and lease and
   * says goodbye; then the channel closes and the timer stops. Idempotent. Safe to call
   * from an app callback (the teardown waits for the running step to finish).
   */
  dispose() {
    if (this.disposing_ || this.closed) return;
    this.disposing_ = true;
    if (!this.core) {
      // Nothing was requested or announced without a core: there is nothing to give back.
      this.close();
      return;
    }
    this.step((core, now) => core.plainEvent(EVENT_KIND_DISPOSE, now));
  }

  // ------------------------------------------------------------------ the loop

  pump() {
    if (this.pumping_ || !this.core) return;
    this.pumping_ = true;
    try {
      for (;;) {
        if (this.queue.length > 0) {
          this.runQueued();
        } else if (this.notices.length > 0 && !this.leaving) {
          this.deliver(this.notices.shift());
        } else {
          break;
        }
      }
    } finally {
      this.pumping_ = false;
    }
    if (this.disposing_ && !this.closed) this.close();
    else if (!this.leaving) this.arm();
  }

  /** Steps the queued events and executes their effects (the notices wait for the pump). */
  runQueued() {
    while (this.queue.length > 0) {
      const effects = this.queue.shift()(this.core, this.env.monotonic());
      for (const effect of effects) this.execute(effect);
    }
  }

  /**
   * Steps `event` at once, after any queued before it, and returns its answer: the effect of
   * `kind` the step gives (null: none, or no core). For what a caller must know before it
   * goes on: the lease decision inside its transaction (which must still be open to write
   * it), the fence's verdict before a guarded effect. The step is still an event like any
   * other; only its timing differs. Answered after close() too, while the core lives: a
   * lease transaction still in flight then writes the release its term ended with.
   */
  answer(event, kind) {
    if (!this.core) return null;
    let effects = [];
    this.queue.push((core, now) => (effects = event(core, now)));
    // Within a pump (an app callback, an effect), its loop delivers the notices and sets
    // the timer after; else this is the pump, so that an effect of these steps that steps
    // again (a synchronous epoch allocation, a lock event with no lock manager) only queues
    // its event, as everywhere else, rather than pumping in the middle of a step's effects.
    if (this.pumping_) this.runQueued();
    else this.pump();
    return effects.find((effect) => effect.kind === kind) ?? null;
  }

  /** Turns one effect into a browser call (or, for leadership changes, a notice). */
  execute(effect) {
    const { resource } = effect;
    switch (effect.kind) {
      case 'broadcast':
        if (this.leaving) this.leaving.push(effect);
        else if (this.channel) this.channel.post(effect.bytes);
        else this.counters.framesUnsent += 1;
        break;
      case 'lock-request':
        // The core's first queued request takes over the one made before it was loaded.
        if (this.takeOverEarly(resource, effect.mode)) break;
        if (this.locks) this.locks.request(resource, effect.mode);
        else this.step((core, now) => core.resourceEvent(EVENT_KIND_LOCK_UNAVAILABLE, now, resource));
        break;
      case 'lock-release':
        this.early.delete(resource);
        this.locks?.release(resource);
        break;
      case 'allocate-epoch':
        this.inFlight_ += 1;
        this.epochs.allocate(resource, effect.floor, (epoch, durable) => {
          this.settled();
          this.step((core, now) => core.epochAllocated(now, resource, epoch, durable));
        });
        break;
      case 'lease-write':
        // In answer to a read, it belongs to that transaction (`answer` hands it over);
        // unread, it is written in a transaction of its own.
        if (effect.unread) this.runLease(resource, effect.record);
        break;
      case 'lease-try':
        this.runLease(resource, null);
        break;
      case 'fence-verdict':
        break; // an answer, read by fenceCheck
      case 'leader-changed':
        // A new term elsewhere: its epoch is in the store now; read it off the grant path.
        this.epochs.heard(resource, this.core.view(resource)?.leaderEpoch ?? 0);
        this.notices.push(effect);
        break;
      default:
        this.notices.push(effect);
    }
  }

  /**
   * Runs a lease transaction: the read-decide-write of a `lease-try` (`unread` null), or the
   * write of the record `unread`. Once the lease is made, it begins in this task: a closing
   * page's release then reaches the store before the goodbye that follows it.
   */
  runLease(resource, unread) {
    if (!this.makeLease) {
      this.step((core, now) => core.resourceEvent(EVENT_KIND_LEASE_FAILED, now, resource));
      return;
    }
    this.inFlight_ += 1;
    (this.leaseAuthority_
      ? this.leaseAuthority_.run(resource, unread)
      : (this.lease ??= this.makeLease()).then((lease) => lease.run(resource, unread), () => {
          // lease.js could not be loaded (its chunk not served): the try failed.
          this.counters.leaseFailures += 1;
          this.step((core, now) => core.resourceEvent(EVENT_KIND_LEASE_FAILED, now, resource));
        })
    ).finally(() => this.settled());
  }

  /** Whether a request made before the core was loaded stands for the core's own request. */
  takeOverEarly(resource, mode) {
    return this.early.delete(resource) && mode === 'queue';
  }

  /** Hands a leadership change to the app; a throwing listener must not stop the engine. */
  deliver(effect) {
    try {
      this.notify(effect);
    } catch (error) {
      this.counters.listenerErrors += 1;
      reportError(error);
    }
  }

  // ------------------------------------------------------------------ the timer

  /** Sets the one timer to the core's next deadline (or clears it when there is none). */
  arm() {
    if (this.closed || this.timersFrozen_ || !this.core) return;
    const at = this.core.nextDeadline();
    if (at === this.timerAt_ && this.timer !== null) return;
    this.disarm();
    if (at === Infinity) return;
    // The tick is due at the deadline itself: the core compares every deadline with `>=`.
    // Waking strictly after it instead would, with a millisecond clock, often wake twice
    // for one deadline (once on it, then again a millisecond later).
    const now = this.env.monotonic();
    const delay = at <= now ? 0 : Math.ceil(at - now);
    this.timerAt_ = at;
    const timer = this.env.setTimeout(() => {
      if (this.timer !== timer) return; // cleared, but the environment fired it anyway
      this.timer = null;
      this.timerAt_ = Infinity;
      // Timers may fire early by the clock (Node's loop clock lags performance.now()).
      if (this.env.monotonic() < at) {
        this.arm();
        return;
      }
      this.counters.timerFires += 1;
      this.step((core, tickNow) => core.tick(tickNow));
    }, delay);
    this.timer = timer;
  }

  disarm() {
    if (this.timer !== null) this.env.clearTimeout(this.timer);
    this.timer = null;
    this.timerAt_ = Infinity;
  }

  // ------------------------------------------------------------------ teardown

  /** After the dispose step: stop listening, release what is left, free the core. */
  close() {
    this.closed = true;
    this.queue.length = 0;
    this.disarm();
    this.channel?.close();
    this.locks?.dispose();
    this.final_ = this.core
      ? { metrics: this.core.metrics(), log: this.core.log(), authority: this.core.authority(), degraded: this.core.degraded() }
      : { metrics: {}, log: [], authority: this.authorityName_, degraded: false };
    if (this.inFlight_ === 0) this.free();
  }

  free() {
    this.core?.dispose();
    this.retire();
  }

  /** One storage operation reported; a closed runtime frees its core after the last one. */
  settled() {
    this.inFlight_ -= 1;
    if (this.closed && this.inFlight_ === 0) this.free();
  }

  // ------------------------------------------------------------------ queries

  view(resource) {
    return this.closed || !this.core ? null : this.core.view(resource);
  }

  presence() {
    return this.closed || !this.core ? [] : this.core.presence(this.env.monotonic());
  }

  metrics() {
    if (this.closed) return this.final_.metrics;
    return this.core ? this.core.metrics() : {};
  }

  log() {
    if (this.closed) return this.final_.log;
    return this.core ? this.core.log() : [];
  }

  authority() {
    if (this.closed) return this.final_.authority;
    return this.core ? this.core.authority() : this.authorityName_;
  }

  degraded() {
    if (this.closed) return this.final_.degraded;
    return this.core ? this.core.degraded() : false;
  }

  /**
   * Asks the core's fence whether a guarded effect of term `epoch` (0: no term) may run on
   * `resource` (a step: the check changes the fence).
   * @returns {{admitted: boolean, highest: number}}
   */
  fenceCheck(resource, epoch) {
    return this.answer((core, now) => core.fenceCheck(now, resource, epoch), 'fence-verdict') ?? { admitted: false, highest: 0 };
  }
}
