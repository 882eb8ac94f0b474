/**
 * A fence for the receiver of guarded effects (a worker, a store, a server written in JS):
 * it admits an effect only from the newest term it has seen for the resource, so a stale
 * owner's late write is rejected with STALE_OWNER. The comparison is the core's (C++), so
 * a Fence answers once the core is loaded (`await ready`); creating one starts the load.
 *
 * @module tab-baton/fence
 */
import { FenceTable, isLoaded, load } from './core.js';
import { disposedError, staleOwner } from './errors.js';
import { LIMITS, checkString } from './options.js';

export class Fence {
  constructor() {
    /** @private @type {FenceTable | null} made on first use, once the core is loaded */
    this.table = null;
    /** @private */
    this.disposed = false;
    load();
  }

  /** @private */
  fenceTable() {
    if (this.disposed) throw disposedError('Fence used');
    if (!this.table) {
      if (!isLoaded()) throw new Error('tab-baton: the Fence needs the WebAssembly core: await ready (or load()) before using it');
      this.table = new FenceTable();
    }
    return this.table;
  }

  /**
   * Admits `token` if its epoch is at least the highest seen for its resource (then it
   * becomes the highest). A term may act many times.
   * @param {{resource: string, epoch: number}} token
   * @returns {boolean}
   */
  admit(token) {
    checkToken(token);
    return this.fenceTable().admit(token.resource, token.epoch);
  }

  /**
   * Like `admit`, but throws an Error with `code` 'STALE_OWNER' when the token is stale.
   * @param {{resource: string, epoch: number}} token
   */
  check(token) {
    if (!this.admit(token)) throw staleOwner(token.resource, token.epoch, this.highest(token.resource));
  }

  /** @returns {number} the highest epoch admitted for `resource` (0: none). */
  highest(resource) {
    checkString('Fence.highest', 'resource', resource, LIMITS.resourceBytes);
    return this.fenceTable().highest(resource);
  }

  /** Frees the fence's memory now (otherwise when it is garbage-collected). Idempotent. */
  dispose() {
    this.disposed = true;
    this.table?.dispose();
  }
}

function checkToken(token) {
  if (!token || typeof token !== 'object') throw new TypeError('Fence: "token" must be an object {resource, epoch}');
  checkString('Fence', 'token.resource', token.resource, LIMITS.resourceBytes);
  // Terms start at epoch 1, as the server fence requires: epoch 0 is "no term".
  if (!Number.isSafeInteger(token.epoch) || token.epoch < 1) throw new TypeError('Fence: "token.epoch" must be a positive integer');
}
