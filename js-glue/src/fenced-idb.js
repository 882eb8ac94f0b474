/**
 * tab-baton/fenced-idb: a guarded effect where it lands in IndexedDB. An app's read-write
 * transaction on its own database commits only if the token's epoch is still the newest
 * one that database has seen for the resource, checked and recorded inside the same
 * transaction (the pattern of Firestore's primary lease): a thawed stale leader's write is
 * refused with STALE_OWNER however late it comes, and nothing of it is written.
 *
 * The fence is a store of the app's database (default name `baton_fence`, key: resource,
 * value: the highest epoch accepted); create it in `onupgradeneeded` with
 * `createFenceStore(db)`. The offline queue of seed 000 (section 21) marks a batch in
 * flight with the epoch in one fenced transaction and commits it in another: a stale owner
 * can do neither once a newer term has written.
 *
 * @module tab-baton/fenced-idb
 */

import { StaleOwnerError } from './stale-owner-error.js';

// The class `tab-baton` exports, the same object (in CommonJS too: the entries share one
// module), so `instanceof` holds for a refusal of either.
export { StaleOwnerError };

export const FENCE_STORE = 'baton_fence';

/** Creates the fence store; call it from the app's `onupgradeneeded`. Idempotent. */
export function createFenceStore(db, storeName = FENCE_STORE) {
  if (!db.objectStoreNames.contains(storeName)) db.createObjectStore(storeName);
}

/**
 * Runs `body(tx)` in a read-write transaction on `db` over `stores` (and the fence store)
 * if `token.epoch` is at least the highest epoch accepted for `token.resource`; the epoch
 * is recorded as the highest in the same transaction. `body` must use `tx` synchronously
 * or from request callbacks (IndexedDB commits when nothing is pending), and may return a
 * value. Resolves with it once the transaction commits; rejects with an Error of `code`
 * 'STALE_OWNER' (nothing written), or with the error that aborted the transaction.
 * @param {IDBDatabase} db
 * @param {{resource: string, epoch: number}} token
 * @param {string[]} stores the app's stores the body writes
 * @param {(tx: IDBTransaction) => unknown} body
 * @param {{fenceStore?: string}} [options]
 */
export function fencedTransaction(db, token, stores, body, options) {
  // A promise in every case: wrong arguments reject (the executor's throw) rather than throw.
  return new Promise((resolve, reject) => run(db, token, stores, body, options, resolve, reject));
}

function run(db, token, stores, body, options, resolve, reject) {
  const where = 'fencedTransaction';
  if (!db || typeof db.transaction !== 'function') throw new TypeError(`${where}: "db" must be an open IDBDatabase`);
  if (!token || typeof token.resource !== 'string' || token.resource === '' || !Number.isSafeInteger(token.epoch) || token.epoch < 1) {
    throw new TypeError(`${where}: "token" must be {resource: non-empty string, epoch: positive integer} (handle.token())`);
  }
  if (!Array.isArray(stores) || !stores.every((s) => typeof s === 'string' && s !== '')) throw new TypeError(`${where}: "stores" must be an array of store names`);
  if (typeof body !== 'function') throw new TypeError(`${where}: "body" must be a function`);
  if (options !== undefined && (options === null || typeof options !== 'object')) throw new TypeError(`${where}: "options" must be an object {fenceStore}`);
  const unknown = Object.keys(options ?? {}).find((key) => key !== 'fenceStore');
  if (unknown !== undefined) throw new TypeError(`${where}: unknown option "${unknown}" (known: fenceStore)`);
  const fenceStore = options?.fenceStore ?? FENCE_STORE;
  if (typeof fenceStore !== 'string' || fenceStore === '') throw new TypeError(`${where}: option "fenceStore" must be a store name`);
  const { resource, epoch } = token;

  const tx = db.transaction([fenceStore, ...stores.filter((s) => s !== fenceStore)], 'readwrite');
  let failure = null;
  let result;
  const abort = (error) => {
    failure = error;
    try {
      tx.abort();
    } catch {
      // Already finishing: its error handler reports it.
    }
  };
  tx.oncomplete = () => resolve(result);
  tx.onabort = () => reject(failure ?? tx.error ?? new Error(`${where}: the transaction aborted`));
  const fence = tx.objectStore(fenceStore);
  const read = fence.get(resource);
  read.onsuccess = () => {
    const highest = Number.isSafeInteger(read.result) ? read.result : 0;
    if (epoch < highest) {
      abort(new StaleOwnerError(resource, epoch, highest));
      return;
    }
    try {
      if (epoch > highest) fence.put(epoch, resource);
      result = body(tx);
    } catch (error) {
      abort(error);
    }
  };
}
