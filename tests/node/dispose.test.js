// dispose() is idempotent and every call after it is a harmless no-op or a clear error.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, leaderElection, createLeaderElection, requestLeadership, __internal } from 'tab-baton';
import { openTabs, sleep, waitFor } from './helpers/tabs.js';

describe('dispose', () => {
  test('createBaton: idempotent, releases the lock, later calls are harmless', async () => {
    const { browser, tabs } = openTabs(1);
    const baton = createBaton({ namespace: 'd', env: tabs[0].env, heartbeatMs: 30 });
    const handle = baton.lead('ws');
    const changes = [];
    handle.onChange((c) => changes.push(c.type));
    await waitFor(() => handle.state() === 'leader');
    const before = baton.metrics();

    baton.dispose();
    baton.dispose();
    await sleep(10);
    assert.deepEqual(await browser.locks.query(), { held: [], pending: [] }, 'every lock released');
    assert.equal(changes.at(-1), 'released');
    assert.equal(handle.state(), 'released');
    assert.equal(handle.token(), null);
    handle.abdicate();
    handle.release();
    assert.equal(typeof handle.onChange(() => {}), 'function');
    await assert.rejects(handle.fenced(() => {}), (e) => e.code === 'STALE_OWNER');
    assert.throws(() => baton.lead('other'), (e) => e.code === 'DISPOSED' && /after dispose/.test(e.message));
    assert.deepEqual(baton.presence(), []);
    const after = baton.metrics();
    assert.ok(after.framesSent > before.framesSent, 'the goodbye was sent');
    assert.equal(after.stepDowns, 1);
    assert.ok(baton.log().some((t) => t.reason === 'dispose'));
    assert.equal(baton.support().webLocks, true);
    const timerFires = after.glue.timerFires;
    await sleep(100);
    assert.equal(baton.metrics().glue.timerFires, timerFires, 'no timer runs after dispose');
  });

  test('dispose from inside a leadership callback', async () => {
    const { tabs } = openTabs(2);
    const batons = tabs.map((tab) => createBaton({ namespace: 'd2', env: tab.env }));
    const handles = batons.map((b) => b.lead('ws'));
    let disposedInside = -1;
    handles.forEach((h, i) => h.onChange((c) => {
      if (c.type === 'elected' && disposedInside < 0) {
        disposedInside = i;
        batons[i].dispose();
      }
    }));
    await waitFor(() => disposedInside >= 0 && handles[1 - disposedInside].state() === 'leader');
    assert.equal(handles[disposedInside].state(), 'released');
    batons[1 - disposedInside].dispose();
  });

  test('the compatibility APIs: dispose / relinquish / die are idempotent', async () => {
    const { tabs } = openTabs(1);
    const election = leaderElection.create({ channel: 'd3', env: tabs[0].env });
    await waitFor(() => election.isLeader());
    election.dispose();
    election.dispose();
    assert.equal(election.isLeader(), false);
    assert.equal(election.leader(), null);
    assert.equal(typeof election.onLeader(() => {}), 'function');

    const relinquish = requestLeadership('d4', () => {}, { env: tabs[0].env });
    relinquish();
    relinquish();

    const elector = createLeaderElection('d5', { env: tabs[0].env });
    await elector.die();
    await elector.die();
    assert.equal(await elector.applyOnce(), false);
    assert.equal(await elector.hasLeader(), false);
    await sleep(10);
    assert.equal(__internal.liveCores(), 0, 'every core freed');
  });
});
