// Idle cost: once a leader is settled, a follower's timer wakes at most once per heartbeat
// and the leader's once per heartbeat, under Web Locks and broadcast only; among many tabs
// the followers' refreshes together stay a small share of the channel's traffic. Counted on
// a virtual clock (every callback the tab's setTimeout runs and every message it posts, as
// the benchmark's page counts them), so the figures are exact on any machine. A timer that
// woke on its deadline and then again a millisecond later, for the same deadline, doubled
// every figure here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, load } from 'tab-baton';
import { createBrowser } from 'tab-baton/testing';
import { settle, virtualClock } from './helpers/virtual-clock.js';

const HEARTBEAT_MS = 1000;
const WINDOW_MS = 60_000;

async function idleCost(authority, tabs, windowMs = WINDOW_MS) {
  await load(); // the core loads in real time: have it before time is virtual
  const clock = virtualClock();
  const browser = createBrowser();
  const group = Array.from({ length: tabs }, (_, i) => {
    const id = `t${i}`;
    const tab = browser.tab(id);
    const counted = { wakeups: 0, posted: 0 };
    class CountedChannel extends tab.BroadcastChannel {
      postMessage(message) {
        counted.posted += 1;
        super.postMessage(message);
      }
    }
    const env = {
      ...tab,
      BroadcastChannel: CountedChannel,
      locks: authority === 'web-locks' ? tab.locks : null,
      now: clock.now,
      setTimeout: (fn, ms) => clock.setTimeout(() => { counted.wakeups += 1; fn(); }, ms),
      clearTimeout: clock.clearTimeout,
    };
    const baton = createBaton({ namespace: 'idle', id, authority, env, heartbeatMs: HEARTBEAT_MS });
    return { baton, handle: baton.lead('ws'), counted };
  });
  const run = async (ms) => {
    const end = clock.now() + ms;
    for (;;) {
      await settle();
      if (!clock.step(end)) return;
    }
  };
  try {
    await run(20_000); // elected and settled
    assert.equal(group.filter((t) => t.handle.state() === 'leader').length, 1, 'one leader');
    for (const t of group) t.counted.wakeups = t.counted.posted = 0;
    await run(windowMs);
    return group.map((t) => ({
      leader: t.handle.state() === 'leader',
      perHeartbeat: (t.counted.wakeups * HEARTBEAT_MS) / windowMs,
      postedPerHeartbeat: (t.counted.posted * HEARTBEAT_MS) / windowMs,
    }));
  } finally {
    for (const t of group) t.baton.dispose();
  }
}

for (const authority of ['broadcast', 'web-locks']) {
  for (const tabs of [2, 5]) {
    test(`idle, ${authority}, ${tabs} tabs: a follower wakes at most once per heartbeat, the leader once (virtual clock)`, async () => {
      const figures = await idleCost(authority, tabs);
      const [leader] = figures.filter((f) => f.leader);
      const followers = figures.filter((f) => !f.leader);
      assert.ok(leader.perHeartbeat <= 1, `leader wakes ${leader.perHeartbeat} times per heartbeat`);
      assert.ok(followers.length === tabs - 1 && followers.every((f) => f.perHeartbeat <= 1),
        `follower wake-ups per heartbeat: ${followers.map((f) => f.perHeartbeat)}`);
    });
  }
}

// Each message reaches every other tab, so the followers' refreshes together must stay well
// below the leader's heartbeat for the channel's traffic to grow linearly with the tabs
// (one refresh per heartbeat per tab would post as much as the leader: 0.94 per heartbeat
// here). 16 tabs refresh every 32 heartbeats: eight refresh intervals in the window.
test('idle, broadcast, 16 tabs: the followers together post about half as often as the leader (virtual clock)', async () => {
  const figures = await idleCost('broadcast', 16, 256_000);
  const [leader] = figures.filter((f) => f.leader);
  const followers = figures.filter((f) => !f.leader).reduce((sum, f) => sum + f.postedPerHeartbeat, 0);
  assert.ok(leader.postedPerHeartbeat >= 0.99, `the leader posts ${leader.postedPerHeartbeat} per heartbeat`);
  assert.ok(followers <= 0.6, `the followers together post ${followers} per heartbeat`);
});
