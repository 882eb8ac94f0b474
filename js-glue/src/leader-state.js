/**
 * Leader state as every tab sees it, as a sans-IO reducer: the latest state object the
 * leader of a resource published, tied to the term that published it.
 *
 * The snapshot is `{value, epoch, leader, stale}`: `epoch` and `leader` are the term that
 * published `value`. It turns `stale: true` when that term ends ('bye') or a newer term
 * begins without state; the newer term's first state replaces it. Anything from a term
 * older than the newest one seen (a thawed stale leader) is dropped.
 *
 * @module tab-baton/leader-state
 */

export class StateTracker {
  constructor() {
    /** @type {{value: unknown, epoch: number, leader: string, stale: boolean} | null} */
    this.snapshot = null;
    /** Newest term seen, and the sequence number of the state it last published. */
    this.epoch = 0;
    this.seq = 0;
    this.staleDropped = 0;
  }

  /**
   * A term announced itself ('lead', with its state if it has published one) or published
   * a new state ('state').
   * @returns {boolean} whether the snapshot changed
   */
  update(epoch, from, seq, value, hasState) {
    if (epoch < this.epoch) {
      this.staleDropped += 1;
      return false;
    }
    const newTerm = epoch > this.epoch;
    if (!newTerm && hasState && seq <= this.seq) return false;
    this.epoch = epoch;
    if (newTerm) this.seq = 0;
    if (hasState) {
      this.seq = seq;
      this.snapshot = Object.freeze({ value, epoch, leader: from, stale: false });
      return true;
    }
    return newTerm ? this.markStale() : false;
  }

  /** Term `epoch` ended. */
  end(epoch) {
    return epoch === this.epoch ? this.markStale() : false;
  }

  markStale() {
    if (!this.snapshot || this.snapshot.stale) return false;
    this.snapshot = Object.freeze({ ...this.snapshot, stale: true });
    return true;
  }
}
