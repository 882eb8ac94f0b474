/**
 * In-memory IndexedDB for one simulated origin: what tab-baton's lease mode and epoch store
 * use, and no more. Databases open with `onupgradeneeded`; object stores have out-of-line
 * keys; `get`/`put` run in transactions, one transaction at a time (as overlapping
 * read-write scopes do), each request answering in a later task; `oncomplete`, `onerror`,
 * `onabort` and `abort()` behave as in browsers. Values are stored as structured clones.
 *
 * Not simulated: indexes, cursors, key ranges, `delete`/`clear`, versionchange between
 * connections, quotas.
 *
 * Test hooks: `fail(true)` makes every request fail (a broken or full store) until
 * `fail(false)`; `peek(database, store, key)` reads a stored value; `stats()` counts
 * transactions.
 *
 * @module tab-baton/testing/indexeddb
 */

/**
 * Creates an empty IndexedDB; hand `.indexedDB` to every tab of the origin (`createBrowser`
 * does with `{indexedDB: true}`).
 */
export function createIndexedDB() {
  const databases = new Map(); // name -> {version, stores: Map<string, Map>}
  const waiting = []; // transactions not yet run, in creation order
  let running = false;
  let failing = false;
  const stats = { transactions: 0, committed: 0, failed: 0 };

  // Looked up at call time, so fake timers of a test framework also drive it.
  const later = (fn) => setTimeout(fn, 0);

  function request(source) {
    return { result: undefined, error: null, source, onsuccess: null, onerror: null };
  }

  /** Runs the queued transactions one after the other (as overlapping read-write scopes do). */
  function runNext() {
    if (running || waiting.length === 0) return;
    running = true;
    const tx = waiting.shift();
    later(() => tx.run(() => {
      running = false;
      runNext();
    }));
  }

  class Transaction {
    constructor(db, names) {
      this.db = db;
      this.names = names;
      this.ops = [];
      this.oncomplete = null;
      this.onerror = null;
      this.onabort = null;
      this.error = null;
      this.done = false;
      stats.transactions += 1;
      waiting.push(this);
      runNext();
    }

    objectStore(name) {
      if (!this.names.includes(name)) throw new DOMException(`store ${name} not in scope`, 'NotFoundError');
      const map = this.db.stores.get(name);
      const tx = this;
      const op = (fn) => {
        if (tx.done) throw new DOMException('transaction finished', 'TransactionInactiveError');
        const req = request(this);
        tx.ops.push({ req, fn });
        return req;
      };
      return {
        get: (key) => op(() => structuredClone(map.get(key))),
        put: (value, key) => op(() => {
          map.set(key, structuredClone(value));
          return key;
        }),
      };
    }

    abort() {
      if (this.done) return;
      this.fail(new DOMException('aborted', 'AbortError'));
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
        if (failing) {
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
    }
  }

  class Connection {
    constructor(db) {
      this.db = db;
      this.onversionchange = null;
      this.closed = false;
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
      if (mode !== 'readwrite' && mode !== 'readonly') throw new TypeError('bad mode');
      return new Transaction(this.db, Array.isArray(names) ? names : [names]);
    }

    close() {
      this.closed = true;
    }
  }

  const indexedDB = {
    open(name, version = 1) {
      const req = { ...request(null), onupgradeneeded: null, onblocked: null };
      later(() => {
        let db = databases.get(name);
        if (!db) {
          db = { version: 0, stores: new Map() };
          databases.set(name, db);
        }
        const connection = new Connection(db);
        req.result = connection;
        if (version > db.version) {
          const oldVersion = db.version;
          db.version = version;
          req.onupgradeneeded?.({ target: req, oldVersion, newVersion: version });
        }
        req.onsuccess?.({ target: req });
      });
      return req;
    },
  };

  return {
    indexedDB,
    /** Every request fails while true. */
    fail(flag) {
      failing = Boolean(flag);
    },
    /** The value stored under `key` in `store` of database `name`. */
    peek(name, store, key) {
      return structuredClone(databases.get(name)?.stores.get(store)?.get(key));
    },
    stats: () => ({ ...stats }),
  };
}
