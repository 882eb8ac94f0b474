// Two clocks under the lease: local deadlines run on the monotonic clock, the lease record
// on the wall clock. A wall clock that jumps forward lets the other tabs take the record
// over by its takeover time, so the leader's term is in doubt at once, before its next
// step (state() says 'candidate'), until a renewal writes a new record. A wall clock that
// jumps back changes no local deadline: the leader keeps its term. On a virtual clock
// (the monotonic one) with the wall clock offset from it, so that the test is exact.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, load } from 'tab-baton';
import { createBrowser } from 'tab-baton/testing';
import { virtualClock } from './helpers/virtual-clock.js';

test('lease: a forward wall clock jump puts the term in doubt at once; a backward one changes nothing', async () => {
  await load(); // the core loads in real time: have it before time is virtual
  const clock = virtualClock();
  let wallOffset = 1_700_000_000_000;
  const browser = createBrowser();
  const group = ['a', 'b'].map((id) => {
    const tab = browser.tab(id);
    const env = {
      ...tab,
      locks: null,
      monotonic: clock.now,
      now: () => clock.now() + wallOffset,
      setTimeout: clock.setTimeout,
      clearTimeout: clock.clearTimeout,
    };
    const baton = createBaton({ namespace: 'jump', id, authority: 'lease', env });
    return { baton, handle: baton.lead('ws') };
  });
  const leaders = () => group.filter((t) => t.handle.state() === 'leader');
  try {
    await clock.run(10_000);
    assert.equal(leaders().length, 1, 'one leader');
    const [leader] = leaders();
    const epoch = leader.handle.token().epoch;

    wallOffset += 60_000;
    assert.equal(leader.handle.state(), 'candidate', 'in doubt as soon as the wall clock jumped forward');
    await clock.run(2_000);
    assert.equal(leaders().length, 1, 'one leader again after the forward jump');

    const [after] = leaders();
    const term = after.handle.token().epoch;
    assert.ok(term >= epoch);
    wallOffset -= 120_000;
    assert.equal(after.handle.state(), 'leader', 'a backward jump does not end the term');
    await clock.run(20_000);
    assert.deepEqual(leaders(), [after], 'the same tab leads 20 s after the backward jump');
    assert.equal(after.handle.token().epoch, term, 'in the same term');
  } finally {
    for (const t of group) t.baton.dispose();
  }
});
