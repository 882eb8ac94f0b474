/**
 * What the single-election APIs (awaforge, requestLeadership, broadcast-channel) share:
 * one Baton whose namespace is the user's name (so their lock and channel names are
 * `baton/<name>/v1/leader` and `baton/<name>/v1`), leading one resource.
 *
 * @module tab-baton/compat/shared
 */
import { createBaton } from '../baton.js';

/** The resource every single-election API leads inside its namespace. */
export const RESOURCE = 'leader';

/**
 * @param {object} options
 * @param {string} options.name the election's name (lock and channel)
 * @param {string} [options.id]
 * @param {number} [options.heartbeatMs]
 * @param {number} [options.suspectMs]
 * @param {'auto'|'web-locks'|'lease'|'broadcast'} [options.authority]
 * @param {object} [options.env]
 * @param {object} [options.eligible]
 * @param {(token: object, signal: AbortSignal) => unknown} [options.run]
 */
export function singleElection({ name, id, heartbeatMs, suspectMs, authority, env, eligible, run }) {
  const baton = createBaton(dropUndefined({ namespace: name, id, heartbeatMs, suspectMs, authority, env }));
  const handle = baton.lead(RESOURCE, dropUndefined({ eligible, run }));
  return { baton, handle };
}

function dropUndefined(object) {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined));
}
