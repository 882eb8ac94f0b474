/**
 * Errors Baton hands to apps, recognisable by `code`.
 *
 * @module tab-baton/errors
 */

// In its own module: tab-baton/server and tab-baton/fenced-idb load this class and no other.
import { StaleOwnerError } from './stale-owner-error.js';

export { StaleOwnerError };

/**
 * A guarded effect refused because its term's epoch was not committed durably, so a later
 * term might repeat it: `code` 'EPOCH_NOT_DURABLE', `reason` why storage is not trusted
 * (as in `metrics().degradedReason`).
 */
export class EpochNotDurableError extends Error {
  constructor(resource, epoch, reason) {
    super(`EPOCH_NOT_DURABLE: epoch ${epoch} of "${resource}" was not stored durably (${reason}); the effect did not run`);
    this.name = 'EpochNotDurableError';
    Object.assign(this, { code: 'EPOCH_NOT_DURABLE', resource, epoch, reason });
  }
}

/**
 * Where the platform has `DOMException` (browsers, workers, Node >= 17) an abort reason is
 * one named 'AbortError', as code that checks `signal.reason` expects.
 */
const AbortBase = typeof globalThis.DOMException === 'function' ? globalThis.DOMException : Error;

/**
 * The abort reason of a leader's signal when its term ends: `code` 'DEPOSED', `reason` why
 * (the core's reason, e.g. 'lock-lost', 'frozen', 'abdicate', or 'released' / 'dispose').
 * A `DOMException` named 'AbortError' where the platform has one (else an Error of that
 * name); its `code` is 'DEPOSED', not DOMException's legacy number.
 */
export class DeposedError extends AbortBase {
  /**
   * @param {string} resource
   * @param {number} epoch the term that ended
   * @param {string} reason
   */
  constructor(resource, epoch, reason) {
    const message = `leadership of "${resource}" (epoch ${epoch}) ended: ${reason}`;
    super(message, 'AbortError');
    // DOMException's own `name` and `code` are read-only accessors: shadow them.
    for (const [key, value] of Object.entries({ name: 'AbortError', code: 'DEPOSED', resource, epoch, reason })) {
      Object.defineProperty(this, key, { value, enumerable: key !== 'name', writable: true, configurable: true });
    }
  }
}

/** @returns {StaleOwnerError} */
export function staleOwner(resource, epoch, highest) {
  return new StaleOwnerError(resource, epoch, highest);
}

/** @returns {DeposedError} */
export function deposed(resource, epoch, reason) {
  return new DeposedError(resource, epoch, reason);
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
