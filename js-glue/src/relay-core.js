/**
 * The relay's decisions, sans-IO: what to deliver, hold, drop, relay, replay, and when to
 * open the source, as data. It never reads a clock, a channel or storage: the adapter
 * (relay.js) hands it each input with the time and carries out the effects it returns.
 *
 * Who leads which term is not decided here: the election core says so (`confirm`), and a
 * relay message counts only when it comes from the tab the core confirmed as leader of the
 * message's term. Every event carries `prev`, the id its leader delivered before it, so a
 * tab sees a gap (`prev` beyond its last id) and asks the leader to replay it; the leader
 * replays from the events it delivered (a buffer bounded in bytes) or, when they are older,
 * reopens its source from the asker's id.
 *
 * Inputs: confirm, start, stop, startTerm, endTerm, message, sourceEvent, sourceHeartbeat,
 * sourceFailed, tick, reset. Effects (`{type, ...}`): deliver, post, open-source,
 * close-source, write-cursor, abdicate.
 *
 * @module tab-baton/relay-core
 */
import { estimateBytes } from './relay-size.js';

/** Version of the relay channel's messages; another version is dropped and counted. */
export const RELAY_PROTOCOL = 2;
const KINDS = new Set(['lead', 'event', 'replay', 'replay?', 'logout', 'login']);
const TERM_KINDS = new Set(['lead', 'event', 'replay', 'replay?']);
const MAX_NAME_CHARS = 64;
export const MAX_SESSION_CHARS = 256;
const MAX_ID_CHARS = 256;
/** A message of a term the core has not confirmed yet is held this long at most. */
export const HOLD_MS = 2000;
/** A tab with a gap asks again this often, and delivers past the gap after GAP_MS. */
const REPLAY_RETRY_MS = 250;
export const GAP_MS = 3000;
/** The leader answers at most one replay request this often (a flood costs it nothing). */
const REPLAY_MIN_MS = 50;
/** The leader reopens its source for a replay at most this often. */
const REFETCH_MIN_MS = 1000;
/** Events in one replay message at most. */
const REPLAY_BATCH = 64;
/** Terms whose confirmed leader and chain tail are remembered. */
const TERMS_KEPT = 8;
/** Source reopen backoff after a failure. */
const REOPEN_BASE_MS = 250;
const REOPEN_MAX_MS = 10000;
const OPENS_KEPT = 32;
/** Timer lateness beyond this (past silenceMs) is taken for a stalled tab, not a silent source. */
const STALL_SLACK_MS = 1000;

/** A fresh set of counters (see RelayStats in index.d.ts). */
function newCounters() {
  return {
    delivered: 0,
    duplicatesDropped: 0,
    gapsSeen: 0,
    gapsDetected: 0,
    gapsRepaired: 0,
    gapsSkipped: 0,
    replayed: 0,
    replayRequests: 0,
    replaysServed: 0,
    refetches: 0,
    relayed: 0,
    staleDropped: 0,
    staleFilled: 0,
    forks: 0,
    impersonations: 0,
    droppedMalformed: 0,
    droppedOversized: 0,
    droppedForeignVersion: 0,
    droppedForeignSession: 0,
    droppedUnconfirmed: 0,
    droppedBufferFull: 0,
    sourceMalformed: 0,
    lateSourceEvents: 0,
    sourceOpens: 0,
    sourceErrors: 0,
    silenceAbdications: 0,
    resets: 0,
  };
}

export class RelayCore {
  /**
   * @param {object} o
   * @param {string} o.selfId this tab's id (the Baton's)
   * @param {string | null} o.session
   * @param {((a: any, b: any) => number) | null} o.compare custom id order, or null for integers
   * @param {number} o.maxDataBytes one event's data at most (estimated)
   * @param {number} o.maxBufferBytes the held messages, and the replay buffer, each at most
   * @param {number} o.silenceMs a leader whose source is silent this long abdicates
   */
  constructor({ selfId, session, compare, maxDataBytes, maxBufferBytes, silenceMs }) {
    this.selfId = selfId;
    this.session = session;
    this.customCompare = compare;
    this.maxDataBytes = maxDataBytes;
    this.maxBufferBytes = maxBufferBytes;
    this.silenceMs = silenceMs;
    this.counters = newCounters();
    this.active = false;
    this.out = [];
    this.opens = [];
    this.openSeq = 0;
    this.lastTick = -Infinity;
    this.clear();
  }

  /**
   * Forgets the stream (logout: `session` null; another session), closing the source if
   * this tab leads: nothing of the old stream may leak into the next.
   */
  reset(reason, was, session) {
    this.endTermNow();
    this.clear();
    this.session = session;
    this.counters.resets += 1;
    this.out.push({ type: 'reset', reason, session: was });
    return this.take();
  }

  /** Tells every tab to log out (`kind` 'logout') or in to `session` ('login'). */
  announce(kind, session) {
    this.post(kind === 'login' ? { kind, session } : { kind });
    return this.take();
  }

  clear() {
    /** Last id delivered to the app in this tab (null: none yet). */
    this.last = null;
    /** epoch -> the leader the core confirmed for it. */
    this.terms = new Map();
    /** epoch -> the last id relayed in that term as seen here (its chain's tail). */
    this.tails = new Map();
    this.newest = 0;
    this.leaderInfo = null;
    /** @type {Array<{msg: any, at: number, bytes: number}>} messages not yet applicable, in order */
    this.held = [];
    this.heldBytes = 0;
    /** sender -> how many of its messages are held */
    this.heldFrom = new Map();
    /** The events delivered here, in order (a chain by `prev`), for replays. */
    this.history = [];
    this.historyBytes = 0;
    /** A gap after `last`: since when, and when to ask again. */
    this.gap = null;
    this.term = null;
  }

  // ------------------------------------------------------------------ ids

  /** Normalises an id: a non-negative safe integer (number or digit string) by default. */
  toId(raw) {
    if (this.customCompare) {
      if (typeof raw === 'string') return raw.length > 0 && raw.length <= MAX_ID_CHARS ? raw : undefined;
      return typeof raw === 'number' && Number.isFinite(raw) ? raw : undefined;
    }
    if (typeof raw === 'number') return Number.isSafeInteger(raw) && raw >= 0 ? raw : undefined;
    if (typeof raw === 'string' && /^[0-9]{1,15}$/.test(raw)) return Number(raw);
    return undefined;
  }

  /** Orders two ids; null (before the first event) is before every id. */
  cmp(a, b) {
    if (a === null) return b === null ? 0 : -1;
    if (b === null) return 1;
    return this.customCompare ? Number(this.customCompare(a, b)) : a - b;
  }

  // ------------------------------------------------------------------ inputs

  /** The election core's view: `leader` leads term `epoch` (null: no leader known). */
  confirm(leader, epoch, now) {
    if (leader && epoch > 0) {
      this.terms.set(epoch, leader);
      trim(this.terms);
      if (epoch > this.newest) this.newest = epoch;
    }
    this.flush(now);
    return this.take();
  }

  /** The tab takes part (true) or not (false, logged out): messages of the stream count only while active. */
  setActive(active) {
    this.active = active;
    if (!active) {
      this.endTermNow();
      this.dropHeld();
    }
    return this.take();
  }

  /** This tab leads term `epoch`: open the source after the last id delivered here, else after `stored`. */
  startTerm(epoch, stored, now) {
    this.endTermNow();
    this.terms.set(epoch, this.selfId);
    trim(this.terms);
    if (epoch > this.newest) this.newest = epoch;
    const after = this.last ?? stored;
    this.term = { epoch, open: 0, after, sourcePrev: after, lastActivity: now, failures: 0, reopenAt: null, refetchUntil: null, lastRefetch: -Infinity, lastServed: -Infinity, abdicated: false };
    this.tails.set(epoch, after);
    trim(this.tails);
    this.leaderInfo = { id: this.selfId, epoch, after };
    this.lastTick = now;
    this.post({ kind: 'lead', epoch, after });
    this.open(after, now);
    return this.take();
  }

  /** This tab's term `epoch` ended (its signal aborted). */
  endTerm(epoch) {
    if (this.term && this.term.epoch === epoch) this.endTermNow();
    return this.take();
  }

  endTermNow() {
    const term = this.term;
    if (!term) return;
    this.term = null;
    if (term.open) this.out.push({ type: 'close-source', open: term.open });
  }

  /** One message from the relay channel (anything: it is checked here). */
  message(msg, now) {
    let problem;
    try {
      problem = this.check(msg);
    } catch {
      problem = 'droppedMalformed'; // a getter that throws, say
    }
    if (problem) {
      this.counters[problem] += 1;
      return this.take();
    }
    if (msg.kind === 'logout' || msg.kind === 'login') {
      this.out.push({ type: msg.kind, session: msg.session });
      return this.take();
    }
    if (!this.active) return this.take();
    if (msg.session !== this.session) {
      this.counters.droppedForeignSession += 1;
      return this.take();
    }
    if (msg.from === this.selfId) {
      // A channel never hands a tab its own messages: someone else uses this tab's id.
      this.counters.impersonations += 1;
      return this.take();
    }
    if (msg.kind === 'replay?') {
      this.serveReplay(msg, now);
      return this.take();
    }
    const verdict = this.confirmation(msg);
    // Replayed events check their own place (`prev`), so they never wait behind a gap.
    if (verdict === 'wait' || (this.heldFrom.has(msg.from) && msg.kind !== 'replay')) this.hold(msg, now);
    else this.apply(msg, now);
    this.flush(now);
    return this.take();
  }

  /** An event from this tab's source (`open` tells which opening of it). */
  sourceEvent(open, raw, now) {
    const term = this.term;
    if (!term || term.open !== open) {
      this.counters.lateSourceEvents += 1;
      return this.take();
    }
    const event = this.sourceEventOf(raw);
    if (!event) {
      this.counters.sourceMalformed += 1;
      return this.take();
    }
    term.lastActivity = now;
    term.failures = 0;
    // Dropped here as every other tab would drop it: delivered by the leader alone, it would
    // leave the others with a gap that no replay can fill. The next event's `prev` skips it.
    if (estimateBytes(event.data, this.maxDataBytes) > this.maxDataBytes) {
      this.counters.droppedOversized += 1;
      return this.take();
    }
    const prev = term.sourcePrev;
    term.sourcePrev = event.id;
    if (this.cmp(event.id, this.last) <= 0) {
      if (term.refetchUntil !== null) {
        // Reopened for a replay: what this tab has already delivered goes out as a replay.
        this.post({ kind: 'replay', epoch: term.epoch, events: [{ id: event.id, prev, data: event.data, type: event.type }] });
        this.counters.replaysServed += 1;
      } else {
        this.counters.duplicatesDropped += 1;
      }
      return this.take();
    }
    term.refetchUntil = null;
    const before = this.last ?? prev;
    this.deliver({ ...event, prev: before }, term.epoch, this.selfId);
    this.tails.set(term.epoch, event.id);
    this.out.push({ type: 'write-cursor', id: event.id });
    this.post({ kind: 'event', epoch: term.epoch, id: event.id, prev: before, data: event.data, type: event.type });
    this.counters.relayed += 1;
    return this.take();
  }

  sourceHeartbeat(open, now) {
    if (this.term && this.term.open === open) this.term.lastActivity = now;
    return this.take();
  }

  /** The source is gone: reopen it after a backoff, from the last id delivered. */
  sourceFailed(open, now) {
    const term = this.term;
    if (!term || term.open !== open) return this.take();
    this.counters.sourceErrors += 1;
    this.out.push({ type: 'close-source', open });
    term.open = 0;
    term.reopenAt = now + Math.min(REOPEN_MAX_MS, REOPEN_BASE_MS * 2 ** Math.min(term.failures, 10));
    term.failures += 1;
    return this.take();
  }

  /** The adapter's one timer fired (or any time): deadlines that passed are acted on. */
  tick(now) {
    const term = this.term;
    // A tick much later than asked for means this tab itself was stalled (frozen, throttled):
    // its source is given a fresh silenceMs rather than judged silent.
    if (term && now - this.lastTick > this.silenceMs + STALL_SLACK_MS) term.lastActivity = now;
    this.lastTick = now;
    if (term) {
      if (term.reopenAt !== null && now >= term.reopenAt) {
        term.reopenAt = null;
        term.refetchUntil = null;
        this.open(this.last ?? term.after, now);
      }
      if (!term.abdicated && now - term.lastActivity > this.silenceMs) {
        // Alive, but its source said nothing for silenceMs: let another tab try.
        term.abdicated = true;
        this.counters.silenceAbdications += 1;
        this.out.push({ type: 'abdicate' });
      }
    }
    this.flush(now);
    return this.take();
  }

  /** The earliest time `tick` has something to do (Infinity: nothing). */
  nextDeadline() {
    let at = Infinity;
    const term = this.term;
    if (term) {
      if (term.reopenAt !== null) at = Math.min(at, term.reopenAt);
      if (!term.abdicated) at = Math.min(at, term.lastActivity + this.silenceMs + 1);
    }
    if (this.held.length > 0) {
      const first = this.held[0];
      at = Math.min(at, first.at + HOLD_MS + 1);
    }
    if (this.gap) at = Math.min(at, this.gap.askAt, this.gap.since + GAP_MS + 1);
    return at;
  }

  // ------------------------------------------------------------------ checks

  /** @returns {string | null} why `msg` is dropped (a counter name), or null when it is well-formed */
  check(msg) {
    if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) return 'droppedMalformed';
    if (msg.v !== RELAY_PROTOCOL) return typeof msg.v === 'number' ? 'droppedForeignVersion' : 'droppedMalformed';
    if (!KINDS.has(msg.kind)) return 'droppedMalformed';
    if (typeof msg.from !== 'string' || msg.from === '' || msg.from.length > MAX_NAME_CHARS) return 'droppedMalformed';
    if (typeof msg.session !== 'string' || msg.session.length > MAX_SESSION_CHARS) return 'droppedMalformed';
    if (!TERM_KINDS.has(msg.kind)) return null;
    if (!(Number.isSafeInteger(msg.epoch) && msg.epoch > 0)) return 'droppedMalformed';
    if (msg.kind === 'lead' || msg.kind === 'replay?') return this.optionalId(msg.after) ? null : 'droppedMalformed';
    if (msg.kind === 'event') return this.checkEvent(msg);
    if (!Array.isArray(msg.events) || msg.events.length === 0 || msg.events.length > REPLAY_BATCH) return 'droppedMalformed';
    for (const event of msg.events) {
      const problem = event && typeof event === 'object' ? this.checkEvent(event) : 'droppedMalformed';
      if (problem) return problem;
    }
    return null;
  }

  checkEvent(event) {
    if (this.toId(event.id) === undefined || !this.optionalId(event.prev)) return 'droppedMalformed';
    if (event.type !== undefined && (typeof event.type !== 'string' || event.type.length > MAX_NAME_CHARS)) return 'droppedMalformed';
    if (estimateBytes(event.data, this.maxDataBytes) > this.maxDataBytes) return 'droppedOversized';
    return null;
  }

  optionalId(raw) {
    return raw === null || this.toId(raw) !== undefined;
  }

  /**
   * 'ok': from the leader the core confirmed for the message's term; 'wait': a term at
   * least as new as any confirmed, not confirmed yet (the core may hear of it a little
   * later than the relay does); 'drop': anything else.
   */
  confirmation(msg) {
    const leader = this.terms.get(msg.epoch);
    if (leader !== undefined) return leader === msg.from ? 'ok' : 'drop';
    return msg.epoch >= this.newest ? 'wait' : 'drop';
  }

  sourceEventOf(raw) {
    if (!raw || typeof raw !== 'object') return null;
    const id = this.toId(raw.id);
    if (id === undefined) return null;
    const type = raw.type === undefined || raw.type === null ? undefined : raw.type;
    if (type !== undefined && (typeof type !== 'string' || type.length > MAX_NAME_CHARS)) return null;
    return { id, data: raw.data, type };
  }

  // ------------------------------------------------------------------ holding

  /** Holds `msg` at the end of the queue, dropping the oldest held messages past maxBufferBytes. */
  hold(msg, now) {
    const bytes = sizeOfMessage(msg, this.maxDataBytes);
    if (bytes > this.maxBufferBytes) {
      this.counters.droppedBufferFull += 1;
      return;
    }
    while (this.heldBytes + bytes > this.maxBufferBytes && this.held.length > 0) {
      this.unhold(this.held.shift());
      this.counters.droppedBufferFull += 1;
    }
    this.held.push({ msg, at: now, bytes });
    this.heldBytes += bytes;
    this.heldFrom.set(msg.from, (this.heldFrom.get(msg.from) ?? 0) + 1);
  }

  unhold(entry) {
    this.heldBytes -= entry.bytes;
    const left = this.heldFrom.get(entry.msg.from) - 1;
    if (left > 0) this.heldFrom.set(entry.msg.from, left);
    else this.heldFrom.delete(entry.msg.from);
  }

  dropHeld() {
    this.held = [];
    this.heldBytes = 0;
    this.heldFrom = new Map();
    this.gap = null;
  }

  /**
   * Applies the held messages that now can be, in order per sender (a forger's held
   * messages never delay the leader's); expires what waited too long.
   */
  flush(now) {
    if (!this.active || this.held.length === 0) return;
    const blocked = new Set();
    const kept = [];
    for (const entry of this.held) {
      const { msg, at } = entry;
      if (blocked.has(msg.from)) {
        kept.push(entry);
        continue;
      }
      const verdict = this.confirmation(msg);
      let wait = verdict === 'wait' && now - at <= HOLD_MS;
      if (!wait && verdict === 'ok' && msg.kind === 'event') wait = this.gapStill(msg, now);
      if (wait) {
        blocked.add(msg.from);
        kept.push(entry);
        continue;
      }
      this.unhold(entry);
      if (verdict === 'ok') this.apply(msg, now, true);
      else this.counters[verdict === 'wait' ? 'droppedUnconfirmed' : 'staleDropped'] += 1;
    }
    this.held = kept;
    if (this.gap && !kept.some((e) => e.msg.from === this.gap.from)) this.gap = null;
    if (this.gap && now >= this.gap.askAt) this.askReplay(now);
  }

  /** For a held event of a confirmed term: true while the gap before it may still be repaired. */
  gapStill(msg, now) {
    if (!this.isGap(msg)) {
      if (this.gap && this.gap.from === msg.from) {
        this.counters.gapsRepaired += 1;
        this.gap = null;
      }
      return false;
    }
    if (!this.gap) this.gap = { since: now, askAt: now, epoch: msg.epoch, from: msg.from };
    if (now - this.gap.since <= GAP_MS) return true;
    // The gap could not be repaired in time: go on past it rather than stall.
    this.counters.gapsSkipped += 1;
    this.gap = null;
    return false;
  }

  // ------------------------------------------------------------------ applying

  /** True when `msg` (an event of the current term) leaves out events after `last`. */
  isGap(msg) {
    if (this.last === null || msg.epoch < this.newest) return false;
    const id = this.toId(msg.id);
    return this.cmp(id, this.last) > 0 && this.cmp(this.toId(msg.prev), this.last) > 0;
  }

  /** A confirmed message. `fromHeld`: it is being taken out of the held queue (never held again). */
  apply(msg, now, fromHeld = false) {
    if (this.confirmation(msg) === 'drop') {
      this.counters[msg.epoch < this.newest ? 'staleDropped' : 'droppedUnconfirmed'] += 1;
      return;
    }
    if (msg.kind === 'lead') {
      this.leaderInfo = { id: msg.from, epoch: msg.epoch, after: this.toId(msg.after) ?? null };
      if (msg.epoch >= this.newest) this.tails.set(msg.epoch, this.toId(msg.after) ?? null);
      trim(this.tails);
      return;
    }
    if (msg.kind === 'replay') {
      for (const event of msg.events) this.applyReplayed(event, msg.epoch, msg.from);
      return;
    }
    if (!this.leaderInfo || this.leaderInfo.epoch !== msg.epoch) this.leaderInfo = { id: msg.from, epoch: msg.epoch, after: null };
    const id = this.toId(msg.id);
    const prev = this.toId(msg.prev) ?? null;
    if (!fromHeld && this.isGap(msg)) {
      this.counters.gapsDetected += 1;
      this.hold(msg, now);
      this.gap = { since: now, askAt: now, epoch: msg.epoch, from: msg.from };
      return;
    }
    this.checkFork(msg.epoch, prev);
    this.tails.set(msg.epoch, id);
    trim(this.tails);
    if (msg.epoch < this.newest) {
      // An older term's event (a thawed leader that has not heard it was replaced) is taken
      // only when it is exactly what comes next here: it cannot make this tab skip ahead.
      if (this.last !== null && this.cmp(prev, this.last) <= 0 && this.cmp(id, this.last) > 0) {
        this.counters.staleFilled += 1;
        this.deliver({ id, prev, data: msg.data, type: msg.type }, msg.epoch, msg.from);
      } else {
        this.counters.staleDropped += 1;
      }
      return;
    }
    if (this.cmp(id, this.last) <= 0) {
      this.counters.duplicatesDropped += 1;
      return;
    }
    this.deliver({ id, prev, data: msg.data, type: msg.type }, msg.epoch, msg.from);
  }

  /**
   * Within one term a leader's events form one chain. An event whose `prev` lies behind the
   * chain's tail means a fork: someone posted under the leader's id. The tab steps back to
   * the fork so that the leader's real events are not taken for duplicates.
   */
  checkFork(epoch, prev) {
    const tail = this.tails.get(epoch);
    if (tail === undefined || this.cmp(prev, tail) >= 0) return;
    this.counters.forks += 1;
    if (this.cmp(prev, this.last) < 0) {
      this.last = prev;
      while (this.history.length > 0 && this.cmp(this.history[this.history.length - 1].id, prev) > 0) {
        this.historyBytes -= this.history.pop().bytes;
      }
    }
  }

  applyReplayed(event, epoch, from) {
    const id = this.toId(event.id);
    const prev = this.toId(event.prev) ?? null;
    if (this.last === null || this.cmp(id, this.last) <= 0 || this.cmp(prev, this.last) > 0) return;
    this.counters.replayed += 1;
    this.deliver({ id, prev, data: event.data, type: event.type }, epoch, from);
  }

  /** Hands one event to the app and keeps it for replays. */
  deliver(event, epoch, from) {
    if (!this.customCompare && this.last !== null && event.id > this.last + 1) this.counters.gapsSeen += event.id - this.last - 1;
    this.last = event.id;
    this.counters.delivered += 1;
    this.out.push({ type: 'deliver', event: { id: event.id, data: event.data, type: event.type, epoch, from } });
    const bytes = sizeOfEvent(event, this.maxDataBytes);
    this.history.push({ id: event.id, prev: event.prev ?? null, data: event.data, type: event.type, bytes });
    this.historyBytes += bytes;
    while (this.historyBytes > this.maxBufferBytes && this.history.length > 0) this.historyBytes -= this.history.shift().bytes;
  }

  // ------------------------------------------------------------------ replays

  /** Asks the leader of the held event's term for what lies between `last` and it. */
  askReplay(now) {
    this.gap.askAt = now + REPLAY_RETRY_MS;
    this.counters.replayRequests += 1;
    this.post({ kind: 'replay?', epoch: this.gap.epoch, after: this.last });
  }

  /** A tab asks the leader of `msg.epoch` for the events after `msg.after`. */
  serveReplay(msg, now) {
    const term = this.term;
    if (!term || term.epoch !== msg.epoch || now - term.lastServed < REPLAY_MIN_MS) return;
    term.lastServed = now;
    const after = this.toId(msg.after) ?? null;
    if (after === null || this.cmp(after, this.last) >= 0) return;
    const start = this.history.findIndex((e) => this.cmp(e.id, after) > 0);
    if (start >= 0 && this.cmp(this.history[start].prev, after) <= 0) {
      let batch = [];
      let bytes = 0;
      for (const e of this.history.slice(start)) {
        if (batch.length >= REPLAY_BATCH || bytes + e.bytes > this.maxBufferBytes) {
          this.post({ kind: 'replay', epoch: term.epoch, events: batch });
          batch = [];
          bytes = 0;
        }
        batch.push({ id: e.id, prev: e.prev, data: e.data, type: e.type });
        bytes += e.bytes;
      }
      this.post({ kind: 'replay', epoch: term.epoch, events: batch });
      this.counters.replaysServed += 1;
      return;
    }
    // Older than what this tab kept: read it again from the source.
    if (now - term.lastRefetch < REFETCH_MIN_MS || term.reopenAt !== null) return;
    term.lastRefetch = now;
    this.counters.refetches += 1;
    if (term.open) this.out.push({ type: 'close-source', open: term.open });
    term.refetchUntil = this.last;
    this.open(after, now);
  }

  // ------------------------------------------------------------------ output

  open(after, now) {
    const term = this.term;
    this.openSeq += 1;
    term.open = this.openSeq;
    term.sourcePrev = after;
    term.lastActivity = now;
    this.counters.sourceOpens += 1;
    this.opens.push({ after, epoch: term.epoch, at: now });
    if (this.opens.length > OPENS_KEPT) this.opens.splice(0, this.opens.length - OPENS_KEPT);
    this.out.push({ type: 'open-source', open: term.open, after });
  }

  post(message) {
    this.out.push({ type: 'post', message: { v: RELAY_PROTOCOL, from: this.selfId, session: this.session ?? '', ...message } });
  }

  take() {
    const out = this.out;
    this.out = [];
    return out;
  }

  stats() {
    return {
      ...this.counters,
      lastId: this.last,
      epoch: this.newest,
      leader: this.leaderInfo ? { ...this.leaderInfo } : null,
      pending: this.held.length,
      pendingBytes: this.heldBytes,
      replayBufferBytes: this.historyBytes,
      opens: this.opens.map((o) => ({ ...o })),
    };
  }
}

/** Keeps the newest TERMS_KEPT entries of an epoch-keyed map. */
function trim(map) {
  if (map.size <= TERMS_KEPT) return;
  const oldest = [...map.keys()].sort((a, b) => a - b).slice(0, map.size - TERMS_KEPT);
  for (const key of oldest) map.delete(key);
}

/** Bytes a held message takes: its data (already checked against maxDataBytes) and a little more. */
function sizeOfMessage(msg, limit) {
  if (msg.kind === 'replay') return msg.events.reduce((n, e) => n + sizeOfEvent(e, limit), 64);
  return sizeOfEvent(msg, limit) + 64;
}

function sizeOfEvent(event, limit) {
  return estimateBytes(event.data, limit) + 64;
}
