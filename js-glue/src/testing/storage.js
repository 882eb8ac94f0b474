/**
 * In-memory `localStorage` (https://html.spec.whatwg.org/multipage/webstorage.html#the-storage-interface)
 * shared by the "tabs" of one simulated origin, with switchable failures so
 * tests can check what happens when storage is blocked or full.
 *
 * Not simulated: named property access (`storage.foo`; use `getItem`/`setItem`),
 * `storage` events in other tabs, and a size quota.
 *
 * @module tab-baton/testing/storage
 */

/**
 * @typedef {'SecurityError' | 'QuotaExceededError'} StorageFailure
 */

/**
 * A `Storage` (the type of `localStorage`) kept in memory.
 */
class FakeStorage {
  #items = new Map();
  /** @type {StorageFailure | null} */
  #failure = null;

  /** Number of stored keys. */
  get length() {
    this.#check();
    return this.#items.size;
  }

  /**
   * The name of the `index`-th key (insertion order), or null.
   * @param {number} index
   * @returns {string | null}
   */
  key(index) {
    arity(arguments, 1, 'key');
    this.#check();
    return [...this.#items.keys()][index >>> 0] ?? null;
  }

  /**
   * @param {string} key
   * @returns {string | null}
   */
  getItem(key) {
    arity(arguments, 1, 'getItem');
    this.#check();
    return this.#items.get(`${key}`) ?? null;
  }

  /**
   * Stores `value` converted to a string, like the real one (`null` -> "null").
   * @param {string} key
   * @param {string} value
   */
  setItem(key, value) {
    arity(arguments, 2, 'setItem');
    this.#check('write');
    this.#items.set(`${key}`, `${value}`);
  }

  /** @param {string} key */
  removeItem(key) {
    arity(arguments, 1, 'removeItem');
    this.#check();
    this.#items.delete(`${key}`);
  }

  clear() {
    this.#check();
    this.#items.clear();
  }

  /**
   * Test hook, not part of `Storage`: makes calls throw a DOMException named
   * after `failure`, until `fail(false)`.
   * - 'SecurityError' (or `true`): every call throws, as when the user blocks
   *   site data (browsers then throw on `window.localStorage` itself).
   * - 'QuotaExceededError': only `setItem` throws, as when storage is full;
   *   reading and removing still work.
   * Stored data is kept either way.
   * @param {boolean | StorageFailure} failure
   */
  fail(failure) {
    if (failure === true) failure = 'SecurityError';
    if (![false, 'SecurityError', 'QuotaExceededError'].includes(failure)) {
      throw new TypeError(`unknown storage failure: ${String(failure)}`);
    }
    this.#failure = failure || null;
  }

  #check(access = 'read') {
    if (this.#failure === 'SecurityError' ||
        (this.#failure === 'QuotaExceededError' && access === 'write')) {
      throw new DOMException(`storage failure injected by the test (${this.#failure})`, this.#failure);
    }
  }
}

/**
 * Creates an empty `localStorage` for one simulated origin; hand the same
 * object to every tab so they share it.
 * @returns {FakeStorage}
 */
export function createStorage() {
  return new FakeStorage();
}

function arity(args, count, method) {
  if (args.length < count) {
    throw new TypeError(`Storage.${method} needs ${count} argument${count > 1 ? 's' : ''}`);
  }
}

// ------------------------------------------------------------------ IndexedDB

/**
 * @typedef {'error' | 'throw' | 'abort' | 'version' | 'hang' | 'blocked' | 'lost-write' | 'stale-read'} IndexedDBFailure
 */
const IDB_FAILURES = ['error', 'throw', 'abort', 'version', 'hang', 'blocked', 'lost-write', 'stale-read'];

/**
 * Creates an in-memory `indexedDB` for one simulated origin: what tab-baton uses and no
 * more (`open` with an upgrade, out-of-line keys, `get`/`put` in transactions that run one
 * at a time, `oncomplete`/`onerror`/`onabort`), answering asynchronously like the real one.
 * Hand the same object to every tab: IndexedDB is shared by an origin's tabs.
 *
 * `fail(mode)` injects a failure until `fail(false)`:
 * - `'error'`: every request fails (`UnknownError`) and its transaction aborts;
 * - `'throw'`: `open()` and `transaction()` throw synchronously;
 * - `'abort'`: every transaction aborts before it runs;
 * - `'version'`: `open()` fails with a `VersionError` (a newer schema exists);
 * - `'hang'`: `open()` and transactions never answer (a wedged browser store);
 * - `'blocked'`: `open()` fires `onblocked` and waits (an old connection blocks the upgrade);
 * - `'lost-write'`: transactions commit but their writes are not kept;
 * - `'stale-read'`: `get` answers the value before the latest write of that key.
 * Hung and blocked operations resume when the failure is cleared.
 */
export function createIndexedDB() {
  const databases = new Map(); // name -> {version, stores: Map<store, Map<key, value>>, previous: Map}
  const queue = []; // transactions waiting to run, in creation order
  const parked = []; // operations held by 'hang' or 'blocked'
  let running = false;
  /** @type {IndexedDBFailure | null} */
  let failure = null;
  const stats = { opens: 0, transactions: 0, committed: 0, failed: 0 };
  const later = (fn) => setTimeout(fn, 0);
  const request = (source) => ({ result: undefined, error: null, source, onsuccess: null, onerror: null });

  /** Runs `fn` now, or parks it while the store hangs. */
  function whenAnswering(fn) {
    if (failure === 'hang' || failure === 'blocked') parked.push(fn);
    else fn();
  }

  function runNext() {
    if (running || queue.length === 0) return;
    running = true;
    const tx = queue.shift();
    later(() => whenAnswering(() => tx.run(() => {
      running = false;
      runNext();
    })));
  }

  class Transaction {
    constructor(db, names) {
      Object.assign(this, { db, names, ops: [], oncomplete: null, onerror: null, onabort: null, error: null, done: false });
      stats.transactions += 1;
      queue.push(this);
      runNext();
    }

    objectStore(name) {
      if (!this.names.includes(name)) throw new DOMException(`store ${name} not in scope`, 'NotFoundError');
      const map = this.db.stores.get(name);
      const previous = this.db.previous;
      const op = (fn) => {
        if (this.done) throw new DOMException('transaction finished', 'TransactionInactiveError');
        const req = request(this);
        this.ops.push({ req, fn });
        return req;
      };
      return {
        get: (key) => op(() => {
          const stale = failure === 'stale-read' && previous.has(`${name}\u0000${key}`);
          return structuredClone(stale ? previous.get(`${name}\u0000${key}`) : map.get(key));
        }),
        put: (value, key) => op(() => {
          if (failure === 'lost-write') return key;
          previous.set(`${name}\u0000${key}`, map.get(key));
          map.set(key, structuredClone(value));
          return key;
        }),
      };
    }

    abort() {
      if (!this.done) this.fail(new DOMException('aborted', 'AbortError'));
    }

    fail(error) {
      this.done = true;
      this.error = error;
      stats.failed += 1;
      this.onerror?.({ target: this });
      this.onabort?.({ target: this });
      this.finish?.();
    }

    run(finish) {
      this.finish = finish;
      if (this.done) return finish();
      if (failure === 'abort') return this.fail(new DOMException('injected abort', 'AbortError'));
      const step = () => {
        if (this.done) return;
        const next = this.ops.shift();
        if (!next) {
          this.done = true;
          stats.committed += 1;
          this.oncomplete?.({ target: this });
          finish();
          return;
        }
        if (failure === 'error') {
          next.req.error = new DOMException('injected failure', 'UnknownError');
          next.req.onerror?.({ target: next.req });
          this.fail(next.req.error);
          return;
        }
        try {
          next.req.result = next.fn();
          next.req.onsuccess?.({ target: next.req });
        } catch (error) {
          this.fail(error);
          return;
        }
        later(step);
      };
      step();
      return undefined;
    }
  }

  class Connection {
    constructor(db) {
      Object.assign(this, { db, onversionchange: null, closed: false });
    }

    get objectStoreNames() {
      const names = [...this.db.stores.keys()];
      return { contains: (name) => names.includes(name), length: names.length };
    }

    createObjectStore(name) {
      this.db.stores.set(name, new Map());
      return {};
    }

    transaction(names, mode) {
      if (this.closed) throw new DOMException('connection closed', 'InvalidStateError');
      if (failure === 'throw') throw new DOMException('injected failure', 'UnknownError');
      if (mode !== 'readwrite' && mode !== 'readonly') throw new TypeError('bad mode');
      return new Transaction(this.db, Array.isArray(names) ? names : [names]);
    }

    close() {
      this.closed = true;
    }
  }

  const indexedDB = {
    open(name, version = 1) {
      if (failure === 'throw') throw new DOMException('injected failure', 'UnknownError');
      stats.opens += 1;
      const req = { ...request(null), onupgradeneeded: null, onblocked: null };
      later(() => {
        if (failure === 'blocked') req.onblocked?.({ target: req });
        if (failure === 'version') {
          req.error = new DOMException('injected: the stored version is newer', 'VersionError');
          req.onerror?.({ target: req });
          return;
        }
        whenAnswering(() => {
          let db = databases.get(name);
          if (!db) {
            db = { version: 0, stores: new Map(), previous: new Map() };
            databases.set(name, db);
          }
          req.result = new Connection(db);
          if (version > db.version) {
            const oldVersion = db.version;
            db.version = version;
            req.onupgradeneeded?.({ target: req, oldVersion, newVersion: version });
          }
          req.onsuccess?.({ target: req });
        });
      });
      return req;
    },
  };

  return {
    indexedDB,
    /**
     * Injects `failure` until `fail(false)` (see above); `true` means `'error'`.
     * @param {boolean | IndexedDBFailure} mode
     */
    fail(mode) {
      if (mode === true) mode = 'error';
      if (mode !== false && !IDB_FAILURES.includes(mode)) throw new TypeError(`unknown IndexedDB failure: ${String(mode)}`);
      failure = mode || null;
      if (failure !== 'hang' && failure !== 'blocked') for (const fn of parked.splice(0)) later(fn);
    },
    /** Deletes every database, as clearing the site's data does. */
    clear() {
      databases.clear();
    },
    /** A copy of the value stored under `key` in `store` of database `name`. */
    peek(name, store, key) {
      return structuredClone(databases.get(name)?.stores.get(store)?.get(key));
    },
    stats: () => ({ ...stats }),
  };
}
