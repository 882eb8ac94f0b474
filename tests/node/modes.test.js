// The authorities without Web Locks: the IndexedDB lease and broadcast only; and the durable
// epoch counter's backends (localStorage, IndexedDB, none = degraded, reported not thrown).
// Every tab runs on a virtual clock: with real timers, a loaded machine delays heartbeats
// past the suspect timeout, and a follower takes over before the successor named in the
// leader's goodbye (or a lease renewal comes too late), so outcomes changed with the load.
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, load } from 'tab-baton';
import { createBrowser, createIndexedDB } from 'tab-baton/testing';
import { leaderIndexes, openTab, openTabs, watchLeaders } from './helpers/tabs.js';
import { virtualClock } from './helpers/virtual-clock.js';

const FAST = { heartbeatMs: 40, suspectMs: 150, leaseMs: 300 };
await load(); // the core loads in real time: have it before time is virtual
let open = [];
afterEach(() => {
  for (const baton of open) baton.dispose();
  open = [];
});

/** One Baton per tab; fixed seeds for the core's jitter, so that virtual figures are exact. */
function batonsFor(tabs, options) {
  const batons = tabs.map((tab, i) => createBaton({ namespace: 'modes', id: tab.id, env: tab.env, seed: i + 1, ...FAST, ...options }));
  open.push(...batons);
  return batons;
}

describe('IndexedDB lease authority', () => {
  test('the documented way: createBrowser() tabs without Web Locks run the lease mode', async () => {
    const clock = virtualClock();
    const browser = createBrowser();
    const tabs = [browser.tab('a'), browser.tab('b')];
    const batons = tabs.map((tab) => createBaton({ namespace: 'documented', id: tab.id, env: { ...tab, locks: null, ...clock.env() }, ...FAST }));
    open.push(...batons);
    const handles = batons.map((baton) => baton.lead('job'));
    await clock.until(() => leaderIndexes(handles).length === 1, { what: 'one leader' });
    const [leader] = leaderIndexes(handles);
    assert.equal(batons[leader].support().mode, 'lease');
    assert.equal(browser.indexedDB.peek('baton/documented', 'leases', 'v1/job').owner, tabs[leader].id);
    assert.ok(browser.indexedDB.stats().committed >= 1);
    // Without IndexedDB (a browser that blocks it): no lease mode.
    assert.equal(createBrowser({ indexedDB: false }).tab('c').indexedDB, null);
  });

  test('the documented way: crash() of a createBrowser() tab hands its lease over (its IndexedDB requests die with it)', async () => {
    const clock = virtualClock();
    const browser = createBrowser();
    const tabs = [browser.tab('a'), browser.tab('b')];
    const batons = tabs.map((tab) => createBaton({ namespace: 'lease-crash', id: tab.id, env: { ...tab, locks: null, ...clock.env() }, ...FAST }));
    open.push(...batons);
    const handles = batons.map((baton) => baton.lead('job'));
    await clock.until(() => leaderIndexes(handles).length === 1 && handles.every((h) => h.leader() !== null), { what: 'one leader that both know' });
    const [first] = leaderIndexes(handles);
    const other = 1 - first;
    const epoch = handles[first].token().epoch;
    // The crashed tab's code still runs here (its timers are the clock's), as the fake
    // documents; what it asks of the origin's IndexedDB must never be answered, or it renews
    // for ever.
    tabs[first].crash();
    await clock.until(() => handles[other].state() === 'leader', { what: 'the other tab leads after the crash' });
    assert.ok(handles[other].token().epoch > epoch);
    assert.equal(browser.indexedDB.peek('baton/lease-crash', 'leases', 'v1/job').owner, tabs[other].id);
    assert.equal(batons[other].support().mode, 'lease');
  });


  test('chosen automatically without Web Locks; one leader; the record is in the store', async () => {
    const clock = virtualClock();
    const idb = createIndexedDB();
    const { tabs } = openTabs(3, { indexedDB: idb.indexedDB, clock });
    for (const tab of tabs) tab.env.locks = undefined; // a browser without navigator.locks
    const batons = batonsFor(tabs);
    const handles = batons.map((b) => b.lead('ws'));
    const watch = watchLeaders(handles);
    await clock.until(() => leaderIndexes(handles).length === 1, { what: 'one leader' });
    const [leader] = leaderIndexes(handles);
    // Several renewals: the record's first write, then two more.
    await clock.until(() => batons[leader].metrics().glue.leaseTransactions >= 3, { what: 'three lease transactions' });
    assert.equal(watch.overlaps(), 0);
    assert.equal(batons[leader].metrics().mode, 'lease');
    assert.equal(batons[leader].support().authority, 'lease');
    const record = idb.peek('baton/modes', 'leases', 'v1/ws');
    assert.equal(record.owner, tabs[leader].id);
    assert.equal(record.epoch, handles[leader].token().epoch);
    assert.ok(record.expiresMs > clock.now(), 'renewed: not expired');
    assert.ok(batons[leader].metrics().glue.leaseTransactions >= 3);
  });

  test('hand-over on dispose (lease released) and on crash (lease expires)', async () => {
    const clock = virtualClock();
    const idb = createIndexedDB();
    const { tabs } = openTabs(3, { indexedDB: idb.indexedDB, clock });
    const batons = batonsFor(tabs, { authority: 'lease' });
    const handles = batons.map((b) => b.lead('ws'));
    const crashed = new Set(); // a crashed tab's zombie state is not a second leader
    const watch = watchLeaders(handles, { ignore: (i) => crashed.has(i) });
    await clock.until(() => leaderIndexes(handles).length === 1, { what: 'one leader' });
    const [first] = leaderIndexes(handles);
    const epoch1 = handles[first].token().epoch;
    // Settled: the others' first lease attempts have answered and they follow the leader.
    await clock.until(() => handles.every((h, i) => i === first || (h.state() === 'follower' && h.leader()?.id === tabs[first].id)), { what: 'the others follow the leader' });

    let t0 = clock.now();
    batons[first].dispose();
    await clock.until(() => leaderIndexes(handles).length === 1, { what: 'a leader after the dispose' });
    const afterDispose = clock.now() - t0;
    console.log(`# lease: hand-over ${afterDispose} virtual ms after dispose`);
    const [second] = leaderIndexes(handles);
    // The successor named in the goodbye took over without waiting for the lease to run out.
    assert.ok(batons[second].log().some((t) => t.to === 'candidate' && t.reason === 'leader-goodbye'));
    assert.ok(afterDispose < FAST.leaseMs, `before the released lease would have expired (${afterDispose} ms)`);
    assert.ok(handles[second].token().epoch > epoch1);
    await clock.until(() => idb.peek('baton/modes', 'leases', 'v1/ws')?.owner === tabs[second].id, { what: 'the lease record names the successor' });

    const epoch2 = handles[second].token().epoch;
    t0 = clock.now();
    crashed.add(second);
    tabs[second].crash(); // no more renewals
    const live = handles.filter((_, i) => i !== first && i !== second);
    await clock.until(() => leaderIndexes(live).length === 1, { what: 'a leader after the crash' });
    const afterCrash = clock.now() - t0;
    console.log(`# lease: hand-over ${afterCrash} virtual ms after a crash`);
    // Its last renewal was at most a heartbeat before the crash: the record ran out first.
    assert.ok(afterCrash >= FAST.leaseMs - FAST.heartbeatMs, `not before the lease expired (${afterCrash} ms)`);
    assert.ok(live[0].token().epoch > epoch2);
    // The crashed tab's term ended when its record could be taken over: no leader beside the new one.
    assert.notEqual(handles[second].state(), 'leader');
    assert.equal(watch.overlaps(), 0);
  });

  test('failing transactions: lease_failed, degraded, then broadcast-only (never thrown)', async () => {
    const clock = virtualClock();
    const idb = createIndexedDB();
    const { tabs } = openTabs(2, { indexedDB: idb.indexedDB, clock });
    idb.fail(true);
    const batons = batonsFor(tabs, { authority: 'lease' });
    const handles = batons.map((b) => b.lead('ws'));
    await clock.until(() => batons[0].metrics().mode === 'broadcast', { what: 'fallback to broadcast-only' });
    const metrics = batons[0].metrics();
    assert.ok(metrics.glue.leaseFailures >= 3);
    assert.ok(metrics.storageFailures >= 3);
    assert.equal(metrics.degraded, true);
    assert.equal(batons[0].support().degraded, true);
    await clock.until(() => leaderIndexes(handles).length === 1, { what: 'a broadcast-only leader' });
  });
});

describe('broadcast-only authority', () => {
  test('hand-over on dispose (named successor, no timeout) and on crash (after suspectMs)', async () => {
    const clock = virtualClock();
    const { tabs } = openTabs(3, { clock });
    const batons = batonsFor(tabs, { authority: 'broadcast' });
    const handles = batons.map((b) => b.lead('ws'));
    await clock.until(() => leaderIndexes(handles).length === 1 && handles.every((h) => h.leader() !== null), { what: 'one leader that all know' });
    const [first] = leaderIndexes(handles);
    assert.equal(batons[first].metrics().mode, 'broadcast');

    let t0 = clock.now();
    batons[first].dispose();
    await clock.until(() => leaderIndexes(handles).length === 1, { what: 'a leader after the dispose' });
    const afterDispose = clock.now() - t0;
    console.log(`# broadcast-only: hand-over ${afterDispose} virtual ms after dispose`);
    const [second] = leaderIndexes(handles);
    assert.ok(batons[second].log().some((t) => t.reason === 'leader-goodbye'));
    assert.ok(afterDispose < FAST.suspectMs, `no suspect timeout waited for (${afterDispose} ms)`);

    t0 = clock.now();
    tabs[second].crash();
    const live = handles.filter((_, i) => i !== first && i !== second);
    await clock.until(() => leaderIndexes(live).length === 1, { what: 'a leader after the crash' });
    const afterCrash = clock.now() - t0;
    console.log(`# broadcast-only: hand-over ${afterCrash} virtual ms after a crash`);
    // Its last heartbeat was at most a heartbeat before the crash.
    assert.ok(afterCrash >= FAST.suspectMs - FAST.heartbeatMs, `not before the suspect timeout (${afterCrash} ms)`);
    const third = batons[handles.indexOf(live[0])];
    assert.deepEqual(third.log().filter((t) => t.at >= t0 && t.to === 'candidate').map((t) => t.reason), ['takeover'], 'one takeover, no retry');
    assert.ok(live[0].token().epoch > handles[second].token().epoch);
  });
});

describe('durable epoch counter', () => {
  test('localStorage: epochs keep rising across "reloads" (new Batons, same origin)', async () => {
    const clock = virtualClock();
    const browser = createBrowser();
    const epochs = [];
    for (let reload = 0; reload < 3; reload += 1) {
      const tab = openTab(browser, `reload-${reload}`, { clock });
      const baton = createBaton({ namespace: 'epochs', env: tab.env, ...FAST });
      const handle = baton.lead('ws');
      await clock.until(() => handle.state() === 'leader', { what: 'the reloaded tab leads' });
      epochs.push(handle.token().epoch);
      baton.dispose();
    }
    assert.deepEqual(epochs, [1, 2, 3]);
    assert.equal(browser.localStorage.getItem('baton/epochs/epoch/ws'), '3');
  });

  test('IndexedDB where localStorage is missing (a worker)', async () => {
    const clock = virtualClock();
    const idb = createIndexedDB();
    const browser = createBrowser();
    const epochs = [];
    for (let reload = 0; reload < 2; reload += 1) {
      const tab = openTab(browser, `worker-${reload}`, { indexedDB: idb.indexedDB, clock });
      tab.env.localStorage = undefined;
      tab.env.document = undefined; // a dedicated worker has no document
      const baton = createBaton({ namespace: 'epochs-w', env: tab.env, ...FAST });
      const handle = baton.lead('ws');
      await clock.until(() => handle.state() === 'leader', { what: 'the worker leads' });
      epochs.push(handle.token().epoch);
      assert.equal(baton.metrics().mode, 'web-locks');
      assert.equal(baton.metrics().degraded, false);
      baton.dispose();
    }
    assert.deepEqual(epochs, [1, 2]);
    assert.equal(idb.peek('baton/epochs-w', 'epochs', 'ws'), 2);
  });

  test('neither works: degraded (max observed + 1), reported in metrics and support, not thrown', async () => {
    const clock = virtualClock();
    const browser = createBrowser();
    const tab = openTab(browser, 'blocked', { indexedDB: null, clock });
    browser.localStorage.fail('SecurityError');
    const baton = createBaton({ namespace: 'epochs-d', env: tab.env, ...FAST });
    open.push(baton);
    const handle = baton.lead('ws');
    await clock.until(() => handle.state() === 'leader', { what: 'the tab leads' });
    assert.equal(handle.token().epoch, 1);
    const metrics = baton.metrics();
    assert.equal(metrics.degraded, true);
    assert.equal(metrics.glue.epochsNotDurable, 1);
    assert.equal(metrics.storageFailures, 1);
    assert.equal(baton.support().degraded, true);
    browser.localStorage.fail(false);
  });
});
