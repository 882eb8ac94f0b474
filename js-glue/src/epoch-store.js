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
    /** resource -> an allocation made on a lock granted before the core was loaded. */
    this.early = new Map();
  }

  /** Joining `resource`: open the database and read the mirror now, not on the grant. */
  warm(resource) {
    this.database?.warm();
    if (!this.mirror.has(resource)) this.mirror.set(resource, this.readMirror(resource));
  }

  /**
   * Allocates the next epoch for `resource`; `done(epoch, durable)` is called exactly once,
   * later when IndexedDB answers, synchronously when there is none (or when an early
   * allocation already answered).
   * @param {string} resource
   * @param {number} floor the new epoch must exceed this
   * @param {(epoch: number, durable: boolean) => void} done
   */
  allocate(resource, floor, done) {
    this.counters.epochAllocations += 1;
    const early = this.early.get(resource);
    this.early.delete(resource);
    if (early?.held()) early.answer.then((epoch) => (epoch > floor && early.held() ? this.use(resource, epoch, done) : this.allocateNow(resource, floor, done)));
    else this.allocateNow(resource, floor, done);
  }

  /**
   * Start-up under Web Locks: the lock was granted before the core was loaded. Only the
   * holder of the lock allocates, so the epoch the core asks for once it is loaded can be
   * committed now, while it loads, instead of after. `held()` tells whether that grant
   * still stands: the answer is used only then, and only when it is durable and above the
   * floor the core asks for; otherwise the core's request runs a transaction of its own
   * (the early epoch is skipped, which is fine: epochs only have to rise). Nothing was
   * committed by this tab yet, so the store cannot answer below it.
   * @param {string} resource
   * @param {() => boolean} held
   */
  allocateEarly(resource, held) {
    if (!this.database || this.early.has(resource)) return;
    // A failure answers 0: the core's own request finds it and reports it.
    const answer = this.commit(resource, this.floorOf(resource, 0)).then(({ next }) => this.committed(resource, next), () => 0);
    this.early.set(resource, { held, answer });
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
      this.notDurable(resource, known, done);
      return;
    }
    const committed = this.health.durable.get(resource) ?? 0;
    this.commit(resource, known).then(
      ({ stored, next }) => {
        if (stored < committed) {
          // The store answered below an epoch this tab committed in it.
          this.health.inconsistent();
          this.notDurable(resource, next - 1, done);
          return;
        }
        this.health.recovered();
        this.use(resource, this.committed(resource, next), done);
      },
      (error) => {
        this.counters.storageErrors += 1;
        this.health.failed(error);
        this.notDurable(resource, known, done);
      },
    );
  }

  /** Reports a durable epoch. */
  use(resource, epoch, done) {
    done(epoch, true);
    this.mirrorLater(resource, epoch);
  }

  /** `max(floor, known) + 1`, reported as not durable. */
  notDurable(resource, known, done) {
    this.counters.epochsNotDurable += 1;
    const epoch = known + 1;
    this.known.set(resource, epoch);
    done(epoch, false);
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
