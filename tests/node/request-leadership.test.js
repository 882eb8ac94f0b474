// `requestLeadership(name, onLeader) -> relinquish`: the Web Locks article's example.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { requestLeadership } from 'tab-baton';
import { openTabs, sleep, waitFor } from './helpers/tabs.js';

describe('requestLeadership', () => {
  test('the article example: one tab leads, abdicate() hands over to the next', async () => {
    const { tabs } = openTabs(3);
    const state = tabs.map(() => ({ amILeader: false, inits: 0, name: null }));
    const relinquish = tabs.map((tab, i) =>
      requestLeadership('leader-election', (id) => {
        state[i].amILeader = true;
        state[i].name = id;
        state[i].inits += 1; // initLeader()
      }, { env: tab.env }));
    const abdicate = (i) => {
      state[i].amILeader = false;
      relinquish[i]();
    };

    await waitFor(() => state.some((s) => s.amILeader));
    await sleep(30);
    const leaders = state.flatMap((s, i) => (s.amILeader ? [i] : []));
    assert.equal(leaders.length, 1);
    const [first] = leaders;
    assert.equal(state[first].name, 'leader-election', 'the callback gets the name');

    abdicate(first);
    await waitFor(() => state.filter((s) => s.amILeader).length === 1);
    const [second] = state.flatMap((s, i) => (s.amILeader ? [i] : []));
    assert.notEqual(second, first);
    assert.equal(state[first].inits, 1, 'a relinquished tab is not called again');

    relinquish[first](); // idempotent
    for (const r of relinquish) r();
  });

  test('relinquish before leadership withdraws: the callback never runs', async () => {
    const { tabs } = openTabs(2);
    let called = 0;
    const first = requestLeadership('job', () => {}, { env: tabs[0].env });
    const second = requestLeadership('job', () => { called += 1; }, { env: tabs[1].env });
    second();
    first();
    await sleep(50);
    assert.equal(called, 0);
  });

  test('arguments are checked', () => {
    assert.throws(() => requestLeadership('', () => {}), /"name"/);
    assert.throws(() => requestLeadership('x'), (e) => e instanceof TypeError && /"onLeader"/.test(e.message));
    assert.throws(() => requestLeadership('x', () => {}, { suspectMs: -1 }), /"suspectMs"/);
  });
});
