/**
 * The durable per-resource epoch counter behind `allocate_epoch`:
 * `next = max(stored, floor) + 1`, stored before it is reported.
 *
 * 1. localStorage (a window): synchronous, and safe because the core asks only while this
 *    tab holds the resource's lock, so no other tab runs the read-modify-write meanwhile.
 * 2. IndexedDB (where localStorage is missing or failing, as in workers): one read-write
 *    transaction, which IndexedDB serialises against every other tab's.
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
   * synchronously when localStorage works, later otherwise.
   * @param {string} resource
   * @param {number} floor the new epoch must exceed this
   * @param {(epoch: number, durable: boolean) => void} done
   */
  allocate(resource, floor, done) {
    this.counters.epochAllocations += 1;
    if (this.localStorage) {
      const epoch = this.fromLocalStorage(resource, floor);
      if (epoch !== null) {
        this.lastBackend = 'localStorage';
        done(epoch, true);
        return;
      }
    }
    if (this.database) {
      this.fromIndexedDB(resource, floor).then(
        (epoch) => {
          this.lastBackend = 'indexedDB';
          done(epoch, true);
        },
        () => this.notDurable(floor, done),
      );
      return;
    }
    this.notDurable(floor, done);
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
