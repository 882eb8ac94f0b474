/**
 * The IndexedDB database of one namespace: `epochs` (durable counters, key = resource)
 * and `leases` (lease records, key = `v<protocol>/<resource>`). Opened lazily, once.
 *
 * @module tab-baton/idb
 */

const STORES = ['epochs', 'leases'];

export class Database {
  /**
   * @param {any} indexedDB
   * @param {string} name
   */
  constructor(indexedDB, name) {
    this.indexedDB = indexedDB;
    this.name = name;
    /** @type {Promise<any> | null} */
    this.opening = null;
    this.closed = false;
  }

  /** @returns {Promise<any>} the open IDBDatabase (rejects if it cannot be opened). */
  open() {
    if (this.closed) return Promise.reject(new Error('database closed'));
    if (!this.opening) {
      this.opening = new Promise((resolve, reject) => {
        const req = this.indexedDB.open(this.name, 1);
        req.onupgradeneeded = () => {
          const db = req.result;
          for (const store of STORES) if (!db.objectStoreNames.contains(store)) db.createObjectStore(store);
        };
        req.onsuccess = () => {
          const db = req.result;
          // Another tab upgrading the schema must not be blocked by us.
          db.onversionchange = () => db.close();
          if (this.closed) db.close();
          resolve(db);
        };
        req.onerror = () => reject(req.error ?? new Error('indexedDB.open failed'));
        req.onblocked = () => reject(new Error('indexedDB.open blocked'));
      });
      // Opening failed: try again next time (private mode may refuse once).
      this.opening.catch(() => {
        this.opening = null;
      });
    }
    return this.opening;
  }

  /**
   * Runs `body(store, tx)` in a read-write transaction on `storeName`.
   * Resolves when the transaction commits, rejects when it fails or aborts.
   * @param {string} storeName
   * @param {(store: any, tx: any) => void} body
   * @returns {Promise<void>}
   */
  async readwrite(storeName, body) {
    const db = await this.open();
    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (error) => {
        if (settled) return;
        settled = true;
        reject(error ?? new Error('transaction failed'));
      };
      let tx;
      try {
        tx = db.transaction(storeName, 'readwrite');
      } catch (error) {
        fail(error);
        return;
      }
      tx.oncomplete = () => {
        if (settled) return;
        settled = true;
        resolve();
      };
      tx.onerror = () => fail(tx.error);
      tx.onabort = () => fail(tx.error);
      try {
        body(tx.objectStore(storeName), tx);
      } catch (error) {
        try {
          tx.abort();
        } catch {
          // Already finished.
        }
        fail(error);
      }
    });
  }

  close() {
    this.closed = true;
    this.opening?.then((db) => db.close(), () => {});
  }
}
