/**
 * `requestLeadership(name, onLeader) -> relinquish`, the API of the Web Locks leader
 * election article, on top of Baton: `onLeader(name)` runs each time this tab becomes the
 * leader; `relinquish()` gives leadership up (or withdraws from the election) for good.
 *
 * The Web Lock is `name` itself, as in the article, so a tab still running the article's
 * code and a Baton tab exclude each other. Unlike the article's bare lock, leadership can
 * also end without `relinquish` (a frozen Baton leader is replaced); pass
 * `options.onFollower` to hear about it.
 *
 * @module tab-baton/compat/request-leadership
 */
import { envOption, functionOption, numberOption, oneOfOption, optionsObject } from '../options.js';
import { reportError } from '../errors.js';
import { registerCompat, singleElection } from './shared.js';
import { AUTHORITY_CHOICES } from '../baton.js';

const OPTIONS = ['heartbeatMs', 'suspectMs', 'authority', 'env', 'onFollower'];

/**
 * @param {string} name the election (lock) name
 * @param {(name: string) => void} onLeader
 * @param {object} [options] heartbeatMs, suspectMs, authority, env, onFollower
 * @returns {() => void} relinquish: idempotent
 */
export function requestLeadership(name, onLeader, options) {
  const where = 'requestLeadership';
  if (typeof name !== 'string' || name === '') throw new TypeError(`${where}: "name" must be a non-empty string`);
  if (typeof onLeader !== 'function') throw new TypeError(`${where}: "onLeader" must be a function`);
  const o = optionsObject(where, 'options', options, OPTIONS, { optional: true });
  const heartbeatMs = numberOption(where, o, 'heartbeatMs', { fallback: undefined, above: 0 });
  const suspectMs = numberOption(where, o, 'suspectMs', { fallback: undefined, above: heartbeatMs ?? 0 });
  const authority = oneOfOption(where, o, 'authority', AUTHORITY_CHOICES, undefined);
  const env = envOption(where, o);
  const onFollower = functionOption(where, o, 'onFollower');

  const { baton, handle } = singleElection({ where, name, nameOption: 'name', lockName: name, heartbeatMs, suspectMs, authority, env });
  handle.onChange((change) => {
    try {
      if (change.type === 'elected') onLeader(name);
      else if (change.type === 'deposed' && onFollower) onFollower(name);
    } catch (error) {
      reportError(error);
    }
  });
  return registerCompat(function relinquish() {
    baton.dispose();
  }, baton);
}
