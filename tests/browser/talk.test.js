// Requests to the leader, leader state and fenced effects in real headless Chromium, each
// tab its own window: requests survive the leader's close, crash and freeze (none lost, each
// served at least once, duplicates visible by request id, a thawed stale term's answers
// dropped while the requests still wait), a request queued until a leader exists, an aborted
// one, NO_LEADER after the timeout, the accept filter, forwarded errors, leader state after a
// hand-over, the fenced IndexedDB transaction refusing a thawed stale leader, and a shared
// worker rejecting a stale owner's messages with Fence.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowserFixture } from './fixture.js';
import { closeTab, crashTab, freezeTab, thawTab } from './harness.js';
import { uniqueNs, waitFor } from './demo-helpers.js';

const fixture = useBrowserFixture();
const REQUESTS = 5;

/** Opens talk pages with these ids in one namespace; each has `.t(fn, arg)` to run in the page. */
async function openTalk(ns, ids, query = '') {
  const tabs = [];
  for (const id of ids) {
    const tab = await fixture.openTestPage(`talk.html?ns=${ns}&id=${id}${query}`);
    await tab.page.waitForFunction(() => window.tReady === true);
    tab.id = id;
    tab.t = (fn, arg) => tab.page.evaluate(fn, arg);
    tabs.push(tab);
  }
  return tabs;
}

async function leaderOf(tabs, resource, { not = null } = {}) {
  return waitFor(async () => {
    for (const tab of tabs) {
      if (tab === not || tab.page.isClosed()) continue;
      if ((await tab.t((r) => window.t.role(r), resource)) === 'leader') return tab;
    }
    return null;
  }, { timeoutMs: 15000, what: `a leader of ${resource}` });
}

const results = (tab) => tab.t(() => window.t.results);
const servedByLeaderOps = (list) => list.map((s) => s.message?.op);
const served = (tab) => tab.t(() => window.t.served);

async function closeAll(tabs) {
  for (const tab of tabs) await closeTab(tab).catch(() => {});
}

describe('requests across a hand-over', { timeout: 120000 }, () => {
  for (const how of ['close', 'crash', 'freeze']) {
    it(`the leader ${{ close: 'closes', crash: 'crashes', freeze: 'freezes' }[how]} with ${REQUESTS} requests in flight: all answered by the next leader, duplicates visible by id`, async () => {
      const ns = uniqueNs(`talk-${how}`);
      const tabs = await openTalk(ns, ['a', 'b', 'c', 'asker']);
      const [a, b, c, asker] = tabs;
      // Every candidate acknowledges and holds its answers until the test lets it go on.
      for (const tab of [a, b, c]) await tab.t(() => { window.t.setHold(true); window.t.lead('q'); });
      const first = await leaderOf(tabs, 'q');
      for (let i = 0; i < REQUESTS; i += 1) await asker.t((k) => window.t.ask(`r${k}`, 'q', { n: k }, { timeoutMs: 30000 }), i);
      await waitFor(async () => (await served(first)).length === REQUESTS, { timeoutMs: 10000, what: 'the first leader got every request' });
      const firstServed = await served(first);
      const firstEpoch = firstServed[0].epoch;

      if (how === 'close') await closeTab(first);
      else if (how === 'crash') await crashTab(first);
      else await freezeTab(first);

      const survivors = [a, b, c].filter((t) => t !== first);
      const next = await leaderOf(survivors, 'q');
      await waitFor(async () => (await served(next)).length === REQUESTS, { timeoutMs: 20000, what: 'the next leader got every request again' });
      if (how === 'freeze') {
        // Thawed, the old leader finishes its serve calls while the requests still wait for
        // the next leader: each of its answers is dropped, where it was made (the old leader
        // learnt its term ended) or where it arrived (an older term than the asker's newest).
        await thawTab(first);
        await first.t(() => window.t.setHold(false));
        const dropped = async () => ((await first.t(() => window.t.metrics('q'))).serve?.lateAnswers ?? 0) + (await asker.t(() => window.t.metrics('q'))).staleAnswers;
        const delivered = async () => Object.values(await results(asker)).filter((r) => r.status !== 'pending').length;
        await waitFor(async () => (await dropped()) + (await delivered()) === REQUESTS, { timeoutMs: 10000, what: 'the stale term\'s answers dropped or delivered' });
        assert.equal(await delivered(), 0, 'no stale answer delivered');
      }
      await next.t(() => window.t.setHold(false));
      await waitFor(async () => Object.values(await results(asker)).every((r) => r.status !== 'pending'), { timeoutMs: 20000, what: 'every request answered' });
      const answers = await results(asker);
      const nextServed = await served(next);
      for (let i = 0; i < REQUESTS; i += 1) {
        const r = answers[`r${i}`];
        assert.equal(r.status, 'ok', `request ${i}: ${JSON.stringify(r)}`);
        assert.equal(r.answer.value.by, next.id, 'answered by the next leader');
        assert.ok(r.answer.epoch > firstEpoch, 'from a newer term');
        assert.deepEqual(r.answer.value.echo, { n: i });
        // Served at least once: by the first leader and again by the next, with the same id.
        assert.ok(firstServed.some((s) => s.requestId === r.answer.requestId));
        assert.ok(nextServed.some((s) => s.requestId === r.answer.requestId), 'the duplicate carries the same request id');
      }
      assert.equal((await asker.t(() => window.t.metrics('q'))).answered, REQUESTS);
      await closeAll(tabs);
    });
  }
});

describe('requests without a leader, refused, failing', { timeout: 60000 }, () => {
  it('NO_LEADER after timeoutMs; a request queued until a leader exists is answered; an aborted one rejects with its reason; the accept filter refuses; errors thrown by serve are forwarded', async () => {
    const ns = uniqueNs('talk-errors');
    const tabs = await openTalk(ns, ['leader', 'asker']);
    const [leader, asker] = tabs;
    await asker.t(() => window.t.ask('none', 'nobody', 1, { timeoutMs: 300 }));
    // Asked before any tab leads: queued (re-sent with backoff), answered once one does.
    await asker.t(() => window.t.ask('queued', 'cmd', { op: 'early' }, { timeoutMs: 30000 }));
    await asker.t(() => window.t.ask('aborted', 'cmd', { op: 'never' }, { abortable: true }));
    await asker.t(() => window.t.abort('aborted'));
    await waitFor(async () => (await results(asker)).none.status !== 'pending', { timeoutMs: 10000, what: 'NO_LEADER' });
    assert.equal((await results(asker)).queued.status, 'pending', 'still waiting for a leader');
    await leader.t(() => window.t.lead('cmd'));
    await leaderOf([leader], 'cmd');
    await asker.t(() => window.t.ask('refused', 'cmd', { privileged: true, op: 'drop' }));
    await asker.t(() => window.t.ask('failed', 'cmd', { fail: 'divide' }));
    await asker.t(() => window.t.ask('fine', 'cmd', { op: 'read' }));
    await waitFor(async () => Object.values(await results(asker)).every((r) => r.status !== 'pending'), { timeoutMs: 10000, what: 'all settled' });
    const r = await results(asker);
    assert.equal(r.none.status, 'error');
    assert.equal(r.none.isNoLeader, true);
    assert.equal(r.none.code, 'NO_LEADER');
    assert.equal(r.refused.code, 'REFUSED');
    assert.equal(r.refused.isRequestError, true);
    assert.deepEqual({ name: r.failed.name, code: r.failed.code, message: r.failed.message, isRemote: r.failed.isRemote }, { name: 'RangeError', code: 'E_CANNOT', message: 'cannot divide', isRemote: true });
    assert.equal(r.fine.status, 'ok');
    assert.equal(r.queued.status, 'ok');
    assert.deepEqual(r.queued.answer.value.echo, { op: 'early' });
    assert.equal(r.aborted.status, 'error');
    assert.equal(r.aborted.isAbortReason, true, 'rejected with the signal\'s reason');
    assert.equal(r.aborted.name, 'AbortError');
    assert.ok(servedByLeaderOps(await served(leader)).every((op) => op !== 'never'), 'an aborted request is not served');
    const servedByLeader = await served(leader);
    assert.ok(servedByLeader.every((s) => !s.message.privileged), 'a refused command never reaches serve');
    await closeAll(tabs);
  });
});

describe('leader state', { timeout: 60000 }, () => {
  it('every tab follows the leader\'s state; a new tab gets it at once; after a hand-over it is stale, then the new term\'s', async () => {
    const ns = uniqueNs('talk-state');
    const tabs = await openTalk(ns, ['a', 'b', 'watcher']);
    const [a, b, watcher] = tabs;
    await a.t(() => window.t.lead('ws'));
    await b.t(() => window.t.lead('ws'));
    await watcher.t(() => window.t.watch('ws'));
    const first = await leaderOf([a, b], 'ws');
    assert.equal(await first.t(() => window.t.setState('ws', { connected: true })), 'ok');
    const last = (tab) => tab.t(() => window.t.states.ws.at(-1) ?? null);
    await waitFor(async () => (await last(watcher))?.value?.connected === true, { what: 'the watcher sees the state' });
    const late = (await openTalk(ns, ['late']))[0];
    await late.t(() => window.t.watch('ws'));
    await waitFor(async () => (await last(late))?.value?.connected === true, { what: 'a new tab gets it at once' });
    const firstEpoch = (await last(watcher)).epoch;

    await closeTab(first);
    await waitFor(async () => (await last(watcher)).stale === true, { what: 'stale after the term ended' });
    const next = await leaderOf([a, b].filter((t) => t !== first), 'ws');
    assert.equal(await next.t(() => window.t.setState('ws', { connected: 'reconnecting' })), 'ok');
    await waitFor(async () => (await last(watcher)).value.connected === 'reconnecting', { what: 'the new term\'s state' });
    const now = await last(watcher);
    assert.ok(now.epoch > firstEpoch && now.stale === false && now.leader === next.id);
    await closeAll(tabs.concat(late).filter((t) => t !== first));
  });
});

describe('fenced effects where they land', { timeout: 90000 }, () => {
  it('IndexedDB: a thawed stale leader\'s fenced transaction is refused and writes nothing; a shared worker rejects its messages', async () => {
    const ns = uniqueNs('talk-idb');
    const tabs = await openTalk(ns, ['a', 'b']);
    for (const tab of tabs) await tab.t(() => window.t.lead('queue'));
    const old = await leaderOf(tabs, 'queue');
    const other = tabs.find((t) => t !== old);
    const oldToken = await old.t(() => window.t.keepToken('queue'));
    assert.equal(await old.t(() => window.t.fencedWrite('queue', 'batch-1', 'in-flight by old')), 'ok');
    assert.equal((await old.t(() => window.t.worker('queue', 'index-1'))).ok, true);

    await freezeTab(old);
    await leaderOf([other], 'queue');
    const newToken = await other.t(() => window.t.keepToken('queue'));
    assert.ok(newToken.epoch > oldToken.epoch);
    assert.equal(await other.t(() => window.t.fencedWrite('queue', 'batch-1', 'in-flight by new')), 'ok');
    assert.equal((await other.t(() => window.t.worker('queue', 'index-2'))).ok, true);

    await thawTab(old);
    // The thawed tab writes with the token it held: refused inside the transaction.
    assert.equal(await old.t(() => window.t.fencedWrite('queue', 'batch-1', 'committed by old')), 'STALE_OWNER');
    assert.equal(await old.t(() => window.t.fencedWrite('queue', 'batch-2', 'new batch by old')), 'STALE_OWNER');
    assert.deepEqual(await other.t(() => window.t.items()), { 'batch-1': 'in-flight by new' }, 'nothing of the stale write landed');
    const refused = await old.t(() => window.t.worker('queue', 'index-3'));
    assert.deepEqual({ ok: refused.ok, error: refused.error, highest: refused.highest }, { ok: false, error: 'STALE_OWNER', highest: newToken.epoch });
    assert.deepEqual(refused.done.map((d) => d.job), ['index-1', 'index-2'], 'the worker ran no stale job');
    await closeAll(tabs);
  });
});
