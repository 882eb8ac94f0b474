/**
 * The environment Baton runs in: the browser primitives it uses, taken from `globalThis`
 * (a window or a dedicated worker) or from an injected object (the `env` option), e.g. a
 * `tab-baton/testing` tab in Node.
 *
 * An injected environment is used as given: a primitive it lacks is missing, never taken
 * from `globalThis` (Node's own BroadcastChannel would otherwise connect unrelated test
 * "tabs"). Only the clocks and the timer functions fall back to the global ones. An injected
 * `now` without `monotonic` (a virtual clock) serves as both.
 *
 * @module tab-baton/env
 */

/**
 * @typedef {object} Env
 * @property {any} locks `navigator.locks`, or null
 * @property {any} BroadcastChannel the constructor, or null
 * @property {any} localStorage or null (also null when access throws: blocked site data)
 * @property {any} indexedDB or null
 * @property {any} document for visibilitychange/freeze/resume, or null (workers)
 * @property {any} events the global scope for pagehide/pageshow/online/offline, or null
 * @property {() => boolean | undefined} onLine `navigator.onLine`, if known
 * @property {() => number} now wall-clock milliseconds (compared across tabs)
 * @property {() => number} monotonic milliseconds that no clock jump moves (local deadlines)
 * @property {number} startMs when this page started (the age bonus in ranking)
 * @property {(fn: () => void, ms: number) => any} setTimeout
 * @property {(id: any) => void} clearTimeout
 * @property {boolean} opaque an opaque origin (`origin` is 'null': a sandboxed iframe, a data:
 *   document), whose channel no other tab shares
 * @property {boolean} injected whether it came from the `env` option
 */

/**
 * setTimeout's longest delay: a longer one fires at once. Baton's timers wait at most this
 * long, and whoever sets one for a later deadline finds it not due yet and sets it again.
 */
const MAX_TIMER_DELAY = 2 ** 31 - 1;

/**
 * @param {object} [source] the `env` option; `globalThis` when undefined
 * @returns {Env}
 */
export function resolveEnv(source) {
  const injected = source !== undefined;
  const g = injected ? source : globalThis;
  const nav = read(g, 'navigator');
  const locks = read(g, 'locks') ?? read(nav, 'locks');
  const now = typeof g.now === 'function' ? () => g.now() : () => Date.now();
  const monotonic = typeof g.monotonic === 'function' ? () => g.monotonic() : g.now ? now : () => performance.now();
  const timers = typeof g.setTimeout === 'function' && typeof g.clearTimeout === 'function' ? g : globalThis;
  return {
    locks: locks && typeof locks.request === 'function' ? locks : null,
    BroadcastChannel: typeof read(g, 'BroadcastChannel') === 'function' ? g.BroadcastChannel : null,
    localStorage: storageOf(g),
    indexedDB: typeof read(read(g, 'indexedDB'), 'open') === 'function' ? g.indexedDB : null,
    document: eventTarget(read(g, 'document')),
    events: eventTarget(g),
    onLine: () => read(nav, 'onLine'),
    now,
    monotonic,
    startMs: startTime(g, injected, now),
    setTimeout: (fn, ms) => unref(timers.setTimeout(fn, Math.min(ms, MAX_TIMER_DELAY))),
    clearTimeout: (id) => timers.clearTimeout(id),
    opaque: read(g, 'origin') === 'null',
    injected,
  };
}

/**
 * In Node a timer keeps the process alive; Baton's never should (a Baton nobody disposed
 * must not hang a test runner or an SSR process). Browsers' timer ids are numbers.
 */
function unref(timer) {
  if (timer && typeof timer.unref === 'function') timer.unref();
  return timer;
}

/**
 * The other side of `unref`: while the app awaits Baton (`awaitLeadership()`), Node must not
 * exit under it. Holds the process open with one idle timer until the returned function runs.
 * Nothing in browsers.
 */
export function holdProcessOpen() {
  if (typeof globalThis.process?.versions?.node !== 'string') return () => {};
  const timer = setInterval(() => {}, 2 ** 30);
  return () => clearInterval(timer);
}

/**
 * Whether `error` is the browser denying an API to this context for good: a `SecurityError`
 * (an opaque origin such as a sandboxed iframe, or site data blocked by the user).
 */
export function isRefusal(error) {
  return error?.name === 'SecurityError';
}

/** Reads a property that may throw (a sandboxed iframe's `indexedDB`, say) or be missing. */
function read(object, key) {
  if (object === null || object === undefined) return undefined;
  try {
    return object[key];
  } catch {
    return undefined;
  }
}

function eventTarget(object) {
  return object && typeof object.addEventListener === 'function' && typeof object.removeEventListener === 'function'
    ? object
    : null;
}

/** `localStorage`, or null when missing (workers) or blocked (the getter throws; see `storageReadable`). */
function storageOf(g) {
  const storage = read(g, 'localStorage');
  if (!storage || typeof storage.getItem !== 'function') return null;
  return storage;
}

/**
 * Whether reading `storage` works now: blocked site data may throw on every call rather than
 * in the getter. Asked by `support()` only, never at start-up (the lock request goes first).
 */
export function storageReadable(storage) {
  try {
    storage.getItem('baton'); // null, when missing, throws too
    return true;
  } catch {
    return false;
  }
}

/** The page's start (performance.timeOrigin) in a browser; for an injected env, now. */
function startTime(g, injected, now) {
  if (typeof g.startMs === 'number') return g.startMs;
  const origin = injected ? undefined : read(read(g, 'performance'), 'timeOrigin');
  return typeof origin === 'number' && origin > 0 ? Math.floor(origin) : Math.floor(now());
}

/**
 * What the environment supports, and the authority Baton would choose.
 * @param {Env} env
 */
export function supportOf(env) {
  return {
    webLocks: env.locks !== null,
    broadcastChannel: env.BroadcastChannel !== null,
    indexedDB: env.indexedDB !== null,
    localStorage: env.localStorage !== null,
  };
}

/**
 * Picks the authority: Web Locks if present, else an IndexedDB lease, else broadcast only.
 * An explicit choice (tests) must be available.
 * @param {Env} env
 * @param {'auto'|'web-locks'|'lease'|'broadcast'} requested
 * @returns {'web-locks'|'lease'|'broadcast'}
 */
export function chooseAuthority(env, requested) {
  if (requested === 'web-locks' && !env.locks) throw new TypeError('option "authority": "web-locks" needs navigator.locks');
  if (requested === 'lease' && !env.indexedDB) throw new TypeError('option "authority": "lease" needs indexedDB');
  if (requested !== 'auto') return requested;
  if (env.locks) return 'web-locks';
  if (env.indexedDB) return 'lease';
  return 'broadcast';
}

/**
 * Why `chooseAuthority` chose `authority`, in words (`support().reason`).
 * @param {Env} env
 * @param {'auto'|'web-locks'|'lease'|'broadcast'} requested
 * @param {'web-locks'|'lease'|'broadcast'} authority
 */
export function authorityReason(env, requested, authority) {
  if (requested !== 'auto') return `asked for by the "authority" option${aloneNote(env, authority)}`;
  if (authority === 'web-locks') return 'navigator.locks is available';
  if (authority === 'lease') return 'no navigator.locks; indexedDB is available';
  const hint = isNodeWithoutEnv(env) ? ' (in Node, pass a tab-baton/testing tab as env)' : '';
  return `no navigator.locks or indexedDB${hint}${aloneNote(env, authority)}`;
}

/** Where broadcast-only mode cannot reach another tab: why this tab leads alone. */
export function aloneNote(env, authority) {
  if (authority !== 'broadcast') return '';
  if (!env.BroadcastChannel) return '; no BroadcastChannel: alone';
  return env.opaque ? '; alone: an opaque origin shares its BroadcastChannel with no other tab' : '';
}

/**
 * The authority an 'auto' Baton falls back to when `from` refused this context. Web Locks
 * refused with a SecurityError: the lease, where IndexedDB has not refused too (the browser
 * refuses the page's storage as a whole, so every tab that shares it falls back alike) and
 * cannot (an opaque origin has no storage, whichever of the two refusals comes first). Web Locks
 * that did not answer: broadcast only, since the other tabs' lock managers may well answer,
 * and a lease would not exclude their Web Locks leader, while a broadcast-only tab follows
 * it. Else broadcast only.
 * @param {Env} env
 * @param {'web-locks'|'lease'} from
 * @param {Error} error the refusal
 * @param {boolean} leaseAllowed IndexedDB has not refused, and the API allows a lease
 * @returns {'lease'|'broadcast'}
 */
export function fallbackAuthority(env, from, error, leaseAllowed) {
  return from === 'web-locks' && isRefusal(error) && env.indexedDB && !env.opaque && leaseAllowed ? 'lease' : 'broadcast';
}

const API_NAMES = { 'web-locks': 'navigator.locks', lease: 'indexedDB' };

/**
 * What refused this context, in words (`support().reason`).
 * @param {Map<'web-locks'|'lease', Error>} refused API ('lease' for IndexedDB) -> its refusal
 */
export function refusedWords(refused) {
  return Object.keys(API_NAMES)
    .filter((api) => refused.has(api))
    .map((api) => `${API_NAMES[api]} ${refused.get(api).name === 'TimeoutError' ? 'did not answer' : `refused (${refused.get(api).name})`}`)
    .join('; ');
}

/**
 * `degradedReason` of a refused authority: `<authority>-refused:<error name>`, or
 * `<authority>-timeout` when it did not answer.
 */
export function refusalReason(authority, error) {
  return error.name === 'TimeoutError' ? `${authority}-timeout` : `${authority}-refused:${error.name}`;
}

/** Node (a server, a test runner) with Baton on its own globals rather than an injected env. */
export function isNodeWithoutEnv(env) {
  const process = globalThis.process;
  return !env.injected && typeof process?.versions?.node === 'string' && typeof globalThis.document === 'undefined';
}

/** A random id: a UUID where available (secure contexts, Node), else 128 random bits in hex. */
export function randomId() {
  const c = globalThis.crypto;
  if (c && typeof c.randomUUID === 'function') return c.randomUUID();
  // randomUUID exists only in secure contexts: the same UUID v4 shape without it (awaforge
  // documents its default id as one).
  const bytes = new Uint8Array(16);
  if (c && typeof c.getRandomValues === 'function') c.getRandomValues(bytes);
  else for (let i = 0; i < 16; i += 1) bytes[i] = Math.floor(Math.random() * 256);
  bytes[6] = (bytes[6] & 0x0f) | 0x40; // version 4
  bytes[8] = (bytes[8] & 0x3f) | 0x80; // RFC 4122 variant
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A 32-bit seed for the core's jitter, different in every tab. */
export function randomSeed() {
  const c = globalThis.crypto;
  if (c && typeof c.getRandomValues === 'function') return c.getRandomValues(new Uint32Array(1))[0];
  return Math.floor(Math.random() * 2 ** 32);
}
