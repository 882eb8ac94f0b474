/**
 * The leader's side of requests, as a sans-IO reducer: which request to serve, which to
 * acknowledge again, which answer to replay, and which answer is too late to send.
 *
 * Within one term a re-sent request (same id) is served once: while it is being served it
 * is only acknowledged again, and once answered its answer is replayed from a bounded
 * cache. The id may come from more than one tab (an app's own operation id, sent again by
 * the tab that replaced a reloaded one): each of them gets the one answer. A new term starts empty (its leader may be another tab; the caller re-sends to
 * it and it serves again: at least once across terms). An answer computed in a term that
 * has ended is not sent: the caller will get one from the next term instead.
 *
 * @module tab-baton/requests-server
 */

export class ServeDesk {
  /**
   * @param {number} maxServing requests served at once; more stay unacknowledged
   * @param {number} repliesKept answers kept for replay
   * @param {number} maxAskers tabs waiting for one request's answer; more stay unacknowledged
   */
  constructor(maxServing, repliesKept, maxAskers) {
    this.maxServing = maxServing;
    this.repliesKept = repliesKept;
    this.maxAskers = maxAskers;
    /** The current term's epoch, 0 when this tab does not lead. */
    this.epoch = 0;
    /** @type {Map<string, string[]>} id -> the tabs waiting for its answer, first asker first */
    this.serving = new Map();
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
   * Request `id` arrived from tab `from`.
   * @returns {{do: 'ignore'} | {do: 'ack'} | {do: 'replay', reply: object} | {do: 'serve'}}
   *   a replayed answer is addressed to `from` by the caller
   */
  request(id, from) {
    if (this.epoch === 0) {
      this.counters.notLeader += 1;
      return { do: 'ignore' };
    }
    const reply = this.replies.get(id);
    if (reply) {
      this.counters.replayed += 1;
      return { do: 'replay', reply };
    }
    const askers = this.serving.get(id);
    if (askers) {
      if (!askers.includes(from)) {
        if (askers.length >= this.maxAskers) {
          this.counters.busy += 1;
          return { do: 'ignore' };
        }
        askers.push(from);
      }
      this.counters.reacked += 1;
      return { do: 'ack' };
    }
    if (this.serving.size >= this.maxServing) {
      this.counters.busy += 1;
      return { do: 'ignore' };
    }
    this.serving.set(id, [from]);
    return { do: 'serve' };
  }

  /**
   * `serve` finished for `id`, in term `epoch`, with the answer message `reply`.
   * @param {'served'|'failed'|'refused'} outcome
   * @returns {string[]} the tabs to send `reply` to (none: its term has ended)
   */
  answered(id, epoch, reply, outcome) {
    const askers = epoch === this.epoch ? this.serving.get(id) : undefined;
    if (!askers) {
      this.counters.lateAnswers += 1;
      return [];
    }
    this.serving.delete(id);
    this.counters[outcome] += 1;
    this.replies.set(id, reply);
    if (this.replies.size > this.repliesKept) this.replies.delete(this.replies.keys().next().value);
    return askers;
  }
}
