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
 * @module tab-baton/web-locks
 */

/**
 * @typedef {object} LockRequest
 * @property {'queued'|'held'} state
 * @property {boolean} done released, replaced or settled: nothing more is reported
 * @property {boolean} aborted we aborted it ourselves
 * @property {AbortController | null} controller only for queued requests (the API forbids a
 *   signal with `steal`)
 * @property {(() => void) | null} unlock resolves the promise that holds the lock
 */

export class WebLocks {
  /**
   * @param {any} locks `navigator.locks`
   * @param {(resource: string) => string} lockName
   * @param {(kind: 'lock_granted'|'lock_lost'|'lock_unavailable', resource: string) => void} report
   * @param {Record<string, number>} counters glue counters (staleGrants, locksLost, lockErrors)
   */
  constructor(locks, lockName, report, counters) {
    this.locks = locks;
    this.lockName = lockName;
    this.report = report;
    this.counters = counters;
    /** @type {Map<string, LockRequest>} */
    this.requests = new Map();
    this.disposed = false;
  }

  /**
   * Requests the lock for `resource`.
   * @param {string} resource
   * @param {'queue'|'steal'} mode
   */
  request(resource, mode) {
    if (this.disposed) return;
    this.release(resource); // replaces any request of ours still queued (or, defensively, held)
    /** @type {LockRequest} */
    const req = { state: 'queued', done: false, aborted: false, controller: null, unlock: null };
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
      // The hold must exist before the report: stepping the grant may release it at once.
      const hold = new Promise((resolve) => {
        req.unlock = resolve;
      });
      this.report('lock_granted', resource);
      return hold;
    };
    const rejected = (error) => {
      if (req.aborted || req.done) return; // our own abort, or already accounted for
      const wasHeld = req.state === 'held';
      this.finish(resource, req);
      req.unlock?.(); // nothing waits on it any more; let it settle
      if (wasHeld) {
        this.counters.locksLost += 1;
        this.report('lock_lost', resource);
      } else {
        this.counters.lockErrors += 1;
        this.lastError = error;
        this.report('lock_unavailable', resource);
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
    const req = this.requests.get(resource);
    if (!req) return;
    this.finish(resource, req);
    if (req.state === 'held') {
      req.unlock?.();
    } else if (req.controller) {
      req.aborted = true;
      req.controller.abort();
    }
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
