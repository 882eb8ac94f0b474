/**
 * The caller's side of requests, as a sans-IO reducer: the table of this tab's pending
 * requests for one resource and what to do on each event. Time comes in with the events;
 * the adapter (talk.js) posts, settles and keeps one timer at `nextDeadline()`.
 *
 * A request is broadcast to whoever leads. Until a leader acknowledges it, it is re-sent
 * with backoff (so it waits, queued, while no leader exists). Once acknowledged it waits
 * for the answer; when a newer term begins ('lead' with a higher epoch, after a close, a
 * crash or a freeze of the leader) every request not yet answered by that term is sent
 * again, with the same id: delivery is at least once, and a `serve` that keys its effect
 * on the id is effectively once. An answer or an acknowledgement from a term older than
 * the newest one seen is dropped (a thawed stale leader), never delivered as current.
 *
 * @module tab-baton/requests-client
 */

/** First re-send of an unacknowledged request, doubling up to RESEND_MAX_MS. */
export const RESEND_MS = 100;
export const RESEND_MAX_MS = 1000;

export class RequestTable {
  /**
   * @param {{used: number, max: number}} budget pending requests of the whole tab, shared
   *   by the tables of all its resources
   */
  constructor(budget) {
    this.budget = budget;
    /** @type {Map<string, {deadline: number, acked: number, nextSend: number, backoff: number, sends: number}>} */
    this.pending = new Map();
    /** The newest term seen on the channel, and its leader. */
    this.epoch = 0;
    this.leader = null;
    this.counters = { requests: 0, sends: 0, resends: 0, answered: 0, duplicateAnswers: 0, staleAnswers: 0, staleAcks: 0, timeouts: 0, noLeader: 0 };
  }

  /**
   * A new request. Returns false (and changes nothing) when the table is full.
   * @returns {boolean} true: post it now
   */
  add(id, now, timeoutMs) {
    if (this.budget.used >= this.budget.max) return false;
    this.budget.used += 1;
    this.pending.set(id, { deadline: now + timeoutMs, acked: 0, nextSend: now + RESEND_MS, backoff: RESEND_MS, sends: 1 });
    this.counters.requests += 1;
    this.counters.sends += 1;
    return true;
  }

  /** The caller gave up (abort signal, dispose). */
  remove(id) {
    if (!this.pending.delete(id)) return false;
    this.budget.used -= 1;
    return true;
  }

  /** A leader acknowledged `id` in term `epoch`. */
  ack(id, epoch, from) {
    const p = this.pending.get(id);
    if (!p) return;
    if (epoch < this.epoch) {
      this.counters.staleAcks += 1;
      return;
    }
    this.term(epoch, from);
    p.acked = epoch;
  }

  /**
   * An answer to `id` from term `epoch`.
   * @returns {boolean} true: settle the caller's promise with it (the request is done)
   */
  answer(id, epoch, from) {
    if (!this.pending.has(id)) {
      this.counters.duplicateAnswers += 1;
      return false;
    }
    if (epoch < this.epoch) {
      this.counters.staleAnswers += 1;
      return false;
    }
    this.term(epoch, from);
    this.remove(id);
    this.counters.answered += 1;
    return true;
  }

  /**
   * A term began (or a leader said who it is).
   * @returns {string[]} ids to send again to the new leader
   */
  lead(epoch, from, now) {
    if (epoch < this.epoch || (epoch === this.epoch && this.leader === from)) return [];
    this.term(epoch, from);
    const again = [];
    for (const [id, p] of this.pending) {
      if (p.acked >= epoch) continue;
      p.acked = 0;
      p.backoff = RESEND_MS;
      p.nextSend = now + RESEND_MS;
      again.push(id);
    }
    this.countResends(again.length);
    return again;
  }

  /** Term `epoch` ended: what it acknowledged and did not answer waits for the next one. */
  bye(epoch, from, now) {
    if (epoch !== this.epoch || from !== this.leader) return;
    this.leader = null;
    for (const p of this.pending.values()) {
      if (p.acked === epoch) {
        p.acked = 0;
        p.nextSend = now + RESEND_MS;
      }
    }
  }

  term(epoch, from) {
    if (epoch > this.epoch || (epoch === this.epoch && this.leader === null)) {
      this.epoch = epoch;
      this.leader = from;
    }
  }

  /**
   * Time passed: requests past their deadline fail, unacknowledged ones are sent again.
   * @returns {{resend: string[], expired: Array<{id: string, code: 'NO_LEADER' | 'TIMEOUT'}>}}
   */
  tick(now) {
    const resend = [];
    const expired = [];
    for (const [id, p] of this.pending) {
      if (now >= p.deadline) {
        const code = p.acked > 0 ? 'TIMEOUT' : 'NO_LEADER';
        this.counters[code === 'TIMEOUT' ? 'timeouts' : 'noLeader'] += 1;
        expired.push({ id, code });
      } else if (p.acked === 0 && now >= p.nextSend) {
        p.backoff = Math.min(RESEND_MAX_MS, p.backoff * 2);
        p.nextSend = now + p.backoff;
        resend.push(id);
      }
    }
    for (const { id } of expired) this.remove(id);
    this.countResends(resend.length);
    return { resend, expired };
  }

  countResends(n) {
    this.counters.resends += n;
    this.counters.sends += n;
  }

  /** @returns {number} when `tick` has something to do next (Infinity: nothing pending) */
  nextDeadline() {
    let next = Infinity;
    for (const p of this.pending.values()) next = Math.min(next, p.deadline, p.acked === 0 ? p.nextSend : Infinity);
    return next;
  }
}
