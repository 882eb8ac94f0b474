// The orchestrator (createBaton / baton.lead) against the BUILT package, many "tabs" in one
// process over the tab-baton/testing fakes: one leader, hand-over on dispose, on crash and
// from a frozen leader, step-down signals, eligibility, lifecycle, bfcache, observability.
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, DeposedError, enableTestHooks, load, __internal } from 'tab-baton';
import { createBrowser } from 'tab-baton/testing';
import { leaderIndexes, openTabs, waitFor, watchLeaders } from './helpers/tabs.js';
import { virtualClock } from './helpers/virtual-clock.js';

const FAST = { heartbeatMs: 40, suspectMs: 150 };
let open = [];

/** Creates one Baton per tab (disposed after each test). */
function batonsFor(tabs, options = {}) {
  const batons = tabs.map((tab) => createBaton({ namespace: 'app', id: tab.id, env: tab.env, ...FAST, ...options }));
  open.push(...batons);
  return batons;
}

afterEach(() => {
  for (const baton of open) baton.dispose();
  open = [];
});

describe('election (Web Locks authority)', () => {
  test('five tabs elect exactly one leader, and every tab knows it', async () => {
    // On a virtual clock: with real 40 ms heartbeats, a loaded machine can delay them past
    // the 150 ms suspect timeout, and a follower steals from a healthy leader.
    await load();
    const clock = virtualClock();
    const { tabs } = openTabs(5, { clock });
    const batons = batonsFor(tabs);
    const handles = batons.map((b) => b.lead('ws'));
    const watch = watchLeaders(handles);

    await clock.until(() => leaderIndexes(handles).length === 1 && handles.every((h) => h.leader() !== null), { what: 'one leader that every tab knows' });
    const [leader] = leaderIndexes(handles);
    for (const [i, handle] of handles.entries()) {
      assert.equal(handle.leader().id, tabs[leader].id, `tab ${i} knows the leader`);
      assert.equal(handle.leader().isMe, i === leader);
      assert.equal(handle.leader().epoch, 1);
    }
    assert.deepEqual(handles[leader].token(), { resource: 'ws', owner: tabs[leader].id, epoch: 1 });
    assert.equal(handles.filter((h) => h.state() === 'follower').length, 4);
    assert.ok(handles.every((h, i) => i === leader || h.token() === null), 'followers hold no token');

    // Stays stable over many heartbeats.
    await clock.until(() => batons[leader].metrics().glue.timerFires > 3, { what: 'the leader ticks from its timer' });
    assert.deepEqual(leaderIndexes(handles), [leader]);
    assert.equal(watch.overlaps(), 0);
    assert.equal(batons[leader].metrics().mode, 'web-locks');
    assert.equal(batons[leader].metrics().termsWon, 1);
  });

  test('hand-over on dispose: next tab leads within a few ms, with a higher epoch', async () => {
    const { tabs } = openTabs(3);
    const batons = batonsFor(tabs);
    const signals = [];
    const handles = batons.map((b, i) => b.lead('ws', { run: (token, signal) => signals.push({ i, token, signal }) }));
    await waitFor(() => leaderIndexes(handles).length === 1);
    const [first] = leaderIndexes(handles);
    const firstRun = signals.find((s) => s.i === first);
    assert.equal(firstRun.token.epoch, 1);

    const t0 = Date.now();
    batons[first].dispose();
    assert.equal(firstRun.signal.aborted, true, 'the leader signal aborts at dispose');
    assert.equal(firstRun.signal.reason.code, 'DEPOSED');
    // The class users test with `instanceof`, and an AbortError DOMException where one exists.
    assert.ok(firstRun.signal.reason instanceof DeposedError);
    assert.ok(firstRun.signal.reason instanceof DOMException);
    assert.equal(firstRun.signal.reason.name, 'AbortError');
    assert.equal(handles[first].state(), 'released');
    await waitFor(() => leaderIndexes(handles).length === 1);
    console.log(`# web locks: hand-over ${Date.now() - t0} ms after dispose`);
    const [second] = leaderIndexes(handles);
    assert.notEqual(second, first);
    assert.equal(handles[second].token().epoch, 2);
    // Handed over by the lock queue, not taken from a silent leader.
    const won = batons[second].log().filter((t) => t.to === 'candidate').map((t) => t.reason);
    assert.deepEqual(won, ['lock-granted']);
  });

  test('hand-over on crash: the broker drops the locks, the channel goes silent', async () => {
    const { tabs } = openTabs(3);
    const batons = batonsFor(tabs);
    const handles = batons.map((b) => b.lead('ws'));
    await waitFor(() => leaderIndexes(handles).length === 1);
    const [first] = leaderIndexes(handles);
    const oldToken = handles[first].token();

    tabs[first].crash();
    const live = handles.filter((_, i) => i !== first);
    await waitFor(() => leaderIndexes(live).length === 1, { what: 'a new leader among the live tabs' });
    const next = live.find((h) => h.state() === 'leader');
    assert.ok(next.token().epoch > oldToken.epoch);
    // The others learn the new leader from its heartbeat.
    await waitFor(() => live.every((h) => h.leader()?.epoch === next.token().epoch));
  });

  test('a frozen leader that still handles messages abdicates when asked (stalled)', async () => {
    // On a virtual clock: messages (real zero-delay deliveries) are all handled between two
    // virtual instants, so the frozen leader always answers the abdication request before a
    // follower's steal grace can end, however loaded the machine. In real time, a delivery
    // late by more than the grace let the follower steal first (lock-lost), also correct.
    await load();
    const clock = virtualClock();
    const browser = createBrowser();
    const frozen = new Set();
    const batons = ['t0', 't1', 't2'].map((id) => {
      const env = {
        ...browser.tab(id),
        indexedDB: null,
        now: clock.now,
        // A frozen tab's timers stop; its message handlers still run (Chromium's frozen tab).
        setTimeout: (fn, ms) => clock.setTimeout(() => frozen.has(id) || fn(), ms),
        clearTimeout: clock.clearTimeout,
      };
      return createBaton({ namespace: 'app', id, env, ...FAST });
    });
    open.push(...batons);
    const handles = batons.map((b) => b.lead('ws'));
    await clock.run(1_000);
    assert.equal(leaderIndexes(handles).length, 1, 'one leader');
    const [first] = leaderIndexes(handles);

    frozen.add(batons[first].id);
    await clock.run(2_000);
    const live = handles.filter((_, i) => i !== first);
    assert.equal(leaderIndexes(live).length, 1, 'a new leader');
    assert.notEqual(handles[first].state(), 'leader', 'the frozen leader stepped down in its message handler');
    const log = batons[first].log();
    assert.ok(log.some((t) => t.from === 'leader' && t.reason === 'stalled'), JSON.stringify(log));
    const next = handles.findIndex((h) => h.state() === 'leader');
    assert.equal(batons[next].metrics().steals, 0, 'taken over after the abdication, not stolen');
  });

  test('a frozen, deaf leader is replaced by steal; its lock request rejects and it is deposed', async () => {
    // On a virtual clock: in real time, heartbeats late under load can make a follower
    // steal before the freeze, and the count of steals is not one.
    await load();
    const clock = virtualClock();
    const { tabs } = openTabs(3, { clock });
    const batons = batonsFor(tabs);
    const handles = batons.map((b) => b.lead('ws'));
    const signals = [];
    handles.forEach((h) => h.onChange((c) => c.type === 'deposed' && signals.push(c)));
    await clock.until(() => leaderIndexes(handles).length === 1, { what: 'one leader' });
    const [first] = leaderIndexes(handles);
    const stale = handles[first].token();

    tabs[first].freeze({ deaf: true });
    const live = handles.filter((_, i) => i !== first);
    await clock.until(() => leaderIndexes(live).length === 1, { what: 'a stealing leader' });
    const thief = batons[handles.indexOf(live.find((h) => h.state() === 'leader'))];
    assert.equal(thief.metrics().steals, 1);
    // The stolen lock's request rejected: reported to the core as lock_lost.
    await clock.until(() => handles[first].state() !== 'leader', { what: 'the frozen leader deposed' });
    assert.equal(signals.find((c) => c.token.epoch === stale.epoch)?.reason, 'lock-lost');
    assert.equal(batons[first].metrics().glue.locksLost, 1);
    tabs[first].thaw();
  });

  test('release() and abdicate(): leadership moves, the run signal aborts', async () => {
    const { tabs } = openTabs(2);
    const batons = batonsFor(tabs);
    let signal;
    const handles = batons.map((b) => b.lead('ws', { run: (_token, s) => { signal = s; } }));
    await waitFor(() => leaderIndexes(handles).length === 1);
    const [first] = leaderIndexes(handles);
    const other = 1 - first;

    handles[first].abdicate();
    await waitFor(() => handles[other].state() === 'leader');
    assert.equal(signal.aborted, false, 'the new leader runs');
    assert.ok(batons[first].log().some((t) => t.reason === 'abdicate'));
    assert.notEqual(handles[first].state(), 'released', 'abdicate keeps the tab in the race');

    handles[other].release();
    assert.equal(signal.aborted, true);
    assert.equal(signal.reason.reason, 'released');
    assert.equal(handles[other].state(), 'released');
    assert.equal(handles[other].token(), null);
    await waitFor(() => handles[first].state() === 'leader', { what: 'the abdicated tab leads again' });
    handles[other].release(); // idempotent
  });

  test('eligibility: only tabs with the capability lead; a hidden-excluded tab steps down when hidden', async () => {
    // On a virtual clock, so that "nobody else leads" is checked over the same span of
    // heartbeats and suspect timeouts however loaded the machine.
    await load();
    const clock = virtualClock();
    const { tabs } = openTabs(3, { clock });
    const batons = tabs.map((tab, i) =>
      createBaton({ namespace: 'app', id: tab.id, env: tab.env, ...FAST, capabilities: i === 2 ? ['ws.owner.v1'] : [] }));
    open.push(...batons);
    const handles = batons.map((b) => b.lead('ws', { eligible: { capability: 'ws.owner.v1', hidden: false } }));
    await clock.until(() => handles[2].state() === 'leader', { what: 'the capable tab leads' });
    await clock.run(2 * FAST.suspectMs);
    assert.deepEqual(leaderIndexes(handles), [2]);

    tabs[2].setVisibility('hidden');
    await clock.until(() => handles[2].state() !== 'leader', { what: 'the hidden tab steps down' });
    assert.ok(batons[2].log().some((t) => t.from === 'leader' && t.reason === 'hidden'));
    await clock.run(2 * FAST.suspectMs);
    assert.deepEqual(leaderIndexes(handles), [], 'nobody else is eligible');
    tabs[2].setVisibility('visible');
    await clock.until(() => handles[2].state() === 'leader', { what: 'the visible tab leads again' });
  });

  test('a queued request the core withdraws is aborted silently; re-queued when eligible again', async () => {
    const { browser, tabs } = openTabs(2);
    const batons = batonsFor(tabs);
    const handles = batons.map((b) => b.lead('ws', { eligible: { hidden: false } }));
    await waitFor(() => handles[0].state() === 'leader');
    const pendingOf = async (id) => (await browser.locks.query()).pending.filter((l) => l.clientId === id).length;
    await waitFor(() => batons[1].metrics().lockRequests === 1);
    assert.equal(await pendingOf('t1'), 1, 't1 queues behind the leader');

    tabs[1].setVisibility('hidden'); // not eligible any more: the core releases the queued request
    await waitFor(async () => (await pendingOf('t1')) === 0, { what: 'the request was withdrawn (AbortSignal)' });
    const glue = batons[1].metrics().glue;
    assert.equal(glue.lockErrors, 0, 'our own abort is not reported as a failure');
    assert.equal(glue.locksLost, 0);
    assert.equal(batons[1].metrics().backoffs, 0);

    tabs[1].setVisibility('visible');
    await waitFor(() => batons[1].metrics().lockRequests === 2);
    assert.equal(await pendingOf('t1'), 1);
    batons[0].dispose();
    await waitFor(() => handles[1].state() === 'leader');
  });

  test('lifecycle events: freeze steps down at once, resume rejoins; offline with network: true steps down', async () => {
    const { tabs } = openTabs(2);
    const batons = batonsFor(tabs);
    const handles = batons.map((b) => b.lead('ws', { eligible: { network: true } }));
    await waitFor(() => leaderIndexes(handles).length === 1);
    const [first] = leaderIndexes(handles);
    const other = 1 - first;

    tabs[first].fire('document', 'freeze');
    await waitFor(() => handles[other].state() === 'leader');
    assert.ok(batons[first].log().some((t) => t.reason === 'frozen'));
    tabs[first].fire('document', 'resume');
    await waitFor(() => batons[other].presence().find((p) => p.id === tabs[first].id)?.lifecycle === 'restored', { what: 'the others see the tab restored' });

    tabs[other].fire('window', 'offline');
    await waitFor(() => handles[first].state() === 'leader');
    assert.ok(batons[other].log().some((t) => t.reason === 'offline'));
  });

  test('bfcache: pagehide releases at once, pageshow (persisted) rejoins with a new generation', async () => {
    const { tabs } = openTabs(2);
    const batons = batonsFor(tabs);
    const handles = batons.map((b) => b.lead('ws'));
    await waitFor(() => leaderIndexes(handles).length === 1);
    const [first] = leaderIndexes(handles);
    const other = 1 - first;

    tabs[first].fire('window', 'pagehide', { persisted: true });
    assert.notEqual(handles[first].state(), 'leader');
    await waitFor(() => handles[other].state() === 'leader');
    assert.equal(batons[first].presence().length, 0, 'a hidden page knows nobody');

    tabs[first].fire('window', 'pageshow', { persisted: true });
    assert.equal(batons[first].metrics().generation, 2);
    await waitFor(() => batons[other].presence().some((p) => p.id === tabs[first].id && p.generation === 2));
    handles[other].abdicate();
    await waitFor(() => handles[first].state() === 'leader', { what: 'the restored tab leads again' });
    assert.ok(batons[first].log().some((t) => t.generation === 1) && batons[first].log().some((t) => t.generation === 2));
  });

  test('pagehide does only the closing step: the lock goes back and the goodbye names the successor; the rest waits for a later task, which a page torn down never runs', async () => {
    // On a virtual clock: in real time, heartbeats late under load could let a follower
    // steal after a suspect timeout, and 'lock-granted' would not be the reason.
    await load();
    const clock = virtualClock();
    const { tabs } = openTabs(3, { clock });
    const batons = batonsFor(tabs);
    const handles = batons.map((b) => b.lead('ws'));
    const watch = watchLeaders(handles);
    await clock.until(() => leaderIndexes(handles).length === 1, { what: 'one leader' });
    const [first] = leaderIndexes(handles);
    await clock.until(() => handles.every((h) => h.leader()?.id === tabs[first].id), { what: 'every tab knows the leader' });
    const oldEpoch = handles[first].token().epoch;
    const leaving = tabs[first];

    leaving.fire('window', 'pagehide');
    assert.notEqual(handles[first].state(), 'leader', 'stepped down in the handler');
    assert.ok(leaving.channels.every((c) => !c.closedByPage), 'the dispose step (which closes the channel) did not run in the handler');
    leaving.freeze({ deaf: true }); // torn down: no later task of this page runs, no frame reaches it
    await clock.until(() => leaderIndexes(handles).some((i) => i !== first), { what: 'a next leader' });
    const next = leaderIndexes(handles).find((i) => i !== first);
    const elected = watch.events.find((e) => e.index === next && e.type === 'elected');
    assert.ok(elected.epoch > oldEpoch, 'a newer term');
    assert.equal(batons[next].log().filter((t) => t.to === 'candidate').pop().reason, 'lock-granted', 'the lock was given back in the handler: granted, not stolen after a suspect timeout');
    assert.deepEqual(leaderIndexes(handles), [next]);
    assert.ok(leaving.channels.every((c) => !c.closedByPage), 'still nothing more ran in the leaving page');
    const deposed = () => watch.events.some((e) => e.index === first && e.type === 'deposed');
    assert.ok(!deposed(), 'nor did its callbacks: the deposed notice waits for the later task');

    leaving.thaw(); // a page that lives on (the bfcache) finishes leaving in that later task
    await clock.until(() => leaving.channels.every((c) => c.closedByPage), { what: 'the dispose step ran after the handler' });
    await clock.until(deposed, { what: 'the deposed notice in that later task' });
    assert.ok(batons[first].log().some((t) => t.to === 'stepping-down' && t.reason === 'closing'), 'its log kept the closing step');
  });

  test('several resources per Baton are independent', async () => {
    const { tabs } = openTabs(2);
    const batons = batonsFor(tabs);
    const ws = batons.map((b) => b.lead('ws'));
    const sync = batons.map((b) => b.lead('sync'));
    await waitFor(() => leaderIndexes(ws).length === 1 && leaderIndexes(sync).length === 1);
    const [wsLeader] = leaderIndexes(ws);
    ws[wsLeader].abdicate();
    await waitFor(() => ws[1 - wsLeader].state() === 'leader');
    assert.equal(leaderIndexes(sync).length, 1, 'sync is not affected');
    assert.throws(() => batons[0].lead('ws'), /already leads "ws"/);
  });

  test('observability: presence, metrics, log, support, test hooks', async () => {
    // On a virtual clock: presence says 'alive' only if heartbeats came within the suspect
    // timeout, which a loaded machine does not keep in real time.
    enableTestHooks();
    await load();
    const clock = virtualClock();
    const { tabs } = openTabs(3, { clock });
    const batons = tabs.map((tab, i) => createBaton({
      namespace: 'app', id: tab.id, env: tab.env, ...FAST, appVersion: '2.1.0', testHooks: i === 0,
    }));
    open.push(...batons);
    const handles = batons.map((b) => b.lead('ws'));
    await clock.until(() => leaderIndexes(handles).length === 1 && batons[0].presence().length === 2, { what: 'one leader; t0 sees the others' });

    const presence = batons[0].presence();
    assert.deepEqual(presence.map((p) => p.id).sort(), ['t1', 't2']);
    for (const p of presence) {
      assert.equal(p.appVersion, '2.1.0');
      assert.equal(p.liveness, 'alive');
      assert.equal(p.generation, 1);
    }
    const metrics = batons[0].metrics();
    for (const key of ['framesSent', 'framesReceived', 'droppedMalformed', 'termsWon', 'stepDowns', 'lockRequests']) {
      assert.equal(typeof metrics[key], 'number', key);
    }
    assert.equal(metrics.mode, 'web-locks');
    assert.equal(metrics.degraded, false);
    assert.equal(typeof metrics.glue.droppedNotBinary, 'number');
    assert.ok(metrics.framesReceived > 0);
    const [leader] = leaderIndexes(handles);
    assert.deepEqual(batons[leader].log().map((t) => `${t.from}->${t.to}:${t.reason}`).slice(0, 2),
      ['follower->candidate:lock-granted', 'candidate->leader:epoch-ready']);
    assert.deepEqual(batons[0].support(), {
      webLocks: true, broadcastChannel: true, indexedDB: true, localStorage: true,
      authority: 'web-locks', reason: 'navigator.locks is available', mode: 'web-locks', degraded: false, degradedReason: null,
      core: { state: 'ready', error: null },
    });

    const hooks = globalThis.__baton;
    assert.equal(hooks.id, 't0');
    assert.equal(hooks.presenceSnapshot().length, 2);
    assert.equal(hooks.leadershipState('ws').state, handles[0].state());
    assert.equal(hooks.leadershipState('ws').leader, tabs[leader].id);
    const elections = batons[0].metrics().elections;
    hooks.forceElection('ws');
    assert.ok(batons[0].metrics().elections > elections, 'forceElection evaluates at once');

    // t0 asked for the lock first, so it leads; a simulated freeze hands over.
    assert.equal(leader, 0);
    hooks.simulateFreeze();
    assert.equal(hooks.leadershipState('ws').state, 'follower');
    await clock.until(() => leaderIndexes(handles).length === 1, { what: 'a leader after the freeze' });
    assert.notEqual(leaderIndexes(handles)[0], 0);
    const timerFires = batons[0].metrics().glue.timerFires;
    await clock.run(3 * FAST.heartbeatMs);
    assert.equal(batons[0].metrics().glue.timerFires, timerFires, 'a frozen tab\'s timer does not fire');
    hooks.simulateRestore();
    await clock.until(() => batons[0].metrics().glue.timerFires > timerFires, { what: 'the restored tab\'s timer fires' });
    await clock.until(() => batons[1].presence().find((p) => p.id === 't0')?.lifecycle === 'restored', { what: 't1 sees t0 restored' });
    batons[0].dispose();
    assert.equal(globalThis.__baton, undefined, 'dispose removes the hooks');
  });

  test('non-binary messages on the channel are dropped and counted; garbage frames are counted by the core', async () => {
    const { browser, tabs } = openTabs(1);
    const [baton] = batonsFor(tabs);
    baton.lead('ws');
    const intruder = new browser.BroadcastChannel('baton/app/v1');
    intruder.postMessage('hello');
    intruder.postMessage({ kind: 'leader' });
    intruder.postMessage(new Uint8Array([1, 2, 3]));
    intruder.postMessage(new Uint8Array(100_000)); // oversized
    await waitFor(() => baton.metrics().glue.droppedNotBinary === 2 && baton.metrics().droppedOversized === 1);
    assert.equal(baton.metrics().droppedMalformed, 1);
    intruder.close();
  });

  test('every core is freed after dispose', async () => {
    // A core lives until its last storage operation has answered.
    await waitFor(() => __internal.liveCores() === 0, { what: 'every core freed' });
  });
});
