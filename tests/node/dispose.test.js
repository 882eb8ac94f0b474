// dispose() is idempotent and every call after it is a harmless no-op or a clear error.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, leaderElection, createLeaderElection, requestLeadership, __internal } from 'tab-baton';
import { isMarker, openTabs, sleep, waitFor } from './helpers/tabs.js';

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
    await waitFor(async () => {
      const { held, pending } = await browser.locks.query();
      return held.length === 0 && pending.length === 0;
    }, { what: 'every lock released' });
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

  test("React StrictMode's mount, unmount, mount (the README's effect): the first Baton leaves at once, the second leads alone", async () => {
    const { browser, tabs } = openTabs(2);
    const runs = [];
    // The README's effect: create in the effect, dispose in its cleanup.
    const effect = (tab, label) => {
      const baton = createBaton({ namespace: 'strict', env: tab.env, heartbeatMs: 30 });
      const handle = baton.lead('socket', { run: (token, signal) => runs.push({ label, epoch: token.epoch, signal }) });
      return { handle, cleanup: () => baton.dispose() };
    };
    const first = effect(tabs[0], 'first mount');
    first.cleanup(); // StrictMode unmounts at once, in the same task
    const second = effect(tabs[0], 'second mount');
    const other = effect(tabs[1], 'other tab');
    await waitFor(() => second.handle.state() === 'leader' || other.handle.state() === 'leader');
    await sleep(100);
    assert.equal(first.handle.state(), 'released');
    assert.deepEqual(runs.filter((r) => r.label === 'first mount'), [], 'the unmounted effect never ran a term');
    const leading = [second, other].filter((e) => e.handle.state() === 'leader');
    assert.equal(leading.length, 1, 'one leader');
    const { held, pending } = await browser.locks.query();
    assert.equal([...held, ...pending].filter((l) => !isMarker(l.name)).length, 2, `no lock request left by the first Baton (${JSON.stringify({ held, pending })})`);
    // The next unmount hands over as any leaving leader does.
    const leader = leading[0];
    const follower = leader === second ? other : second;
    leader.cleanup();
    await waitFor(() => follower.handle.state() === 'leader');
    follower.cleanup();
    await waitFor(async () => {
      const { held, pending } = await browser.locks.query();
      return held.length === 0 && pending.length === 0;
    }, { what: 'every lock released' });
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
