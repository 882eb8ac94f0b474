// awaforge's fallback (no Web Locks): `heartbeatMs` and `takeoverMs` are its only knobs, and
// they must reach the election unchanged. Checked on a virtual clock (the env's now and
// timers), so the figures are exact on any machine: a leader that crashes is replaced no
// sooner than `takeoverMs` after its last heartbeat, and the leader sends about one
// heartbeat per `heartbeatMs`. (The bound on the takeover itself is the simulation's.)
// A takeoverMs of many heartbeats is waited for too, although presence forgets a silent
// tab after six heartbeats.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { __internal, leaderElection, load } from 'tab-baton';
import { createBrowser } from 'tab-baton/testing';
import { settle, virtualClock } from './helpers/virtual-clock.js';

async function takeoverAfterCrash({ heartbeatMs, takeoverMs }) {
  await load(); // the core loads on first use, in real time: have it before time is virtual
  const clock = virtualClock();
  const browser = createBrowser();
  const tabs = ['a', 'b'].map((id) => browser.tab(id));
  const envs = tabs.map((tab) => ({ ...tab, now: clock.now, setTimeout: clock.setTimeout, clearTimeout: clock.clearTimeout }));
  const elections = envs.map((env, i) => leaderElection.create({ channel: 'virtual', id: `tab-${i}`, heartbeatMs, takeoverMs, _forceFallback: true, env }));
  const run = async (until, limit) => {
    while (!until()) {
      await settle();
      if (until()) break;
      if (!clock.step(limit)) assert.fail(`nothing left to run before ${limit}: ${JSON.stringify(elections.map((e) => [e.isLeader(), e.leader()]))} at ${clock.now()}`);
    }
  };
  const start = clock.now();
  await run(() => elections.some((e) => e.isLeader()) && elections.every((e) => e.leader()), start + 100 * takeoverMs);
  const first = elections.findIndex((e) => e.isLeader());
  const other = 1 - first;
  // Count the leader's heartbeats over 20 periods.
  const sent = () => __internal.metricsOf(elections[first]).framesSent;
  const before = sent();
  const from = clock.now();
  await run(() => clock.now() >= from + 20 * heartbeatMs, from + 21 * heartbeatMs);
  const heartbeats = sent() - before;
  // Crash the leader right after its heartbeat was delivered.
  await settle();
  const lastHeard = clock.now();
  tabs[first].crash();
  elections[first].dispose(); // its timers must not run on after the crash
  await run(() => elections[other].isLeader(), lastHeard + 100 * takeoverMs);
  const takeover = clock.now() - lastHeard;
  elections[other].dispose();
  return { heartbeats, takeover };
}

test('awaforge fallback: heartbeatMs and takeoverMs reach the election unchanged (virtual clock)', async () => {
  const fast = await takeoverAfterCrash({ heartbeatMs: 100, takeoverMs: 400 });
  const slow = await takeoverAfterCrash({ heartbeatMs: 500, takeoverMs: 2500 });
  console.log(`# virtual: heartbeats in 20 periods ${fast.heartbeats} / ${slow.heartbeats}; takeover ${fast.takeover} ms / ${slow.takeover} ms after the last heartbeat`);
  for (const [run, { heartbeatMs, takeoverMs }] of [[fast, { heartbeatMs: 100, takeoverMs: 400 }], [slow, { heartbeatMs: 500, takeoverMs: 2500 }]]) {
    assert.ok(run.heartbeats >= 15 && run.heartbeats <= 25, `about one heartbeat per ${heartbeatMs} ms (${run.heartbeats} in 20 periods)`);
    assert.ok(run.takeover >= takeoverMs - heartbeatMs, `no takeover before takeoverMs (${run.takeover} ms)`);
  }
  assert.ok(fast.takeover < slow.takeover, 'a smaller takeoverMs takes over sooner');
});

test('awaforge fallback: a takeoverMs longer than six heartbeats is waited for in full (virtual clock)', async () => {
  const heartbeatMs = 500;
  const takeoverMs = 4000;
  const { takeover } = await takeoverAfterCrash({ heartbeatMs, takeoverMs });
  console.log(`# virtual: heartbeatMs ${heartbeatMs}, takeoverMs ${takeoverMs}: takeover ${takeover} ms after the last heartbeat`);
  // lastHeard is the crash, at most one heartbeat after the last heartbeat.
  assert.ok(takeover >= takeoverMs - heartbeatMs, `no takeover before takeoverMs (${takeover} ms)`);
  assert.ok(takeover < takeoverMs + heartbeatMs, `takeover within takeoverMs + heartbeatMs (${takeover} ms)`);
});

// awaforge's fallback promises that of the tabs competing, the lowest id wins. That holds
// with `_forceFallback` and in a browser without Web Locks but with IndexedDB, where
// `createBaton` would take the IndexedDB lease (and the first tab to ask would win).
for (const [label, options, envOf] of [
  ['_forceFallback', { _forceFallback: true }, (tab) => tab],
  ['no Web Locks, IndexedDB present', {}, (tab) => ({ ...tab, locks: null })],
]) {
  test(`awaforge fallback (${label}): of tabs that start together, the lowest id wins; then the lowest of the rest (virtual clock)`, async () => {
    await load();
    const clock = virtualClock();
    const browser = createBrowser();
    const ids = ['tab-c', 'tab-a', 'tab-d', 'tab-b'];
    const tabs = ids.map((id) => browser.tab(id));
    const elections = tabs.map((tab, i) =>
      leaderElection.create({ channel: 'lowest', id: ids[i], heartbeatMs: 100, takeoverMs: 400, ...options, env: { ...envOf(tab), now: clock.now, setTimeout: clock.setTimeout, clearTimeout: clock.clearTimeout } }),
    );
    assert.equal(__internal.metricsOf(elections[0]).mode, 'broadcast');
    const leaderIds = (list) => list.filter((e) => e.isLeader()).map((e) => e.id);
    const run = async (until) => {
      const limit = clock.now() + 100_000;
      while (!until()) {
        await settle();
        if (until()) break;
        if (!clock.step(limit)) assert.fail(`nothing left to run: ${JSON.stringify(leaderIds(elections))}`);
      }
    };
    const agreed = (list, id) => () => list.every((e) => e.leader()?.id === id);
    await run(() => leaderIds(elections).length > 0 && elections.every((e) => e.leader()));
    assert.deepEqual(leaderIds(elections), ['tab-a']);
    await run(agreed(elections, 'tab-a'));

    // The leader crashes: the lowest id left takes over, and only it.
    const a = ids.indexOf('tab-a');
    tabs[a].crash();
    elections[a].dispose();
    const rest = elections.filter((_, i) => i !== a);
    await run(() => leaderIds(rest).length > 0);
    assert.deepEqual(leaderIds(rest), ['tab-b']);
    await run(agreed(rest, 'tab-b'));
    assert.deepEqual(leaderIds(rest), ['tab-b']);
    for (const e of rest) e.dispose();
  });
}
