/**
 * The relay: one stream (SSE, WebSocket, ...) per browser profile, shared by every tab.
 *
 * The leader of `resource` (an ordinary `baton.lead` term) opens the source from the
 * shared cursor and relays each event, with its id and the leader's epoch, to every tab on
 * a BroadcastChannel of its own (`baton/<namespace>/relay/<resource>`, plain structured-
 * clone objects). Every tab, the leader included, delivers each event to the app exactly
 * once and in order: an id at or below the last one delivered is dropped, and so is a
 * relay from a term older than the newest one seen (a thawed stale leader), unless it is the
 * exact next id (it cannot make a tab skip ahead; see `apply`). Every tab keeps
 * the cursor current (localStorage, per namespace and resource), so whichever tab leads
 * next resumes right after the last id it delivered.
 *
 * A leader that is alive but silent (no relayed event nor source heartbeat for
 * `silenceMs`) is asked by the followers to step down; it abdicates if its own source has
 * been silent that long, else it answers that it is alive. `logout()` / `login(session)`
 * close the stream and clear the state in every tab.
 *
 * Nothing another tab posts on the relay channel is trusted beyond its shape: malformed,
 * foreign-version, oversized and other-session messages are dropped and counted, and a
 * term newer than any the election core knows of is held until the core confirms it
 * (a forged epoch must not make every tab ignore the real leader).
 *
 * @module tab-baton/relay
 */
import { batonOf } from './baton.js';
import { reportError } from './errors.js';
import { functionOption, numberOption, optionsObject, stringOption, booleanOption } from './options.js';

const RELAY_OPTIONS = ['resource', 'source', 'onEvent', 'onReset', 'silenceMs', 'eligible', 'preferVisible', 'session', 'compare', 'maxDataBytes'];
/** Version of the relay channel's messages; another version is dropped and counted. */
export const RELAY_PROTOCOL = 1;
const KINDS = new Set(['event', 'lead', 'beat', 'silent?', 'alive', 'logout', 'login']);
const TERM_KINDS = new Set(['event', 'lead', 'beat', 'silent?', 'alive']);
const MAX_NAME_CHARS = 64;
const MAX_SESSION_CHARS = 256;
const MAX_ID_CHARS = 256;
/** Messages of an unconfirmed newer term are held at most this long, this many. */
const PENDING_MS = 2000;
const MAX_PENDING = 512;
const PENDING_CHECK_MS = 20;
/** Source reopen backoff after a failure. */
const REOPEN_BASE_MS = 250;
const REOPEN_MAX_MS = 10000;
const OPENS_KEPT = 32;

/**
 * Creates a relay for one resource of a Baton. See index.d.ts (`RelayOptions`, `Relay`).
 * @param {import('./baton.js').createBaton extends (...a: any) => infer R ? R : never} baton
 * @param {object} options
 */
export function createRelay(baton, options) {
  const where = 'createRelay';
  const internals = batonOf(baton);
  if (!internals) throw new TypeError(`${where}: "baton" must be a Baton returned by createBaton()`);
  const o = optionsObject(where, 'options', options, RELAY_OPTIONS);
  const resource = stringOption(where, o, 'resource', { required: true, wireName: true });
  const source = functionOption(where, o, 'source', { required: true });
  const onEvent = functionOption(where, o, 'onEvent', { required: true });
  const onReset = functionOption(where, o, 'onReset');
  const silenceMs = numberOption(where, o, 'silenceMs', { fallback: 30000, above: 0 });
  const compare = functionOption(where, o, 'compare');
  const maxDataBytes = numberOption(where, o, 'maxDataBytes', { fallback: 256 * 1024, above: 0, integer: true });
  const preferVisible = booleanOption(where, o, 'preferVisible', false);
  let session = '';
  if (o.session === null) session = null;
  else if (o.session !== undefined) {
    if (typeof o.session !== 'string' || o.session.length > MAX_SESSION_CHARS) {
      throw new TypeError(`${where}: option "session" must be a string of at most ${MAX_SESSION_CHARS} characters, or null`);
    }
    session = o.session;
  }
  const relay = new Relay({
    internals,
    baton,
    resource,
    source,
    onEvent,
    onReset,
    silenceMs,
    compare,
    maxDataBytes,
    leadOptions: { ...(o.eligible !== undefined ? { eligible: o.eligible } : {}), preferVisible },
    session,
  });
  return Object.freeze({
    resource,
    /** The current lead handle (null while logged out or closed). */
    get handle() {
      return relay.handle;
    },
    cursor: () => relay.cursor(),
    stats: () => relay.statsSnapshot(),
    logout: () => relay.logout(),
    login: (s) => relay.login(s),
    close: () => relay.close(),
  });
}

class Relay {
  constructor({ internals, baton, resource, source, onEvent, onReset, silenceMs, compare, maxDataBytes, leadOptions, session }) {
    this.env = internals.env;
    this.baton = baton;
    this.selfId = baton.id;
    this.resource = resource;
    this.source = source;
    this.onEvent = onEvent;
    this.onReset = onReset;
    this.silenceMs = silenceMs;
    this.customCompare = compare ?? null;
    this.maxDataBytes = maxDataBytes;
    this.leadOptions = leadOptions;
    this.session = session;
    this.channelName = `baton/${baton.namespace}/relay/${resource}`;
    this.cursorKey = `baton/${baton.namespace}/relay/v${RELAY_PROTOCOL}/${resource}/cursor`;
    this.counters = {
      delivered: 0,
      duplicatesDropped: 0,
      gapsSeen: 0,
      relayed: 0,
      staleDropped: 0,
      staleFilled: 0,
      staleTerms: 0,
      droppedMalformed: 0,
      droppedOversized: 0,
      droppedForeignVersion: 0,
      droppedForeignSession: 0,
      droppedUnconfirmed: 0,
      sourceMalformed: 0,
      lateSourceEvents: 0,
      sourceOpens: 0,
      sourceErrors: 0,
      silenceRequests: 0,
      silenceAnswers: 0,
      silenceAbdications: 0,
      postFailures: 0,
      storageErrors: 0,
      listenerErrors: 0,
      resets: 0,
    };
    /** Last id delivered to the app in this tab (null: none yet). */
    this.last = null;
    /** Newest term seen on the relay (own terms included). */
    this.newestEpoch = 0;
    /** Who relayed last, and where its stream started. */
    this.leaderInfo = null;
    /** @type {Array<{after: any, epoch: number, at: number}>} */
    this.opens = [];
    /** @type {Array<{msg: any, at: number}>} messages of a newer term awaiting the core's confirmation */
    this.pending = [];
    this.pendingTimer = null;
    /** The current term while this tab leads and relays. */
    this.term = null;
    this.handle = null;
    this.unsubscribe = null;
    this.active = false;
    this.closed = false;
    this.lastSign = this.env.now();
    this.watchTimer = null;

    this.channel = null;
    this.onMessage = (event) => this.receive(event.data);
    if (this.env.BroadcastChannel) {
      try {
        this.channel = new this.env.BroadcastChannel(this.channelName);
        this.channel.addEventListener('message', this.onMessage);
      } catch (error) {
        this.channel = null;
        reportError(error);
      }
    }
    if (session !== null) this.start();
    this.armWatch();
  }

  // ------------------------------------------------------------------ ids and cursor

  /** Normalises an id: a non-negative safe integer (numbers or digit strings) by default. */
  toId(raw) {
    if (this.customCompare) {
      if (typeof raw === 'string') return raw.length > 0 && raw.length <= MAX_ID_CHARS ? raw : undefined;
      return typeof raw === 'number' && Number.isFinite(raw) ? raw : undefined;
    }
    if (typeof raw === 'number') return Number.isSafeInteger(raw) && raw >= 0 ? raw : undefined;
    if (typeof raw === 'string' && /^[0-9]{1,15}$/.test(raw)) return Number(raw);
    return undefined;
  }

  compareIds(a, b) {
    if (this.customCompare) return Number(this.customCompare(a, b));
    return a - b;
  }

  readCursor() {
    const storage = this.env.localStorage;
    if (!storage) return null;
    try {
      const raw = storage.getItem(this.cursorKey);
      if (raw === null) return null;
      const stored = JSON.parse(raw);
      if (!stored || typeof stored !== 'object' || stored.session !== this.session) return null;
      const id = this.toId(stored.id);
      return id === undefined ? null : id;
    } catch {
      this.counters.storageErrors += 1;
      return null;
    }
  }

  writeCursor(id) {
    const storage = this.env.localStorage;
    if (!storage) return;
    try {
      const current = this.readCursor();
      if (current !== null && this.compareIds(id, current) <= 0) return;
      storage.setItem(this.cursorKey, JSON.stringify({ id, session: this.session }));
    } catch {
      this.counters.storageErrors += 1;
    }
  }

  clearCursor() {
    const storage = this.env.localStorage;
    if (!storage || typeof storage.removeItem !== 'function') return;
    try {
      storage.removeItem(this.cursorKey);
    } catch {
      this.counters.storageErrors += 1;
    }
  }

  cursor() {
    return this.last ?? this.readCursor();
  }

  // ------------------------------------------------------------------ election

  start() {
    if (this.active || this.closed) return;
    this.active = true;
    this.lastSign = this.env.now();
    const handle = this.baton.lead(this.resource, {
      ...this.leadOptions,
      run: (token, signal) => this.lead(token, signal),
    });
    this.handle = handle;
    this.unsubscribe = handle.onChange((change) => {
      if (change.type === 'released' && this.handle === handle && this.active) {
        // Released from outside (the Baton was disposed): this relay ends too.
        this.handle = null;
        this.close();
        return;
      }
      this.flushPending();
    });
  }

  stop() {
    if (!this.active) return;
    this.active = false;
    if (this.term) this.endTerm(this.term);
    const { handle, unsubscribe } = this;
    this.handle = null;
    this.unsubscribe = null;
    unsubscribe?.();
    try {
      handle?.release();
    } catch (error) {
      reportError(error);
    }
    this.pending.length = 0;
  }

  /** `run` of the lead handle: a term of this tab begins. */
  lead(token, signal) {
    if (!this.active || this.closed || signal.aborted) return;
    const term = { token, signal, ctl: null, closeSource: null, lastActivity: this.env.now(), reopenTimer: null, failures: 0 };
    this.term = term;
    signal.addEventListener('abort', () => this.endTerm(term), { once: true });
    if (token.epoch < this.newestEpoch) {
      // A newer term has been relayed already: this one is stale before it starts.
      this.counters.staleTerms += 1;
      this.endTerm(term);
      this.handle?.abdicate();
      return;
    }
    this.newestEpoch = token.epoch;
    const after = this.cursor();
    this.leaderInfo = { id: this.selfId, epoch: token.epoch, after };
    this.lastSign = this.env.now();
    this.post({ kind: 'lead', epoch: token.epoch, after });
    this.openSource(term, after);
  }

  endTerm(term) {
    if (this.term !== term) return;
    this.term = null;
    if (term.reopenTimer !== null) this.env.clearTimeout(term.reopenTimer);
    term.reopenTimer = null;
    this.closeSource(term);
  }

  /** Steps down from a term that turned out stale or silent. */
  abandon(term, counter) {
    this.counters[counter] += 1;
    this.endTerm(term);
    this.handle?.abdicate();
  }

  // ------------------------------------------------------------------ the source (leader)

  openSource(term, after) {
    const ctl = new AbortController();
    term.ctl = ctl;
    term.closeSource = null;
    term.lastActivity = this.env.now();
    this.counters.sourceOpens += 1;
    this.opens.push({ after, epoch: term.token.epoch, at: this.env.now() });
    if (this.opens.length > OPENS_KEPT) this.opens.splice(0, this.opens.length - OPENS_KEPT);
    const live = () => this.term === term && term.ctl === ctl && !ctl.signal.aborted;
    const emit = (event) => {
      if (!live()) {
        this.counters.lateSourceEvents += 1;
        return;
      }
      this.fromSource(term, event);
    };
    emit.heartbeat = () => {
      if (!live()) return;
      term.lastActivity = this.env.now();
      this.post({ kind: 'beat', epoch: term.token.epoch, lastId: this.last });
    };
    emit.fail = (error) => {
      if (!live()) return;
      this.counters.sourceErrors += 1;
      if (error !== undefined) this.lastSourceError = String(error && error.message ? error.message : error);
      this.closeSource(term);
      const delay = Math.min(REOPEN_MAX_MS, REOPEN_BASE_MS * 2 ** Math.min(term.failures, 10));
      term.failures += 1;
      term.reopenTimer = this.env.setTimeout(() => {
        term.reopenTimer = null;
        if (this.term === term && !term.signal.aborted) this.openSource(term, this.cursor());
      }, delay);
    };
    try {
      const close = this.source(after, emit, ctl.signal);
      if (typeof close === 'function') {
        if (live()) term.closeSource = close;
        else safeCall(close);
      }
    } catch (error) {
      reportError(error);
      emit.fail(error);
    }
  }

  closeSource(term) {
    const { ctl, closeSource } = term;
    term.ctl = null;
    term.closeSource = null;
    if (ctl) ctl.abort();
    if (closeSource) safeCall(closeSource);
  }

  fromSource(term, raw) {
    const event = this.sourceEvent(raw);
    if (!event) {
      this.counters.sourceMalformed += 1;
      return;
    }
    term.lastActivity = this.env.now();
    term.failures = 0;
    if (term.token.epoch < this.newestEpoch) {
      this.abandon(term, 'staleTerms');
      return;
    }
    if (this.deliver(event, term.token.epoch, this.selfId)) {
      this.post({ kind: 'event', epoch: term.token.epoch, id: event.id, data: event.data, type: event.type });
      this.counters.relayed += 1;
    }
  }

  sourceEvent(raw) {
    if (!raw || typeof raw !== 'object') return null;
    const id = this.toId(raw.id);
    if (id === undefined) return null;
    const type = raw.type === undefined || raw.type === null ? undefined : raw.type;
    if (type !== undefined && (typeof type !== 'string' || type.length > MAX_NAME_CHARS)) return null;
    return { id, data: raw.data, type };
  }

  // ------------------------------------------------------------------ delivery (every tab)

  /** Delivers one event to the app unless it is not newer than the last one. */
  deliver(event, epoch, from) {
    if (this.last !== null) {
      const order = this.compareIds(event.id, this.last);
      if (!(order > 0)) {
        this.counters.duplicatesDropped += 1;
        return false;
      }
      if (!this.customCompare && event.id > this.last + 1) this.counters.gapsSeen += event.id - this.last - 1;
    }
    this.last = event.id;
    this.counters.delivered += 1;
    this.lastSign = this.env.now();
    this.writeCursor(event.id);
    try {
      this.onEvent({ id: event.id, data: event.data, type: event.type, epoch, from });
    } catch (error) {
      this.counters.listenerErrors += 1;
      reportError(error);
    }
    return true;
  }

  // ------------------------------------------------------------------ the channel

  post(message) {
    if (!this.channel) return;
    try {
      this.channel.postMessage({ v: RELAY_PROTOCOL, from: this.selfId, session: this.session ?? '', ...message });
    } catch {
      this.counters.postFailures += 1;
    }
  }

  /** @returns {string | null} why `msg` is dropped (a counter name), or null when it is well-formed */
  check(msg) {
    if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) return 'droppedMalformed';
    if (msg.v !== RELAY_PROTOCOL) return typeof msg.v === 'number' ? 'droppedForeignVersion' : 'droppedMalformed';
    if (!KINDS.has(msg.kind)) return 'droppedMalformed';
    if (typeof msg.from !== 'string' || msg.from === '' || msg.from.length > MAX_NAME_CHARS) return 'droppedMalformed';
    if (typeof msg.session !== 'string' || msg.session.length > MAX_SESSION_CHARS) return 'droppedMalformed';
    if (TERM_KINDS.has(msg.kind) && !(Number.isSafeInteger(msg.epoch) && msg.epoch >= 0)) return 'droppedMalformed';
    if (msg.kind === 'event') {
      if (this.toId(msg.id) === undefined) return 'droppedMalformed';
      if (msg.type !== undefined && (typeof msg.type !== 'string' || msg.type.length > MAX_NAME_CHARS)) return 'droppedMalformed';
      if (sizeOf(msg.data) > this.maxDataBytes) return 'droppedOversized';
    }
    if (msg.kind === 'lead' && msg.after !== null && msg.after !== undefined && this.toId(msg.after) === undefined) return 'droppedMalformed';
    return null;
  }

  receive(msg) {
    if (this.closed) return;
    let problem;
    try {
      problem = this.check(msg);
    } catch {
      problem = 'droppedMalformed'; // a getter that throws, say
    }
    if (problem) {
      this.counters[problem] += 1;
      return;
    }
    if (msg.kind === 'logout') {
      this.applyLogout();
      return;
    }
    if (msg.kind === 'login') {
      this.applyLogin(msg.session);
      return;
    }
    if (!this.active) return;
    if (msg.session !== this.session) {
      this.counters.droppedForeignSession += 1;
      return;
    }
    if (msg.kind === 'silent?') {
      this.answerSilence();
      return;
    }
    if (msg.epoch > this.newestEpoch && (this.pending.length > 0 || !this.confirmed(msg.epoch))) {
      if (msg.kind === 'event' || msg.kind === 'lead') this.hold(msg);
      return;
    }
    this.apply(msg);
  }

  /** True when the election core knows a term at least this new (it is no forgery). */
  confirmed(epoch) {
    const info = this.handle ? this.handle.leader() : null;
    const own = this.term ? this.term.token.epoch : 0;
    return epoch <= Math.max(info ? info.epoch : 0, own, this.newestEpoch);
  }

  hold(msg) {
    if (this.pending.length >= MAX_PENDING) {
      this.pending.shift();
      this.counters.droppedUnconfirmed += 1;
    }
    this.pending.push({ msg, at: this.env.now() });
    if (this.pendingTimer === null) {
      this.pendingTimer = this.env.setTimeout(() => {
        this.pendingTimer = null;
        this.flushPending();
      }, PENDING_CHECK_MS);
    }
  }

  flushPending() {
    const now = this.env.now();
    while (this.pending.length > 0 && this.active) {
      const { msg, at } = this.pending[0];
      if (msg.epoch <= this.newestEpoch || this.confirmed(msg.epoch)) {
        this.pending.shift();
        this.apply(msg);
      } else if (now - at > PENDING_MS) {
        this.pending.shift();
        this.counters.droppedUnconfirmed += 1;
      } else {
        break;
      }
    }
    if (this.pending.length > 0 && this.pendingTimer === null && !this.closed) {
      this.pendingTimer = this.env.setTimeout(() => {
        this.pendingTimer = null;
        this.flushPending();
      }, PENDING_CHECK_MS);
    }
  }

  /** A well-formed, confirmed message of this session: event, lead, beat or alive. */
  apply(msg) {
    if (msg.epoch < this.newestEpoch) {
      // A relay of an older term is ignored, with one exception: the exact next id. It is the
      // next event of the one stream, so it cannot make this tab skip ahead, and it must be
      // taken when the newer term this tab saw stepped down before relaying it (two terms in
      // conflict) while the next leader, which never saw that term, resumes after it.
      if (msg.kind === 'event' && !this.customCompare && this.last !== null && this.toId(msg.id) === this.last + 1) {
        this.counters.staleFilled += 1;
        this.deliver({ id: this.toId(msg.id), data: msg.data, type: msg.type }, msg.epoch, msg.from);
        return;
      }
      this.counters.staleDropped += 1;
      return;
    }
    if (msg.epoch > this.newestEpoch) {
      this.newestEpoch = msg.epoch;
      // Another tab relays a newer term: if this tab still relays, it is the stale one.
      if (this.term && this.term.token.epoch < msg.epoch) this.abandon(this.term, 'staleTerms');
    }
    if (this.term && this.term.token.epoch === msg.epoch) {
      // Our own term relayed by someone else: only a duplicate tab id does that.
      this.counters.staleDropped += 1;
      return;
    }
    this.lastSign = this.env.now();
    if (msg.kind === 'lead' || !this.leaderInfo || this.leaderInfo.epoch !== msg.epoch) {
      // Where the stream started is known from the term's `lead` message only.
      this.leaderInfo = { id: msg.from, epoch: msg.epoch, after: msg.kind === 'lead' ? this.toId(msg.after) ?? null : null };
    }
    if (msg.kind === 'event') this.deliver({ id: this.toId(msg.id), data: msg.data, type: msg.type }, msg.epoch, msg.from);
  }

  // ------------------------------------------------------------------ silence

  /** The leader was asked whether it is alive: abdicate if its source is silent. */
  answerSilence() {
    const term = this.term;
    if (!term) return;
    if (this.env.now() - term.lastActivity > this.silenceMs) {
      this.abandon(term, 'silenceAbdications');
    } else {
      this.counters.silenceAnswers += 1;
      this.post({ kind: 'alive', epoch: term.token.epoch, lastId: this.last });
    }
  }

  armWatch() {
    if (this.closed) return;
    const every = Math.min(1000, Math.max(50, this.silenceMs / 4));
    this.watchTimer = this.env.setTimeout(() => {
      this.watchTimer = null;
      this.watch();
      this.armWatch();
    }, every);
  }

  /** A follower that heard nothing from the leader for `silenceMs` asks it to step down. */
  watch() {
    if (!this.active || this.term || !this.handle || this.handle.state() === 'leader') return;
    const now = this.env.now();
    if (now - this.lastSign > this.silenceMs) {
      this.counters.silenceRequests += 1;
      this.lastSign = now;
      this.post({ kind: 'silent?', epoch: this.newestEpoch });
    }
  }

  // ------------------------------------------------------------------ session

  logout() {
    if (this.closed) return;
    this.post({ kind: 'logout' });
    this.applyLogout();
  }

  login(session) {
    if (this.closed) return;
    if (typeof session !== 'string' || session.length > MAX_SESSION_CHARS) {
      throw new TypeError(`relay.login: "session" must be a string of at most ${MAX_SESSION_CHARS} characters`);
    }
    this.post({ kind: 'login', session });
    this.applyLogin(session);
  }

  /** Closes the stream, forgets the cursor and stops competing, in this tab. */
  applyLogout() {
    const was = this.session;
    this.stop();
    this.session = null;
    this.reset('logout', was);
  }

  applyLogin(session) {
    if (this.active && session === this.session) return;
    if (this.active) {
      // Another session: nothing of the old one may leak into it.
      this.stop();
      this.session = session;
      this.reset('session', session);
    }
    this.session = session;
    this.start();
  }

  reset(reason, session) {
    this.clearCursor();
    this.last = null;
    this.leaderInfo = null;
    this.pending.length = 0;
    this.counters.resets += 1;
    if (this.onReset) {
      try {
        this.onReset({ reason, session });
      } catch (error) {
        this.counters.listenerErrors += 1;
        reportError(error);
      }
    }
  }

  close() {
    if (this.closed) return;
    this.stop();
    this.closed = true;
    if (this.watchTimer !== null) this.env.clearTimeout(this.watchTimer);
    if (this.pendingTimer !== null) this.env.clearTimeout(this.pendingTimer);
    this.watchTimer = null;
    this.pendingTimer = null;
    if (this.channel) {
      this.channel.removeEventListener('message', this.onMessage);
      safeCall(() => this.channel.close());
      this.channel = null;
    }
  }

  statsSnapshot() {
    const handle = this.handle;
    return {
      ...this.counters,
      state: this.closed ? 'closed' : !this.active ? 'stopped' : this.term ? 'leader' : 'follower',
      session: this.session,
      lastId: this.last,
      epoch: this.newestEpoch,
      leader: this.leaderInfo ? { ...this.leaderInfo } : null,
      leadership: handle ? handle.state() : 'released',
      pending: this.pending.length,
      opens: this.opens.map((o) => ({ ...o })),
    };
  }
}

function safeCall(fn) {
  try {
    fn();
  } catch (error) {
    reportError(error);
  }
}

/** A cheap size estimate of relayed data: strings and binary exactly, anything else as 0. */
function sizeOf(data) {
  if (typeof data === 'string') return data.length;
  if (data && typeof data === 'object') {
    if (typeof data.byteLength === 'number') return data.byteLength;
  }
  return 0;
}
