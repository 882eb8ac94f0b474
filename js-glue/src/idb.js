/**
 * The IndexedDB database of one namespace: `epochs` (per resource, the epoch counter, key
 * = resource, and one record per term, key = [resource, n]: see epoch-store.js) and
 * `leases` (lease records, key = `v<protocol>/<resource>`).
 *
 * Opened when a resource is joined and kept open (warm), so that the grant path pays one
 * transaction and no open. Every operation has a deadline: an open or a transaction that
 * does not answer in time (an upgrade blocked by another tab's connection, a wedged browser
 * store) rejects with a `TimeoutError`, so the caller degrades instead of waiting forever.
 * The deadline is a timer, which a frozen page does not run; its message handlers do run,
 * and call `expireOverdue()` (see there).
 * A hung open is kept: if it answers later, the next operation uses it. An open the browser
 * refuses with a `SecurityError` (an opaque origin, blocked site data) is handed to
 * `refused` once: no later open can work in this context.
 *
 * @module tab-baton/idb
 */

import { isRefusal } from './env.js';
import { DEFAULT_STORAGE_TIMEOUT_MS } from './constants.js';

const STORES = ['epochs', 'leases'];
/**
 * The deadline of one open or transaction: half a second below the core's own deadline for
 * a storage answer, so that a failing store is reported by the glue, with its cause, before
 * the core gives up on it. A busy renderer on a loaded machine can take over a second for
 * a healthy transaction; three late ones in a row end the lease mode, so the deadline
 * catches a hung store, not a slow one.
 */
export const STORAGE_TIMEOUT_MS = DEFAULT_STORAGE_TIMEOUT_MS - 500;

export class Database {
  /**
   * @param {object} deps
   * @param {any} deps.indexedDB
   * @param {string} deps.name
   * @param {number} deps.timeoutMs deadline of one open or transaction
   * @param {() => number} deps.now monotonic ms, for the deadlines
   * @param {(fn: () => void, ms: number) => any} deps.setTimeout
   * @param {(id: any) => void} deps.clearTimeout
   * @param {(error: Error) => void} deps.refused the browser refused to open the database
   */
  constructor({ indexedDB, name, timeoutMs, now, setTimeout, clearTimeout, refused }) {
    Object.assign(this, { indexedDB, name, timeoutMs, now, setTimeout, clearTimeout, refused });
    /** The operations in flight: their expiry -> their deadline (`now()` time). */
    this.deadlines = new Map();
    /** The refusal, once the browser refused to open the database. */
    this.refusal_ = null;
    /** @type {Promise<any> | null} */
    this.opening_ = null;
    /** The open connection, once `opening_` resolved: a transaction on it starts in the same task. */
    this.connection = null;
    this.closed = false;
  }

  /** @returns {Promise<any>} the open IDBDatabase (rejects if it cannot be opened). */
  open() {
    if (this.closed) return Promise.reject(new Error('database closed'));
    if (!this.opening_) {
      const opening = new Promise((resolve, reject) => {
        const req = this.indexedDB.open(this.name, 1);
        req.onupgradeneeded = () => {
          const db = req.result;
          for (const store of STORES) if (!db.objectStoreNames.contains(store)) db.createObjectStore(store);
        };
        req.onsuccess = () => {
          const db = req.result;
          // Another tab deleting or upgrading the database must not be blocked by us;
          // the next operation opens again.
          db.onversionchange = () => {
            db.close();
            if (this.opening_ === opening) this.opening_ = null;
            if (this.connection === db) this.connection = null;
          };
          if (this.closed) db.close();
          else if (this.opening_ === opening) this.connection = db;
          resolve(db);
        };
        req.onerror = () => reject(req.error ?? new Error('indexedDB.open failed'));
        // Blocked: the open waits for another connection to close; the deadline decides.
      });
      this.opening_ = opening;
      // Failed: try again next time (private mode may refuse once).
      opening.catch((error) => {
        if (this.opening_ === opening) this.opening_ = null;
        if (isRefusal(error) && !this.refusal_) {
          this.refusal_ = error;
          this.refused(error);
        }
      });
    }
    return this.opening_;
  }

  /** Opens now, so that the first transaction does not pay for it; failures wait for it. */
  warm() {
    this.open().catch(() => {});
  }

  /**
   * Runs `body(stores, tx)` in one read-write transaction over `storeNames`. Resolves when
   * the transaction commits; rejects when it fails, aborts, or misses the deadline (then it
   * is aborted, so it cannot commit later). On an open connection the transaction begins
   * before this returns (a closing page's release must reach the store before its goodbye).
   * A body that has made its last request calls `tx.commit?.()`: the commit then goes with
   * it, instead of after its success event has come back to the page and found nothing more
   * to do (one trip to the browser's store and back less; a browser without `commit()`
   * commits on its own).
   * @param {string[]} storeNames
   * @param {(stores: Record<string, any>, tx: any) => void} body
   * @returns {Promise<void>}
   */
  readwrite(storeNames, body) {
    return this.transaction(storeNames, 'readwrite', body);
  }

  /**
   * Runs `body(stores, tx)` in one transaction of `mode` ('readwrite': see `readwrite`;
   * 'readonly': the same deadline) over `storeNames`.
   * @param {string[]} storeNames
   * @param {'readwrite'|'readonly'} mode
   * @param {(stores: Record<string, any>, tx: any) => void} body
   * @returns {Promise<void>}
   */
  transaction(storeNames, mode, body) {
    return new Promise((resolve, reject) => {
      let tx = null;
      let settled = false;
      const finish = (error) => {
        if (settled) return;
        settled = true;
        this.clearTimeout(timer);
        this.deadlines.delete(expire);
        if (error) reject(error);
        else resolve();
      };
      const expire = () => {
        finish(timeoutError(tx ? 'transaction' : 'open', this.timeoutMs));
        abort(tx);
      };
      const timer = this.setTimeout(expire, this.timeoutMs);
      this.deadlines.set(expire, this.now() + this.timeoutMs);
      const start = (db) => {
        if (settled) return;
        try {
          // Relaxed durability: the browser may report the commit once the data is written to
          // the operating system, before it is flushed to disk. Such a commit survives the
          // tab's and the browser's processes ending, not an operating-system crash or power
          // loss right after it. Chromium's default (measured: a strict epoch transaction
          // takes about three times as long); asked for, so that every browser does the same.
          tx = mode === 'readwrite' ? db.transaction(storeNames, mode, { durability: 'relaxed' }) : db.transaction(storeNames, mode);
        } catch (error) {
          // A closed connection: open again next time.
          this.opening_ = null;
          this.connection = null;
          finish(error);
          return;
        }
        tx.oncomplete = () => finish(null);
        tx.onerror = () => finish(tx.error ?? new Error('transaction failed'));
        tx.onabort = () => finish(tx.error ?? new Error('transaction aborted'));
        try {
          body(Object.fromEntries(storeNames.map((name) => [name, tx.objectStore(name)])), tx);
        } catch (error) {
          abort(tx);
          finish(error);
        }
      };
      if (this.connection && !this.closed) start(this.connection);
      else this.open().then(start, (error) => finish(error));
    });
  }

  /**
   * Ends every operation past its deadline, as its timer would have. Called from the page's
   * message handlers: a frozen page runs them, not its timers, and a transaction that waits
   * for the page (a lease's read, answered after the page froze) would otherwise hold the
   * store, and every other tab's transaction over it, until the page thaws.
   */
  expireOverdue() {
    const now = this.now();
    for (const [expire, at] of this.deadlines) if (now >= at) expire();
  }

  close() {
    this.closed = true;
    this.connection = null;
    this.opening_?.then((db) => db.close(), () => {});
  }
}

function abort(tx) {
  try {
    tx?.abort();
  } catch {
    // Already finished.
  }
}

function timeoutError(what, ms) {
  const error = new Error(`IndexedDB ${what} did not answer within ${ms} ms`);
  error.name = 'TimeoutError';
  return error;
}
