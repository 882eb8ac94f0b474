/**
 * In-memory IndexedDB for one simulated origin: what tab-baton's lease mode and epoch store
 * use, and no more. Databases open with `onupgradeneeded`; object stores have out-of-line
 * keys (numbers, strings, and arrays of them); `get`/`put`/`add` run in transactions, one
 * transaction at a time (as overlapping read-write scopes do), each request answering in a
 * later task; `oncomplete`, `onerror`, `onabort`, `abort()` and `commit()` behave as in
 * browsers (a transaction left to commit on its own completes a task after its last
 * request's success event; one told to `commit()` completes with its last request). A
 * failed request (`add` of a key that exists: `ConstraintError`) fires `error` at the
 * request, then aborts the transaction unless its handler called `preventDefault()` (and
 * the transaction was not told to `commit()`: such a one aborts on any failed request, as
 * in browsers). Values are stored as structured clones. A client (a tab) can be frozen: its
 * page then handles no event until it thaws, so a transaction that waits on it (one not told
 * to `commit()`) holds the store, and every transaction queued behind it, as in Chromium.
 *
 * Not simulated: indexes, cursors, key ranges, `delete`, versionchange between
 * connections, quotas.
 *
 * @module tab-baton/testing/indexeddb
 */

/**
 * @typedef {'error' | 'throw' | 'abort' | 'version' | 'hang' | 'blocked' | 'lost-write' | 'stale-read'} IndexedDBFailure
 */
const IDB_FAILURES = ['error', 'throw', 'abort', 'version', 'hang', 'blocked', 'lost-write', 'stale-read'];

/**
 * The map key of an IndexedDB key: numbers, strings and arrays of keys (what tab-baton
 * uses), equal when IndexedDB compares them equal. Anything else is a `DataError`, as in
 * browsers.
 */
function encodeKey(key) {
  if (typeof key === 'number' && !Number.isNaN(key)) return `n${key}`;
  if (typeof key === 'string') return `s${key}`;
  if (Array.isArray(key)) return `a${JSON.stringify(key.map(encodeKey))}`;
  throw new DOMException('not a valid key', 'DataError');
}

/**
 * Creates an empty IndexedDB; hand `.indexedDB`, or each tab its own `client().indexedDB`
 * (`createBrowser` does), to every tab of the origin.
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
 *
 * `client()` gives one tab its own view of the same databases, which `crash()` ends as a
 * renderer crash does: the tab's running transaction is rolled back, its queued ones are
 * dropped, and nothing it asks for afterwards is ever answered. `freeze()` holds the answers
 * and the `complete` events for the tab's page until `thaw()`: a transaction told to
 * `commit()` still completes (it waits for nothing from the page), any other one waits, and
 * one the page aborts meanwhile (from a message handler, which a frozen page still runs)
 * frees the store at once, its held answers dropped. The same holds for a transaction the
 * frozen page begins (from a message handler): as measured in Chromium, a read it begins and
 * commits at once does not hold the store, and its answers reach the page at the thaw.
 */
export function createIndexedDB() {
  const databases = new Map(); // name -> {version, stores: Map<store, Map<key, value>>, previous: Map}
  const queue = []; // transactions waiting to run, in creation order
  const parked = []; // operations held by 'hang' or 'blocked'
  let running = null; // the transaction being run, if any
  /** @type {IndexedDBFailure | null} */
  let failure = null;
  const stats = { opens: 0, transactions: 0, readonly: 0, committed: 0, failed: 0, explicitCommits: 0, relaxed: 0 };
  // Looked up at call time, so fake timers of a test framework also drive it.
  const later = (fn) => setTimeout(fn, 0);
  const request = (source) => ({ result: undefined, error: null, source, onsuccess: null, onerror: null });
  // Stores are maps over an encoding of the key: array keys compare by value, as in IndexedDB.
  const slot = (key) => encodeKey(key);
  // What reaches a client's page: held while the client is frozen.
  const toPage = (client, fn) => (client.frozen ? client.held.push(fn) : fn());

  /** Runs `fn` now, or parks it while the store hangs. */
  function whenAnswering(fn) {
    if (failure === 'hang' || failure === 'blocked') parked.push(fn);
    else fn();
  }

  function runNext() {
    if (running || queue.length === 0) return;
    const tx = queue.shift();
    running = tx;
    later(() => whenAnswering(() => tx.run(() => {
      running = null;
      runNext();
    })));
  }

  class Transaction {
    constructor(db, names, client, mode, durability) {
      Object.assign(this, { db, names, client, durability, ops: [], undo: [], oncomplete: null, onerror: null, onabort: null, error: null, done: false, committing: false });
      stats.transactions += 1;
      if (durability === 'relaxed') stats.relaxed += 1;
      if (mode === 'readonly') stats.readonly += 1;
      if (client.crashed) return; // a crashed tab's request is never answered
      queue.push(this);
      runNext();
    }

    objectStore(name) {
      if (!this.names.includes(name)) throw new DOMException(`store ${name} not in scope`, 'NotFoundError');
      const map = this.db.stores.get(name);
      const previous = this.db.previous;
      const write = (value, key) => {
        if (failure === 'lost-write') return key;
        const at = slot(key);
        previous.set(`${name}\u0000${at}`, map.get(at));
        this.undo.push({ map, key: at, had: map.has(at), value: map.get(at) });
        map.set(at, structuredClone(value));
        return key;
      };
      const op = (fn) => {
        if (this.done || this.committing) throw new DOMException('transaction finished', 'TransactionInactiveError');
        const req = request(this);
        this.ops.push({ req, fn });
        return req;
      };
      return {
        get: (key) => {
          const at = slot(key);
          return op(() => {
            const stale = failure === 'stale-read' && previous.has(`${name}\u0000${at}`);
            return structuredClone(stale ? previous.get(`${name}\u0000${at}`) : map.get(at));
          });
        },
        put: (value, key) => {
          slot(key);
          return op(() => write(value, key));
        },
        /** As `put`, but a key that exists fails the request with a `ConstraintError`. */
        add: (value, key) => {
          const at = slot(key);
          return op(() => {
            if (map.has(at)) throw new DOMException('a record with this key exists', 'ConstraintError');
            return write(value, key);
          });
        },
      };
    }

    abort() {
      if (!this.done) this.fail(new DOMException('aborted', 'AbortError'));
    }

    /** No more requests: completes with the last one made (throws once finished, as browsers do). */
    commit() {
      if (this.done || this.committing) throw new DOMException('transaction finished', 'InvalidStateError');
      this.committing = true;
      stats.explicitCommits += 1;
    }

    /** Takes back this transaction's writes, newest first, as an abort does. */
    rollBack() {
      for (const { map, key, had, value } of this.undo.splice(0).reverse()) {
        if (had) map.set(key, value);
        else map.delete(key);
      }
    }

    /** Ends the transaction of a crashed tab: rolled back, and no callback runs. */
    vanish() {
      if (this.done) return;
      this.done = true;
      this.rollBack();
      this.finish?.();
    }

    fail(error) {
      this.done = true;
      this.error = error;
      this.rollBack();
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
          toPage(this.client, () => this.oncomplete?.({ target: this }));
          finish();
          return;
        }
        if (failure === 'error') {
          next.req.error = new DOMException('injected failure', 'UnknownError');
          next.req.onerror?.({ target: next.req });
          this.fail(next.req.error);
          return;
        }
        let result;
        try {
          result = next.fn();
        } catch (error) {
          next.req.error = error;
          let prevented = false;
          next.req.onerror?.({ target: next.req, preventDefault: () => { prevented = true; } });
          // Told to commit, it aborts on a failed request however the handler answered.
          if (!prevented || this.committing) {
            this.fail(error);
            return;
          }
          later(step);
          return;
        }
        next.req.result = result;
        const answer = () => next.req.onsuccess?.({ target: next.req });
        // Told to commit: no trip back to the page to find that nothing more comes.
        const onward = () => (this.committing && this.ops.length === 0 ? step() : later(step));
        if (this.committing) {
          toPage(this.client, answer);
          onward();
        } else {
          // The page may make more requests in its handler: the transaction waits for it.
          toPage(this.client, () => {
            if (this.done) return; // aborted meanwhile: the answer is never delivered
            answer();
            onward();
          });
        }
      };
      step();
      return undefined;
    }
  }

  class Connection {
    constructor(db, client) {
      Object.assign(this, { db, client, onversionchange: null, closed: false });
    }

    get objectStoreNames() {
      const names = [...this.db.stores.keys()];
      return { contains: (name) => names.includes(name), length: names.length };
    }

    createObjectStore(name) {
      this.db.stores.set(name, new Map());
      return {};
    }

    transaction(names, mode, options = {}) {
      if (this.closed) throw new DOMException('connection closed', 'InvalidStateError');
      if (failure === 'throw') throw new DOMException('injected failure', 'UnknownError');
      if (mode !== 'readwrite' && mode !== 'readonly') throw new TypeError('bad mode');
      const durability = options.durability ?? 'default';
      if (!['default', 'strict', 'relaxed'].includes(durability)) throw new TypeError('bad durability');
      const scope = Array.isArray(names) ? names : [names];
      // As in browsers, so that an app's test with a misspelt store fails here as it would there.
      if (scope.length === 0) throw new DOMException('a transaction needs at least one store', 'InvalidAccessError');
      const missing = scope.find((name) => !this.db.stores.has(name));
      if (missing !== undefined) throw new DOMException(`no object store named ${missing}`, 'NotFoundError');
      return new Transaction(this.db, scope, this.client, mode, durability);
    }

    close() {
      this.closed = true;
    }
  }

  /** An `IDBFactory` for one client (a tab); its requests die with `client.crashed`. */
  const factoryFor = (client) => ({
    open(name, version = 1) {
      if (failure === 'throw') throw new DOMException('injected failure', 'UnknownError');
      stats.opens += 1;
      const req = { ...request(null), onupgradeneeded: null, onblocked: null };
      later(() => {
        if (client.crashed) return;
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
          if (client.crashed) return;
          req.result = new Connection(db, client);
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
  });

  /** Ends a client's part in the store, as a renderer crash does. */
  function crash(client) {
    client.crashed = true;
    for (let i = queue.length - 1; i >= 0; i -= 1) if (queue[i].client === client) queue.splice(i, 1);
    if (running?.client === client) running.vanish();
  }

  return {
    /** The factory of a client that never crashes nor freezes (one per store). */
    indexedDB: factoryFor({ crashed: false, frozen: false, held: [] }),
    /**
     * A tab's own factory over the same databases, `crash()` to end its part in them, and
     * `freeze()`/`thaw()` to hold what reaches its page meanwhile.
     */
    client() {
      const client = { crashed: false, frozen: false, held: [] };
      return {
        indexedDB: factoryFor(client),
        crash: () => crash(client),
        freeze() {
          client.frozen = true;
        },
        thaw() {
          client.frozen = false;
          for (const fn of client.held.splice(0)) later(fn);
        },
      };
    },
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
      return structuredClone(databases.get(name)?.stores.get(store)?.get(slot(key)));
    },
    stats: () => ({ ...stats }),
  };
}
