/**
 * The awaforge `leaderElection` module's API on top of Baton:
 * `leaderElection.create({channel, id, heartbeatMs, takeoverMs, _forceFallback})` and
 * `leaderElection.support()`. `channel` is the exact Web Lock name, as awaforge documents
 * (Baton's frames use the channel `baton/<channel>/v1` beside it). `heartbeatMs` and
 * `takeoverMs` (the core's suspect timeout) pass through; `_forceFallback: true` forces the
 * broadcast-only authority (for tests).
 *
 * Without Web Locks it runs awaforge's documented fallback, BroadcastChannel heartbeats
 * (Baton's broadcast-only authority), never the IndexedDB lease that `createBaton` would
 * pick there: under the lease the first tab to ask wins, where awaforge promises that of
 * the tabs competing the lowest id wins.
 *
 * Differences from awaforge, on purpose: `onLeader(fn)` registered while this instance
 * already leads calls `fn` at once (an observable of the current state); leadership can also
 * end while the tab lives (a frozen leader is replaced), and `onFollower` says so.
 *
 * @module tab-baton/compat/awaforge
 */
import { randomId, resolveEnv, supportOf } from '../env.js';
import { LIMITS, booleanOption, envOption, numberOption, optionsObject, stringOption } from '../options.js';
import { registerCompat, singleElection } from './shared.js';
import { reportError } from '../errors.js';
import { DEFAULT_HEARTBEAT_MS, DEFAULT_SUSPECT_MS, SUSPECT_HEARTBEATS } from '../constants.js';

const CREATE_OPTIONS = ['channel', 'id', 'heartbeatMs', 'takeoverMs', '_forceFallback', 'env'];

/**
 * @param {object} opts
 * @returns {object} the Election (see index.d.ts)
 */
function create(opts) {
  const where = 'leaderElection.create';
  const o = optionsObject(where, 'opts', opts, CREATE_OPTIONS);
  const channel = stringOption(where, o, 'channel', { required: true });
  const id = stringOption(where, o, 'id', { maxBytes: LIMITS.idBytes }) ?? randomId();
  const heartbeatMs = numberOption(where, o, 'heartbeatMs', { fallback: DEFAULT_HEARTBEAT_MS, above: 0 });
  const takeoverMs = numberOption(where, o, 'takeoverMs', { fallback: Math.max(DEFAULT_SUSPECT_MS, SUSPECT_HEARTBEATS * heartbeatMs), above: heartbeatMs });
  const forceFallback = booleanOption(where, o, '_forceFallback', false);
  const env = envOption(where, o);

  const leaderListeners = new Set();
  const followerListeners = new Set();
  const call = (listeners) => {
    for (const fn of [...listeners]) {
      try {
        fn();
      } catch (error) {
        reportError(error);
      }
    }
  };
  const { baton, handle } = singleElection({
    where,
    name: channel,
    nameOption: 'channel',
    lockName: channel,
    id,
    heartbeatMs,
    suspectMs: takeoverMs,
    authority: forceFallback || wouldLease(env) ? 'broadcast' : 'auto',
    // Web Locks that refuse this page: awaforge's fallback too, never the lease.
    leaseFallback: false,
    env,
  });
  handle.onChange((change) => {
    if (change.type === 'elected') call(leaderListeners);
    // Losing leadership, including by dispose() while leading.
    else if ((change.type === 'deposed' || change.type === 'released') && change.token) call(followerListeners);
  });

  const subscribe = (listeners, name) => (fn) => {
    if (typeof fn !== 'function') throw new TypeError(`${name}: "fn" must be a function`);
    listeners.add(fn);
    return () => {
      listeners.delete(fn);
    };
  };
  const subscribeLeader = subscribe(leaderListeners, 'onLeader');

  return registerCompat(Object.freeze({
    id,
    /** Registered while already leading: `fn` is called at once, then on every later term. */
    onLeader(fn) {
      const unsubscribe = subscribeLeader(fn);
      if (handle.state() === 'leader') call([fn]);
      return unsubscribe;
    },
    onFollower: subscribe(followerListeners, 'onFollower'),
    isLeader: () => handle.state() === 'leader',
    /** `{id, since, isMe}` of the known leader, or null (during the first election). */
    leader() {
      const info = handle.leader();
      return info && { id: info.id, since: info.since, isMe: info.isMe };
    },
    dispose() {
      baton.dispose();
      leaderListeners.clear();
      followerListeners.clear();
    },
  }), baton);
}

/** Whether 'auto' would pick the IndexedDB lease: no Web Locks, but IndexedDB. */
function wouldLease(env) {
  const { webLocks, indexedDB } = supportOf(resolveEnv(env));
  return !webLocks && indexedDB;
}

/**
 * `{webLocks, broadcastChannel}`: whether the primary strategy (Web Locks) is available. An
 * opaque origin (a sandboxed iframe, a data: document) has `navigator.locks` but every
 * request there is refused, so it does not count.
 */
function support() {
  const { webLocks, broadcastChannel } = supportOf(resolveEnv());
  return { webLocks: webLocks && globalThis.origin !== 'null', broadcastChannel };
}

// Pure: a bundle that does not use it drops it.
export const leaderElection = /* @__PURE__ */ Object.freeze({ create, support });
