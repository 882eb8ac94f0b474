// Requests time out on the monotonic clock: a wall clock that jumps (an NTP correction, a
// user changing the time) neither ends a waiting request early nor keeps it waiting. On a
// virtual monotonic clock with the wall clock offset from it, so that the test is exact.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, load, NoLeaderError } from 'tab-baton';
import { createBrowser } from 'tab-baton/testing';
import { virtualClock } from './helpers/virtual-clock.js';

test('a request waits its timeoutMs of monotonic time whatever the wall clock does', async () => {
  // The core and the talk layer load in real time: have both before time is virtual.
  await load();
  const warm = createBaton({ namespace: 'talk-clock-warm', id: 'w', env: createBrowser().tab('w') });
  await warm.request('nobody', null, { timeoutMs: 1 }).catch(() => {});
  warm.dispose();
  const clock = virtualClock();
  let wallOffset = 1_700_000_000_000;
  const tab = createBrowser().tab('a');
  const env = {
    ...tab,
    monotonic: clock.now,
    now: () => clock.now() + wallOffset,
    setTimeout: clock.setTimeout,
    clearTimeout: clock.clearTimeout,
  };
  const baton = createBaton({ namespace: 'talk-clock', id: 'a', env });
  try {
    let outcome = null;
    // Nobody leads 'ws': the request is resent until its timeout, then rejected.
    baton.request('ws', { kind: 'ping' }, { timeoutMs: 5_000 }).then(
      (value) => (outcome = { value }),
      (error) => (outcome = { error }),
    );
    await clock.run(1_000);
    wallOffset += 60_000;
    await clock.run(1_000);
    assert.equal(outcome, null, 'still waiting 2 s into a 5 s timeout after the wall clock jumped forward 60 s');
    wallOffset -= 120_000;
    await clock.run(3_000);
    assert.ok(outcome?.error instanceof NoLeaderError, `rejected with NoLeaderError once 5 s passed, whatever the wall clock says (${outcome?.error ?? 'still waiting'})`);
  } finally {
    baton.dispose();
  }
});
