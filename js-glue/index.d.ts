/**
 * tab-baton: leader election for browser tabs, per named resource, with fencing tokens,
 * instant hand-over and frozen-leader recovery. The election logic is a C++ core compiled
 * to WebAssembly. Importing is synchronous and cheap: the core loads on first use (or on
 * {@link load}), everything that needs it waits meanwhile, and {@link ready} says when it
 * is there. A failed load (a strict CSP, the wasm file not served) rejects `ready` and shows
 * in `support().core` and `metrics().core`; it never throws at import.
 *
 * Four API styles, all first-class:
 * - {@link createBaton}: the resource-scoped orchestrator.
 * - {@link leaderElection}: compatible with awaforge's `leaderElection` module.
 * - {@link requestLeadership}: the Web Locks article's `requestLeadership(name, onLeader)`.
 * - {@link createLeaderElection}: compatible with broadcast-channel's `LeaderElector`.
 */

/** Options of {@link load}. */
export interface LoadOptions {
  /**
   * Where `baton-core.wasm` is, when it is not served next to the script that imports
   * tab-baton (bundlers that do not copy it): a URL, a fetch Response, the bytes, or a
   * compiled module.
   */
  wasm?: string | URL | Response | ArrayBuffer | ArrayBufferView | WebAssembly.Module;
}

/**
 * Starts loading the WebAssembly core (once; later calls return the same promise, and
 * their options are ignored). `createBaton` and the other APIs start it themselves.
 * @returns {@link ready}
 */
export function load(options?: LoadOptions): Promise<void>;

/**
 * Resolves once the core is loaded; rejects with an Error (`code` 'CORE_LOAD_FAILED') whose
 * message names the fix: 'wasm-unsafe-eval' in the CSP's script-src, or where the wasm must be served.
 */
export const ready: Promise<void>;

/** Whether the WebAssembly core is loaded. */
export interface CoreStatus {
  state: 'idle' | 'loading' | 'ready' | 'failed';
  /** Why the load failed, naming the fix; null otherwise. */
  error: string | null;
}

// ------------------------------------------------------------------- environment

/** Who decides which tab leads. */
export type Authority = 'web-locks' | 'lease' | 'broadcast';

/** The subset of `navigator.locks` Baton uses. */
export interface LockManagerLike {
  request(
    name: string,
    options: { mode?: 'exclusive' | 'shared'; ifAvailable?: boolean; steal?: boolean; signal?: AbortSignal },
    callback: (lock: { readonly name: string } | null) => unknown,
  ): Promise<unknown>;
  query?(): Promise<{ held?: Array<{ name?: string }>; pending?: Array<{ name?: string }> }>;
}

/** The subset of a `BroadcastChannel` Baton uses. */
export interface BroadcastChannelLike {
  postMessage(message: unknown): void;
  close(): void;
  addEventListener(type: 'message', listener: (event: unknown) => void): void;
  removeEventListener(type: 'message', listener: (event: unknown) => void): void;
}

/** The subset of `localStorage` Baton uses. */
export interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

/** An event target (document, window, worker scope). */
export interface EventTargetLike {
  addEventListener(type: string, listener: (event: unknown) => void): void;
  removeEventListener(type: string, listener: (event: unknown) => void): void;
}

/**
 * The environment, `globalThis` by default (a window or a dedicated worker). Inject one to
 * run in Node with the `tab-baton/testing` fakes: a `FakeTab` fits. An injected environment
 * is used as given: what it lacks is missing (only the clock and timers default to the
 * global ones).
 */
export interface BatonEnv {
  locks?: LockManagerLike | null;
  navigator?: { locks?: LockManagerLike; onLine?: boolean };
  BroadcastChannel?: (new (name: string) => BroadcastChannelLike) | null;
  localStorage?: StorageLike | null;
  /** An IndexedDB factory (`indexedDB`, or `createIndexedDB()` of tab-baton/testing). */
  indexedDB?: { open(name: string, version?: number): unknown } | null;
  /** For `visibilitychange`, `freeze`, `resume`. */
  document?: (EventTargetLike & { visibilityState?: string }) | null;
  /** The global scope's listeners, for `pagehide`, `pageshow`, `online`, `offline`. */
  addEventListener?(type: string, listener: (event: unknown) => void): void;
  removeEventListener?(type: string, listener: (event: unknown) => void): void;
  /** Wall-clock milliseconds (compared across tabs: lease records, ages). Default `Date.now()`. */
  now?(): number;
  /**
   * Milliseconds that no clock jump moves (timers, waits, how long ago a tab was heard).
   * Default `performance.now()`; with `now` given and this not, `now`.
   */
  monotonic?(): number;
  /** When this page started (ranking's age bonus). Default `performance.timeOrigin`, or now. */
  startMs?: number;
  setTimeout?(callback: () => void, ms: number): unknown;
  clearTimeout?(id: unknown): void;
}

// ------------------------------------------------------------------- orchestrator

export interface BatonOptions {
  /** Required. Scopes lock, channel and storage names: `baton/<namespace>/v<protocolVersion>/...`. */
  namespace: string;
  /** Tabs of different protocol versions form separate groups. Default 1. */
  protocolVersion?: number;
  /** Dotted version of the app; with `newestAppOnly`, older code yields to newer. Default '0'. At most 32 bytes. */
  appVersion?: string;
  /** What this tab can do, matched by `eligible.capability` (at most 8, each at most 32 bytes). */
  capabilities?: string[];
  /** This tab's id (at most 64 bytes). Default: a random UUID. */
  id?: string;
  /** Leader heartbeat and presence cadence. Default 1000 ms. */
  heartbeatMs?: number;
  /** A leader without progress this long is replaced. Default 3 × heartbeatMs; must exceed it. */
  suspectMs?: number;
  /**
   * IndexedDB lease duration. Default 5000 ms. The owner renews its record every half of
   * the shorter of `suspectMs` and `leaseMs`; another tab may take over a record not renewed
   * for that long.
   */
  leaseMs?: number;
  /** Default 'auto': Web Locks, else an IndexedDB lease, else broadcast only. */
  authority?: 'auto' | Authority;
  /** The environment; default `globalThis`. */
  env?: BatonEnv;
  /**
   * Install {@link BatonTestHooks} on `globalThis.__baton`. Default false. Needs
   * {@link enableTestHooks} called first (else a TypeError), so that apps that never use
   * the hooks do not ship them.
   */
  testHooks?: boolean;
  /** Seed of the core's jitter (tests); default random. */
  seed?: number;
}

/** Who may lead a resource. */
export interface Eligibility {
  /** Only tabs with this capability (at most 32 bytes). Default: any tab. */
  capability?: string;
  /** May a hidden tab lead? Default true. */
  hidden?: boolean;
  /** Must the tab be online? Default false. */
  network?: boolean;
  /** Tabs running older app code yield to newer ones. Default true. */
  newestAppOnly?: boolean;
}

/** A leadership term. Epochs strictly increase per resource, across tabs and reloads. */
export interface Token {
  readonly resource: string;
  readonly owner: string;
  readonly epoch: number;
}

export type LeadershipState = 'follower' | 'candidate' | 'leader' | 'stepping-down' | 'released';

/** The leader this tab knows of. `since` is wall-clock ms. */
export interface LeaderInfo {
  id: string;
  epoch: number;
  since: number;
  isMe: boolean;
}

export interface LeadershipChange {
  /** elected: a term of this tab began; deposed: it ended; released: the handle was released or the Baton disposed. */
  type: 'elected' | 'deposed' | 'leader-changed' | 'released';
  resource: string;
  state: LeadershipState;
  /** elected: the new term; deposed/released: the term that ended (or null); leader-changed: this tab's term, if any. */
  token: Token | null;
  leader: LeaderInfo | null;
  /** Why, e.g. 'epoch-ready', 'lock-lost', 'frozen', 'abdicate', 'stalled', 'dispose', 'released'. */
  reason: string;
}

export interface LeadOptions {
  eligible?: Eligibility;
  /** A visible tab takes over from a hidden leader. Default false. */
  preferVisible?: boolean;
  /** Leader work, started on each term; `signal` aborts when the term ends (reason: a {@link DeposedError}). */
  run?(token: Token, signal: AbortSignal): unknown;
  /**
   * Answers `baton.request(resource, ...)` from any tab while this tab leads. Its return
   * value (or a promise of it; structured-clone data, at most 64 KiB) is the answer; what it
   * throws reaches the caller as a {@link RemoteError}. Delivery is at least once: a request
   * in flight during a hand-over is served again by the next leader with the same
   * `from.requestId`, so key effects on it (or fence them) to make them effectively once.
   * `signal` aborts when this term ends. A tab that leads without `serve` acknowledges no
   * request: requests wait, re-sent, for a leader that serves, or end with a {@link NoLeaderError}.
   */
  serve?(message: unknown, from: RequestFrom, token: Token, signal: AbortSignal): unknown;
  /**
   * A filter run before `serve`: a falsy result (or a promise of one) refuses the request
   * (the caller gets a {@link RequestError} with `code` 'REFUSED'; `serve` is not called).
   */
  accept?(message: unknown, from: RequestFrom): unknown;
}

/** Who asks: the asking tab's Baton id, and the request's id (the same on every re-send). */
export interface RequestFrom {
  readonly tab: string;
  readonly requestId: string;
}

/** This tab's participation in one resource's election. */
export interface LeadHandle {
  readonly resource: string;
  state(): LeadershipState;
  /** The current term while leading, else null. */
  token(): Token | null;
  leader(): LeaderInfo | null;
  /** Steps down now; stays in the race (others get the first chance). */
  abdicate(): void;
  /**
   * Called when a term of this tab begins or ends, when the known leader changes, and on
   * release. Not called while a lease term is in doubt (its renewal not committed past the
   * record's takeover time: `state()` says 'candidate' and `token()` is null meanwhile, but
   * the term goes on); a renewal that fails ends it with a 'deposed' change.
   */
  onChange(fn: (change: LeadershipChange) => void): () => void;
  /**
   * Runs `fn` only while this tab leads with a term the fence admits; otherwise rejects
   * with a {@link StaleOwnerError} (`code` 'STALE_OWNER') without running it. A term whose
   * epoch was not committed durably (degraded storage) rejects with an
   * {@link EpochNotDurableError} (`code` 'EPOCH_NOT_DURABLE') without running it. Never
   * throws: a missing `fn` rejects with a TypeError.
   */
  fenced<T>(fn: (token: Token, signal: AbortSignal) => T | PromiseLike<T>): Promise<T>;
  /**
   * Publishes `value` (structured-clone data, at most 64 KiB) as the state of this tab's
   * current term, to every tab's {@link Baton.leaderState}. Rejects with a
   * {@link StaleOwnerError} when this tab does not lead, a {@link RequestError} 'TOO_LARGE'
   * over 64 KiB, or a `DataCloneError` when `value` cannot be cloned; nothing is published then.
   */
  setState(value: unknown): Promise<void>;
  /** Leaves the election for this resource for good. Idempotent. */
  release(): void;
}

export type Lifecycle = 'active' | 'hidden' | 'frozen' | 'restored' | 'closing';
export type Liveness = 'alive' | 'suspect' | 'expired' | 'removed';
export type Role = 'follower' | 'candidate' | 'leader' | 'stepping-down';

/** Another tab, as this tab knows it. Times are wall-clock ms. */
export interface PresenceEntry {
  id: string;
  generation: number;
  lifecycle: Lifecycle;
  liveness: Liveness;
  appVersion: string;
  capabilities: string[];
  lastSeen: number;
  lastProgress: number;
}

/** The core's counters. */
export interface CoreMetrics {
  framesSent: number;
  framesReceived: number;
  droppedMalformed: number;
  droppedOversized: number;
  droppedForeignVersion: number;
  droppedStaleGeneration: number;
  /** Frames with a tick below their sender's newest (replays) or implausibly far above it. */
  droppedOldFrame: number;
  droppedForgedEpoch: number;
  droppedTableFull: number;
  duplicateId: number;
  ticks: number;
  elections: number;
  triggers: number;
  termsWon: number;
  stepDowns: number;
  steals: number;
  abdicateRequestsSent: number;
  lockRequests: number;
  leaseAttempts: number;
  backoffs: number;
  epochConflicts: number;
  clockJumps: number;
  storageFailures: number;
  stepDownReasons: Record<string, number>;
}

/** The JavaScript side's counters. */
export interface GlueCounters {
  droppedNotBinary: number;
  postFailures: number;
  framesUnsent: number;
  staleGrants: number;
  locksLost: number;
  lockErrors: number;
  /** Steals not made because the lock was held by code that is not Baton (a compatibility API's lock name). */
  foreignHolderWaits: number;
  /** Times the marker lock of a held lock was taken from this tab by other code; it asks for it again. */
  markersLost: number;
  /** Malformed messages dropped on the side channel of `createLeaderElection`. */
  droppedSideMessages: number;
  epochAllocations: number;
  epochsNotDurable: number;
  storageErrors: number;
  leaseTransactions: number;
  leaseFailures: number;
  timerFires: number;
  listenerErrors: number;
  restores: number;
  /** Times 'auto' gave up an authority that refused this context (see `BatonSupport.reason`). */
  authorityFallbacks: number;
}

export interface BatonMetrics extends CoreMetrics {
  /** The authority in use (a failing lease falls back to 'broadcast'). */
  mode: Authority;
  /**
   * Epochs may repeat (storage failing or missing, a term's epoch not durable), or an
   * authority fell back or refused this context.
   */
  degraded: boolean;
  /** Why, while degraded (see {@link DegradedReason}); null otherwise. */
  degradedReason: DegradedReason | null;
  /** Bumped on each bfcache restore and each authority fallback of 'auto'. */
  generation: number;
  /** The WebAssembly core's load; the core's counters are absent until it is 'ready'. */
  core: CoreStatus;
  glue: GlueCounters;
  /** Requests and leader state, per resource this Baton talked about. */
  talk: Record<string, TalkMetrics>;
}

/** Counters of one resource's requests and leader state in this tab. */
export interface TalkMetrics {
  droppedMalformed: number;
  droppedForeignVersion: number;
  droppedOversized: number;
  /**
   * Acknowledgements, answers, states and term notices not from the leader this tab's
   * election confirms for their term (forged, or of a term not confirmed within 2 s, or two
   * heartbeats if longer): dropped. Only where this tab takes part in the resource's election.
   */
  droppedUnconfirmed: number;
  /** Such messages of a term older than the confirmed one: dropped. */
  droppedStaleTerm: number;
  postFailures: number;
  listenerErrors: number;
  /** Requests made, posts (first sends and re-sends), re-sends. */
  requests: number;
  sends: number;
  resends: number;
  answered: number;
  /** Answers to requests already settled (a re-sent request served twice). */
  duplicateAnswers: number;
  /** Answers and acknowledgements from a term older than the newest seen: dropped. */
  staleAnswers: number;
  staleAcks: number;
  timeouts: number;
  noLeader: number;
  /** Requests of this tab waiting now. */
  pending: number;
  /** States from a term older than the newest seen: dropped. */
  staleStates: number;
  /** The leader side, when this tab's lead handle serves or publishes. */
  serve?: ServeMetrics;
}

export interface ServeMetrics {
  served: number;
  /** Re-sent requests answered from this term's cache of answers, without serving again. */
  replayed: number;
  /** Re-sent requests acknowledged again while being served. */
  reacked: number;
  refused: number;
  failed: number;
  /**
   * Requests left unacknowledged because 256 were being served, or because 8 tabs already
   * wait for the same request id (the caller re-sends).
   */
  busy: number;
  /** Answers computed after their term ended: not sent (the next leader answers). */
  lateAnswers: number;
  /** Requests seen while this tab did not lead. */
  notLeader: number;
  serving: number;
}

/** One role change, for observability. */
export interface Transition {
  at: number;
  resource: string;
  from: Role;
  to: Role;
  reason: string;
  epoch: number;
  generation: number;
}

export interface BatonSupport {
  /** navigator.locks exists and has not refused this context (SecurityError) or failed to answer. */
  webLocks: boolean;
  /** BroadcastChannel exists and its constructor did not throw. */
  broadcastChannel: boolean;
  /** indexedDB exists and has not refused to open (SecurityError). */
  indexedDB: boolean;
  /** localStorage exists and reading it does not throw. */
  localStorage: boolean;
  /** The authority chosen: at creation, or the one 'auto' fell back to when that one refused. */
  authority: Authority;
  /**
   * Why that authority, in words (e.g. 'navigator.locks is available', or after a fallback
   * 'navigator.locks refused (SecurityError): an IndexedDB lease').
   */
  reason: string;
  /** The authority in use now. */
  mode: Authority;
  degraded: boolean;
  degradedReason: DegradedReason | null;
  /** The WebAssembly core's load: until 'ready', no tab of this Baton can lead. */
  core: CoreStatus;
}

/**
 * Why a Baton is degraded. An authority that refused this context, for the Baton's lifetime:
 * `'web-locks-refused:SecurityError'`, `'web-locks-timeout'` (navigator.locks did not answer),
 * `'web-locks-refused:<error name>'` (three queued lock requests in a row failed),
 * `'lease-refused:SecurityError'` (indexedDB refused to open). Of an explicit
 * `authority: 'web-locks'`, `'web-locks-timeout'` and `'web-locks-refused:<error name>'` other
 * than a SecurityError last only until a lock is granted after all. Otherwise: no IndexedDB
 * (`'indexeddb-unavailable'`), a storage operation that did not answer in time
 * (`'storage-timeout'`) or failed (`'storage-failed:<DOMException name>'`), a store that
 * answered below what it had committed (`'storage-inconsistent'`), a lease that fell back to
 * broadcast-only (`'lease-fallback'`), or the current term's epoch may repeat: not committed
 * (`'epoch-not-durable'`), or as the core judged it (`'not-durable'`, `'storage-timeout'`,
 * `'store-regressed'`, `'behind-claim'`, `'storage-failed'`). Storage reasons clear at the
 * next operation that commits.
 */
export type DegradedReason = string;

/** This tab's participant in the elections of one namespace. */
export interface Baton {
  readonly id: string;
  readonly namespace: string;
  readonly protocolVersion: number;
  /** Joins the election for `resource` (at most 48 bytes of UTF-8; at most 8 resources per Baton). */
  lead(resource: string, options?: LeadOptions): LeadHandle;
  /** The other tabs this tab has heard from. */
  presence(): PresenceEntry[];
  metrics(): BatonMetrics;
  log(): Transition[];
  support(): BatonSupport;
  /**
   * Asks the leader of `resource` (whichever tab serves it: see {@link LeadOptions.serve}).
   * Waits, queued and re-sent, while no leader exists; rejects with a {@link NoLeaderError}
   * when none acknowledged it within `timeoutMs`, a {@link RequestError} ('TIMEOUT',
   * 'REFUSED', 'TOO_LARGE', 'TOO_MANY', 'DISPOSED') or a {@link RemoteError} (thrown by
   * `serve`). This tab need not lead or join the resource. Never throws: a wrong resource or
   * option rejects with a TypeError naming it.
   */
  request<T = unknown>(resource: string, message: unknown, options?: RequestOptions & { full?: false }): Promise<T>;
  request<T = unknown>(resource: string, message: unknown, options: RequestOptions & { full: true }): Promise<RequestAnswer<T>>;
  /** The latest state published by the leader of `resource` ({@link LeadHandle.setState}). */
  leaderState<T = unknown>(resource: string): LeaderStateView<T>;
  /** Steps down everywhere, releases every lock, says goodbye. Idempotent. */
  dispose(): void;
}

export interface RequestOptions {
  /** How long to wait for the answer, in ms, queued while no leader exists. Default 10000. */
  timeoutMs?: number;
  /** Aborting rejects the request with the signal's reason. */
  signal?: AbortSignal;
  /**
   * The request id `serve` sees as `from.requestId` (at most 128 bytes): pass an id of your
   * own (an offline operation's id, say) to dedupe across reloads. Within a term, one id is
   * served once whichever tabs send it, and each of them gets the answer. Default: unique per tab.
   */
  id?: string;
  /** Resolve with {@link RequestAnswer} (the value and the term that served it). */
  full?: boolean;
}

/** An answer with the term that served it. */
export interface RequestAnswer<T = unknown> {
  value: T;
  resource: string;
  /** The serving leader's tab id and epoch. */
  leader: string;
  epoch: number;
  requestId: string;
}

export type RequestErrorCode = 'NO_LEADER' | 'TIMEOUT' | 'REFUSED' | 'TOO_LARGE' | 'TOO_MANY' | 'DISPOSED';

/** A request that did not get its answer; `code` says why. */
export class RequestError extends Error {
  readonly code: RequestErrorCode;
  readonly resource: string;
  readonly requestId?: string;
  /** Set when a leader answered with the error ('REFUSED', 'TOO_LARGE'). */
  readonly leader?: string;
  readonly epoch?: number;
}

/** No leader acknowledged the request within its `timeoutMs`. */
export class NoLeaderError extends RequestError {
  readonly code: 'NO_LEADER';
}

/** What the leader's `serve` threw: its `name`, `message` and (string) `code`, and the term. */
export class RemoteError extends Error {
  readonly code?: string;
  readonly resource: string;
  readonly leader: string;
  readonly epoch: number;
  readonly requestId: string;
}

/** The leader's state as this tab knows it. */
export interface LeaderStateSnapshot<T = unknown> {
  readonly value: T;
  /** The term (epoch and leader tab id) that published `value`. */
  readonly epoch: number;
  readonly leader: string;
  /**
   * That term ended, or a newer one began and has not published yet. After a crash (no
   * goodbye): in a tab that takes part in the resource's election, as soon as its election
   * confirms the newer term; in a tab that only watches, once that term's leader announces
   * itself (when it serves requests or publishes a state).
   */
  readonly stale: boolean;
}

export interface LeaderStateView<T = unknown> {
  readonly resource: string;
  /** The latest snapshot; null until one is known (a new tab asks the leader at once). */
  get(): LeaderStateSnapshot<T> | null;
  /** Called on every change; returns the unsubscribe. */
  onChange(fn: (snapshot: LeaderStateSnapshot<T>) => void): () => void;
  close(): void;
}

export function createBaton(options: BatonOptions): Baton;

/** Makes `createBaton({ testHooks: true })` available (tests, demos). Idempotent. */
export function enableTestHooks(): void;

/** One resource as the core sees it after its last step ({@link BatonTestHooks.leadershipState}). */
export interface LeadershipSnapshot {
  role: Role;
  state: LeadershipState;
  reason: string;
  epoch: number;
  leader: string;
  leaderEpoch: number;
  leaderSince: number;
  /** The core's judgement of this tab's own term: 'none', or why fenced effects are refused. */
  degraded: string;
  /** While leading: not a leader from this monotonic time on (Infinity: no bound, as under Web Locks). */
  validUntil: number;
  /** The same bound in wall-clock ms. */
  validUntilWall: number;
  token: Token | null;
}

/** On `globalThis.__baton` with `testHooks: true`. */
export interface BatonTestHooks {
  readonly id: string;
  presenceSnapshot(): PresenceEntry[];
  /** null until the core is loaded and once the Baton is disposed; a resource this tab has not joined reads as a follower that knows no leader. */
  leadershipState(resource: string): LeadershipSnapshot | null;
  forceElection(resource: string): void;
  /** Lifecycle `frozen` and the timer stopped; `{event: false}` stops the timer only. */
  simulateFreeze(options?: { event?: boolean }): void;
  simulateRestore(): void;
}

declare global {
  // eslint-disable-next-line no-var
  var __baton: BatonTestHooks | undefined;
}

/**
 * Rejection of a guarded effect under an epoch that was not stored durably, so may repeat.
 * Catch it with `instanceof EpochNotDurableError` or by `code`.
 */
export class EpochNotDurableError extends Error {
  private constructor();
  readonly name: 'EpochNotDurableError';
  readonly code: 'EPOCH_NOT_DURABLE';
  readonly resource: string;
  readonly epoch: number;
  /** As in `metrics().degradedReason`. */
  readonly reason: string;
}

/**
 * Rejection of a guarded effect from a stale (or no) term: `handle.fenced()` rejects with
 * it, `Fence.check()` throws it. Catch it with `instanceof StaleOwnerError` or by `code`.
 */
export class StaleOwnerError extends Error {
  private constructor();
  readonly name: 'StaleOwnerError';
  readonly code: 'STALE_OWNER';
  readonly resource: string;
  /** The stale term's epoch; null when this tab held no term. */
  readonly epoch: number | null;
  readonly highest: number;
}

/**
 * The abort reason of a leader's `signal` when its term ends. Where the platform has
 * `DOMException` (browsers, workers, Node) it is one, named 'AbortError' (so
 * `signal.reason instanceof DOMException` holds); its `code` is 'DEPOSED' rather than
 * DOMException's legacy number.
 */
export class DeposedError extends Error {
  private constructor();
  readonly name: 'AbortError';
  readonly code: 'DEPOSED';
  readonly resource: string;
  /** The term that ended. */
  readonly epoch: number;
  /** Why it ended: the core's reason ('lock-lost', 'frozen', 'abdicate', ...), or 'released' / 'dispose'. */
  readonly reason: string;
}

/**
 * For the receiver of guarded effects (a worker, a store): admits an effect only from the
 * newest term seen per resource (equal epochs are admitted: a term may act many times).
 * It compares in the WebAssembly core: `await load()` (or {@link ready}) before the first
 * `admit`, `check` or `highest`, which throw until the core is loaded.
 */
export class Fence {
  constructor();
  admit(token: { resource: string; epoch: number }): boolean;
  /** Throws a {@link StaleOwnerError} when the token is stale. */
  check(token: { resource: string; epoch: number }): void;
  highest(resource: string): number;
  /** Frees its memory now (otherwise when garbage-collected); using it afterwards throws an error with `code` 'DISPOSED'. Idempotent. */
  dispose(): void;
}

// ------------------------------------------------------------------- awaforge

export interface CreateOpts {
  /**
   * Required. The exact Web Lock name, as in awaforge; Baton's frames use the channel
   * `baton/<channel>/v1`. At most 128 bytes of UTF-8 (Baton's namespace).
   */
  channel: string;
  /** Default: a UUID v4. */
  id?: string;
  /** Default 1000. */
  heartbeatMs?: number;
  /** Leader silence before takeover; longer than `heartbeatMs`. Default 3000, or 3 × `heartbeatMs` when longer. */
  takeoverMs?: number;
  /** Tests: force the BroadcastChannel (broadcast-only) mode. */
  _forceFallback?: boolean;
  /** Not in awaforge: the environment (tests). */
  env?: BatonEnv;
}

export interface Election {
  readonly id: string;
  /** Called on each term this instance begins; registered while already leading, `fn` is also called at once. */
  onLeader(fn: () => void): () => void;
  /** Called when a term of this instance ends (including `dispose()` while leading). */
  onFollower(fn: () => void): () => void;
  isLeader(): boolean;
  /** Null during the first election. */
  leader(): { id: string; since: number; isMe: boolean } | null;
  /** Idempotent. */
  dispose(): void;
}

export interface SupportInfo {
  webLocks: boolean;
  broadcastChannel: boolean;
}

export const leaderElection: {
  create(opts: CreateOpts): Election;
  support(): SupportInfo;
};

// ------------------------------------------------------------------- requestLeadership

export interface RequestLeadershipOptions {
  heartbeatMs?: number;
  suspectMs?: number;
  authority?: 'auto' | Authority;
  env?: BatonEnv;
  /** Called when leadership ends other than by `relinquish()`. */
  onFollower?(name: string): void;
}

/**
 * `onLeader(name)` runs each time this tab becomes leader; the returned function gives
 * leadership up for good. The Web Lock is `name` itself, as in the article.
 */
export function requestLeadership(
  name: string,
  onLeader: (name: string) => void,
  options?: RequestLeadershipOptions,
): () => void;

// ------------------------------------------------------------------- broadcast-channel

export interface LeaderElectionOptions {
  /** Leader silence before takeover. Default 3000, or 3 × `heartbeatMs` when longer. */
  fallbackInterval?: number;
  /** Accepted for compatibility; unused. */
  responseTime?: number;
  /** Shorter than `fallbackInterval`. Default 1000, or a third of `fallbackInterval` when shorter. */
  heartbeatMs?: number;
  authority?: 'auto' | Authority;
  env?: BatonEnv;
  id?: string;
}

/** What `onduplicate` receives. */
export interface DuplicateLeaderEvent {
  readonly type: 'duplicate';
  /** Why: the reason this tab's term ended ('lock-lost', 'newer-epoch', 'conflict', 'lease-lost', 'stalled'), or 'told' when the other leader said so. */
  readonly reason: string;
  /** This tab's term that overlapped with another leader's. */
  readonly epoch: number;
  /** The other leader's tab id, when known. */
  readonly other: string | null;
}

export interface LeaderElector<C = { readonly name: string }> {
  readonly broadcastChannel: C;
  readonly isLeader: boolean;
  readonly isDead: boolean;
  readonly token: string;
  /** True if this or another tab leads now. */
  hasLeader(): Promise<boolean>;
  applyOnce(isFromFallbackInterval?: boolean): Promise<boolean>;
  /**
   * Resolves when this tab becomes leader (starts the lazy election); never settles once the
   * elector died. Rejects with the load error (`code` 'CORE_LOAD_FAILED') when the core
   * cannot load, since this tab can then never lead.
   */
  awaitLeadership(): Promise<void>;
  /** Idempotent. */
  die(): Promise<void>;
  /**
   * Called in both leaders when two are seen, once per term on each side: in the one whose
   * term ends because another leader showed up, and (told over a side channel) in the other.
   */
  onduplicate: ((this: C, event: DuplicateLeaderEvent) => unknown) | null;
}

/** `channel`: a BroadcastChannel (broadcast-channel's or the native one; only its name is used) or a name. */
export function createLeaderElection<C extends { readonly name: string }>(
  channel: C,
  options?: LeaderElectionOptions,
): LeaderElector<C>;
export function createLeaderElection(channel: string, options?: LeaderElectionOptions): LeaderElector<string>;

/** @internal Leak checks for this package's tests. */
export const __internal: {
  liveCores(): number;
  coreSessions(): number;
  heapBytes(): number;
  metricsOf(api: object): BatonMetrics | undefined;
};

// ------------------------------------------------------------------- relay

/**
 * One event of a shared stream, as the source hands it over. `id` orders the events: by
 * default a non-negative integer (a number or a string of digits, as SSE's `lastEventId`);
 * with {@link RelayOptions.compare}, any string or number.
 */
export interface RelaySourceEvent {
  id: string | number;
  data?: unknown;
  type?: string;
}

/** How a source reports to the relay (in the leader tab only). */
export interface RelayEmit {
  /** One event; events must come in id order. */
  (event: RelaySourceEvent): void;
  /** The source is alive without an event (a server heartbeat, the connection opened). */
  heartbeat(): void;
  /** The source is gone; the relay reopens it from the current cursor after a backoff. */
  fail(error?: unknown): void;
}

/**
 * Opens the stream after `afterId` (null: from the head) and reports through `emit` until
 * `signal` aborts (the term ended). May return a function that closes it.
 * See {@link eventSourceSource} and {@link webSocketSource}.
 */
export type RelaySource = (afterId: string | number | null, emit: RelayEmit, signal: AbortSignal) => void | (() => void);

/** One event delivered to the app, exactly once per tab and in order. */
export interface RelayEvent {
  /** A number by default (ids are compared as integers); as the source gave it with `compare`. */
  id: string | number;
  data: unknown;
  type: string | undefined;
  /** The term of the leader that relayed it. */
  epoch: number;
  /** The id of the tab that relayed it. */
  from: string;
}

export interface RelayOptions {
  /** Required. The resource whose leader holds the stream (at most 48 bytes). The relay leads it: do not `baton.lead` it yourself. */
  resource: string;
  /** Required. Opens the stream in the leader tab. */
  source: RelaySource;
  /** Required. Called in every tab, the leader included, once per event, in id order. */
  onEvent(event: RelayEvent): void;
  /** Called in every tab after `logout()` or a session change in any tab: the stream was closed and the state cleared. */
  onReset?(info: { reason: 'logout' | 'session'; session: string | null }): void;
  /**
   * A leader whose source gave no event and no heartbeat for this long (by its own timer)
   * abdicates, so that another tab tries. Must exceed the source's heartbeat interval.
   * Default 30000 ms.
   */
  silenceMs?: number;
  /** Who may hold the stream (as {@link LeadOptions.eligible}). */
  eligible?: Eligibility;
  /** A visible tab takes the stream over from a hidden leader. Default false. */
  preferVisible?: boolean;
  /**
   * The session (user) the stream belongs to; messages and cursors of another session are
   * ignored. null: logged out (nothing runs until `login()`). Default ''.
   */
  session?: string | null;
  /** Orders two ids (negative, zero, positive); default: ids are non-negative integers. */
  compare?(a: string | number, b: string | number): number;
  /**
   * An event whose data is larger than this (estimated: strings by length, binary data by
   * `byteLength`, 8 bytes per number, object, array entry or key) is dropped and counted.
   * Default 262144.
   */
  maxDataBytes?: number;
  /**
   * Each tab holds at most this many bytes (estimated as for `maxDataBytes`) of messages
   * waiting for the election core to confirm their term or for a gap to be repaired, and
   * the leader keeps at most this many bytes of delivered events to replay to a tab that
   * missed some. At least `maxDataBytes`. Default 4194304 (4 MiB).
   */
  maxBufferBytes?: number;
}

export interface RelayStats {
  /** Events handed to `onEvent` in this tab. */
  delivered: number;
  /** Events not newer than the last delivered one (hand-over overlap, reconnects), dropped. */
  duplicatesDropped: number;
  /** Ids skipped between two delivered events (integer ids only); 0 when nothing was missed. */
  gapsSeen: number;
  /** Times an event showed that events before it were missing here (its `prev` is past the last delivered id). */
  gapsDetected: number;
  /** Gaps filled by a replay from the leader. */
  gapsRepaired: number;
  /** Gaps that could not be filled within 3 s: the tab went on past them (see `gapsSeen`). */
  gapsSkipped: number;
  /** Events delivered here from a leader's replay. */
  replayed: number;
  /** Replays this tab asked the leader for. */
  replayRequests: number;
  /** Replays this tab sent as leader (from its buffer, or read again from its source). */
  replaysServed: number;
  /** Times this tab, as leader, reopened its source to replay events older than its buffer. */
  refetches: number;
  /** Events this tab relayed as leader. */
  relayed: number;
  /** Events of an older term (a thawed leader that was replaced), or from a tab that did not lead their term, dropped. */
  staleDropped: number;
  /** Events of an older term delivered anyway because they came exactly next. */
  staleFilled: number;
  /** Two events of one term that follow the same event: someone posted under the leader's id; the tab stepped back to the fork. */
  forks: number;
  /** Messages posted under this tab's own id by another page. */
  impersonations: number;
  droppedMalformed: number;
  droppedOversized: number;
  droppedForeignVersion: number;
  droppedForeignSession: number;
  /** Messages from a tab that the election core does not confirm as the leader of their term (forged), dropped. */
  droppedUnconfirmed: number;
  /** Held messages dropped because `maxBufferBytes` was reached. */
  droppedBufferFull: number;
  /** Events from the source without a usable id, or whose data cannot be cloned (only the leader could have delivered them). */
  sourceMalformed: number;
  /** Events the source emitted after it was closed. */
  lateSourceEvents: number;
  sourceOpens: number;
  sourceErrors: number;
  /** Times this tab abdicated because its source was silent for `silenceMs`. */
  silenceAbdications: number;
  postFailures: number;
  storageErrors: number;
  listenerErrors: number;
  /** Logouts and session changes applied in this tab. */
  resets: number;
  /** 'leader': this tab holds the stream; 'stopped': logged out; 'closed': `close()` was called. */
  state: 'leader' | 'follower' | 'stopped' | 'closed';
  session: string | null;
  /** The last id delivered in this tab, null before the first. */
  lastId: string | number | null;
  /** The newest term the election core confirmed. */
  epoch: number;
  /** The tab that relays now, as far as this tab knows, and where its stream started (null: from the head, or not heard). */
  leader: { id: string; epoch: number; after: string | number | null } | null;
  /** The lead handle's state ('released' while logged out). */
  leadership: LeadershipState;
  /** Messages held (term not confirmed yet, or behind a gap). */
  pending: number;
  /** Their estimated size; at most `maxBufferBytes`. */
  pendingBytes: number;
  /** Estimated size of the delivered events kept for replays; at most `maxBufferBytes`. */
  replayBufferBytes: number;
  /** The streams this tab opened as leader (the last 32): resumed after `after`. */
  opens: Array<{ after: string | number | null; epoch: number; at: number }>;
}

/** One stream per browser profile, shared by every tab of a Baton's namespace. */
export interface Relay {
  readonly resource: string;
  /** The lead handle of `resource` (null while logged out or closed); it changes on login. */
  readonly handle: LeadHandle | null;
  /** The id to resume after: the last delivered in this tab, else the shared cursor (written by leaders only), else null. */
  cursor(): string | number | null;
  stats(): RelayStats;
  /** In every tab: closes the stream, clears the cursor and state, calls `onReset`; nothing runs until `login()`. */
  logout(): void;
  /** In every tab: starts (again) for `session`; a different session than the current one resets first. */
  login(session: string): void;
  /** This tab only: stops competing and listening; the shared cursor is kept. Idempotent. */
  close(): void;
}

/**
 * Shares one stream (SSE, WebSocket, ...) among the tabs of one protocol version: the leader
 * of `options.resource` opens the source after the last id it delivered (else the shared
 * cursor) and relays each event with its id, the id before it and its epoch on
 * `baton/<namespace>/v<protocolVersion>/relay/<resource>`. Every tab delivers each event
 * once, in order, and only from the tab the election core confirms as leader of the event's
 * term; a tab that missed events gets them replayed by the leader.
 */
export function createRelay(baton: Baton, options: RelayOptions): Relay;

export interface EventSourceSourceOptions {
  /** Event types relayed. Default ['message']. */
  types?: string[];
  /** Event types that only prove the stream alive. Default none. */
  heartbeatTypes?: string[];
  /** The relayed data of one event. Default: `event.data` (a string). */
  parse?(event: MessageEvent): unknown;
  withCredentials?: boolean;
  /** The constructor; default `globalThis.EventSource`. */
  EventSource?: new (url: string, init?: { withCredentials?: boolean }) => EventSource;
}

/**
 * A Server-Sent Events source. `urlForAfter`: a URL (`after=<id>` is appended when resuming)
 * or a function of the id to resume after. The browser's own reconnection (`Last-Event-ID`)
 * is kept; a stream it gave up on is reported as failed.
 */
export function eventSourceSource(
  urlForAfter: string | ((afterId: string | number | null) => string),
  options?: EventSourceSourceOptions,
): RelaySource;

export interface WebSocketSourceOptions {
  /** One message -> an event, a heartbeat, or null to ignore it. Default: JSON `{id, data, type}`, `{type: 'heartbeat'}`. */
  parse?(data: unknown): RelaySourceEvent | { heartbeat: true } | null;
  /** Called on open, for servers that take the resume point in a message. */
  subscribe?(socket: WebSocket, afterId: string | number | null): void;
  protocols?: string | string[];
  /** The constructor; default `globalThis.WebSocket`. */
  WebSocket?: new (url: string, protocols?: string | string[]) => WebSocket;
}

/** A WebSocket source; `urlForAfter` as for {@link eventSourceSource}. */
export function webSocketSource(
  urlForAfter: string | ((afterId: string | number | null) => string),
  options?: WebSocketSourceOptions,
): RelaySource;
