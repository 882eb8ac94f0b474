// Fencing: a stale owner's guarded effect is rejected with STALE_OWNER, by the handle's
// fenced() and by a Fence at the receiver. The comparison itself is the core's.
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, Fence, StaleOwnerError, load, __internal } from 'tab-baton';
import { leaderIndexes, openTabs, waitFor } from './helpers/tabs.js';

let open = [];
afterEach(() => {
  for (const baton of open) baton.dispose();
  open = [];
});

function setup(n, options = {}) {
  const { browser, tabs } = openTabs(n);
  const batons = tabs.map((tab) => createBaton({ namespace: 'fence', id: tab.id, env: tab.env, heartbeatMs: 40, suspectMs: 150, ...options }));
  open.push(...batons);
  return { browser, tabs, batons, handles: batons.map((b) => b.lead('db')) };
}

// The class users catch with `instanceof`, from the handle's fenced() and from a Fence alike.
const isStale = (error) => error.code === 'STALE_OWNER' && error instanceof StaleOwnerError;

describe('fencing', () => {
  test('fenced() runs the effect while leading and passes the token and signal', async () => {
    const { handles } = setup(2);
    await waitFor(() => leaderIndexes(handles).length === 1);
    const [leader] = leaderIndexes(handles);
    const result = await handles[leader].fenced((token, signal) => {
      assert.equal(signal.aborted, false);
      return { wrote: token.epoch };
    });
    assert.deepEqual(result, { wrote: 1 });
    // A follower is rejected without running the effect.
    let ran = false;
    await assert.rejects(handles[1 - leader].fenced(() => { ran = true; }), isStale);
    assert.equal(ran, false);
  });

  test('a crashed leader\'s later write is rejected by a Fence at the receiver; fenced() rejects a deposed leader', async () => {
    const { tabs, handles } = setup(3);
    await waitFor(() => leaderIndexes(handles).length === 1);
    const [first] = leaderIndexes(handles);
    const fence = new Fence(); // e.g. in a worker or a store that receives the writes
    const staleToken = handles[first].token();
    assert.equal(fence.admit(staleToken), true);
    assert.equal(fence.admit(staleToken), true, 'a term may act many times');

    tabs[first].crash();
    const live = handles.filter((_, i) => i !== first);
    await waitFor(() => leaderIndexes(live).length === 1);
    const fresh = live.find((h) => h.state() === 'leader').token();
    assert.ok(fresh.epoch > staleToken.epoch);
    await live.find((h) => h.state() === 'leader').fenced((token) => fence.check(token));
    assert.equal(fence.highest('db'), fresh.epoch);

    // The zombie still believes it leads (its code runs, cut off): the receiver's fence saves us.
    assert.equal(handles[first].state(), 'leader');
    assert.equal(fence.admit(staleToken), false);
    assert.throws(() => fence.check(staleToken), (error) => isStale(error) && error.highest === fresh.epoch && error.epoch === staleToken.epoch);
    fence.dispose();
  });

  test('fenced() rejects once the term has ended (stolen lock), and the effect does not run', async () => {
    const { tabs, handles } = setup(2);
    await waitFor(() => leaderIndexes(handles).length === 1);
    const [first] = leaderIndexes(handles);
    const stolen = handles[first];
    const staleToken = stolen.token();
    tabs[first].freeze({ deaf: true });
    await waitFor(() => handles[1 - first].state() === 'leader');
    await waitFor(() => stolen.state() !== 'leader');
    let ran = false;
    await assert.rejects(stolen.fenced(() => { ran = true; }), (e) => isStale(e) && e.epoch === null);
    assert.equal(ran, false);
    assert.equal(stolen.token(), null);
    assert.ok(handles[1 - first].token().epoch > staleToken.epoch);
    tabs[first].thaw();
  });

  test('broadcast-only: a leader that sees a newer term is fenced by its own core', async () => {
    // Two tabs that cannot hear each other both lead (a partition); when they reconnect,
    // the older term steps down and the fence of its core has seen the newer epoch.
    const { browser, tabs, batons, handles } = setup(2, { authority: 'broadcast' });
    for (const ch of tabs[1].channels) browser.hub.pause(ch);
    for (const ch of tabs[0].channels) browser.hub.pause(ch);
    await waitFor(() => leaderIndexes(handles).length === 2, { what: 'both lead while partitioned' });
    const tokens = handles.map((h) => h.token());
    for (const tab of tabs) for (const ch of tab.channels) browser.hub.resume(ch);
    await waitFor(() => leaderIndexes(handles).length === 1, { what: 'the conflict is settled' });
    const [winner] = leaderIndexes(handles);
    const loser = 1 - winner;
    await assert.rejects(handles[loser].fenced(() => {}), isStale);
    const fence = new Fence();
    fence.check(handles[winner].token());
    // The shared epoch counter gave the two terms distinct epochs; the older one lost.
    assert.ok(tokens[loser].epoch < handles[winner].token().epoch, JSON.stringify(tokens));
    assert.equal(fence.admit(tokens[loser]), false);
    assert.ok(batons[loser].log().some((t) => t.from === 'leader' && (t.reason === 'conflict' || t.reason === 'newer-epoch')));
  });

  test('a Fence is no election core, and frees its memory on dispose', async () => {
    await load();
    const sessions = __internal.coreSessions();
    const fence = new Fence();
    assert.equal(fence.admit({ resource: 'db', epoch: 3 }), true);
    assert.equal(__internal.coreSessions(), sessions, 'a Fence opens no election core session');
    fence.dispose();
    fence.dispose();
    assert.throws(() => fence.admit({ resource: 'db', epoch: 3 }), (e) => e.code === 'DISPOSED', 'used after dispose(): DISPOSED, as every disposed API');
    // Fences made and disposed by the thousand leave the heap as it was: each one is freed.
    const heap = __internal.heapBytes();
    for (let i = 0; i < 20_000; i += 1) {
      const f = new Fence();
      f.check({ resource: `r${i % 7}`, epoch: 1 + i });
      f.dispose();
    }
    assert.equal(__internal.heapBytes(), heap, 'the wasm heap stayed flat');
  });

  test('Fence input is checked', () => {
    const fence = new Fence();
    assert.throws(() => fence.admit(null), TypeError);
    assert.throws(() => fence.admit({ resource: 'x', epoch: -1 }), /token.epoch/);
    assert.throws(() => fence.admit({ resource: 'x', epoch: 0 }), /token.epoch/, 'terms start at epoch 1, as on the server');
    assert.throws(() => fence.admit({ epoch: 1 }), /token.resource/);
    assert.equal(fence.highest('never'), 0);
    // A name far past the shared buffer (another page's post): refused before it is written.
    const huge = 'x'.repeat(300_000);
    assert.throws(() => fence.admit({ resource: huge, epoch: 1 }), (e) => e instanceof TypeError && /token.resource/.test(e.message));
    assert.throws(() => fence.highest(huge), TypeError);
    assert.equal(fence.admit({ resource: 'x', epoch: 2 }), true, 'the fence still works');
    assert.equal(fence.highest('x'), 2);
    fence.dispose();
    fence.dispose();
    assert.throws(() => fence.admit({ resource: 'x', epoch: 1 }), /after dispose/);
  });
});
