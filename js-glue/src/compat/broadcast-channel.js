/**
 * broadcast-channel's `createLeaderElection(channel, options)` on top of Baton, so an app
 * using that library switches by changing its import. The elector has the library's
 * surface: `awaitLeadership()`, `hasLeader()`, `isLeader`, `isDead`, `die()`,
 * `onduplicate`, `token`, `broadcastChannel`, `applyOnce()`.
 *
 * The Web Lock is the library's own, `pubkey-bc||<method type>||<channel name>` (the method
 * type of a broadcast-channel channel, 'native' for a native channel or a name), so a tab
 * still on broadcast-channel and a Baton tab never both lead under Web Locks.
 *
 * As in the library, the election is lazy: the elector only observes (knows the leader)
 * until `awaitLeadership()` or `applyOnce()` is called. Observing is a join with the core's
 * observe-only policy: the core follows the election and never lets this tab run in it.
 *
 * `onduplicate` fires in both leaders when two are seen, as the library's does: in the one
 * whose term ends because another leader showed up (a newer or conflicting claim, a stolen
 * lock, a lost lease), which then tells the other on a small side channel
 * (`baton/<name>/v1/duplicate`), where it fires too. Once per term on each side.
 *
 * As the library does, a leading elector registers with the `unload` package, so that
 * `unload.runAll()` (the library's own tests, apps that simulate an exit) kills it; `die()`
 * takes it off again. `unload` is a dependency, as it is the library's, imported on first
 * use: a bundler resolves it to the one module the app's own `import 'unload'` gets, and an
 * app that never creates an elector loads none of it.
 *
 * @module tab-baton/compat/broadcast-channel
 */
import { AUTHORITY_CHOICES, batonOf, entryOf } from '../baton.js';
import { reportError } from '../errors.js';
import { holdProcessOpen } from '../env.js';
import { ready, whenLoaded } from '../core.js';
import { LIMITS, envOption, numberOption, oneOfOption, optionsObject, stringOption } from '../options.js';
import { registerCompat, singleElection } from './shared.js';
import { DEFAULT_HEARTBEAT_MS, DEFAULT_SUSPECT_MS, SUSPECT_HEARTBEATS } from '../constants.js';

const OPTIONS = ['fallbackInterval', 'responseTime', 'heartbeatMs', 'authority', 'env', 'id'];
const DUPLICATE_REASONS = new Set(['conflict', 'newer-epoch', 'lock-lost', 'lease-lost', 'stalled']);
/** Channels that already have an elector (as in the library, one per channel). */
const electors = new WeakSet();

/** The `unload` package's API, or null where it cannot be loaded; loaded on first use. */
let unloadLoaded = null;
function loadUnload() {
  unloadLoaded ??= import('unload').then(
    (module) => [module, module.default].find((api) => typeof api?.add === 'function') ?? null,
    () => null,
  );
  return unloadLoaded;
}

/** The library's Web Lock name for a channel: `pubkey-bc||<method type>||<name>`. */
function libraryLockName(channel, name) {
  const type = typeof channel === 'object' && typeof channel.method?.type === 'string' ? channel.method.type : 'native';
  return `pubkey-bc||${type}||${name}`;
}

/** The side channel, or null where there is no BroadcastChannel or it cannot be opened. */
function openSideChannel(env, name) {
  if (!env.BroadcastChannel) return null;
  try {
    const channel = new env.BroadcastChannel(name);
    channel.unref?.(); // Node: never keeps the process alive
    return channel;
  } catch (error) {
    reportError(error);
    return null;
  }
}

/** A "two leaders" notice on the side channel: exactly these fields, or it is dropped. */
function isDuplicateNotice(data) {
  return (
    data !== null &&
    typeof data === 'object' &&
    Object.keys(data).length === 3 &&
    data.kind === 'duplicate' &&
    typeof data.from === 'string' &&
    data.from.length <= LIMITS.idBytes && // UTF-16 units: at most the id's UTF-8 bytes
    Number.isSafeInteger(data.epoch) &&
    data.epoch >= 0
  );
}

/**
 * @param {{name: string} | string} channel a BroadcastChannel (this library's, broadcast-channel's
 *   or the native one: only its `name` is used) or a name
 * @param {object} [options] fallbackInterval (the suspect timeout, default 3000 ms),
 *   responseTime (accepted, unused), heartbeatMs, authority, env, id
 */
export function createLeaderElection(channel, options) {
  const where = 'createLeaderElection';
  const name = typeof channel === 'string' ? channel : channel && typeof channel === 'object' ? channel.name : undefined;
  if (typeof name !== 'string' || name === '') {
    throw new TypeError(`${where}: "channel" must be a BroadcastChannel (with a name) or a non-empty string`);
  }
  if (typeof channel === 'object') {
    if (electors.has(channel) || channel._leaderElector) throw new Error('BroadcastChannel already has a leader-elector');
  }
  const o = optionsObject(where, 'options', options, OPTIONS, { optional: true });
  // Each default follows the other when only one is given, as createBaton's suspectMs does.
  const givenInterval = numberOption(where, o, 'fallbackInterval', { fallback: undefined, above: 0 });
  numberOption(where, o, 'responseTime', { fallback: undefined, above: 0 });
  const heartbeatMs = numberOption(where, o, 'heartbeatMs', { fallback: Math.min(DEFAULT_HEARTBEAT_MS, (givenInterval ?? DEFAULT_SUSPECT_MS) / SUSPECT_HEARTBEATS), above: 0 });
  const suspectMs = givenInterval ?? Math.max(DEFAULT_SUSPECT_MS, SUSPECT_HEARTBEATS * heartbeatMs);
  if (heartbeatMs >= suspectMs) throw new TypeError(`${where}: option "heartbeatMs" must be less than "fallbackInterval"`);
  const authority = oneOfOption(where, o, 'authority', AUTHORITY_CHOICES, undefined);
  const id = stringOption(where, o, 'id', { maxBytes: LIMITS.idBytes });
  const env = envOption(where, o);

  const lockName = libraryLockName(channel, name);
  const { baton, handle } = singleElection({
    where,
    name,
    nameOption: 'channel',
    lockName,
    id,
    heartbeatMs,
    suspectMs,
    authority,
    env,
    observeOnly: true,
  });
  const internals = batonOf(baton);
  const entry = entryOf(handle);

  let started = false;
  let dead = false;
  let diePromise = null;
  let duplicateHandler = null;
  /** The epoch of the last term this tab reported a duplicate for (once per term). */
  let duplicateReportedFor = -1;
  /**
   * A notice heard while this tab was taking over, its term not begun yet (a leader whose
   * lock it stole can hear of the steal first): reported once that term begins.
   */
  let toldWhileCandidate = null;
  /** Resolvers waiting for this tab to lead. */
  let awaitingLeadership = null;
  /** This elector's entry in `unload` (from its first term until it dies). */
  let unloadEntry = null;
  const unloadReady = loadUnload();

  const reportDuplicate = (epoch, reason, other) => {
    if (epoch === duplicateReportedFor) return false;
    duplicateReportedFor = epoch;
    if (duplicateHandler) {
      try {
        duplicateHandler.call(channel, Object.freeze({ type: 'duplicate', reason, epoch, other }));
      } catch (error) {
        reportError(error);
      }
    }
    return true;
  };

  // The side channel on which a deposed leader tells the current one that they overlapped.
  const side = openSideChannel(internals.env, `${internals.names.channel}/duplicate`);
  const onSide = (event) => {
    const data = event.data;
    if (!isDuplicateNotice(data)) {
      internals.counters.droppedSideMessages += 1;
      return;
    }
    if (data.from === baton.id) return;
    const token = handle.token();
    if (token) reportDuplicate(token.epoch, 'told', data.from);
    else if (handle.state() === 'candidate') toldWhileCandidate = data;
  };
  side?.addEventListener('message', onSide);
  const tell = (epoch) => {
    try {
      side?.postMessage({ kind: 'duplicate', from: baton.id, epoch });
    } catch {
      internals.counters.postFailures += 1;
    }
  };

  handle.onChange((change) => {
    if (change.type === 'elected') {
      if (toldWhileCandidate && toldWhileCandidate.epoch < change.token.epoch) reportDuplicate(change.token.epoch, 'told', toldWhileCandidate.from);
      toldWhileCandidate = null;
      // Registered before awaitLeadership() resolves, so that code awaiting it finds it there.
      unloadReady.then((unload) => {
        if (unload && !dead && !unloadEntry) unloadEntry = unload.add(() => elector.die());
      });
      awaitingLeadership?.resolve();
    } else if (change.type === 'deposed' && DUPLICATE_REASONS.has(change.reason) && change.token) {
      const other = change.leader && !change.leader.isMe ? change.leader.id : null;
      if (reportDuplicate(change.token.epoch, change.reason, other)) tell(change.token.epoch);
    }
    // Kept from the candidacy to its term (a 'leader-changed' may come first), dropped otherwise.
    if (change.type !== 'elected' && handle.state() !== 'candidate' && handle.state() !== 'leader') toldWhileCandidate = null;
  });

  /** Starts competing: the default policy (any tab, hidden or not). */
  const start = () => {
    if (started || dead) return;
    started = true;
    internals.setPolicy(entry, { ...entry.policy, observeOnly: false });
  };

  const elector = {
    broadcastChannel: channel,
    token: baton.id,
    get isLeader() {
      return handle.state() === 'leader';
    },
    get isDead() {
      return dead;
    },
    /** True if this or another tab leads now (false while no leader is known). */
    async hasLeader() {
      if (dead) return false;
      if (handle.leader()) return true;
      // With Web Locks, the lock says it even before the leader's first heartbeat arrives;
      // where they refuse this page (a sandboxed iframe), nothing more is known.
      const { env } = internals;
      const locks = env.locks;
      if (internals.authority !== 'web-locks' || !locks || typeof locks.query !== 'function') return false;
      // A lock manager that never answers must not hang the caller: after a heartbeat,
      // the messages alone answer. (In Node the process stays open meanwhile: Baton's
      // timers do not hold it.)
      const release = holdProcessOpen();
      let timer;
      const unanswered = new Promise((resolve) => {
        timer = env.setTimeout(() => resolve(null), heartbeatMs);
      });
      const snapshot = await Promise.race([
        Promise.resolve()
          .then(() => locks.query())
          .catch(() => null),
        unanswered,
      ]);
      env.clearTimeout(timer);
      release();
      if (!snapshot) return Boolean(handle.leader());
      return (snapshot.held ?? []).some((lock) => lock.name === lockName);
    },
    /**
     * Resolves when this tab becomes the leader; never resolves once dead. Rejects with the
     * core's load error when the core cannot load (this tab can never lead then), as the
     * library's rejects when its lock request fails, rather than wait forever.
     */
    awaitLeadership() {
      if (!awaitingLeadership) {
        // In Node the process stays open while this is awaited (Baton's timers do not hold it).
        const release = dead ? () => {} : holdProcessOpen();
        let resolve;
        let reject;
        const promise = new Promise((onLeader, onFailure) => {
          resolve = () => {
            release();
            onLeader();
          };
          reject = (error) => {
            release();
            onFailure(error);
          };
        });
        awaitingLeadership = { promise, resolve, release };
        if (handle.state() === 'leader') resolve();
        ready.catch((error) => {
          if (!dead) reject(error);
        });
        start();
      }
      return awaitingLeadership.promise;
    },
    /** Joins the election if not yet; resolves with whether this tab leads after one heartbeat. */
    applyOnce() {
      if (dead) return Promise.resolve(false);
      start();
      if (handle.state() === 'leader') return Promise.resolve(true);
      return new Promise((resolve) => {
        const release = holdProcessOpen();
        const stop = handle.onChange((change) => {
          if (change.type === 'elected' || change.type === 'released') done();
        });
        // One heartbeat of election, counted from when the core is there (it loads on first use).
        let timer = null;
        let settled = false;
        whenLoaded(() => {
          if (!settled) timer = internals.env.setTimeout(() => done(), heartbeatMs);
        });
        ready.catch(() => done()); // a core that failed to load: this tab does not lead
        function done() {
          if (settled) return;
          settled = true;
          release();
          stop();
          if (timer !== null) internals.env.clearTimeout(timer);
          resolve(handle.state() === 'leader');
        }
      });
    },
    /** Leaves the election for good (releases leadership at once). Idempotent. */
    die() {
      if (!diePromise) {
        dead = true;
        unloadEntry?.remove();
        awaitingLeadership?.release(); // it never resolves now, as in the library
        baton.dispose();
        side?.removeEventListener('message', onSide);
        side?.close();
        diePromise = Promise.resolve();
      }
      return diePromise;
    },
    set onduplicate(fn) {
      duplicateHandler = typeof fn === 'function' ? fn : null;
    },
    get onduplicate() {
      return duplicateHandler;
    },
  };
  if (typeof channel === 'object') {
    electors.add(channel);
    // As the library does: code that checks `channel._leaderElector` finds this one.
    try {
      channel._leaderElector = elector;
    } catch {
      // A frozen channel: the WeakSet above still guards against a second elector.
    }
    // broadcast-channel runs these before it closes the channel: its elector dies with it.
    if (Array.isArray(channel._befC)) channel._befC.push(() => elector.die());
  }
  return registerCompat(elector, baton);
}
