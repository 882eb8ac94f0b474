/**
 * The relay: one stream (SSE, WebSocket, ...) per browser profile, shared by every tab.
 *
 * The leader of `resource` (an ordinary `baton.lead` term) opens the source after the last
 * id this tab delivered (else the shared cursor) and relays each event, with its id, the id
 * before it and the leader's epoch, on a BroadcastChannel of the Baton's protocol version
 * (`baton/<namespace>/v<protocol>/relay/<resource>`). Every tab delivers each event once
 * and in order. What to deliver, hold, drop or replay is decided by RelayCore
 * (relay-core.js) from the election core's word on who leads which term; this file is the
 * adapter: the channel, the source, the cursor in localStorage and one timer.
 *
 * @module tab-baton/relay
 */
import { batonOf } from './baton.js';
import { reportError } from './errors.js';
import { functionOption, numberOption, optionsObject, stringOption, booleanOption } from './options.js';
import { MAX_SESSION_CHARS, RelayCore } from './relay-core.js';
import { estimateBytes } from './relay-size.js';

const RELAY_OPTIONS = ['resource', 'source', 'onEvent', 'onReset', 'silenceMs', 'eligible', 'preferVisible', 'session', 'compare', 'maxDataBytes', 'maxBufferBytes'];

/**
 * Creates a relay for one resource of a Baton. See index.d.ts (`RelayOptions`, `Relay`).
 * @param {object} baton a Baton returned by createBaton()
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
  const maxBufferBytes = numberOption(where, o, 'maxBufferBytes', { fallback: 4 * 1024 * 1024, above: 0, integer: true });
  if (maxBufferBytes < maxDataBytes) throw new TypeError(`${where}: option "maxBufferBytes" must be at least "maxDataBytes" (${maxDataBytes})`);
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
    leadOptions: { ...(o.eligible !== undefined ? { eligible: o.eligible } : {}), preferVisible },
    core: new RelayCore({ selfId: baton.id, session, compare: compare ?? null, maxDataBytes, maxBufferBytes, silenceMs }),
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
  constructor({ internals, baton, resource, source, onEvent, onReset, leadOptions, core }) {
    this.env = internals.env;
    this.baton = baton;
    this.resource = resource;
    this.source = source;
    this.onEvent = onEvent;
    this.onReset = onReset;
    this.leadOptions = leadOptions;
    this.core = core;
    // Per protocol version, like the election's own channel: tabs of another deploy form
    // their own group and never see this stream.
    const base = internals.names.channel;
    this.channelName = `${base}/relay/${resource}`;
    this.cursorKey = `${base}/relay/${resource}/cursor`;
    this.counters = { postFailures: 0, storageErrors: 0, listenerErrors: 0 };
    /** open number -> {controller, close} of the source openings still live. */
    this.sources = new Map();
    this.handle = null;
    this.unsubscribe = null;
    /** Counts the lead handles taken (one per login), so a late `run` of an old one is ignored. */
    this.generation = 0;
    this.closed = false;
    this.timer = null;
    this.timerAt = Infinity;
    this.running = false;
    this.queue = [];

    this.channel = null;
    // The core's word on who leads is read afresh with every message and tick, so that no
    // missed notice can leave a term unconfirmed.
    this.onMessage = (event) => this.step((now) => [...this.confirmNow(now), ...this.core.message(event.data, now)]);
    if (this.env.BroadcastChannel) {
      try {
        this.channel = new this.env.BroadcastChannel(this.channelName);
        this.channel.unref?.(); // Node: never keeps the process alive (as Baton's own channel)
        this.channel.addEventListener('message', this.onMessage);
      } catch (error) {
        this.channel = null;
        reportError(error);
      }
    }
    if (core.session !== null) this.start();
  }

  // ------------------------------------------------------------------ the loop

  /**
   * Runs one input through the core and carries out its effects. Inputs that arrive while
   * effects run (an app callback that logs out, a source that emits synchronously) queue.
   * @param {(now: number) => object[]} input
   */
  step(input) {
    if (this.closed) return;
    this.queue.push(input);
    if (this.running) return;
    this.running = true;
    try {
      while (this.queue.length > 0 && !this.closed) {
        const effects = this.queue.shift()(this.env.monotonic());
        for (const effect of effects) this.execute(effect);
      }
    } finally {
      this.running = false;
    }
    this.arm();
  }

  execute(effect) {
    switch (effect.type) {
      case 'deliver':
        try {
          this.onEvent(effect.event);
        } catch (error) {
          this.counters.listenerErrors += 1;
          reportError(error);
        }
        break;
      case 'post':
        this.post(effect.message);
        break;
      case 'open-source':
        this.openSource(effect.open, effect.after);
        break;
      case 'close-source':
        this.closeSource(effect.open);
        break;
      case 'write-cursor':
        this.writeCursor(effect.id);
        break;
      case 'abdicate':
        this.handle?.abdicate();
        break;
      case 'logout':
        this.applyLogout();
        break;
      case 'login':
        this.applyLogin(effect.session);
        break;
      case 'reset':
        this.clearCursor();
        if (this.onReset) {
          try {
            this.onReset({ reason: effect.reason, session: effect.session });
          } catch (error) {
            this.counters.listenerErrors += 1;
            reportError(error);
          }
        }
        break;
      default:
        break;
    }
  }

  /** One timer, at the core's next deadline. */
  arm() {
    if (this.closed) return;
    const at = this.core.nextDeadline();
    if (at === this.timerAt && this.timer !== null) return;
    if (this.timer !== null) this.env.clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = at;
    if (at === Infinity) return;
    const delay = Math.max(0, Math.ceil(at - this.env.monotonic()));
    const timer = this.env.setTimeout(() => {
      if (this.timer !== timer) return;
      this.timer = null;
      this.timerAt = Infinity;
      this.step((now) => [...this.confirmNow(now), ...this.core.tick(now)]);
    }, delay);
    this.timer = timer;
  }

  // ------------------------------------------------------------------ the election

  start() {
    if (this.handle || this.closed) return;
    this.generation += 1;
    const generation = this.generation;
    const handle = this.baton.lead(this.resource, {
      ...this.leadOptions,
      run: (token, signal) => this.lead(generation, token, signal),
    });
    this.handle = handle;
    this.step(() => this.core.setActive(true));
    this.confirm();
    this.unsubscribe = handle.onChange((change) => {
      if (change.type === 'released' && this.handle === handle) {
        // Released from outside (the Baton was disposed): this relay ends too.
        this.handle = null;
        this.close();
        return;
      }
      this.confirm();
    });
  }

  /** Hands the election core's view of the resource (who leads which term) to the relay core. */
  confirm() {
    this.step((now) => this.confirmNow(now));
  }

  confirmNow(now) {
    const info = this.handle ? this.handle.leader() : null;
    return this.core.confirm(info ? info.id : null, info ? info.epoch : 0, now);
  }

  stop() {
    const { handle, unsubscribe } = this;
    if (!handle) return;
    this.handle = null;
    this.unsubscribe = null;
    unsubscribe?.();
    this.step(() => this.core.setActive(false));
    try {
      handle.release();
    } catch (error) {
      reportError(error);
    }
  }

  /** `run` of the lead handle: a term of this tab begins; it ends when `signal` aborts. */
  lead(generation, token, signal) {
    if (this.generation !== generation || this.closed || signal.aborted) return;
    const stored = this.readCursor();
    this.step((now) => this.core.startTerm(token.epoch, stored, now));
    signal.addEventListener('abort', () => this.step(() => this.core.endTerm(token.epoch)), { once: true });
  }

  // ------------------------------------------------------------------ the source (leader)

  openSource(open, after) {
    const controller = new AbortController();
    const entry = { controller, close: null };
    this.sources.set(open, entry);
    const live = () => this.sources.get(open) === entry;
    // An event whose data cannot be cloned would reach this tab's onEvent and no other tab:
    // it is dropped as malformed here (`sourceMalformed`), before the core delivers it.
    const emit = (event) => this.step((now) => this.core.sourceEvent(open, canBePosted(event, this.core.maxDataBytes) ? event : null, now));
    emit.heartbeat = () => {
      if (live()) this.step((now) => this.core.sourceHeartbeat(open, now));
    };
    emit.fail = (error) => {
      if (!live()) return;
      if (error !== undefined) this.lastSourceError = String(error && error.message ? error.message : error);
      this.step((now) => this.core.sourceFailed(open, now));
    };
    try {
      const close = this.source(after, emit, controller.signal);
      if (typeof close === 'function') {
        if (live()) entry.close = close;
        else safeCall(close);
      }
    } catch (error) {
      reportError(error);
      emit.fail(error);
    }
  }

  closeSource(open) {
    const entry = this.sources.get(open);
    if (!entry) return;
    this.sources.delete(open);
    entry.controller.abort();
    if (entry.close) safeCall(entry.close);
  }

  // ------------------------------------------------------------------ channel and cursor

  post(message) {
    if (!this.channel) return;
    try {
      this.channel.postMessage(message);
    } catch {
      this.counters.postFailures += 1;
    }
  }

  readCursor() {
    const storage = this.env.localStorage;
    if (!storage) return null;
    try {
      const raw = storage.getItem(this.cursorKey);
      if (raw === null) return null;
      const stored = JSON.parse(raw);
      if (!stored || typeof stored !== 'object' || stored.session !== this.core.session) return null;
      const id = this.core.toId(stored.id);
      return id === undefined ? null : id;
    } catch {
      this.counters.storageErrors += 1;
      return null;
    }
  }

  /** Only the leader writes the shared cursor, with what its own source gave it. */
  writeCursor(id) {
    const storage = this.env.localStorage;
    if (!storage) return;
    try {
      const current = this.readCursor();
      if (current !== null && this.core.cmp(id, current) <= 0) return;
      storage.setItem(this.cursorKey, JSON.stringify({ id, session: this.core.session }));
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
    return this.core.last ?? this.readCursor();
  }

  // ------------------------------------------------------------------ session

  logout() {
    if (this.closed) return;
    this.step(() => this.core.announce('logout', ''));
    this.applyLogout();
  }

  login(session) {
    if (this.closed) return;
    if (typeof session !== 'string' || session.length > MAX_SESSION_CHARS) {
      throw new TypeError(`relay.login: "session" must be a string of at most ${MAX_SESSION_CHARS} characters`);
    }
    this.step(() => this.core.announce('login', session));
    this.applyLogin(session);
  }

  /** Closes the stream, forgets the cursor and stops competing, in this tab. */
  applyLogout() {
    if (!this.handle && this.core.session === null) return;
    const was = this.core.session;
    this.stop();
    this.step(() => this.core.reset('logout', was, null));
  }

  applyLogin(session) {
    if (this.handle && session === this.core.session) return;
    // Another session: nothing of the old one may leak into it.
    if (this.handle) {
      this.stop();
      this.step(() => this.core.reset('session', session, session));
    } else {
      this.core.session = session;
    }
    this.start();
  }

  close() {
    if (this.closed) return;
    this.stop();
    this.closed = true;
    for (const open of [...this.sources.keys()]) this.closeSource(open);
    if (this.timer !== null) this.env.clearTimeout(this.timer);
    this.timer = null;
    if (this.channel) {
      this.channel.removeEventListener('message', this.onMessage);
      safeCall(() => this.channel.close());
      this.channel = null;
    }
  }

  statsSnapshot() {
    const handle = this.handle;
    return {
      ...this.core.stats(),
      ...this.counters,
      state: this.closed ? 'closed' : !handle ? 'stopped' : this.core.term ? 'leader' : 'follower',
      session: this.core.session,
      leadership: handle ? handle.state() : 'released',
    };
  }
}

/**
 * Whether `event.data` survives postMessage (structured clone); strings, numbers and the like
 * always do. Data over `maxDataBytes` is not cloned to find out: the core drops it anyway.
 */
function canBePosted(event, maxDataBytes) {
  const data = event?.data;
  if (typeof data === 'function' || typeof data === 'symbol') return false;
  if (data === null || typeof data !== 'object' || typeof structuredClone !== 'function') return true;
  if (estimateBytes(data, maxDataBytes) > maxDataBytes) return true;
  try {
    structuredClone(data);
    return true;
  } catch {
    return false;
  }
}

function safeCall(fn) {
  try {
    fn();
  } catch (error) {
    reportError(error);
  }
}
