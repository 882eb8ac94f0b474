/**
 * The per-resource epochs behind `allocate_epoch`: `next = max(top, floor, known) + 1`,
 * committed before it is reported.
 *
 * Durable only through IndexedDB, in the `epochs` store: the counter (key `resource`,
 * value: the top, the highest epoch issued) and one key per allocation, `[resource, t + 1]`,
 * written by the allocation that moved the top from `t` (its value: the epoch it issued).
 * So, once the top was `t`, key `[resource, t + 1]` exists exactly when someone allocated
 * after that; keys are never deleted (one small record per term).
 *
 * That gives the grant a path of one trip to the store. A tab that knows a value `b` the
 * top had (it read it from the store, or committed it) allocates `b + 1` without waiting
 * for a read: in one transaction it `add`s key `[resource, b + 1]` and puts the counter,
 * and commits at once. If someone allocated after `b`, the key exists, the `add` fails
 * with a ConstraintError, and the whole transaction aborts (nothing of it is written):
 * then the tab tries once more from the counter read in that transaction, and after a
 * second miss reads the counter and writes above it (two trips, as before). A value
 * anyone else claims (a frame, the localStorage mirror, the core's floor) never serves as
 * `b`: above `b` it only sends the tab to the read. The read-write transactions of all
 * tabs are serialised by the browser, so a committed `add` proves the top was still `b`.
 * Followers keep `b` fresh: they read the counter when joining and again whenever they
 * hear of a leader with a higher epoch, from a frame or from the `storage` event of the
 * new term's localStorage mirror (off the grant path, read-only).
 *
 * The lease (lease.js) moves the same counter and writes the same keys, so a lease term
 * and a Web Locks term of one origin never share an epoch.
 *
 * A tab that moves the counter without writing the key (a development build from before
 * the keys; none was released) is not supported beside this one: a one-trip allocation
 * does not see its terms. It reads the counter in that transaction too (sent with the
 * writes, so it costs no trip) and reports a counter above `b`, or below an epoch it
 * committed, as inconsistent: that term is not durable. But its put has moved the counter
 * down to `b + 1` by then, so a tab that reads it afterwards can reissue epochs that build
 * issued, as durable. A counter left by such a build with none of its tabs running is only
 * the floor of the first allocation.
 *
 * localStorage is a mirror of the highest epoch this origin issued, used as one more floor:
 * the end-to-end tests showed that Chromium propagates a localStorage write to other
 * renderer processes asynchronously, so a tab granted the lock right after a fast hand-over
 * could still read the old counter.
 *
 * When IndexedDB is missing, fails, times out or answers below what this tab already
 * committed (a lost write, a stale read), the epoch is `max(floor, known) + 1` and reported
 * as not durable: the core counts a storage failure, the tab reports itself degraded (see
 * storage-health.js) and `fenced()` refuses under that epoch. Nothing is thrown.
 *
 * Every epoch read from storage (counter, mirror, lease record) is bounded like a claim, by
 * the core's PLAUSIBLE_EPOCH: a forged mirror near 2^53 would otherwise make the next
 * allocation commit an epoch that reads back as garbage, i.e. as 0, and be issued again. A
 * mirror at or above the bound is ignored (counted in `storageErrors`); such a counter is
 * inconsistent: the term is not durable, and the counter is never taken for 0.
 *
 * @module tab-baton/epoch-store
 */

import { PLAUSIBLE_EPOCH } from './constants.js';

/** The key the allocation that moves `resource`'s top from `top` writes (see above). */
export function successorKey(resource, top) {
  return [resource, top + 1];
}

export class EpochStore {
  /**
   * @param {object} deps
   * @param {any} deps.localStorage or null
   * @param {import('./idb.js').Database | null} deps.database
   * @param {(resource: string) => string} deps.key localStorage key of a resource's counter
   * @param {import('./storage-health.js').StorageHealth} deps.health
   * @param {Record<string, number>} deps.counters glue counters
   * @param {(resource: string, top: number) => void} deps.read a top read from the store
   *   (joining, or on hearing of a newer term): the core takes it as a confirmed floor, so
   *   that a leader whose epoch is far above 0 is not taken for a forger
   * @param {(fn: () => void, ms: number) => any} deps.setTimeout
   * @param {(id: any) => void} deps.clearTimeout
   */
  constructor({ localStorage, database, key, health, counters, read, setTimeout, clearTimeout }) {
    Object.assign(this, { localStorage, database, key, health, counters, read, setTimeout, clearTimeout });
    /** resource -> the highest epoch this tab issued or read (durable or not). */
    this.known = new Map();
    /** resource -> the localStorage mirror, read when joining (off the grant path). */
    this.mirror = new Map();
    /** resource -> an allocation begun at a lock's grant, before the core asked for it. */
    this.early = new Map();
    /** resource -> `b`: a value the store's top had, read or committed by this tab. */
    this.top = new Map();
    /** resource -> whether another read is wanted once the one in flight has answered. */
    this.reading = new Map();
    /** resource -> the highest epoch another tab claimed to lead with (frames: a hint). */
    this.claimed = new Map();
    /** localStorage key of a joined resource's mirror -> the resource. */
    this.mirrors = new Map();
    /** resource -> the timer task that reads its top again (see `heard`). */
    this.rereads = new Map();
  }

  /** Joining `resource`: open the database, read the mirror and the top now, not on the grant. */
  warm(resource) {
    this.database?.warm();
    this.mirrors.set(this.key(resource), resource);
    if (!this.mirror.has(resource)) this.mirror.set(resource, this.readMirror(resource));
    this.readTop(resource);
  }

  /**
   * Another tab leads `resource` with `epoch` (a frame's claim): if that is above the top
   * this tab knows, the top is read again, so that this tab's next grant can take one trip.
   * Until the store shows a top at or above the claim, allocations take two trips (one
   * would be wasted on a key that is likely taken).
   *
   * The read begins in a timer task, not in the message handler that heard the claim: a
   * frozen page still runs its message handlers but not its timers, and a transaction it
   * begins there is answered only once it thaws. Seen in Chromium's silent-freeze test: the
   * frozen leader began two such reads, and the other tabs' epoch allocations waited past
   * their deadline until the thaw (how the one held the other is not pinned down: in
   * isolation a read that a frozen page begins does not hold the store). A read that waits
   * for a timer is never begun by a frozen page.
   */
  heard(resource, epoch) {
    if (epoch > (this.claimed.get(resource) ?? 0)) this.claimed.set(resource, epoch);
    if (epoch <= (this.top.get(resource) ?? 0) || this.rereads.has(resource)) return;
    this.rereads.set(resource, this.setTimeout(() => {
      this.rereads.delete(resource);
      this.readTop(resource);
    }, 0));
  }

  /** The Baton is disposed: no read begins any more. */
  close() {
    for (const timer of this.rereads.values()) this.clearTimeout(timer);
    this.rereads.clear();
  }

  /**
   * Another tab raised a localStorage key: the mirror of a joined resource is raised by each
   * new term (after its epoch is committed), so it is heard as a claim. It often comes
   * before the core follows the new leader: after a crash, a follower adopts the next
   * leader only once the old one is silent, seconds later.
   */
  mirrored(key, value) {
    const resource = this.mirrors.get(key);
    if (resource !== undefined) this.heard(resource, this.mirrorValue(value));
  }

  /**
   * Reads the counter in a read-only transaction and keeps it as `b` unless the one known
   * is higher (both were the store's top once). One read at a time per resource: a burst of
   * frames, forged or not, costs one more read at most. A failed read changes nothing: the
   * next allocation takes the two trips and reports the failure.
   */
  readTop(resource) {
    if (!this.database) return;
    if (this.reading.has(resource)) {
      this.reading.set(resource, true);
      return;
    }
    this.reading.set(resource, false);
    let top = 0;
    this.database
      .transaction(['epochs'], 'readonly', ({ epochs }, tx) => {
        const get = epochs.get(resource);
        get.onsuccess = () => {
          top = storedEpoch(get.result);
        };
        // Committed with the request, not once its answer has reached this page: a page
        // frozen before then would keep the transaction open, and every tab's epoch
        // allocation (a read-write transaction over the same store) would wait behind it.
        tx.commit?.();
      })
      .then(() => {
        // An implausible counter is no top: the next allocation reads it and reports it.
        if (top === null) return;
        if (!(this.top.get(resource) >= top)) this.top.set(resource, top);
        if (top > 0) this.read(resource, top);
      }, () => {})
      .then(() => {
        const again = this.reading.get(resource);
        this.reading.delete(resource);
        if (again) this.readTop(resource);
      });
  }

  /**
   * Allocates the next epoch for `resource`; `done(epoch, durable)` is called exactly once:
   * synchronously when there is no IndexedDB, otherwise later, when it answers (or when the
   * early allocation's answer, already under way, comes).
   * @param {string} resource
   * @param {number} floor the new epoch must exceed this
   * @param {(epoch: number, durable: boolean) => void} done
   */
  allocate(resource, floor, done) {
    this.counters.epochAllocations += 1;
    const early = this.early.get(resource);
    this.early.delete(resource);
    if (!early?.held()) {
      this.allocateNow(resource, floor, done);
      return;
    }
    early.answer.then(({ epoch, durable }) => {
      if (!early.held()) this.allocateNow(resource, floor, done);
      else if (!durable) this.report(resource, Math.max(epoch, floor + 1), false, done); // the store failed: said once, not asked twice
      else if (epoch > floor) this.report(resource, epoch, true, done);
      else this.allocateNow(resource, floor, done);
    });
  }

  /**
   * Under Web Locks, at a grant, before the core has stepped it: only the holder of the lock
   * allocates, so the epoch the core asks for once it has stepped the grant (or, at start-up,
   * once it is loaded) can be committed now, while the grant is stepped (or the core loads),
   * instead of after. `held()` tells whether that grant still stands: the answer is used
   * only then, and only when it is above the floor the core asks for (a durable epoch at or
   * below it is not used: the core's request runs a transaction of its own); a failed one is
   * reported as not durable, without a second try. An epoch the core never asks for is
   * skipped, which is fine: epochs only have to rise. An earlier allocation whose grant no
   * longer stands is replaced.
   * @param {string} resource
   * @param {() => boolean} held
   */
  allocateEarly(resource, held) {
    if (!this.database || this.early.get(resource)?.held()) return;
    this.early.set(resource, { held, answer: this.transact(resource, this.floorOf(resource, 0)) });
  }

  /** Records a durable epoch; returns it. */
  committed(resource, epoch) {
    this.health.committed(resource, epoch);
    this.known.set(resource, epoch);
    return epoch;
  }

  /** The highest epoch this tab knows of for `resource`, at least `floor`. */
  floorOf(resource, floor) {
    return Math.max(floor, this.known.get(resource) ?? 0, this.mirror.get(resource) ?? this.readMirror(resource));
  }

  /**
   * One allocation above `known`, committed as soon as it is written. One trip when this tab
   * knows a top `b` at or above everything it knows or heard of: `add` key `b + 1` and put
   * the counter, with the counter's read sent beside them (checked in `transact`). When that
   * key exists (someone allocated after `b`), the `add` fails and, not prevented, aborts the
   * whole transaction, the counter's put too; the read, answered before the abort, is a top
   * the store had since, so one more trip from there; after a second miss, two trips: the
   * read first, `next = max(stored, known) + 1`. Resolves to `{stored, next, after}`
   * (`stored`: the counter the transaction found, null when implausible, then not written
   * over on the read path; `after`: `b`, or null after a read).
   */
  commit(resource, known, tries = 2) {
    let b;
    let after = null;
    let stored = -1;
    let next;
    let taken = false;
    return this.database
      .readwrite(['epochs'], ({ epochs }, tx) => {
        // Read as the transaction begins, not when it was asked for: a grant that comes
        // before the database is open finds the top it learnt meanwhile. An open of this tab
        // that created the store (a first visit) saw every top at 0.
        b = this.top.get(resource) ?? (this.database.createdEpochs ? 0 : undefined);
        after = tries > 0 && b !== undefined && b + 1 < PLAUSIBLE_EPOCH && Math.max(known, this.claimed.get(resource) ?? 0) <= b ? b : null;
        next = b + 1;
        const write = (top, how) => {
          const claim = epochs[how](next, successorKey(resource, top));
          claim.onerror = () => {
            taken = claim.error?.name === 'ConstraintError';
          };
          epochs.put(next, resource);
          tx.commit?.();
        };
        const get = epochs.get(resource);
        get.onsuccess = () => {
          stored = storedEpoch(get.result);
          if (after !== null || stored === null) return;
          next = Math.max(stored, known) + 1;
          // The epochs are used up (a store raised to the bound): none is written or issued.
          if (next < PLAUSIBLE_EPOCH) write(stored, 'put');
        };
        if (after !== null) write(after, 'add');
      })
      .then(
        () => ({ stored, next, after }),
        (error) => {
          // The add's ConstraintError aborts the transaction with it: a browser may report
          // it there only (a request failing after commit()), not at the request.
          if (!taken && !(after !== null && error?.name === 'ConstraintError')) throw error;
          if (stored > b) this.top.set(resource, stored);
          else this.top.delete(resource);
          return this.commit(resource, known, tries - 1);
        },
      );
  }

  allocateNow(resource, floor, done) {
    const known = this.floorOf(resource, floor);
    if (!this.database) {
      this.report(resource, this.notDurable(resource, known).epoch, false, done);
      return;
    }
    this.transact(resource, known).then(({ epoch, durable }) => this.report(resource, epoch, durable, done));
  }

  /**
   * One allocation in IndexedDB, above `known`: resolves to `{epoch, durable}` (never
   * rejects). A failed transaction, or a store that answers below an epoch this tab
   * committed in it, gives `known + 1` (or the store's answer), not durable.
   */
  transact(resource, known) {
    const committed = this.health.durable.get(resource) ?? 0;
    return this.commit(resource, known).then(
      ({ stored, next, after }) => {
        // Below an epoch this tab committed: a lost write or a stale read. Above the `b` a
        // one-trip allocation went from, though key `b + 1` was free: the counter was moved
        // without its key (an unsupported earlier build, or a same-origin script), so `next`
        // may have been issued; the counter is now `next`, lower (see the module comment).
        // Either way the term's epoch is above the counter found, but not durable. An
        // implausible counter (corrupt or forged) is inconsistent too, never read as 0.
        if (stored === null || stored < committed || (after !== null && stored > after) || next >= PLAUSIBLE_EPOCH) {
          this.health.inconsistent();
          this.top.delete(resource);
          return this.notDurable(resource, stored === null ? Math.max(known, after ?? 0) : Math.max(next - 1, stored));
        }
        this.health.recovered();
        this.top.set(resource, next);
        return { epoch: this.committed(resource, next), durable: true };
      },
      (error) => {
        this.counters.storageErrors += 1;
        this.health.failed(error);
        return this.notDurable(resource, known);
      },
    );
  }

  /** `known + 1`, not durable; counted, and kept as the highest this tab knows of. */
  notDurable(resource, known) {
    this.counters.epochsNotDurable += 1;
    const epoch = known + 1;
    this.known.set(resource, Math.max(epoch, this.known.get(resource) ?? 0));
    return { epoch, durable: false };
  }

  /** Reports an epoch to the core, then raises the mirror. */
  report(resource, epoch, durable, done) {
    this.known.set(resource, Math.max(epoch, this.known.get(resource) ?? 0));
    done(epoch, durable);
    this.mirrorLater(resource, epoch);
  }

  /**
   * Raises the mirror after the new term's callbacks: `done` queued them as microtasks, and
   * a localStorage write (a read and a write, which can take milliseconds on a busy
   * renderer) must not stand between the epoch's commit and the app hearing that it leads.
   * The in-memory copy is raised now.
   */
  mirrorLater(resource, epoch) {
    this.mirror.set(resource, Math.max(epoch, this.mirror.get(resource) ?? 0));
    queueMicrotask(() => this.writeMirror(resource, epoch));
  }

  /** Raises the localStorage mirror to `epoch` (best effort; after the term has begun). */
  writeMirror(resource, epoch) {
    this.mirror.set(resource, Math.max(epoch, this.mirror.get(resource) ?? 0));
    if (!this.localStorage) return;
    try {
      // An implausible mirror is written over: it is no epoch anyone issued.
      if ((storedEpoch(this.localStorage.getItem(this.key(resource))) ?? 0) < epoch) this.localStorage.setItem(this.key(resource), String(epoch));
    } catch {
      this.counters.storageErrors += 1;
    }
  }

  /** The localStorage mirror of `resource`, 0 when missing, unreadable or implausible. */
  readMirror(resource) {
    if (!this.localStorage) return 0;
    try {
      return this.mirrorValue(this.localStorage.getItem(this.key(resource)));
    } catch {
      this.counters.storageErrors += 1;
      return 0;
    }
  }

  /** A mirror's value as a floor: an implausible one (forged or corrupt) is counted and ignored. */
  mirrorValue(value) {
    const epoch = storedEpoch(value);
    if (epoch !== null) return epoch;
    this.counters.storageErrors += 1;
    return 0;
  }
}

/**
 * An epoch as stored (the counter, a mirror's string, a lease record's epoch): 0 when
 * missing, the epoch when it is an integer below the core's plausibility bound, else null
 * (present but corrupt or forged: not to be read as 0, nor as a floor).
 */
export function storedEpoch(value) {
  if (value === undefined || value === null) return 0;
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  return Number.isSafeInteger(n) && n >= 0 && n < PLAUSIBLE_EPOCH ? n : null;
}
