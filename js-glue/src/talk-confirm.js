/**
 * Which talk messages of a term (acknowledgements, answers, 'lead', 'state', 'bye') to
 * believe, as a sans-IO reducer. The talk channel is as open as the election's: any page of
 * the origin can post a 'lead' of epoch 2^40 or an answer under a made-up id. Where this tab
 * takes part in the resource's election, its core says who leads which term, and a term
 * message counts only when it comes from that leader:
 * - of the confirmed term, from the confirmed leader: taken;
 * - of the confirmed term, from another tab: forged, dropped;
 * - of an older term: stale, dropped (its requests are re-sent to the newer term anyway),
 *   except 'bye': that an older term ended is true whoever says it;
 * - of a newer term: held until the core confirms it (the election's frames and the talk
 *   messages travel on different channels), and dropped if it does not within `holdMs`.
 * A tab that does not take part in the election (it only asks) has no core view of the
 * resource: it takes term messages as they come, as before.
 *
 * @module tab-baton/talk-confirm
 */

/** Held messages at most (the oldest is dropped past it); each is at most 64 KiB. */
export const MAX_HELD = 64;

export class ConfirmGate {
  /** @param {number} holdMs how long a message of an unconfirmed newer term waits */
  constructor(holdMs) {
    this.holdMs = holdMs;
    /** @type {Array<{msg: any, until: number}>} */
    this.held = [];
    this.counters = { droppedUnconfirmed: 0, droppedStaleTerm: 0 };
  }

  /**
   * @param {{epoch: number}} msg a well-formed term message
   * @param {{id: string, epoch: number} | null} leader the core's confirmed leader, or
   *   null when this tab has no view of the resource (takes everything)
   * @returns {'take' | 'drop' | 'wait'}
   */
  verdict(msg, leader) {
    if (leader === null) return 'take';
    if (msg.epoch === leader.epoch) {
      if (msg.from === leader.id) return 'take';
      this.counters.droppedUnconfirmed += 1;
      return 'drop';
    }
    if (msg.epoch < leader.epoch) {
      if (msg.k === 'bye') return 'take'; // an older term ended: true, whoever says it
      this.counters.droppedStaleTerm += 1;
      return 'drop';
    }
    return 'wait';
  }

  /** Holds `msg` (a 'wait' verdict) until `now + holdMs`. */
  hold(msg, now) {
    if (this.held.length >= MAX_HELD) {
      this.held.shift();
      this.counters.droppedUnconfirmed += 1;
    }
    this.held.push({ msg, until: now + this.holdMs });
  }

  /**
   * Takes the held messages out again, in order, with their verdicts under `leader`; those
   * still waiting stay held unless their time is up (then they are dropped, counted).
   * @returns {{take: any[], expired: any[]}} the messages to take now, and those dropped
   *   because their term was not confirmed in time
   */
  release(leader, now) {
    const take = [];
    const expired = [];
    const keep = [];
    for (const entry of this.held) {
      const verdict = this.verdict(entry.msg, leader);
      if (verdict === 'take') take.push(entry.msg);
      else if (verdict === 'wait') {
        if (now < entry.until) keep.push(entry);
        else {
          this.counters.droppedUnconfirmed += 1;
          expired.push(entry.msg);
        }
      }
    }
    this.held = keep;
    return { take, expired };
  }
}
