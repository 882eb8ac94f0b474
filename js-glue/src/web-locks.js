/**
 * The Web Locks authority: turns the core's lock effects into `navigator.locks` requests
 * and reports what the browser did back as core events.
 *
 * Per resource there is at most one request of ours at a time. A new request replaces a
 * queued one (the core's `lock_request` semantics). A lock is held by returning a promise
 * from the grant callback and resolving it on release.
 *
 * Reported: a grant of the current request (`lock_granted`), a queued request the
 * browser rejected (`lock_unavailable`), the held lock's request
 * rejecting, i.e. stolen (`lock_lost`). Not reported: our own aborts, and grants of
 * requests we no longer want, which are given back at once.
 *
 * A holder we cannot hear may still be alive: foreign code under a compatibility API's lock
 * name (a tab that still runs the original library, which knows nothing of stealing), or a
 * tab of another tab-baton build whose wire protocol differs (each drops the other's frames).
 * A steal from either would be stolen back, or leave two leaders. So while a tab holds a
 * lock it also holds a marker lock (names.js: the lock's Baton name and our wire version),
 * and a steal goes ahead only when a look at `locks.query()` shows that marker held, i.e.
 * the holder is a (stalled) tab of our wire version. A lock held without it belongs to code
 * we cannot hear: we wait in the queue as it would, and report the steal as refused
 * (`lock_unavailable`; counted in `foreignHolderWaits`).
 *
 * Chromium ignores the abort of a request that its lock manager has not received yet (a
 * page's first requests, aborted in the task that made them, as an app that disposes at
 * once does under React StrictMode): the request stays queued, and is granted later. So
 * an abort waits until the lock manager has answered the probe below, made after the first
 * request (in a microtask); a grant that comes meanwhile is given back, as any unwanted grant is.
 *
 * Whether the Locks API works here at all is found out at the first request (see
 * locks-probe.js): a `SecurityError` from any queued request, `FAILURES_BEFORE_REFUSAL`
 * queued requests in a row that fail otherwise (a working lock manager rejects a queued
 * request only when we abort it), or a lock manager that does not answer the probe, is
 * handed to `refused` (the Baton decides what to do about it).
 *
 * @module tab-baton/web-locks
 */

import { isRefusal } from './env.js';
import { EVENT_KIND_LOCK_GRANTED, EVENT_KIND_LOCK_LOST, EVENT_KIND_LOCK_UNAVAILABLE } from './constants.js';

/** Queued requests in a row that fail with anything but a SecurityError before Web Locks count as refused. */
const FAILURES_BEFORE_REFUSAL = 3;

/**
 * @typedef {object} LockRequest
 * @property {'queued'|'held'} state
 * @property {boolean} done released, replaced or settled: nothing more is reported
 * @property {boolean} aborted we aborted it ourselves
 * @property {AbortController | null} controller only for queued requests (the API forbids a
 *   signal with `steal`)
 * @property {(() => void) | null} unlock resolves the promise that holds the lock
 * @property {(() => void) | null} unmark releases the marker lock (or cancels its request)
 */

export class WebLocks {
  /**
   * @param {any} locks `navigator.locks`
   * @param {(resource: string) => string} lockName
   * @param {(kind: number, resource: string) => void} report an EVENT_KIND_LOCK_* (constants.js)
   * @param {Record<string, number>} counters glue counters (staleGrants, locksLost, lockErrors, foreignHolderWaits,
   *   markersLost)
   * @param {(resource: string) => string} markerName the marker lock of a holder of our
   *   wire version
   * @param {object} probe
   * @param {(error: Error) => void} probe.refused the Locks API refused this context or
   *   did not answer (called at most once)
   * @param {() => void} probe.answered a request was granted after `refused` said that the
   *   lock manager did not answer or kept failing (a SecurityError is for good)
   * @param {() => Promise<Error | null>} probe.run locks-probe.js's probe, made ready to run
   */
  constructor(locks, lockName, report, counters, markerName, probe) {
    this.locks = locks;
    this.lockName = lockName;
    this.report = report;
    this.counters = counters;
    this.markerName = markerName;
    this.probe = probe;
    this.probed = false;
    /** The refusal reported, if any. */
    this.refusal = null;
    /** A request of ours was granted: the lock manager works, however late the probe. */
    this.granted = false;
    /** Queued requests that failed since the last grant. */
    this.failures = 0;
    /** @type {Map<string, LockRequest>} */
    this.requests = new Map();
    /** Steals waiting for a look at the holder, per resource: a later call supersedes one. */
    this.holderChecks = new Map();
    /**
     * Until the lock manager has answered the probe made after our first request: its
     * answer, which aborts wait for (see the module comment). Null before the first
     * request and once answered.
     * @type {Promise<void> | null}
     */
    this.reaching_ = null;
    this.disposed = false;
  }

  /**
   * Requests the lock for `resource`.
   * @param {string} resource
   * @param {'queue'|'steal'} mode
   */
  request(resource, mode) {
    if (this.disposed) return;
    this.holderChecks.delete(resource);
    if (mode === 'steal') this.stealFromOursOnly(resource);
    else this.issue(resource, mode);
    // After our request, so that the browser has that first, and the probe's answer tells
    // that it has it: aborts wait for that answer (see the module comment). In a microtask:
    // what the caller's task asks for next (the epoch's storage) is what a start-up waits
    // for; the probe is not.
    if (!this.probed) {
      this.probed = true;
      const probed = Promise.resolve().then(() => this.probe.run()).then((error) => {
        if (this.reaching_ === probed) this.reaching_ = null;
        if (error) this.refuse(error);
      });
      this.reaching_ = probed;
    }
  }

  /**
   * Makes the browser request, replacing ours.
   * @param {string} resource
   * @param {'queue'|'steal'} mode
   */
  issue(resource, mode) {
    this.release(resource); // replaces any request of ours still queued (or, defensively, held)
    /** @type {LockRequest} */
    const req = { state: 'queued', done: false, aborted: false, controller: null, unlock: null, unmark: null };
    const options = {};
    if (mode === 'steal') options.steal = true;
    else {
      req.controller = new AbortController();
      options.signal = req.controller.signal;
    }
    this.requests.set(resource, req);

    const granted = (lock) => {
      if (req.done) {
        // Granted after we released or replaced the request: give it back now.
        this.counters.staleGrants += 1;
        return undefined;
      }
      req.state = 'held';
      req.controller = null;
      this.granted = true;
      this.failures = 0;
      if (this.refusal && !isRefusal(this.refusal)) {
        this.refusal = null;
        this.probe.answered();
      }
      this.holderChecks.delete(resource); // granted while we looked: no steal needed
      // The hold must exist before the report: stepping the grant may release it at once.
      const hold = new Promise((resolve) => {
        req.unlock = resolve;
      });
      this.mark(resource, req); // requested after the grant, not awaited: it never delays it
      this.report(EVENT_KIND_LOCK_GRANTED, resource);
      return hold;
    };
    const rejected = (error) => {
      if (req.aborted || req.done) return; // our own abort, or already accounted for
      const wasHeld = req.state === 'held';
      this.finish(resource, req);
      req.unmark?.();
      req.unlock?.(); // nothing waits on it any more; let it settle
      if (wasHeld) {
        this.counters.locksLost += 1;
        this.report(EVENT_KIND_LOCK_LOST, resource);
      } else {
        this.counters.lockErrors += 1;
        this.report(EVENT_KIND_LOCK_UNAVAILABLE, resource);
        this.failures += 1;
        if (isRefusal(error) || this.failures >= FAILURES_BEFORE_REFUSAL) this.refuse(error);
      }
    };

    let pending;
    try {
      pending = this.locks.request(this.lockName(resource), options, granted);
    } catch (error) {
      pending = Promise.reject(error); // a non-conforming implementation that throws
    }
    Promise.resolve(pending).then(() => this.finish(resource, req), rejected);
  }

  /**
   * Releases the held lock or withdraws the queued request for `resource`. A withdrawn
   * `steal` request cannot be aborted; if it is granted later, it is given back.
   * @param {string} resource
   */
  release(resource) {
    this.holderChecks.delete(resource);
    const req = this.requests.get(resource);
    if (!req) return;
    this.finish(resource, req);
    if (req.state === 'held') {
      req.unmark?.(); // the marker goes first: it never outlives our hold of the lock
      req.unlock?.();
    } else if (req.controller) {
      req.aborted = true;
      const { controller } = req;
      if (this.reaching_) this.reaching_.then(() => controller.abort());
      else controller.abort();
    }
  }

  /**
   * Holds the marker lock while `req` holds the lock. Taken with `steal`: only the lock's
   * holder asks for it, so any other holder of the marker is a stale tab. Its loss does not
   * end leadership (the lock itself says when that is lost), but a marker taken from us
   * while we hold the lock (by same-origin code: a stale tab of ours lost the lock first) is
   * asked for again, in the queue: held by no one, it would make every other tab take us for
   * code it cannot hear and never replace us once we stall. Counted in `markersLost`.
   */
  mark(resource, req) {
    let unmark = null;
    let cancelled = false;
    let held = false;
    let queued = null;
    req.unmark = () => {
      cancelled = true;
      queued?.abort();
      unmark?.();
    };
    const marked = () => {
      if (cancelled) return undefined;
      held = true;
      return new Promise((resolve) => {
        unmark = resolve;
      });
    };
    const ask = (options) => {
      try {
        Promise.resolve(this.locks.request(this.markerName(resource), options, marked)).catch(() => {
          // Not taken from us unless it was held (a request that fails is not asked again).
          if (cancelled || !held) return;
          held = false;
          this.counters.markersLost += 1;
          // In the queue, not by steal: whoever took it gets no steal war, and while it
          // holds the marker, the tabs that find us stalled replace us as they should.
          queued = new AbortController();
          ask({ signal: queued.signal });
        });
      } catch {
        // A non-conforming implementation: without the marker, others only wait for us.
      }
    };
    ask({ steal: true });
  }

  /**
   * A steal, where code we cannot hear may hold the lock: our queued request stays while we
   * look; the steal goes ahead only if our marker shows a holder of our wire version (or
   * the lock has no holder at all).
   */
  stealFromOursOnly(resource) {
    const check = {};
    this.holderChecks.set(resource, check);
    const lockName = this.lockName(resource);
    const markerName = this.markerName(resource);
    const looked = typeof this.locks.query === 'function' ? Promise.resolve().then(() => this.locks.query()) : Promise.reject(new Error('no query()'));
    looked
      .then((snapshot) => {
        const held = Array.isArray(snapshot?.held) ? snapshot.held : [];
        const lockHeld = held.some((lock) => lock?.name === lockName);
        const markerHeld = held.some((lock) => lock?.name === markerName);
        return !lockHeld || markerHeld;
      })
      .catch(() => false) // cannot tell who holds it: never steal from code we cannot hear
      .then((oursHolder) => {
        if (this.disposed || this.holderChecks.get(resource) !== check) return; // superseded
        this.holderChecks.delete(resource);
        if (oursHolder) {
          this.issue(resource, 'steal');
          return;
        }
        this.counters.foreignHolderWaits += 1;
        this.release(resource);
        this.report(EVENT_KIND_LOCK_UNAVAILABLE, resource);
      });
  }

  /** Hands the first refusal on (a disposed instance has no one left to tell). */
  refuse(error) {
    if (this.disposed || this.refusal || (this.granted && error?.name === 'TimeoutError')) return;
    // Whatever a broken implementation rejects with, the report names an error.
    this.refusal = typeof error?.name === 'string' ? error : new Error(String(error));
    this.probe.refused(this.refusal);
  }

  /** Marks `req` finished and forgets it if it is still the current request. */
  finish(resource, req) {
    req.done = true;
    if (this.requests.get(resource) === req) this.requests.delete(resource);
  }

  /** Releases every lock and withdraws every request. */
  dispose() {
    for (const resource of [...this.requests.keys()]) this.release(resource);
    this.disposed = true;
  }
}
