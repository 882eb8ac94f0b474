/**
 * The durable per-resource epoch counter behind `allocate_epoch`:
 * `next = max(stored, floor) + 1`, stored before it is reported.
 *
 * 1. IndexedDB: one read-write transaction, which the browser serialises against every
 *    other tab's, in every process. The end-to-end tests showed why it comes first:
 *    Chromium propagates a localStorage write to other renderer processes asynchronously,
 *    so a tab granted the lock right after a fast hand-over could still read the old
 *    counter and issue the same epoch twice, lock or no lock.
 * 2. localStorage where IndexedDB is missing or failing: synchronous, and still ordered
 *    by the lock within one process; its value also serves as a floor for IndexedDB.
 * 3. Neither works: `floor + 1`, reported as not durable. The core then counts a storage
 *    failure and reports degraded mode; nothing is thrown.
 *
 * @module tab-baton/epoch-store
 */

export class EpochStore {
  /**
   * @param {object} deps
   * @param {any} deps.localStorage or null
   * @param {import('./idb.js').Database | null} deps.database
   * @param {(resource: string) => string} deps.key localStorage key of a resource's counter
   * @param {Record<string, number>} deps.counters glue counters
   */
  constructor({ localStorage, database, key, counters }) {
    this.localStorage = localStorage;
    this.database = database;
    this.key = key;
    this.counters = counters;
    /** Where the last allocation was stored: 'localStorage' | 'indexedDB' | 'none' | null. */
    this.lastBackend = null;
  }

  /**
   * Allocates the next epoch for `resource`; `done(epoch, durable)` is called exactly once,
   * later when IndexedDB answers, synchronously on the localStorage path.
   * @param {string} resource
   * @param {number} floor the new epoch must exceed this
   * @param {(epoch: number, durable: boolean) => void} done
   */
  allocate(resource, floor, done) {
    this.counters.epochAllocations += 1;
    const fromLocalStorage = () => {
      const epoch = this.localStorage ? this.fromLocalStorage(resource, floor) : null;
      if (epoch === null) {
        this.notDurable(floor, done);
        return;
      }
      this.lastBackend = 'localStorage';
      done(epoch, true);
    };
    if (!this.database) {
      fromLocalStorage();
      return;
    }
    this.fromIndexedDB(resource, Math.max(floor, this.readLocalStorage(resource))).then((epoch) => {
      this.lastBackend = 'indexedDB';
      this.writeLocalStorage(resource, epoch);
      done(epoch, true);
    }, fromLocalStorage);
  }

  /** The localStorage counter of `resource`, 0 when missing or unreadable. */
  readLocalStorage(resource) {
    if (!this.localStorage) return 0;
    try {
      return parseStored(this.localStorage.getItem(this.key(resource)));
    } catch {
      return 0;
    }
  }

  /** Keeps the localStorage counter up with IndexedDB's, best effort. */
  writeLocalStorage(resource, epoch) {
    if (!this.localStorage) return;
    try {
      this.localStorage.setItem(this.key(resource), String(epoch));
    } catch {
      this.counters.storageErrors += 1;
    }
  }

  /** @returns {number | null} null when localStorage throws (blocked, full). */
  fromLocalStorage(resource, floor) {
    try {
      const key = this.key(resource);
      const next = Math.max(parseStored(this.localStorage.getItem(key)), floor) + 1;
      this.localStorage.setItem(key, String(next));
      return next;
    } catch {
      this.counters.storageErrors += 1;
      return null;
    }
  }

  /** @returns {Promise<number>} */
  fromIndexedDB(resource, floor) {
    let next = floor + 1;
    return this.database
      .readwrite('epochs', (store) => {
        const get = store.get(resource);
        get.onsuccess = () => {
          next = Math.max(parseStored(get.result), floor) + 1;
          store.put(next, resource);
        };
      })
      .then(
        () => next,
        (error) => {
          this.counters.storageErrors += 1;
          throw error;
        },
      );
  }

  notDurable(floor, done) {
    this.lastBackend = 'none';
    this.counters.epochsNotDurable += 1;
    done(floor + 1, false);
  }
}

/** A stored counter: a non-negative safe integer, else 0 (missing or garbage). */
function parseStored(value) {
  const n = typeof value === 'number' ? value : Number.parseInt(value ?? '', 10);
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
}
