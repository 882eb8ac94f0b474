/**
 * What the single-election APIs (awaforge, requestLeadership, broadcast-channel) share:
 * one Baton whose namespace is the user's name (its channel is `baton/<name>/v1`), leading
 * one resource under the Web Lock the original API documents (`lockName`), so that a tab
 * still running the original code and a Baton tab exclude each other.
 *
 * @module tab-baton/compat/shared
 */
import { batonOf, createBatonWithLockName } from '../baton.js';
import { NAMESPACE_BYTES, checkString } from '../options.js';

/** The resource every single-election API leads inside its namespace. */
export const RESOURCE = 'leader';

/** Compatibility object -> the Baton behind it (this package's tests read its metrics). */
const batons = new WeakMap();

/** Remembers the Baton behind a compatibility object; returns the object. */
export function registerCompat(api, baton) {
  batons.set(api, baton);
  return api;
}

/** The metrics of the Baton behind a compatibility object, or undefined. */
export function compatMetrics(api) {
  return batons.get(api)?.metrics();
}

/**
 * @param {object} options
 * @param {string} options.where the API's name, for option errors
 * @param {string} options.name the election's name (namespace of Baton's channel and storage)
 * @param {string} options.nameOption what the API calls that name, for its errors
 * @param {string} options.lockName the exact Web Lock name of the original API
 * @param {string} [options.id]
 * @param {number} [options.heartbeatMs]
 * @param {number} [options.suspectMs]
 * @param {'auto'|'web-locks'|'lease'|'broadcast'} [options.authority]
 * @param {object} [options.env]
 * @param {object} [options.eligible]
 * @param {boolean} [options.observeOnly] join without running for leadership (see Baton#lead)
 * @param {(token: object, signal: AbortSignal) => unknown} [options.run]
 * @param {boolean} [options.leaseFallback] false: refused Web Locks give way to broadcast
 *   only, never to the lease
 */
export function singleElection({ where, name, nameOption, lockName, id, heartbeatMs, suspectMs, authority, env, eligible, observeOnly, run, leaseFallback }) {
  // The name is Baton's namespace, whose limits it has; an error names the API's own option.
  checkString(where, nameOption, name, NAMESPACE_BYTES);
  // Web Locks refuse such a name (NotSupportedError) on every request: said now, rather than
  // found out at the first request and run broadcast only, degraded, for the Baton's life.
  if (lockName.startsWith('-')) throw new TypeError(`${where}: option "${nameOption}" must not start with "-" (Web Locks reserve such names)`);
  const baton = createBatonWithLockName(
    where,
    dropUndefined({ namespace: name, id, heartbeatMs, suspectMs, authority, env }),
    () => lockName,
    { leaseFallback },
  );
  const handle = batonOf(baton).lead(RESOURCE, dropUndefined({ eligible, run }), observeOnly);
  return { baton, handle };
}

function dropUndefined(object) {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined));
}
