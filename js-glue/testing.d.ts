/**
 * `tab-baton/testing`: in-memory Web Locks, BroadcastChannel, localStorage and
 * IndexedDB, so that many "tabs" can run in one Node process.
 *
 * The types are structural copies of the DOM ones, so they work with either
 * `lib.dom` or `@types/node` (for `AbortSignal`, `EventTarget`, `MessageEvent`);
 * with `lib.dom`, the fakes are assignable to `LockManager`, `BroadcastChannel`
 * and `Storage`.
 */

// ---------------------------------------------------------------- Web Locks

export type LockMode = 'exclusive' | 'shared';

export interface LockOptions {
  /** Default 'exclusive'. */
  mode?: LockMode;
  /** Grant only if possible right now; otherwise the callback gets `null`. */
  ifAvailable?: boolean;
  /** Take the lock from its holders (their requests reject with "AbortError"). Exclusive only. */
  steal?: boolean;
  /** Aborting it while the request is queued withdraws the request. */
  signal?: AbortSignal;
}

export interface Lock {
  readonly name: string;
  readonly mode: LockMode;
}

export interface LockInfo {
  name: string;
  mode: LockMode;
  clientId: string;
}

export interface LockManagerSnapshot {
  held: LockInfo[];
  pending: LockInfo[];
}

export type LockGrantedCallback<T> = (lock: Lock | null) => T;

/** What `navigator.locks` is for one tab. */
export interface FakeLockManager {
  /**
   * Requests the lock `name`, held until the promise returned by `callback`
   * settles; resolves or rejects like that promise. Callbacks run in a
   * microtask, first come first served per name.
   */
  request<T>(name: string, callback: LockGrantedCallback<T>): Promise<Awaited<T>>;
  request<T>(name: string, options: LockOptions, callback: LockGrantedCallback<T>): Promise<Awaited<T>>;
  /** Held locks and pending requests of every tab of the broker. */
  query(): Promise<LockManagerSnapshot>;
}

/** The lock state of one origin, shared by the tabs. */
export interface LockBroker {
  /** A `navigator.locks` for one tab; `clientId` defaults to a random UUID. */
  client(clientId?: string): FakeLockManager;
  /**
   * Drops every lock and queued request of the tab without settling their
   * promises and grants the next waiters, as when a renderer crashes. The
   * tab's existing clients stay dead: their later requests never settle.
   */
  crash(clientId: string): void;
  query(): Promise<LockManagerSnapshot>;
}

export function createLockManager(): LockBroker;

// --------------------------------------------------------- BroadcastChannel

export interface FakeBroadcastChannel extends EventTarget {
  readonly name: string;
  /** Sends a structured clone to every other open channel of the same name; throws "InvalidStateError" after `close()`. */
  postMessage(message: unknown): void;
  /** Stops sending and receiving; pending messages are dropped. Idempotent. */
  close(): void;
  /** Receives a `MessageEvent` whose `data` is the clone. */
  onmessage: ((this: FakeBroadcastChannel, event: MessageEvent) => unknown) | null;
  /** Never fires in the fake. */
  onmessageerror: ((this: FakeBroadcastChannel, event: MessageEvent) => unknown) | null;
}

export interface FakeBroadcastChannelConstructor {
  new (name: string): FakeBroadcastChannel;
  readonly prototype: FakeBroadcastChannel;
}

export interface ChannelStats {
  /** Messages accepted by `postMessage`. */
  posted: number;
  /** `message` events dispatched (one per receiver). */
  delivered: number;
  /** Messages lost to `disconnect` or `close` before delivery. */
  dropped: number;
}

export interface ChannelHubOptions {
  /** Runs one delivery later. Default: `setTimeout(task, 0)`. */
  schedule?: (task: () => void) => void;
}

/** The channels of one origin. */
export interface ChannelHub {
  /** A web `BroadcastChannel` that reaches the other channels of this hub only. */
  readonly BroadcastChannel: FakeBroadcastChannelConstructor;
  /** Holds the messages addressed to `channel` until `resume`. */
  pause(channel: FakeBroadcastChannel): void;
  /** Delivers the held messages in order and lets later ones through. */
  resume(channel: FakeBroadcastChannel): void;
  /** Cuts `channel` off for good (a crashed tab): it receives nothing, its posts go nowhere, silently. */
  disconnect(channel: FakeBroadcastChannel): void;
  /** A copy of the traffic counters. */
  stats(): ChannelStats;
}

export function createChannelHub(options?: ChannelHubOptions): ChannelHub;

// ------------------------------------------------------------- localStorage

export type StorageFailure = 'SecurityError' | 'QuotaExceededError';

/** A `Storage` kept in memory (no named properties, no `storage` events, no quota). */
export interface FakeStorage {
  readonly length: number;
  key(index: number): string | null;
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
  clear(): void;
  /**
   * Test hook: `'SecurityError'` (or `true`) makes every call throw, as when
   * site data is blocked; `'QuotaExceededError'` makes `setItem` throw, as when
   * storage is full; `false` ends the failure. Data is kept.
   */
  fail(failure: boolean | StorageFailure): void;
}

export function createStorage(): FakeStorage;

// ---------------------------------------------------------------- IndexedDB

/**
 * The part of `IDBFactory` tab-baton uses: `open(name, version)` with
 * `onupgradeneeded`, object stores with out-of-line keys, `get`/`put` in
 * transactions that run one at a time. No indexes, cursors, key ranges or quotas.
 */
export interface FakeIDBFactory {
  open(name: string, version?: number): FakeIDBOpenRequest;
}

export interface FakeIDBRequest<T> {
  readonly result: T;
  readonly error: DOMException | null;
  onsuccess: ((event: { target: FakeIDBRequest<T> }) => void) | null;
  /**
   * A failed request (an `add` whose key exists: `ConstraintError`). The transaction then
   * aborts, unless the handler calls `preventDefault()` and the transaction was not told
   * to `commit()`.
   */
  onerror: ((event: { target: FakeIDBRequest<T>; preventDefault(): void }) => void) | null;
}

/** A key: a number, a string, or an array of keys (compared by value, as in IndexedDB). */
export type FakeIDBKey = number | string | FakeIDBKey[];

export interface FakeIDBOpenRequest extends FakeIDBRequest<FakeIDBDatabase> {
  onupgradeneeded: ((event: { target: FakeIDBOpenRequest; oldVersion: number; newVersion: number }) => void) | null;
  onblocked: (() => void) | null;
}

export interface FakeIDBDatabase {
  readonly objectStoreNames: { contains(name: string): boolean; readonly length: number };
  createObjectStore(name: string): object;
  transaction(names: string | string[], mode: 'readonly' | 'readwrite', options?: { durability?: 'default' | 'strict' | 'relaxed' }): FakeIDBTransaction;
  close(): void;
  onversionchange: (() => void) | null;
}

export interface FakeIDBTransaction {
  objectStore(name: string): FakeIDBObjectStore;
  abort(): void;
  /** No more requests: the transaction completes with its last one. */
  commit(): void;
  readonly durability: 'default' | 'strict' | 'relaxed';
  readonly error: DOMException | null;
  oncomplete: ((event: { target: FakeIDBTransaction }) => void) | null;
  onerror: ((event: { target: FakeIDBTransaction }) => void) | null;
  onabort: ((event: { target: FakeIDBTransaction }) => void) | null;
}

export interface FakeIDBObjectStore {
  get(key: FakeIDBKey): FakeIDBRequest<unknown>;
  put(value: unknown, key: FakeIDBKey): FakeIDBRequest<FakeIDBKey>;
  /** As `put`, but fails with a `ConstraintError` when the key exists. */
  add(value: unknown, key: FakeIDBKey): FakeIDBRequest<FakeIDBKey>;
}

export interface IndexedDBStats {
  /** `open()` calls. */
  opens: number;
  /** Transactions created. */
  transactions: number;
  /** Of those, read-only ones. */
  readonly: number;
  committed: number;
  /** Failed or aborted. */
  failed: number;
  /** `commit()` calls: transactions committed as soon as their last request was made. */
  explicitCommits: number;
  /** Transactions created with `{ durability: 'relaxed' }`. */
  relaxed: number;
}

/** One origin's IndexedDB, with test hooks. */
export interface FakeIndexedDB {
  /** Pass this as the `indexedDB` of the env option, or one `client()` per tab. */
  readonly indexedDB: FakeIDBFactory;
  /**
   * One tab's own factory over the same databases (each `FakeTab` of a `createBrowser()`
   * has one). `crash()` ends the tab's part as a renderer crash does: its transaction in
   * progress is rolled back, its queued ones are dropped, and nothing it asks for
   * afterwards is answered. `freeze()` holds the answers and `complete` events for the
   * tab's page until `thaw()`, as for a frozen page: a transaction told to `commit()`
   * completes meanwhile, any other one waits (and the store with it) unless the page
   * aborts it.
   */
  client(): { readonly indexedDB: FakeIDBFactory; crash(): void; freeze(): void; thaw(): void };
  /** Injects a failure until `fail(false)` (`true`: `'error'`); hung and blocked operations then resume. */
  fail(failure: boolean | IndexedDBFailure): void;
  /** Deletes every database, as clearing the site's data does. */
  clear(): void;
  /** A structured clone of the value under `key` in `store` of database `name`, or undefined. */
  peek(name: string, store: string, key: FakeIDBKey): unknown;
  stats(): IndexedDBStats;
}

/**
 * Failures `FakeIndexedDB.fail()` injects: every request fails (`'error'`), `open()` and
 * `transaction()` throw (`'throw'`), transactions abort (`'abort'`), `open()` fails with a
 * `VersionError` (`'version'`), nothing answers (`'hang'`), `open()` is blocked by an older
 * connection (`'blocked'`), commits drop their writes (`'lost-write'`), `get` answers the
 * value before the latest write (`'stale-read'`).
 */
export type IndexedDBFailure = 'error' | 'throw' | 'abort' | 'version' | 'hang' | 'blocked' | 'lost-write' | 'stale-read';

export function createIndexedDB(): FakeIndexedDB;

// ------------------------------------------------------------------ Browser

/**
 * One simulated tab. `locks`, `BroadcastChannel`, `localStorage` and
 * `indexedDB` have the shape of tab-baton's `env` option.
 */
export interface FakeTab {
  /** The tab's client id, as in `locks.query()`. */
  readonly id: string;
  readonly locks: FakeLockManager;
  /** A subclass of `hub.BroadcastChannel` whose channels die with the tab. */
  readonly BroadcastChannel: FakeBroadcastChannelConstructor;
  /** The origin's storage, shared by all tabs. */
  readonly localStorage: FakeStorage;
  /**
   * The origin's IndexedDB: this tab's view of the databases all tabs share; null when the
   * browser was made with `{indexedDB: false}`.
   */
  readonly indexedDB: FakeIDBFactory | null;
  /**
   * Kills the tab like a renderer crash: its locks and queued requests vanish
   * without settling, its channels are disconnected, its IndexedDB transaction in
   * progress is rolled back and its IndexedDB requests are never answered. Code
   * already running is not stopped. The id can then be reused for a new tab.
   */
  crash(): void;
  /**
   * Holds this tab's IndexedDB answers and `complete` events until `thawStorage()`, as
   * for a frozen page (`FakeIndexedDB.client()`); its channel messages are still delivered,
   * as in Chromium. No-op without IndexedDB.
   */
  freezeStorage(): void;
  thawStorage(): void;
}

/** One origin in one browser. */
export interface FakeBrowser {
  readonly locks: LockBroker;
  readonly BroadcastChannel: FakeBroadcastChannelConstructor;
  readonly hub: ChannelHub;
  readonly localStorage: FakeStorage;
  /** The origin's IndexedDB and its test hooks; null with `{indexedDB: false}`. */
  readonly indexedDB: FakeIndexedDB | null;
  /** Opens a tab; `id` must be unique among live tabs (default: a random UUID). */
  tab(id?: string): FakeTab;
}

export interface BrowserOptions extends ChannelHubOptions {
  /** Give the origin an in-memory IndexedDB (default true). Without it no epoch is durable: every term runs degraded. */
  indexedDB?: boolean;
}

export function createBrowser(options?: BrowserOptions): FakeBrowser;
