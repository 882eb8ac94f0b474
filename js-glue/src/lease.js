/**
 * The IndexedDB lease authority behind `lease_try`: one read-write transaction that reads
 * the resource's lease record, lets the core decide (`leaseDecide`, synchronously inside
 * the transaction, so the read-decide-write is atomic against other tabs), writes the
 * decision if there is one, and on commit reports `lease_result` with the record now in
 * the store. Any failure reports `lease_failed`.
 *
 * @module tab-baton/lease
 */

export class LeaseAuthority {
  /**
   * @param {object} deps
   * @param {import('./idb.js').Database} deps.database
   * @param {(resource: string) => string} deps.key store key of a resource's record
   * @param {(resource: string, record: object | null) => object | null} deps.decide the core's leaseDecide
   * @param {(resource: string, record: object | null) => void} deps.committed
   * @param {(resource: string, error: unknown) => void} deps.failed
   * @param {Record<string, number>} deps.counters
   */
  constructor({ database, key, decide, committed, failed, counters }) {
    Object.assign(this, { database, key, decide, committed, failed, counters });
  }

  /**
   * Runs one lease transaction for `resource`.
   * @returns {Promise<void>} settles when the outcome has been reported
   */
  run(resource) {
    this.counters.leaseTransactions += 1;
    let stored = null;
    return this.database
      .readwrite('leases', (store) => {
        const key = this.key(resource);
        const get = store.get(key);
        get.onsuccess = () => {
          const current = asRecord(get.result);
          const next = this.decide(resource, current);
          stored = next ?? current;
          if (next) store.put({ ...next }, key);
        };
      })
      .then(
        () => this.committed(resource, stored),
        (error) => {
          this.counters.leaseFailures += 1;
          this.failed(resource, error);
        },
      );
  }
}

/**
 * A stored record in the shape the core reads, or null. Anything else (written by another
 * version, or corrupt) counts as no record: passing it on could make the core misread it.
 */
function asRecord(value) {
  if (!value || typeof value !== 'object') return null;
  const { owner, generation, epoch, expiresMs } = value;
  const count = (n) => typeof n === 'number' && Number.isFinite(n) && n >= 0;
  if (typeof owner !== 'string' || !count(generation) || !count(epoch) || !count(expiresMs)) return null;
  return { owner, generation, epoch, expiresMs };
}
