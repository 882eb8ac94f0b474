/**
 * Errors Baton hands to apps, recognisable by `code`.
 *
 * @module tab-baton/errors
 */

/**
 * A guarded effect from a term that is not (or no longer) the newest: `code` 'STALE_OWNER'.
 * @param {string} resource
 * @param {number | null} epoch the stale term, null when this tab holds none
 * @param {number} highest the newest term the fence has seen
 */
export function staleOwner(resource, epoch, highest) {
  const error = new Error(
    epoch === null
      ? `STALE_OWNER: this tab does not lead "${resource}"`
      : `STALE_OWNER: epoch ${epoch} of "${resource}" is stale (newest seen: ${highest})`,
  );
  error.name = 'StaleOwnerError';
  return Object.assign(error, { code: 'STALE_OWNER', resource, epoch, highest });
}

/**
 * A guarded effect refused because its term's epoch was not committed durably, so a later
 * term might repeat it: `code` 'EPOCH_NOT_DURABLE', `reason` why storage is not trusted
 * (as in `metrics().degradedReason`).
 */
export function epochNotDurable(resource, epoch, reason) {
  const error = new Error(
    `EPOCH_NOT_DURABLE: epoch ${epoch} of "${resource}" was not stored durably (${reason}); the effect did not run`,
  );
  error.name = 'EpochNotDurableError';
  return Object.assign(error, { code: 'EPOCH_NOT_DURABLE', resource, epoch, reason });
}

/**
 * The abort reason of a leader's signal when its term ends: `code` 'DEPOSED', `reason` why
 * (the core's reason, e.g. 'lock-lost', 'frozen', 'abdicate', or 'released' / 'dispose').
 */
export function deposed(resource, epoch, reason) {
  const error = new Error(`leadership of "${resource}" (epoch ${epoch}) ended: ${reason}`);
  error.name = 'AbortError';
  return Object.assign(error, { code: 'DEPOSED', resource, epoch, reason });
}

/** A call that cannot work after `dispose()`: `code` 'DISPOSED'. */
export function disposedError(what) {
  const error = new Error(`tab-baton: ${what} after dispose()`);
  return Object.assign(error, { code: 'DISPOSED' });
}

/** Reports an app error without throwing it into Baton (the browser's reportError if any). */
export function reportError(error) {
  if (typeof globalThis.reportError === 'function') globalThis.reportError(error);
  else console.error(error);
}
