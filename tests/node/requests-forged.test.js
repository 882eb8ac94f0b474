// Forged talk messages: another page of the origin posts on a resource's talk channel a
// 'lead' and a 'state' of epoch 2^40, an answer to a pending request under a made-up id,
// and the same at the current epoch. A tab that takes part in the resource's election
// believes a term message only from the leader its election core confirms: the real
// leader's answers and states still arrive, the forged ones are dropped and counted. And a
// page that posts hellos in a loop gets the leader's announcement (with its state) at most
// once per 50 ms, while a new tab still gets the state at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton } from 'tab-baton';
import { leaderIndexes, openTabs, waitFor } from './helpers/tabs.js';

const FAST = { heartbeatMs: 50, suspectMs: 600 };

test('forged term messages on the talk channel: a tab in the election ignores them', async () => {
  const { browser, tabs } = openTabs(2);
  const batons = tabs.map((tab) => createBaton({ namespace: 'app', id: tab.id, env: tab.env, ...FAST }));
  try {
    let served = 0;
    const handles = batons.map((baton) => baton.lead('ws', {
      serve: (message) => { served += 1; return `real:${message}`; },
    }));
    await waitFor(() => leaderIndexes(handles).length === 1);
    const [leader] = leaderIndexes(handles);
    const follower = 1 - leader;
    const { epoch } = handles[leader].token();
    await handles[leader].setState('real-state');
    const view = batons[follower].leaderState('ws');
    await waitFor(() => view.get()?.value === 'real-state');
    await waitFor(() => handles[follower].leader()?.epoch === epoch);

    const forger = new (browser.tab('evil').BroadcastChannel)('baton/app/v1/talk/ws');
    const pending = batons[follower].request('ws', 'hi', { id: 'op-1', full: true });
    // At the core's plausibility bound, a message is malformed; just below it, only the
    // election's confirmation keeps it out.
    forger.postMessage({ v: 1, k: 'lead', from: 'evil', epoch: 2 ** 40, seq: 1, state: 'forged' });
    for (const forgedEpoch of [2 ** 40 - 1, epoch]) {
      forger.postMessage({ v: 1, k: 'lead', from: 'evil', epoch: forgedEpoch, seq: 1, state: 'forged' });
      forger.postMessage({ v: 1, k: 'state', from: 'evil', epoch: forgedEpoch, seq: 2, state: 'forged' });
      forger.postMessage({ v: 1, k: 'res', from: 'evil', to: tabs[follower].id, id: 'op-1', epoch: forgedEpoch, ok: true, value: 'forged' });
    }
    const answer = await pending;
    assert.deepEqual([answer.value, answer.epoch, answer.leader], ['real:hi', epoch, tabs[leader].id]);
    // Later requests and states of the real term still get through.
    assert.equal(await batons[follower].request('ws', 'again'), 'real:again');
    await handles[leader].setState('real-state-2');
    await waitFor(() => view.get()?.value === 'real-state-2');
    assert.equal(view.get().leader, tabs[leader].id);
    // The forged messages of the current epoch are dropped at once; those of epoch 2^40 - 1
    // once the election has not confirmed that term in time.
    await waitFor(() => batons[follower].metrics().talk.ws.droppedUnconfirmed >= 6, { what: 'the forged messages counted' });
    assert.equal(batons[follower].metrics().talk.ws.droppedMalformed, 1, 'epoch 2^40 is implausible');
    assert.equal(view.get().value, 'real-state-2');
    assert.equal(served, 2);
    forger.close();
  } finally {
    batons.forEach((baton) => baton.dispose());
  }
});

test('a burst of hellos: the leader announces at most once per 50 ms, a new tab still gets the state', async () => {
  const { browser, tabs } = openTabs(2);
  const batons = tabs.map((tab) => createBaton({ namespace: 'app', id: tab.id, env: tab.env, ...FAST }));
  try {
    const handle = batons[0].lead('ws', { serve: () => 'ok' });
    await waitFor(() => handle.state() === 'leader');
    await handle.setState('x'.repeat(10_000));
    const listener = new (browser.tab('ear').BroadcastChannel)('baton/app/v1/talk/ws');
    let announcements = 0;
    listener.addEventListener('message', (event) => { if (event.data?.k === 'lead') announcements += 1; });
    const forger = new (browser.tab('evil').BroadcastChannel)('baton/app/v1/talk/ws');
    const started = Date.now();
    for (let i = 0; i < 500; i += 1) forger.postMessage({ v: 1, k: 'hello', from: 'evil' });
    // Served in order: once the leader answers a request posted after the burst, it has seen every hello.
    assert.equal(await batons[1].request('ws', 'after'), 'ok');
    const view = batons[1].leaderState('ws');
    await waitFor(() => view.get()?.value?.length === 10_000, { what: 'the state at the new tab' });
    const windows = Math.ceil((Date.now() - started) / 50) + 2;
    assert.ok(announcements <= windows, `${announcements} announcements for 500 hellos in ${windows} windows of 50 ms`);
    listener.close();
    forger.close();
  } finally {
    batons.forEach((baton) => baton.dispose());
  }
});
