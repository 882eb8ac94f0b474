// Typed usage examples of tab-baton, one per API style, checked against js-glue/index.d.ts
// and js-glue/testing.d.ts with `npx tsc --noEmit -p tests/types`. Never run.
import {
  createBaton,
  createLeaderElection,
  enableTestHooks,
  Fence,
  leaderElection,
  load,
  NoLeaderError,
  RemoteError,
  RequestError,
  requestLeadership,
  type Baton,
  type LeaderStateSnapshot,
  type LeaderStateView,
  type RequestAnswer,
  type BatonMetrics,
  type Election,
  type LeadershipChange,
  type LeaderElector,
  DeposedError,
  EpochNotDurableError,
  StaleOwnerError,
  type DuplicateLeaderEvent,
  type Token,
} from 'tab-baton';
import { createBrowser, type FakeTab } from 'tab-baton/testing';
import { BroadcastChannel as PubkeyChannel, type LeaderElector as PubkeyLeaderElector } from 'broadcast-channel';
import { leaderElection as awaforgeEntry, type CreateOpts as AwaforgeOpts, type Election as AwaforgeElection } from 'tab-baton/awaforge';
import { requestLeadership as requestLeadershipEntry, type RequestLeadershipOptions as EntryLeadershipOptions } from 'tab-baton/request-leadership';
import { createLeaderElection as createLeaderElectionEntry, type LeaderElector as EntryElector, type LeaderElectionOptions as EntryElectionOptions } from 'tab-baton/broadcast-channel';
import { createRelay as createRelayEntry, type Relay as EntryRelay, type RelayOptions as EntryRelayOptions } from 'tab-baton/relay';
import { admitInPostgres, fenceSql, ServerFence, StaleOwnerError as ServerStaleOwnerError, type SqlClient } from 'tab-baton/server';
import { createFenceStore, fencedTransaction, StaleOwnerError as IdbStaleOwnerError } from 'tab-baton/fenced-idb';

declare function send(url: string, body: unknown): Promise<Response>;

// 1. The orchestrator: a resource-scoped leader with fenced side effects.
export async function orchestrator(): Promise<void> {
  await load(); // already done by the import; harmless
  const baton: Baton = createBaton({
    namespace: 'mail',
    protocolVersion: 3,
    appVersion: '2.4.1',
    capabilities: ['ws.owner.v1'],
    heartbeatMs: 1000,
    suspectMs: 3000,
  });
  const ws = baton.lead('ws', {
    eligible: { capability: 'ws.owner.v1', hidden: true, network: true, newestAppOnly: true },
    preferVisible: true,
    run(token: Token, signal: AbortSignal) {
      const socket = new WebSocket(`wss://example.com/stream?epoch=${token.epoch}`);
      signal.addEventListener('abort', () => {
        socket.close();
        if (signal.reason instanceof DeposedError) console.log(signal.reason.reason, signal.reason.epoch, signal.reason.name);
      });
    },
  });
  // The browser's own primitives fit the env option.
  createBaton({ namespace: 'real', env: { locks: navigator.locks, BroadcastChannel, indexedDB, localStorage, document, setTimeout, clearTimeout } });
  const unsubscribe: () => void = ws.onChange((change: LeadershipChange) => {
    if (change.type === 'deposed') console.log(`lost ${change.resource}: ${change.reason}`);
    console.log(change.state, change.leader?.id, change.token?.epoch);
  });
  try {
    const status: number = await ws.fenced(async (token) => (await send('/outbox', { epoch: token.epoch })).status);
    console.log(status);
  } catch (error) {
    if (error instanceof StaleOwnerError) console.log('another tab took over', error.code, error.epoch, error.highest);
    else if (error instanceof EpochNotDurableError) console.log('storage not trusted', error.code, error.reason);
  }
  const state: 'follower' | 'candidate' | 'leader' | 'stepping-down' | 'released' = ws.state();
  const token: Token | null = ws.token();
  console.log(state, token, baton.presence()[0]?.liveness, baton.log()[0]?.reason);
  const metrics: BatonMetrics = baton.metrics();
  console.log(metrics.mode, metrics.degraded, metrics.glue.droppedNotBinary, baton.support().webLocks);
  ws.abdicate();
  unsubscribe();
  ws.release();
  baton.dispose();

  // The receiving side of guarded effects.
  const fence = new Fence();
  const admitted: boolean = fence.admit({ resource: 'ws', epoch: 7 });
  fence.check({ resource: 'ws', epoch: 7 });
  console.log(admitted, fence.highest('ws'));

  // Test hooks (enableTestHooks(), then testHooks: true).
  enableTestHooks();
  globalThis.__baton?.simulateFreeze({ event: false });
  console.log(globalThis.__baton?.leadershipState('ws')?.state);
}

// 2. awaforge's leaderElection.
export function awaforge(): void {
  const { webLocks, broadcastChannel } = leaderElection.support();
  const election: Election = leaderElection.create({
    channel: 'ws-leader',
    heartbeatMs: 500,
    takeoverMs: 1500,
    _forceFallback: !webLocks && broadcastChannel,
  });
  let socket: WebSocket | undefined;
  const off: () => void = election.onLeader(() => {
    socket = new WebSocket('wss://api.example.com/stream');
  });
  election.onFollower(() => socket?.close());
  const leader = election.leader();
  if (leader !== null) console.log(leader.id, leader.since, leader.isMe, election.id, election.isLeader());
  off();
  election.dispose();
}

// 3. The Web Locks article's requestLeadership.
export function article(): void {
  let amILeader = false;
  const relinquishLeadership: () => void = requestLeadership('leader-election', (name: string) => {
    amILeader = true;
    console.log(`leading ${name}`);
  });
  function abdicate(): void {
    amILeader = false;
    relinquishLeadership();
  }
  abdicate();
  console.log(amILeader);
}

// 4. broadcast-channel's LeaderElector: only the import of createLeaderElection changes.
export async function broadcastChannelStyle(): Promise<void> {
  const channel = new PubkeyChannel('foobar');
  const elector: LeaderElector<PubkeyChannel> = createLeaderElection(channel, { fallbackInterval: 3000 });
  elector.onduplicate = function (event: DuplicateLeaderEvent) {
    console.log('duplicate leaders on', this.name, event.reason, event.epoch, event.other);
  };
  await elector.awaitLeadership();
  const hasLeader: boolean = await elector.hasLeader();
  console.log(hasLeader, elector.isLeader, elector.isDead, elector.token, elector.broadcastChannel.name);
  await elector.die();
  // A native channel or a name works too.
  createLeaderElection(new BroadcastChannel('native'));
  createLeaderElection('by-name').awaitLeadership();
  // Code typed against broadcast-channel's own LeaderElector keeps compiling.
  const typedByTheLibrary: PubkeyLeaderElector = createLeaderElection(new PubkeyChannel('typed'));
  await typedByTheLibrary.applyOnce();
}

// The subpath entries give the same APIs, and the types that go with them.
export function subpaths(baton: Baton): void {
  const election: Election = awaforgeEntry.create({ channel: 'a' });
  const relinquish: () => void = requestLeadershipEntry('b', () => {});
  const elector: LeaderElector<string> = createLeaderElectionEntry('c');
  console.log(election.id, relinquish, elector.token);
  const awaforgeOpts: AwaforgeOpts = { channel: 'd', takeoverMs: 1500 };
  const typedElection: AwaforgeElection = awaforgeEntry.create(awaforgeOpts);
  const leadershipOptions: EntryLeadershipOptions = { heartbeatMs: 500 };
  const electionOptions: EntryElectionOptions = { fallbackInterval: 2000 };
  const typedElector: EntryElector<string> = createLeaderElectionEntry('e', electionOptions);
  const relayOptions: EntryRelayOptions = { resource: 'feed', source: () => {}, onEvent: () => {} };
  const relay: EntryRelay = createRelayEntry(baton, relayOptions);
  console.log(typedElection.id, requestLeadershipEntry('f', () => {}, leadershipOptions), typedElector.token, relay.resource);
}

// 5. tab-baton/testing: many tabs in one process (Node tests).
export async function testing(): Promise<void> {
  const browser = createBrowser();
  const tabs: FakeTab[] = [browser.tab('a'), browser.tab('b')];
  const batons = tabs.map((tab) => createBaton({ namespace: 'test', id: tab.id, env: tab, heartbeatMs: 50 }));
  const handles = batons.map((baton) => baton.lead('job'));
  tabs[0]!.crash();
  const election = leaderElection.create({ channel: 'x', env: tabs[1]! });
  const relinquish = requestLeadership('y', () => {}, { env: tabs[1]! });
  const elector = createLeaderElection('z', { env: tabs[1]! });
  console.log(handles.map((h) => h.state()), await browser.locks.query());
  // The lease mode: an origin with IndexedDB, tabs without Web Locks.
  const withDb = createBrowser({ indexedDB: true });
  const tab = withDb.tab('l');
  const lease = createBaton({ namespace: 'lease', env: { ...tab, locks: null } });
  console.log(lease.support().mode, withDb.indexedDB?.peek('baton/lease', 'leases', 'v1/job'), withDb.indexedDB?.stats().committed);
  lease.dispose();
  election.dispose();
  relinquish();
  await elector.die();
}

// 5b. Requests to the leader and leader state.
export async function talk(): Promise<void> {
  const baton = createBaton({ namespace: 'app' });
  const handle = baton.lead('ws', {
    accept: (message, from) => typeof message === 'object' && from.tab !== '',
    async serve(message, from, token, signal) {
      if (signal.aborted) throw new Error('stepped down');
      return { ok: true, id: from.requestId, epoch: token.epoch, message };
    },
    run: () => handle.setState({ connected: true }),
  });
  const answer: { ok: boolean } = await baton.request<{ ok: boolean }>('ws', { kind: 'send' }, { timeoutMs: 2000 });
  const full: RequestAnswer<string> = await baton.request<string>('ws', 'x', { full: true, id: 'op-1', signal: new AbortController().signal });
  console.log(answer.ok, full.value, full.epoch, full.leader, full.requestId);
  try {
    await baton.request('ws', 1);
  } catch (error) {
    if (error instanceof NoLeaderError) console.log(error.code === 'NO_LEADER', error.resource);
    else if (error instanceof RequestError) console.log(error.code);
    else if (error instanceof RemoteError) console.log(error.name, error.epoch, error.leader);
  }
  const view: LeaderStateView<{ connected: boolean }> = baton.leaderState<{ connected: boolean }>('ws');
  const snapshot: LeaderStateSnapshot<{ connected: boolean }> | null = view.get();
  const off = view.onChange((s) => console.log(s.value.connected, s.epoch, s.stale));
  console.log(snapshot?.stale, baton.metrics().talk['ws']?.staleAnswers);
  off();
  view.close();
  await handle.setState({ connected: false });
}

// 6. What the types reject (each line must be an error, or tsc fails on the directive).
/** The fences where effects land refuse with the one StaleOwnerError class of tab-baton. */
export async function fencesWhereEffectsLand(db: IDBDatabase, token: { resource: string; epoch: number }): Promise<void> {
  const same: typeof StaleOwnerError = ServerStaleOwnerError;
  const alsoSame: typeof StaleOwnerError = IdbStaleOwnerError;
  try {
    new ServerFence().check(token);
    await fencedTransaction(db, token, ['queue'], (tx) => tx.objectStore('queue').delete('op-1'));
  } catch (error) {
    if (error instanceof same || error instanceof alsoSame) console.log(error.code, error.epoch, error.highest);
  }
  createFenceStore(db);
  await fencedTransaction(db, token, [], () => {}); // claims the fence at the start of a term
}

/** The server's fence in PostgreSQL, and a worker's Fence. */
export async function fenceInSqlAndWorker(client: SqlClient, token: Token): Promise<void> {
  const { create, admit }: { readonly create: string; readonly admit: string } = fenceSql('app.baton_fence');
  console.log(create, admit);
  if (!(await admitInPostgres(client, token, { table: 'app.baton_fence' }))) throw new Error('stale');
  await load();
  const fence = new Fence();
  const admitted: boolean = fence.admit(token);
  console.log(admitted, fence.highest(token.resource));
  fence.check(token);
  fence.dispose();
}

export function rejected(): void {
  // @ts-expect-error namespace is required
  createBaton({});
  // @ts-expect-error not an authority
  createBaton({ namespace: 'n', authority: 'paxos' });
  // @ts-expect-error eligible.hidden is a boolean
  createBaton({ namespace: 'n' }).lead('ws', { eligible: { hidden: 'no' } });
  // @ts-expect-error channel is required
  leaderElection.create({ heartbeatMs: 10 });
  // @ts-expect-error onLeader is required
  requestLeadership('x');
  // @ts-expect-error timeoutMs is a number
  createBaton({ namespace: 'n' }).request('ws', 1, { timeoutMs: '5s' });
  // @ts-expect-error serve is a function
  createBaton({ namespace: 'n' }).lead('ws', { serve: 'echo' });
  // @ts-expect-error isLeader is a property in broadcast-channel's API, not a method
  createLeaderElection('x').isLeader();
  // @ts-expect-error the duplicate event is typed: no such field
  createLeaderElection('x').onduplicate = (event) => event.whatever;
  // @ts-expect-error errors are thrown by Baton, not constructed by apps
  new StaleOwnerError('r', 1, 2);
}
