/**
 * Whether `navigator.locks` works in this context, found out at first use rather than from
 * its presence: an opaque origin (a sandboxed iframe, a data: or blob: document) has the
 * object but refuses every request with a `SecurityError`, and a lock manager can also
 * never answer at all. A queued request cannot tell "never answers" from "waits behind a
 * holder", so the probe asks with `ifAvailable`, which the browser answers at once either
 * way (with the lock, or with null when it is held).
 *
 * @module tab-baton/locks-probe
 */
import { isRefusal } from './env.js';

/**
 * How long the lock manager may take to answer an `ifAvailable` request. It answers in
 * well under a millisecond on an idle machine; the margin is for a renderer that a loaded
 * machine leaves unscheduled for seconds, since a false alarm makes an 'auto' Baton give
 * up Web Locks for good.
 */
export const LOCKS_PROBE_TIMEOUT_MS = 5000;

/**
 * How long the probe still waits once its deadline has passed. A page that did not run for
 * a while (a long task, a debugger pause, a frozen page) runs a timer that came due
 * meanwhile before a lock answer that arrived meanwhile (seen in Chromium): the answer is
 * queued behind the deadline, and runs within this grace.
 */
const GRACE_MS = 250;

/**
 * Asks for `name` with `ifAvailable` and gives it back at once. Resolves with null when
 * the lock manager answered, with the refusal when it refused (`SecurityError`), or with a
 * `TimeoutError` when it did not answer within the deadline and the grace after it. Any
 * other failure resolves null: it is not this probe's to judge (the requests themselves
 * report it).
 * @param {object} deps
 * @param {any} deps.locks
 * @param {string} deps.name a lock name no resource uses
 * @param {number} deps.timeoutMs
 * @param {(fn: () => void, ms: number) => any} deps.setTimeout
 * @param {(id: any) => void} deps.clearTimeout
 * @param {() => boolean} deps.deferred true while the browser defers lock requests on
 *   purpose (a prerendering page): the deadline starts again meanwhile
 * @returns {Promise<Error | null>}
 */
export function probeLocks({ locks, name, timeoutMs, setTimeout, clearTimeout, deferred }) {
  return new Promise((resolve) => {
    let timer = null;
    const settle = (outcome) => {
      if (timer === null) return;
      clearTimeout(timer);
      timer = null;
      resolve(outcome);
    };
    const expire = () => {
      timer = deferred() ? setTimeout(expire, timeoutMs) : setTimeout(giveUp, GRACE_MS);
    };
    const giveUp = () => settle(timeoutError(timeoutMs));
    timer = setTimeout(expire, timeoutMs);
    try {
      Promise.resolve(locks.request(name, { ifAvailable: true }, () => settle(null))).then(
        () => settle(null),
        (error) => settle(isRefusal(error) ? error : null),
      );
    } catch (error) {
      settle(isRefusal(error) ? error : null);
    }
  });
}

function timeoutError(ms) {
  const error = new Error(`navigator.locks: no answer in ${ms} ms`);
  error.name = 'TimeoutError';
  return error;
}
