/**
 * The per-resource epoch counter behind `allocate_epoch`:
 * `next = max(stored, floor, known) + 1`, committed before it is reported.
 *
 * Durable only through IndexedDB: one read-write transaction, which the browser serialises
 * against every other tab's, in every process. localStorage is a mirror of the highest
 * epoch this origin issued, used as one more floor: the end-to-end tests showed that
 * Chromium propagates a localStorage write to other renderer processes asynchronously, so
 * a tab granted the lock right after a fast hand-over could still read the old counter.
 *
 * When IndexedDB is missing, fails, times out or answers below what this tab already
 * committed (a lost write, a stale read), the epoch is `max(floor, known) + 1` and reported
 * as not durable: the core counts a storage failure, the tab reports itself degraded (see
 * storage-health.js) and `fenced()` refuses under that epoch. Nothing is thrown.
 *
 * @module tab-baton/epoch-store
 */

export class EpochStore {
  /**
   * @param {object} deps
   * @param {any} deps.localStorage or null
   * @param {import('./idb.js').Database | null} deps.database
   * @param {(resource: string) => string} deps.key localStorage key of a resource's counter
   * @param {import('./storage-health.js').StorageHealth} deps.health
   * @param {Record<string, number>} deps.counters glue counters
   */
  constructor({ localStorage, database, key, health, counters }) {
    Object.assign(this, { localStorage, database, key, health, counters });
    /** resource -> the highest epoch this tab issued or read (durable or not). */
    this.known = new Map();
    /** resource -> the localStorage mirror, read when joining (off the grant path). */
    this.mirror = new Map();
    /** resource -> an allocation begun at a lock's grant, before the core asked for it. */
    this.early = new Map();
  }

  /** Joining `resource`: open the database and read the mirror now, not on the grant. */
  warm(resource) {
    this.database?.warm();
    if (!this.mirror.has(resource)) this.mirror.set(resource, this.readMirror(resource));
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

  /** One read-write transaction: `next = max(stored, known) + 1`, committed as soon as it is written. */
  commit(resource, known) {
    let stored = 0;
    let next = known + 1;
    return this.database
      .readwrite(['epochs'], ({ epochs }, tx) => {
        const get = epochs.get(resource);
        get.onsuccess = () => {
          stored = parseStored(get.result);
          next = Math.max(stored, known) + 1;
          epochs.put(next, resource);
          tx.commit?.();
        };
      })
      .then(() => ({ stored, next }));
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
      ({ stored, next }) => {
        if (stored < committed) {
          // The store answered below an epoch this tab committed in it.
          this.health.inconsistent();
          return this.notDurable(resource, next - 1);
        }
        this.health.recovered();
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
      if (parseStored(this.localStorage.getItem(this.key(resource))) < epoch) this.localStorage.setItem(this.key(resource), String(epoch));
    } catch {
      this.counters.storageErrors += 1;
    }
  }

  /** The localStorage mirror of `resource`, 0 when missing or unreadable. */
  readMirror(resource) {
    if (!this.localStorage) return 0;
    try {
      return parseStored(this.localStorage.getItem(this.key(resource)));
    } catch {
      this.counters.storageErrors += 1;
      return 0;
    }
  }
}

/** A stored counter: a non-negative safe integer, else 0 (missing or garbage). */
function parseStored(value) {
  const n = typeof value === 'number' ? value : Number.parseInt(value ?? '', 10);
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
}
