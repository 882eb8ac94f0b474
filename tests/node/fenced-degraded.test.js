// fenced() refuses a term the core judged degraded, not only one the glue failed to store:
// under Web Locks a claim the lock cannot confirm (here forged, above the store's next
// epoch) makes the next holder's term degraded ('behind-claim'), because its epoch may
// repeat the claimed one. The effect must not run, and metrics() must say why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, EpochNotDurableError } from 'tab-baton';
import { openTabs, waitFor } from './helpers/tabs.js';
import { encodeFrame } from '../browser/pages/forge.js';

const RESOURCE = 'ws';

test('fenced() refuses a term the core judged behind a claim', async (t) => {
  const { browser, tabs } = openTabs(2);
  const batons = tabs.map((tab) => createBaton({ namespace: 'behind', id: tab.id, env: tab.env, heartbeatMs: 200 }));
  t.after(() => batons.forEach((b) => b.dispose()));
  const handles = batons.map((b) => b.lead(RESOURCE));
  const first = await waitFor(() => handles.find((h) => h.state() === 'leader'), { what: 'a leader' });
  const firstEpoch = first.token().epoch;
  assert.equal(await first.fenced(() => 'ran'), 'ran', 'a healthy term runs its effects');

  // A frame from no real tab claims a term 50 above: plausible, so the core keeps it as
  // a hint it cannot confirm; it must not depose the holder.
  const evil = new browser.BroadcastChannel('baton/behind/v1');
  t.after(() => evil.close());
  const other = handles.indexOf(first) === 0 ? 1 : 0;
  const received = batons[other].metrics().framesReceived;
  evil.postMessage(encodeFrame({ kind: 'heartbeat', sender: 'evil', claims: [{ resource: RESOURCE, epoch: firstEpoch + 50 }] }));
  await waitFor(() => batons[other].metrics().framesReceived > received, { what: 'the claim arrived' });
  assert.equal(first.state(), 'leader', 'the claim did not depose the lock holder');

  // The holder leaves; the next holder's stored epoch is below the claim.
  batons[handles.indexOf(first)].dispose();
  const next = handles[other];
  await waitFor(() => next.state() === 'leader', { what: 'the next leader' });
  assert.equal(next.token().epoch, firstEpoch + 1, 'the claim did not move the durable floor');
  let ran = false;
  await assert.rejects(next.fenced(() => { ran = true; }), (error) => error instanceof EpochNotDurableError && error.code === 'EPOCH_NOT_DURABLE' && /behind-claim/.test(error.message));
  assert.equal(ran, false, 'the effect did not run');
  const metrics = batons[other].metrics();
  assert.equal(metrics.degraded, true);
  assert.equal(metrics.degradedReason, 'behind-claim');
});
