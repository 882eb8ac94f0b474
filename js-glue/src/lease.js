/**
 * The IndexedDB lease authority behind `lease-try`: one read-write transaction that reads
 * the resource's lease record, steps it into the core (`lease_read`, synchronously inside
 * the transaction, so the read-decide-write is atomic against other tabs), writes the
 * `lease-write` the core answers with if there is one, and on commit reports
 * `lease_result` with the record now in the store. Any failure reports `lease_failed`.
 * An unread `lease-write` (a closing page's release) is written in a transaction of its own.
 *
 * A page that freezes must not keep a transaction open: the read-write transaction of a
 * frozen page holds the store until the page thaws, and no other tab could take the lease
 * over meanwhile. `abortAll()` (called from the `freeze` handler) aborts the ones in flight.
 *
 * @module tab-baton/lease
 */

export class LeaseAuthority {
  /**
   * @param {object} deps
   * @param {import('./idb.js').Database} deps.database
   * @param {(resource: string) => string} deps.key store key of a resource's record
   * @param {(resource: string, top: number) => any[]} deps.successorKey the epoch key an
   *   allocation above `top` writes (epoch-store.js; passed in, so that this lazy chunk
   *   does not share a module with the main one)
   * @param {(resource: string, record: object | null) => object | null} deps.read steps the record
   *   read into the core; returns the record it answers to write, or null
   * @param {(resource: string, record: object | null) => void} deps.committed
   * @param {(resource: string, error: unknown) => void} deps.failed
   * @param {import('./storage-health.js').StorageHealth} deps.health
   * @param {string} deps.owner this tab's id, to recognise its own records
   * @param {Record<string, number>} deps.counters
   */
  constructor({ database, key, successorKey, read, committed, failed, health, owner, counters }) {
    Object.assign(this, { database, key, successorKey, read, committed, failed, health, owner, counters });
    /** @type {Set<{tx: any, aborted: boolean}>} the transactions in flight */
    this.running = new Set();
  }

  /**
   * Aborts every transaction in flight that has not begun to commit, but unread ones (they
   * wait for nothing). An aborted one writes nothing and reports nothing: the caller tells
   * the core (`lease_aborted`).
   * @returns {string[]} the resources whose transaction was aborted
   */
  abortAll() {
    const aborted = [];
    for (const run of this.running) {
      if (run.unread) continue;
      try {
        run.tx?.abort();
        run.aborted = true;
        aborted.push(run.resource);
      } catch {
        // Already committing: it completes and reports as usual.
      }
    }
    return aborted;
  }

  /**
   * Runs one lease transaction for `resource`. The record's key is per protocol version, the
   * epoch counter is not: a new owner's epoch starts above the counter too, and the counter
   * follows it, so epochs keep rising across deploys and authorities.
   *
   * `unread` (a closing page's release): that record is written without a read and
   * committed at once, so that nothing in the transaction waits for the page, which is
   * being torn down. The record keeps its epoch: the counter needs no write.
   * @param {string} resource
   * @param {object | null} [unread] the record of an unread `lease-write`
   * @returns {Promise<void>} settles when the outcome has been reported
   */
  run(resource, unread = null) {
    this.counters.leaseTransactions += 1;
    let stored = null;
    let wrote = null;
    // Not begun yet when aborted: its body aborts it at once.
    const run = { resource, unread: !!unread, tx: null, aborted: false };
    this.running.add(run);
    return this.database
      .readwrite(['leases', 'epochs'], ({ leases, epochs }, tx) => {
        run.tx = tx;
        if (run.aborted) {
          tx.abort();
          return;
        }
        const key = this.key(resource);
        if (unread) {
          leases.put({ ...unread }, key);
          stored = unread;
          tx.commit?.();
          return;
        }
        const get = leases.get(key);
        const counter = epochs.get(resource);
        counter.onsuccess = () => {
          const floor = parseCounter(counter.result);
          let current = asRecord(get.result);
          // Another owner's record below the counter: decide as if it carried the counter,
          // so that a new term's epoch is above every epoch issued for the resource.
          if (current && current.owner !== this.owner && current.epoch < floor) current = { ...current, epoch: floor };
          if (!current && floor > 0) current = { owner: '', generation: 0, epoch: floor, expiresMs: 0, takeoverMs: 0 };
          const next = this.read(resource, current);
          stored = next ?? current;
          if (next) {
            wrote = next;
            leases.put({ ...next }, key);
            // A new term above the counter moves it as an epoch allocation does (epoch-store.js):
            // the counter and the key that tells a tab that read `floor` that it is taken.
            if (next.epoch > floor) {
              epochs.put(next.epoch, this.successorKey(resource, floor));
              epochs.put(next.epoch, resource);
            }
          }
          tx.commit?.();
        };
      })
      .finally(() => this.running.delete(run))
      .then(
        () => {
          this.health.recovered();
          if (wrote && wrote.owner === this.owner) this.health.committed(resource, wrote.epoch);
          this.committed(resource, stored);
        },
        (error) => {
          if (run.aborted) return;
          this.counters.leaseFailures += 1;
          this.health.failed(error);
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
  const { owner, generation, epoch, expiresMs, takeoverMs } = value;
  const count = (n) => typeof n === 'number' && Number.isFinite(n) && n >= 0;
  if (typeof owner !== 'string' || !count(generation) || !count(epoch) || !count(expiresMs)) return null;
  // A record written before owners stated a takeover time: taken over only once it expires.
  return { owner, generation, epoch, expiresMs, takeoverMs: count(takeoverMs) ? takeoverMs : expiresMs };
}

/** A stored epoch counter: a non-negative safe integer, else 0. */
function parseCounter(value) {
  return Number.isSafeInteger(value) && value > 0 ? value : 0;
}
