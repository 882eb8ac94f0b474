/**
 * The leader's side of requests, as a sans-IO reducer: which request to serve, which to
 * acknowledge again, which answer to replay, and which answer is too late to send.
 *
 * Within one term a re-sent request (same id) is served once: while it is being served it
 * is only acknowledged again, and once answered its answer is replayed from a bounded
 * cache. A new term starts empty (its leader may be another tab; the caller re-sends to
 * it and it serves again: at least once across terms). An answer computed in a term that
 * has ended is not sent: the caller will get one from the next term instead.
 *
 * @module tab-baton/requests-server
 */

export class ServeDesk {
  /**
   * @param {number} maxServing requests served at once; more stay unacknowledged
   * @param {number} repliesKept answers kept for replay
   */
  constructor(maxServing, repliesKept) {
    this.maxServing = maxServing;
    this.repliesKept = repliesKept;
    /** The current term's epoch, 0 when this tab does not lead. */
    this.epoch = 0;
    /** @type {Set<string>} */
    this.serving = new Set();
    /** @type {Map<string, object>} id -> the answer message, oldest first */
    this.replies = new Map();
    this.counters = { served: 0, replayed: 0, reacked: 0, refused: 0, failed: 0, busy: 0, lateAnswers: 0, notLeader: 0 };
  }

  begin(epoch) {
    this.epoch = epoch;
    this.serving.clear();
    this.replies.clear();
  }

  end() {
    this.epoch = 0;
    this.serving.clear();
    this.replies.clear();
  }

  /**
   * A request arrived.
   * @returns {{do: 'ignore'} | {do: 'ack'} | {do: 'replay', reply: object} | {do: 'serve'}}
   */
  request(id) {
    if (this.epoch === 0) {
      this.counters.notLeader += 1;
      return { do: 'ignore' };
    }
    const reply = this.replies.get(id);
    if (reply) {
      this.counters.replayed += 1;
      return { do: 'replay', reply };
    }
    if (this.serving.has(id)) {
      this.counters.reacked += 1;
      return { do: 'ack' };
    }
    if (this.serving.size >= this.maxServing) {
      this.counters.busy += 1;
      return { do: 'ignore' };
    }
    this.serving.add(id);
    return { do: 'serve' };
  }

  /**
   * `serve` finished for `id`, in term `epoch`, with the answer message `reply`.
   * @param {'served'|'failed'|'refused'} outcome
   * @returns {boolean} true: send `reply`
   */
  answered(id, epoch, reply, outcome) {
    if (epoch !== this.epoch || !this.serving.delete(id)) {
      this.counters.lateAnswers += 1;
      return false;
    }
    this.counters[outcome] += 1;
    this.replies.set(id, reply);
    if (this.replies.size > this.repliesKept) this.replies.delete(this.replies.keys().next().value);
    return true;
  }
}
