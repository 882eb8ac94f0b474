/**
 * `tab-baton/fenced-idb`: an app's read-write IndexedDB transaction that commits only if
 * the token's epoch is still the newest its database has seen for the resource, checked
 * and recorded inside the same transaction.
 */

/** The default name of the fence store. */
export const FENCE_STORE: 'baton_fence';

/** Creates the fence store; call it from the app's `onupgradeneeded`. Idempotent. */
export function createFenceStore(db: IDBDatabase, storeName?: string): void;

/** A refused transaction (nothing was written): `code` 'STALE_OWNER'. The class of `tab-baton`. */
export { StaleOwnerError } from './index.js';
import type { StaleOwnerError } from './index.js';

/**
 * Runs `body(tx)` over `stores` (and the fence store) if `token.epoch` is at least the
 * highest accepted for `token.resource`, recording it. `body` uses `tx` synchronously or
 * from request callbacks. Resolves with its return value once committed; rejects with a
 * {@link StaleOwnerError} or with what aborted the transaction. Never throws: wrong
 * arguments reject with a TypeError naming them. `stores` may be empty: run that way at the
 * start of a term, it records the term's epoch, so an older term is refused from then on.
 */
export function fencedTransaction<T>(
  db: IDBDatabase,
  token: { readonly resource: string; readonly epoch: number },
  stores: string[],
  body: (tx: IDBTransaction) => T,
  options?: { fenceStore?: string },
): Promise<T>;
