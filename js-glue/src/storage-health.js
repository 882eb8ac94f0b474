/**
 * Whether this tab's epochs can be trusted to be strictly greater than every earlier term's,
 * and if not, why. Shared by every generation of one Baton; read by `metrics()` and
 * `support()` (`degraded`, `degradedReason`), and by `fenced()`, which refuses to run an
 * effect under an epoch that is not durable.
 *
 * Durable means committed in an IndexedDB read-write transaction: the browser serialises
 * those across every tab and process of the origin and keeps them across reloads and
 * crashes. localStorage is only a mirror (Chromium propagates it between renderers
 * asynchronously), so an epoch taken from it, or from memory, is never durable.
 *
 * The store is failing from the first failed, timed-out or inconsistent operation until
 * the next one that commits and reads back consistently: then a later term gets an epoch
 * above the stored counter and above every epoch this tab issued or saw meanwhile, and
 * `degraded` clears.
 *
 * @module tab-baton/storage-health
 */

export class StorageHealth {
  /** @param {boolean} available whether IndexedDB exists at all */
  constructor(available) {
    /** Why the store cannot be trusted now, or null. */
    this.failure = available ? null : 'indexeddb-unavailable';
    this.available = available;
    /** resource -> the last epoch committed durably for it (allocated or lease record). */
    this.durable = new Map();
  }

  /** A storage operation failed: `error` (a DOMException or TimeoutError) names why. */
  failed(error) {
    const name = error && typeof error.name === 'string' && error.name !== 'Error' ? error.name : 'Error';
    this.failure = name === 'TimeoutError' ? 'storage-timeout' : `storage-failed:${name}`;
  }

  /** The store answered below what it had already committed: a lost write or a stale read. */
  inconsistent() {
    this.failure = 'storage-inconsistent';
  }

  /** A storage operation committed and read back consistently. */
  recovered() {
    if (this.available) this.failure = null;
  }

  /** `epoch` of `resource` was committed in IndexedDB. */
  committed(resource, epoch) {
    this.durable.set(resource, epoch);
  }

  /** Whether a term of `resource` with `epoch` was committed durably. */
  isDurable(resource, epoch) {
    return this.available && this.durable.get(resource) === epoch;
  }
}
