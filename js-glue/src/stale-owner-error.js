/**
 * The refusal of a guarded effect, shared by tab-baton, tab-baton/server and
 * tab-baton/fenced-idb (re-exported by errors.js).
 *
 * @module tab-baton/stale-owner-error
 */

/**
 * A guarded effect from a term that is not (or no longer) the newest: `code` 'STALE_OWNER'.
 * Thrown by `Fence.check` and `ServerFence.check`; the rejection of `handle.fenced()` and of
 * `fencedTransaction`.
 */
export class StaleOwnerError extends Error {
  /**
   * @param {string} resource
   * @param {number | null} epoch the stale term, null when this tab holds none
   * @param {number} highest the newest term the fence has seen
   */
  constructor(resource, epoch, highest) {
    super(
      epoch === null
        ? `STALE_OWNER: this tab does not lead "${resource}"`
        : `STALE_OWNER: epoch ${epoch} of "${resource}" is stale (newest seen: ${highest})`,
    );
    this.name = 'StaleOwnerError';
    Object.assign(this, { code: 'STALE_OWNER', resource, epoch, highest });
  }
}
