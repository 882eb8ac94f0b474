/**
 * Talking to the leader of a resource: requests (`baton.request`, `serve`), leader state
 * (`handle.setState`, `baton.leaderState`). This is the adapter: one BroadcastChannel per
 * resource, one timer, the app's callbacks; the decisions are the reducers'
 * (requests-client.js, requests-server.js, leader-state.js). Loaded on first use only
 * (talk-lazy.js), so an app that never talks to its leader does not load it; the Baton
 * calls the functions exported here.
 *
 * Messages this tab posts reach its own receivers too (a leader serves its own tab's
 * requests), as a structured clone in a task, as if another tab had posted them; only those
 * it has a use for (`wantsOwnCopy`).
 *
 * @module tab-baton/talk
 */
import { RequestTable } from './requests-client.js';
import { ServeDesk } from './requests-server.js';
import { StateTracker } from './leader-state.js';
import { NoLeaderError, RemoteError, RequestError } from './requests-errors.js';
import { TALK_LIMITS, TALK_PROTOCOL, TERM_KINDS, check, errorData, sizeOf } from './talk-wire.js';
import { ConfirmGate } from './talk-confirm.js';
import { reportError, staleOwner } from './errors.js';
import { booleanOption, numberOption, optionsObject, stringOption } from './options.js';

const REQUEST_OPTIONS = ['timeoutMs', 'signal', 'id', 'full'];
/** Default time a request waits for its answer (queued while no leader exists). */
const DEFAULT_TIMEOUT_MS = 10000;
/** A held message of an unconfirmed term is looked at again this often. */
const HOLD_POLL_MS = 50;
/** A leader answers hellos with its announcement (and state, up to 64 KiB) at most this often. */
const HELLO_ANSWER_MS = 50;

/**
 * The Talk of one resource in one Baton (created on first use, closed with the Baton).
 * @param {object} baton the internal Baton (baton.js)
 * @param {string} resource
 */
function talkOf(baton, resource) {
  if (baton.disposed) throw new RequestError('DISPOSED', 'the Baton was disposed', { resource });
  baton.talks ??= new Map();
  let talk = baton.talks.get(resource);
  if (!talk) {
    talk = new Talk(baton, resource);
    baton.talks.set(resource, talk);
  }
  return talk;
}

/** `baton.request(resource, message, options)`: a wrong option rejects with a TypeError naming it. */
export function request(baton, resource, message, options) {
  const where = 'baton.request';
  const o = optionsObject(where, 'options', options, REQUEST_OPTIONS, { optional: true });
  const timeoutMs = numberOption(where, o, 'timeoutMs', { fallback: DEFAULT_TIMEOUT_MS, above: 0 });
  const id = stringOption(where, o, 'id', { maxBytes: 128 });
  const full = booleanOption(where, o, 'full', false);
  const signal = o.signal;
  if (signal !== undefined && !(signal && typeof signal.aborted === 'boolean' && typeof signal.addEventListener === 'function')) {
    throw new TypeError(`${where}: option "signal" must be an AbortSignal`);
  }
  return talkOf(baton, resource).request(message, { timeoutMs, signal, id, full });
}

/** Makes a lead entry (with `serve` or `accept`) answer requests and announce its terms. */
export function attach(baton, entry) {
  if (!entry.released && !baton.disposed) talkOf(baton, entry.resource).attach(entry);
}

/** `handle.setState(value)`: rejects with STALE_OWNER when this tab does not lead. */
export function setState(baton, entry, value) {
  if (entry.released || baton.disposed) throw staleOwner(entry.resource, null, 0);
  entry.talkOptions ??= {};
  talkOf(baton, entry.resource).attach(entry).publish(value);
}

/** Called by `baton.lead(resource)` when this Baton already talks about the resource. */
export function follow(baton, entry) {
  baton.talks?.get(entry.resource)?.follow(entry);
}

/** `baton.leaderState(resource)`: `fn(snapshot)` now if known and on every change; returns the detach. */
export function watch(baton, resource, fn) {
  return baton.disposed ? () => {} : talkOf(baton, resource).watch(fn);
}

class Talk {
  constructor(baton, resource) {
    this.baton = baton;
    this.env = baton.env;
    this.resource = resource;
    this.self = baton.config.id;
    this.maxBytes = TALK_LIMITS.maxMessageBytes;
    baton.talkBudget ??= { used: 0, max: TALK_LIMITS.maxPending };
    this.table = new RequestTable(baton.talkBudget);
    this.tracker = new StateTracker();
    /** @type {Map<string, {resolve: Function, reject: Function, body: unknown, full: boolean, detach: () => void}>} */
    this.waiters = new Map();
    this.watchers = new Set();
    /** The leader side, when this tab's lead handle of the resource serves or publishes. */
    this.endpoint = null;
    this.seq = 0;
    this.timer = null;
    this.timerAt = Infinity;
    this.closed = false;
    this.counters = { droppedMalformed: 0, droppedForeignVersion: 0, droppedOversized: 0, postFailures: 0, listenerErrors: 0 };
    // The election may take a heartbeat or two to confirm a new term this tab hears of here.
    this.gate = new ConfirmGate(Math.max(2000, 2 * baton.config.heartbeatMs));
    this.holdTimer = null;
    this.channel = null;
    this.onMessage = (event) => this.receive(event.data);
    if (this.env.BroadcastChannel) {
      try {
        this.channel = new this.env.BroadcastChannel(`${baton.names.channel}/talk/${resource}`);
        this.channel.unref?.(); // Node: never keeps the process alive (as Baton's own channel)
        this.channel.addEventListener('message', this.onMessage);
      } catch (error) {
        this.channel = null;
        reportError(error);
      }
    }
    this.post({ k: 'hello' });
    this.unfollow = null;
    const entry = baton.entries.get(resource);
    if (entry) this.follow(entry);
  }

  /**
   * Follows the election of the resource where this tab takes part in it: when its core
   * confirms a newer term, the state of the older one turns stale at once, even if that
   * term's leader crashed (no goodbye) and the new one has not announced itself here yet.
   */
  follow(entry) {
    if (this.closed || entry.released) return;
    this.unfollow?.();
    this.unfollow = entry.handle.onChange(({ leader }) => {
      if (leader && leader.epoch > this.tracker.epoch) this.stateChanged(this.tracker.update(leader.epoch, leader.id, 0, undefined, false));
    });
  }

  // ------------------------------------------------------------------ the channel

  /**
   * Posts to every tab, and to this one when it has a use for it (`wantsOwnCopy`). Throws
   * when a message for this tab cannot be cloned (DataCloneError); answers and requests are
   * cloned before they are posted.
   */
  post(msg) {
    const full = { v: TALK_PROTOCOL, from: this.self, ...msg };
    const own = this.wantsOwnCopy(msg);
    const copy = own ? structuredClone(full) : null;
    if (this.channel) {
      try {
        this.channel.postMessage(full);
      } catch {
        this.counters.postFailures += 1;
      }
    }
    // This tab's own copy arrives as a task, like every other tab's: a leader that asks
    // itself in a loop (`while (...) await baton.request(...)`) must not starve its page.
    if (own) setTimeout(() => this.receive(copy), 0);
  }

  /**
   * Whether this tab's own copy of `msg` would do anything: not an acknowledgement or an
   * answer addressed to another tab, nor a request while this tab has no leader side (should
   * it lead later, its 'lead' message makes this tab send its pending requests again).
   */
  wantsOwnCopy(msg) {
    if (msg.to !== undefined) return msg.to === this.self;
    return msg.k !== 'req' || this.endpoint !== null;
  }

  receive(msg) {
    if (this.closed) return;
    let problem;
    try {
      problem = check(msg, this.maxBytes);
    } catch {
      problem = 'droppedMalformed';
    }
    if (problem) {
      this.counters[problem] += 1;
      return;
    }
    if (TERM_KINDS.has(msg.k)) {
      const verdict = this.gate.verdict(msg, this.confirmedLeader());
      if (verdict === 'wait') {
        this.gate.hold(msg, this.env.monotonic());
        this.pollHeld();
      }
      if (verdict !== 'take') return;
    }
    this.take(msg);
  }

  /**
   * The leader of this resource's current term as this tab's election core confirms it;
   * null when this tab does not take part in the resource's election (it has no view).
   */
  confirmedLeader() {
    const entry = this.baton.entries.get(this.resource);
    if (!entry || entry.released) return null;
    const info = entry.leaderInfo();
    return info ? { id: info.id, epoch: info.epoch } : { id: '', epoch: 0 };
  }

  /** Looks at the held messages again until none is left. */
  pollHeld() {
    if (this.holdTimer !== null || this.closed) return;
    this.holdTimer = this.env.setTimeout(() => {
      this.holdTimer = null;
      if (this.closed) return;
      const { take, expired } = this.gate.release(this.confirmedLeader(), this.env.monotonic());
      for (const msg of take) this.take(msg);
      // A leader's announcement dropped because this tab's election had not caught up (a
      // core still loading on a busy machine): ask who leads again, once per such drop.
      if (expired.some((msg) => msg.k === 'lead')) this.post({ k: 'hello' });
      if (this.gate.held.length > 0) this.pollHeld();
    }, HOLD_POLL_MS);
  }

  /** A checked message this tab believes. */
  take(msg) {
    const now = this.env.monotonic();
    switch (msg.k) {
      case 'req':
        this.endpoint?.request(msg);
        break;
      case 'hello':
        this.endpoint?.answerHello();
        break;
      case 'ack':
        if (msg.to === this.self) this.table.ack(msg.id, msg.epoch, msg.from);
        break;
      case 'res':
        if (msg.to === this.self && this.table.answer(msg.id, msg.epoch, msg.from)) this.settle(msg);
        break;
      case 'lead':
        for (const id of this.table.lead(msg.epoch, msg.from, now)) this.send(id);
        this.stateChanged(this.tracker.update(msg.epoch, msg.from, msg.seq, msg.state, msg.seq !== undefined));
        break;
      case 'state':
        this.stateChanged(this.tracker.update(msg.epoch, msg.from, msg.seq, msg.state, true));
        break;
      case 'bye':
        this.table.bye(msg.epoch, msg.from, now);
        this.stateChanged(this.tracker.end(msg.epoch));
        break;
    }
    this.arm();
  }

  // ------------------------------------------------------------------ requests (any tab)

  request(message, { timeoutMs, signal, id, full }) {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      if (sizeOf(message, this.maxBytes) > this.maxBytes) {
        reject(new RequestError('TOO_LARGE', `the message is over ${this.maxBytes} bytes`, { resource: this.resource }));
        return;
      }
      const requestId = id ?? `${this.self}/${++this.seq}`;
      if (this.waiters.has(requestId)) {
        reject(new TypeError(`baton.request: option "id" ${JSON.stringify(requestId)} is already waiting for an answer`));
        return;
      }
      let body;
      try {
        body = structuredClone(message);
      } catch (error) {
        reject(error);
        return;
      }
      if (!this.table.add(requestId, this.env.monotonic(), timeoutMs)) {
        reject(new RequestError('TOO_MANY', `${this.table.budget.max} requests of this tab already wait`, { resource: this.resource }));
        return;
      }
      const onAbort = () => {
        if (this.table.remove(requestId)) this.finish(requestId).reject(signal.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.set(requestId, { resolve, reject, body, full, detach: () => signal?.removeEventListener('abort', onAbort) });
      this.send(requestId);
      this.arm();
    });
  }

  send(id) {
    const waiter = this.waiters.get(id);
    if (waiter) this.post({ k: 'req', id, body: waiter.body });
  }

  finish(id) {
    const waiter = this.waiters.get(id);
    this.waiters.delete(id);
    waiter.detach();
    return waiter;
  }

  settle(msg) {
    const waiter = this.finish(msg.id);
    const details = { resource: this.resource, leader: msg.from, epoch: msg.epoch, requestId: msg.id };
    if (msg.ok) waiter.resolve(waiter.full ? { value: msg.value, ...details } : msg.value);
    else if (msg.error.name === 'RequestError') waiter.reject(new RequestError(msg.error.code ?? 'REFUSED', msg.error.message, details));
    else waiter.reject(new RemoteError(msg.error, details));
  }

  arm() {
    if (this.closed) return;
    const next = this.table.nextDeadline();
    if (next === this.timerAt) return;
    if (this.timer !== null) this.env.clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = next;
    if (next === Infinity) return;
    this.timer = this.env.setTimeout(() => {
      this.timer = null;
      this.timerAt = Infinity;
      this.tick();
    }, Math.max(0, next - this.env.monotonic()));
    // Baton's timers do not keep Node alive; a pending request is awaited by the app, so its does.
    this.timer?.ref?.();
  }

  tick() {
    if (this.closed) return;
    const { resend, expired } = this.table.tick(this.env.monotonic());
    for (const id of resend) this.send(id);
    for (const { id, code } of expired) {
      const details = { resource: this.resource, requestId: id };
      this.finish(id).reject(
        code === 'NO_LEADER'
          ? new NoLeaderError(`no leader of "${this.resource}" answered in time`, details)
          : new RequestError('TIMEOUT', `the leader of "${this.resource}" acknowledged the request but did not answer in time`, details),
      );
    }
    this.arm();
  }

  // ------------------------------------------------------------------ leader state (any tab)

  /** Calls `fn(snapshot)` now if a state is known, and on every change; returns the detach. */
  watch(fn) {
    this.watchers.add(fn);
    if (this.tracker.snapshot) fn(this.tracker.snapshot);
    return () => this.watchers.delete(fn);
  }

  stateChanged(changed) {
    if (!changed) return;
    for (const fn of [...this.watchers]) {
      try {
        fn(this.tracker.snapshot);
      } catch (error) {
        this.counters.listenerErrors += 1;
        reportError(error);
      }
    }
  }

  // ------------------------------------------------------------------ the leader side

  /** Makes this tab's lead entry of the resource answer requests and publish its state. */
  attach(entry) {
    if (this.endpoint?.entry === entry || this.closed) return this.endpoint;
    this.follow(entry);
    this.endpoint?.detach();
    this.endpoint = new Endpoint(this, entry);
    return this.endpoint;
  }

  metrics() {
    return {
      ...this.counters,
      ...this.gate.counters,
      ...this.table.counters,
      pending: this.table.pending.size,
      staleStates: this.tracker.staleDropped,
      ...(this.endpoint ? { serve: { ...this.endpoint.desk.counters, serving: this.endpoint.desk.serving.size } } : {}),
    };
  }

  close() {
    if (this.closed) return;
    this.endpoint?.detach();
    this.unfollow?.();
    this.closed = true;
    if (this.timer !== null) this.env.clearTimeout(this.timer);
    this.timer = null;
    if (this.holdTimer !== null) this.env.clearTimeout(this.holdTimer);
    this.holdTimer = null;
    for (const id of [...this.waiters.keys()]) {
      this.table.remove(id);
      this.finish(id).reject(new RequestError('DISPOSED', 'the Baton was disposed', { resource: this.resource, requestId: id }));
    }
    this.watchers.clear();
    if (this.channel) {
      this.channel.removeEventListener('message', this.onMessage);
      try {
        this.channel.close();
      } catch {
        // A broken implementation must not stop the rest of the teardown.
      }
      this.channel = null;
    }
  }
}

/** The leader side of a Talk: one lead entry's `serve`, `accept` and published state. */
class Endpoint {
  constructor(talk, entry) {
    this.talk = talk;
    this.entry = entry;
    this.desk = new ServeDesk(TALK_LIMITS.maxServing, TALK_LIMITS.repliesKept, TALK_LIMITS.maxAskers);
    /** The current term's token and signal, and its state (seq 0: none published yet). */
    this.token = null;
    this.signal = null;
    this.stateSeq = 0;
    this.stateValue = undefined;
    /** When this term last announced itself, and the announcement waiting to answer hellos. */
    this.announcedAt = -Infinity;
    this.helloTimer = null;
    this.unsubscribe = entry.handle.onChange((change) => {
      if (change.type === 'elected') this.begin();
      else if (change.type === 'deposed') this.end();
      else if (change.type === 'released') this.detach();
    });
    this.begin();
  }

  /** A term of this tab begins (or was already running when the endpoint attached). */
  begin() {
    const token = this.entry.state() === 'leader' ? this.entry.token : null;
    if (!token || this.token === token) return;
    this.end();
    this.token = token;
    this.signal = this.entry.controller_.signal;
    this.desk.begin(token.epoch);
    this.announce();
  }

  end() {
    if (!this.token) return;
    const { epoch } = this.token;
    this.token = null;
    this.signal = null;
    this.stateSeq = 0;
    this.stateValue = undefined;
    this.desk.end();
    this.talk.post({ k: 'bye', epoch });
  }

  detach() {
    this.end();
    if (this.helloTimer !== null) this.talk.env.clearTimeout(this.helloTimer);
    this.helloTimer = null;
    this.unsubscribe();
    if (this.talk.endpoint === this) this.talk.endpoint = null;
  }

  /** 'lead': who leads, with its state if it published one (answers 'hello' too). */
  announce() {
    if (!this.token) return;
    this.announcedAt = this.talk.env.monotonic();
    this.talk.post({ k: 'lead', epoch: this.token.epoch, ...(this.stateSeq > 0 ? { seq: this.stateSeq, state: this.stateValue } : {}) });
  }

  /**
   * Answers a 'hello': announces now, or once at the end of the current window, so that a
   * page posting hellos in a loop cannot make this tab broadcast its state as often.
   */
  answerHello() {
    if (!this.token || this.helloTimer !== null) return;
    const wait = this.announcedAt + HELLO_ANSWER_MS - this.talk.env.monotonic();
    if (wait <= 0) {
      this.announce();
      return;
    }
    this.helloTimer = this.talk.env.setTimeout(() => {
      this.helloTimer = null;
      this.announce();
    }, wait);
  }

  /** `handle.setState(value)`: publishes `value` as this term's state. */
  publish(value) {
    this.sync();
    if (!this.token) throw staleOwner(this.talk.resource, null, 0);
    const limit = this.talk.maxBytes;
    if (sizeOf(value, limit) > limit) throw new RequestError('TOO_LARGE', `the state is over ${limit} bytes`, { resource: this.talk.resource });
    const seq = this.stateSeq + 1;
    this.talk.post({ k: 'state', epoch: this.token.epoch, seq, state: value });
    this.stateSeq = seq;
    this.stateValue = structuredClone(value);
  }

  /**
   * Catches up with the entry: its change events come a microtask after the core decided,
   * and a request or an answer in between must not count as the ended term's.
   */
  sync() {
    if (this.token && this.entry.token !== this.token) this.end();
    if (!this.token) this.begin();
  }

  request(msg) {
    this.sync();
    const decision = this.desk.request(msg.id, msg.from);
    const epoch = this.desk.epoch;
    if (decision.do === 'ignore') return;
    if (decision.do === 'replay') {
      this.talk.post({ ...decision.reply, to: msg.from });
      return;
    }
    const ack = { k: 'ack', to: msg.from, id: msg.id, epoch };
    if (decision.do === 'ack') {
      this.talk.post(ack);
      return;
    }
    const answer = this.answer(msg, epoch);
    if (isThenable(answer)) {
      // The answer takes a while: the acknowledgement tells the caller to stop re-sending
      // and to wait (TIMEOUT, not NO_LEADER, if it never comes).
      this.talk.post(ack);
      answer.then((done) => this.sendAnswer(msg, epoch, done));
    } else {
      // Ready at once: the answer is its own acknowledgement (one message, not two).
      this.sendAnswer(msg, epoch, answer);
    }
  }

  /**
   * Runs `accept` and `serve` for `msg`: the answer ({reply, outcome}) at once when both
   * return plain values, else a promise of it.
   */
  answer(msg, epoch) {
    const { token, signal } = this;
    const { serve, accept } = this.entry.talkOptions;
    const { resource, maxBytes } = this.talk;
    const from = Object.freeze({ tab: msg.from, requestId: msg.id });
    const base = { k: 'res', id: msg.id, epoch };
    const refuse = (why) => ({ outcome: 'refused', reply: { ...base, ok: false, error: { name: 'RequestError', code: 'REFUSED', message: `the leader of "${resource}" ${why}` } } });
    const fail = (error) => ({ outcome: 'failed', reply: { ...base, ok: false, error: errorData(error) } });
    const served = (value) => ({
      outcome: 'served',
      reply: sizeOf(value, maxBytes) > maxBytes
        ? { ...base, ok: false, error: { name: 'RequestError', code: 'TOO_LARGE', message: `the answer is over ${maxBytes} bytes` } }
        : { ...base, ok: true, value: structuredClone(value) }, // throws here if it cannot be sent
    });
    const accepted = (yes) => {
      if (!yes) return refuse('refused the request');
      if (!serve) return refuse('serves no requests');
      return andThen(() => serve(msg.body, from, token, signal), served, fail);
    };
    return andThen(() => (accept ? accept(msg.body, from) : true), accepted, fail);
  }

  /** Sends the answer to `msg` to every tab that asked it, unless its term has ended meanwhile. */
  sendAnswer(msg, epoch, { reply, outcome }) {
    this.sync();
    for (const tab of this.desk.answered(msg.id, epoch, reply, outcome)) this.talk.post({ ...reply, to: tab });
  }
}

const isThenable = (value) => value !== null && (typeof value === 'object' || typeof value === 'function') && typeof value.then === 'function';

/**
 * Calls `fn` and passes what it returns to `next`: at once when that is a plain value (a
 * synchronous `serve` is answered in the task that received the request), else once the
 * promise settles. A throw or a rejection, in `fn` or in `next`, goes to `fail`.
 */
function andThen(fn, next, fail) {
  let value;
  try {
    value = fn();
    if (!isThenable(value)) return next(value);
  } catch (error) {
    return fail(error);
  }
  return Promise.resolve(value).then(next).catch(fail);
}
