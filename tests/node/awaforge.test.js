// The awaforge-compatible `leaderElection` module: its documented examples, run as tests
// with several "tabs" over the tab-baton/testing fakes (the `env` option).
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { leaderElection } from 'tab-baton';
import { openTabs, sleep, waitFor } from './helpers/tabs.js';

let elections = [];
afterEach(() => {
  for (const election of elections) election.dispose();
  elections = [];
});

function createAll(tabs, opts) {
  const created = tabs.map((tab) => leaderElection.create({ ...opts, env: tab.env }));
  elections.push(...created);
  return created;
}

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('awaforge leaderElection', () => {
  test('the module shape: {create, support}; support() in Node', () => {
    assert.deepEqual(Object.keys(leaderElection).sort(), ['create', 'support']);
    // Node 20 has BroadcastChannel but no navigator.locks.
    assert.deepEqual(leaderElection.support(), { webLocks: false, broadcastChannel: true });
  });

  test('example "Singleton WebSocket connection": one socket across tabs, moved on dispose', async () => {
    const { tabs } = openTabs(3);
    const sockets = [];
    const election = createAll(tabs, { channel: 'ws-leader' });
    const socketOf = new Map();
    for (const e of election) {
      assert.match(e.id, UUID_V4, 'id defaults to a UUID v4');
      assert.equal(e.leader(), null, 'leader() is null during the first election');
      e.onLeader(() => {
        const socket = { open: true, close() { this.open = false; } };
        sockets.push(socket);
        socketOf.set(e, socket);
      });
      e.onFollower(() => socketOf.get(e)?.close());
    }
    await waitFor(() => sockets.length === 1 && election.every((e) => e.leader() !== null));
    const leader = election.find((e) => e.isLeader());
    for (const e of election) {
      const info = e.leader();
      assert.equal(info.id, leader.id);
      assert.equal(info.isMe, e === leader);
      assert.equal(typeof info.since, 'number');
      assert.ok(Math.abs(info.since - Date.now()) < 5000, 'since is a wall-clock time');
    }

    leader.dispose();
    assert.equal(socketOf.get(leader).open, false, 'onFollower closed the socket on dispose');
    leader.dispose(); // idempotent
    await waitFor(() => sockets.length === 2);
    assert.equal(sockets.filter((s) => s.open).length, 1, 'exactly one open socket');
    assert.equal(election.filter((e) => e.isLeader()).length, 1);
  });

  test('example "SharedWorker fallback": BroadcastChannel mode, takeover after a crash within takeoverMs + heartbeatMs', async () => {
    const { webLocks, broadcastChannel } = leaderElection.support();
    assert.equal(webLocks, false);
    assert.equal(broadcastChannel, true);
    const { tabs } = openTabs(3);
    const running = new Set();
    const election = createAll(tabs, { channel: 'sync-leader', heartbeatMs: 50, takeoverMs: 150, _forceFallback: true });
    election.forEach((e, i) => {
      e.onLeader(() => running.add(i)); // startSyncJob()
      e.onFollower(() => running.delete(i)); // stopSyncJob()
    });
    await waitFor(() => running.size === 1, { what: 'one sync job' });
    const [first] = running;
    tabs[first].crash();
    const t0 = Date.now();
    await waitFor(() => [...running].some((i) => i !== first), { what: 'a takeover' });
    // The time is reported, not asserted (a shared machine is noisy); the bound is
    // checked deterministically by the simulation.
    console.log(`# awaforge fallback: takeover ${Date.now() - t0} ms after the crash`);
    assert.equal(election.filter((e, i) => i !== first && e.isLeader()).length, 1, 'exactly one new leader');
  });

  test('example "Singleton sync": the loop runs only while leader and stops after dispose', async () => {
    const { tabs } = openTabs(2);
    const election = createAll(tabs, { channel: 'cron-sync' });
    const runs = [0, 0];
    const loops = [];
    election.forEach((e, i) => {
      e.onLeader(async () => {
        const loop = (async () => {
          while (e.isLeader()) {
            runs[i] += 1; // await runSyncTask();
            await sleep(10); // await sleep(30_000);
          }
        })();
        loops.push(loop);
      });
    });
    await waitFor(() => runs[0] + runs[1] >= 5);
    const leader = runs[0] > 0 ? 0 : 1;
    assert.equal(runs[1 - leader], 0, 'the follower never synced');
    election[leader].dispose();
    await Promise.all(loops.splice(0, 1)); // the old leader's loop ends
    const frozen = runs[leader];
    await waitFor(() => runs[1 - leader] >= 3);
    assert.equal(runs[leader], frozen);
  });

  test('onLeader/onFollower return unsubscribe functions; a throwing listener does not break the election', async () => {
    const { tabs } = openTabs(2);
    const [a, b] = createAll(tabs, { channel: 'subs', id: 'tab-a' });
    const calls = [];
    const off = a.onLeader(() => calls.push('a'));
    off();
    const originalError = console.error;
    console.error = () => {};
    try {
      a.onLeader(() => { throw new Error('listener bug'); });
      a.onLeader(() => calls.push('a2'));
      await waitFor(() => a.isLeader() || b.isLeader());
      await sleep(20);
    } finally {
      console.error = originalError;
    }
    assert.equal(a.id, 'tab-a');
    // a asked for the lock first, so it leads; the unsubscribed and the throwing listeners
    // did not stop the third one.
    assert.equal(a.isLeader(), true);
    assert.equal(b.isLeader(), false);
    assert.deepEqual(calls, ['a2']);
  });

  test('the default id is a UUID v4 also where crypto.randomUUID is missing (insecure contexts)', (t) => {
    const { tabs } = openTabs(1);
    const crypto = globalThis.crypto;
    t.after(() => Object.defineProperty(globalThis, 'crypto', { value: crypto, configurable: true, writable: true }));
    Object.defineProperty(globalThis, 'crypto', { value: { getRandomValues: (bytes) => crypto.getRandomValues(bytes) }, configurable: true, writable: true });
    const ids = new Set();
    for (let i = 0; i < 20; i += 1) {
      const e = leaderElection.create({ channel: 'no-random-uuid', env: tabs[0].env });
      assert.match(e.id, UUID_V4);
      ids.add(e.id);
      e.dispose();
    }
    assert.equal(ids.size, 20);
  });
});
