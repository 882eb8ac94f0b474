// Idle cost: once a leader is settled, a follower's timer wakes at most once per heartbeat
// and the leader's once per heartbeat, under Web Locks and broadcast only. Counted on a
// virtual clock (every callback the tab's setTimeout runs, as the benchmark's page counts
// them), so the figure is exact on any machine. A timer that woke on its deadline and then
// again a millisecond later, for the same deadline, doubled every figure here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, load } from 'tab-baton';
import { createBrowser } from 'tab-baton/testing';
import { settle, virtualClock } from './helpers/virtual-clock.js';

const HEARTBEAT_MS = 1000;
const WINDOW_MS = 60_000;

async function idleWakeups(authority, tabs) {
  await load(); // the core loads in real time: have it before time is virtual
  const clock = virtualClock();
  const browser = createBrowser();
  const group = Array.from({ length: tabs }, (_, i) => {
    const id = `t${i}`;
    const tab = browser.tab(id);
    const counted = { wakeups: 0 };
    const env = {
      ...tab,
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
    for (const t of group) t.counted.wakeups = 0;
    await run(WINDOW_MS);
    return group.map((t) => ({ leader: t.handle.state() === 'leader', perHeartbeat: (t.counted.wakeups * HEARTBEAT_MS) / WINDOW_MS }));
  } finally {
    for (const t of group) t.baton.dispose();
  }
}

for (const authority of ['broadcast', 'web-locks']) {
  for (const tabs of [2, 5]) {
    test(`idle, ${authority}, ${tabs} tabs: a follower wakes at most once per heartbeat, the leader once (virtual clock)`, async () => {
      const figures = await idleWakeups(authority, tabs);
      const [leader] = figures.filter((f) => f.leader);
      const followers = figures.filter((f) => !f.leader);
      assert.ok(leader.perHeartbeat <= 1, `leader wakes ${leader.perHeartbeat} times per heartbeat`);
      assert.ok(followers.length === tabs - 1 && followers.every((f) => f.perHeartbeat <= 1),
        `follower wake-ups per heartbeat: ${followers.map((f) => f.perHeartbeat)}`);
    });
  }
}
