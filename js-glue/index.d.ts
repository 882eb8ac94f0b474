/**
 * tab-baton: leader election for browser tabs, per named resource, with fencing tokens,
 * instant hand-over and frozen-leader recovery. The election logic is a C++ core compiled
 * to WebAssembly; the module loads it with top-level await, so every function below is
 * synchronous once `import` has completed.
 *
 * Four API styles, all first-class:
 * - {@link createBaton}: the resource-scoped orchestrator.
 * - {@link leaderElection}: compatible with awaforge's `leaderElection` module.
 * - {@link requestLeadership}: the Web Locks article's `requestLeadership(name, onLeader)`.
 * - {@link createLeaderElection}: compatible with broadcast-channel's `LeaderElector`.
 */

/** Resolves once the WebAssembly core is loaded (already done when the module has loaded). Idempotent. */
export function load(): Promise<void>;

// ------------------------------------------------------------------- environment

/** Who decides which tab leads. */
export type Authority = 'web-locks' | 'lease' | 'broadcast';

/** The subset of `navigator.locks` Baton uses. */
export interface LockManagerLike {
  request(
    name: string,
    options: { mode?: 'exclusive' | 'shared'; ifAvailable?: boolean; steal?: boolean; signal?: AbortSignal },
    callback: (lock: any) => any,
  ): Promise<any>;
  query?(): Promise<{ held?: Array<{ name?: string }>; pending?: Array<{ name?: string }> }>;
}

/** The subset of a `BroadcastChannel` Baton uses. */
export interface BroadcastChannelLike {
  postMessage(message: any): void;
  close(): void;
  addEventListener(type: 'message', listener: (event: any) => void): void;
  removeEventListener(type: 'message', listener: (event: any) => void): void;
}

/** The subset of `localStorage` Baton uses. */
export interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

/** An event target (document, window, worker scope). */
export interface EventTargetLike {
  addEventListener(type: string, listener: (event: any) => void): void;
  removeEventListener(type: string, listener: (event: any) => void): void;
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
  indexedDB?: { open(name: string, version?: number): any } | null;
  /** For `visibilitychange`, `freeze`, `resume`. */
  document?: (EventTargetLike & { visibilityState?: string }) | null;
  /** The global scope's listeners, for `pagehide`, `pageshow`, `online`, `offline`. */
  addEventListener?(type: string, listener: (event: any) => void): void;
  removeEventListener?(type: string, listener: (event: any) => void): void;
  /** Wall-clock milliseconds (compared across tabs). Default `Date.now()`. */
  now?(): number;
  /** When this page started (ranking's age bonus). Default `performance.timeOrigin`, or now. */
  startMs?: number;
  setTimeout?(callback: () => void, ms: number): any;
  clearTimeout?(id: any): void;
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
  /** IndexedDB lease duration (renewed at a third). Default 5000 ms. */
  leaseMs?: number;
  /** Default 'auto': Web Locks, else an IndexedDB lease, else broadcast only. */
  authority?: 'auto' | Authority;
  /** The environment; default `globalThis`. */
  env?: BatonEnv;
  /** Install {@link BatonTestHooks} on `globalThis.__baton`. Default false. */
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
  onChange(fn: (change: LeadershipChange) => void): () => void;
  /**
   * Runs `fn` only while this tab leads with a term the fence admits; otherwise rejects
   * with a {@link StaleOwnerError} (`code` 'STALE_OWNER') without running it.
   */
  fenced<T>(fn: (token: Token, signal: AbortSignal) => T | PromiseLike<T>): Promise<T>;
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
  droppedForgedEpoch: number;
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
  epochAllocations: number;
  epochsNotDurable: number;
  storageErrors: number;
  leaseTransactions: number;
  leaseFailures: number;
  timerFires: number;
  listenerErrors: number;
  restores: number;
}

export interface BatonMetrics extends CoreMetrics {
  /** The authority in use (a failing lease falls back to 'broadcast'). */
  mode: Authority;
  /** Epochs not durable or storage failing. */
  degraded: boolean;
  /** Bumped on each bfcache restore. */
  generation: number;
  glue: GlueCounters;
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
  webLocks: boolean;
  broadcastChannel: boolean;
  indexedDB: boolean;
  localStorage: boolean;
  /** The authority chosen at creation. */
  authority: Authority;
  /** The authority in use now. */
  mode: Authority;
  degraded: boolean;
}

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
  /** Steps down everywhere, releases every lock, says goodbye. Idempotent. */
  dispose(): void;
}

export function createBaton(options: BatonOptions): Baton;

/** On `globalThis.__baton` with `testHooks: true`. */
export interface BatonTestHooks {
  readonly id: string;
  presenceSnapshot(): PresenceEntry[];
  leadershipState(resource: string):
    | {
        role: Role;
        state: LeadershipState;
        reason: string;
        epoch: number;
        leader: string;
        leaderEpoch: number;
        leaderSince: number;
        eligible: boolean;
        token: Token | null;
      }
    | null;
  forceElection(resource: string): void;
  /** Lifecycle `frozen` and the timer stopped; `{event: false}` stops the timer only. */
  simulateFreeze(options?: { event?: boolean }): void;
  simulateRestore(): void;
}

declare global {
  // eslint-disable-next-line no-var
  var __baton: BatonTestHooks | undefined;
}

/** Rejection of a guarded effect from a stale (or no) term. */
export interface StaleOwnerError extends Error {
  code: 'STALE_OWNER';
  resource: string;
  /** The stale term's epoch; null when this tab held no term. */
  epoch: number | null;
  highest: number;
}

/** The abort reason of a leader's signal. */
export interface DeposedError extends Error {
  code: 'DEPOSED';
  resource: string;
  epoch: number;
  reason: string;
}

/**
 * For the receiver of guarded effects: admits an effect only from the newest term seen
 * per resource (equal epochs are admitted: a term may act many times).
 */
export class Fence {
  constructor();
  admit(token: { resource: string; epoch: number }): boolean;
  /** Throws a {@link StaleOwnerError} when the token is stale. */
  check(token: { resource: string; epoch: number }): void;
  highest(resource: string): number;
  /** Frees its memory now (otherwise when garbage-collected). */
  dispose(): void;
}

// ------------------------------------------------------------------- awaforge

export interface CreateOpts {
  /** Required. The election's name (lock and channel). */
  channel: string;
  /** Default: a UUID v4. */
  id?: string;
  /** Default 1000. */
  heartbeatMs?: number;
  /** Leader silence before takeover. Default 3000. */
  takeoverMs?: number;
  /** Tests: force the BroadcastChannel (broadcast-only) mode. */
  _forceFallback?: boolean;
  /** Not in awaforge: the environment (tests). */
  env?: BatonEnv;
}

export interface Election {
  readonly id: string;
  onLeader(fn: () => void): () => void;
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

/** `onLeader(name)` runs each time this tab becomes leader; the returned function gives leadership up for good. */
export function requestLeadership(
  name: string,
  onLeader: (name: string) => void,
  options?: RequestLeadershipOptions,
): () => void;

// ------------------------------------------------------------------- broadcast-channel

export interface LeaderElectionOptions {
  /** Leader silence before takeover. Default 3000. */
  fallbackInterval?: number;
  /** Accepted for compatibility; unused. */
  responseTime?: number;
  heartbeatMs?: number;
  authority?: 'auto' | Authority;
  env?: BatonEnv;
  id?: string;
}

export interface LeaderElector<C = { readonly name: string }> {
  readonly broadcastChannel: C;
  readonly isLeader: boolean;
  readonly isDead: boolean;
  readonly token: string;
  /** True if this or another tab leads now. */
  hasLeader(): Promise<boolean>;
  applyOnce(isFromFallbackInterval?: boolean): Promise<boolean>;
  /** Resolves when this tab becomes leader (starts the lazy election). */
  awaitLeadership(): Promise<void>;
  /** Idempotent. */
  die(): Promise<void>;
  onduplicate: ((this: C, ev?: any) => any) | null;
}

/** `channel`: a BroadcastChannel (broadcast-channel's or the native one; only its name is used) or a name. */
export function createLeaderElection<C extends { readonly name: string } | string>(
  channel: C,
  options?: LeaderElectionOptions,
): LeaderElector<C>;

/** @internal Leak checks for this package's tests. */
export const __internal: {
  emvalHandles(): number;
  liveCores(): number;
};
