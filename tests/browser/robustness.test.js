// End-to-end robustness in headless Chromium: storage blocked (the election still works and
// reports degraded mode), a hostile page on the same origin posting malformed, oversized,
// foreign-version and forged messages (every tab keeps working and counts the drops), and
// the relay over a WebSocket source: one connection for all tabs, hand-over on close with
// resume, and a leader that is alive but whose source went silent is asked to step down.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowserFixture } from './fixture.js';
import { closeTab } from './harness.js';
import { startWsFeed } from './ws-feed.js';
import {
  FAST,
  assertConsecutive,
  assertFeedsClean,
  assertResumePoint,
  checkRelayHandover,
  closeGroup,
  handoverRow,
  openGroup,
  snapAll,
  sleep,
  timingsTable,
  uniqueNs,
  waitFor,
  waitForLeader,
  waitForServer,
} from './demo-helpers.js';

const RESOURCES = ['websocket-owner', 'sse-relay', 'token-refresh'];
const fixture = useBrowserFixture();
const timings = timingsTable();

after(() => {
  timings.print('hand-over times (robustness)');
});

async function assertSingleLeaders(tabs) {
  for (const resource of RESOURCES) await waitForLeader(tabs, resource);
  await waitForServer(fixture.server, (st) => st.openStreams === 1 && st.openSockets === 1, 'one SSE stream and one WebSocket');
}

describe('storage blocked (localStorage and indexedDB.open throw)', { timeout: 90000 }, () => {
  let tabs = [];
  let leader;
  after(() => closeGroup(tabs, fixture.server));

  it('the election still works and reports degraded mode', async () => {
    const ns = uniqueNs('blocked');
    tabs = await openGroup(fixture.browser, fixture.server, { ns, ids: ['t1', 't2', 't3'], query: `${FAST}&blockStorage=1` });
    {
      const blocked = await tabs[0].page.evaluate(() => {
        const probe = (fn) => {
          try {
            fn();
            return 'works';
          } catch (error) {
            return error.name;
          }
        };
        return { localStorage: probe(() => window.localStorage.getItem('x')), indexedDB: probe(() => indexedDB.open('x')) };
      });
      assert.deepEqual(blocked, { localStorage: 'SecurityError', indexedDB: 'SecurityError' }, 'the page really has storage blocked');
      await assertSingleLeaders(tabs);
      const snaps = await waitFor(async () => {
        const all = await snapAll(tabs);
        return all.every((s) => s.feed.ids.length >= 3) && all;
      }, { what: 'the feed relayed to every tab' });
      leader = snaps.find((s) => s.resources['sse-relay'].state === 'leader');
      assert.equal(leader.metrics.degraded, true, 'metrics() reports degraded mode');
      assert.equal(leader.support.degraded, true, 'support() reports degraded mode');
      assert.ok(leader.metrics.glue.epochsNotDurable >= 1, 'epochs were not durable');
      for (const s of snaps) {
        assert.equal(s.support.localStorage, false, `${s.id}: support() says no localStorage`);
        assert.equal(s.metrics.mode, 'web-locks', 'Web Locks still decide');
      }
      assertFeedsClean(snaps);
    }
  });

  // Without any storage no store vouches for the next term's epoch: it runs degraded and
  // fenced() refuses, but it starts above every term the tab heard of, so the relay
  // accepts the new leader's events.
  it('hands over on close with a newer epoch', async () => {
    {
      // Hand-over without any storage: the relay's cursor lives in each tab's memory.
      const t0 = Date.now();
      const old = tabs.find((t) => t.id === leader.id);
      await closeTab(old);
      const survivors = tabs.filter((t) => t !== old);
      tabs = survivors;
      const result = await checkRelayHandover({ survivors, oldEpoch: leader.resources['sse-relay'].epoch, t0, server: fixture.server, label: 'storage blocked' });
      await assertSingleLeaders(survivors);
      for (const s of result.snaps) {
        // Degraded mode is reported by a tab once it has tried to store an epoch, i.e. once it led.
        if (s.elections.length > 0) assert.equal(s.metrics.degraded, true, `${s.id} led, and reports degraded mode`);
        assert.equal(s.support.localStorage, false);
        assert.equal(s.relay.lastId, s.feed.last, `${s.id}: the relay's in-memory cursor is current`);
      }
      const epochs = result.snaps.map((s) => s.resources['sse-relay'].leaderEpoch);
      assert.ok(epochs.every((e) => e > leader.resources['sse-relay'].epoch), 'the new term is still newer (max seen + 1)');
      timings.add(handoverRow('storage blocked: close', result));
    }
  });
});

describe('a hostile page on the same origin', { timeout: 60000 }, () => {
  it('malformed, oversized, foreign-version and forged messages: every tab keeps working and counts the drops', async () => {
    const ns = uniqueNs('hostile');
    const tabs = await openGroup(fixture.browser, fixture.server, { ns, ids: ['t1', 't2', 't3'] });
    const hostile = await fixture.openTestPage(`hostile.html?ns=${encodeURIComponent(ns)}&flood=500`);
    try {
      await assertSingleLeaders(tabs);
      const before = await snapAll(tabs);
      const sent = await hostile.page.evaluate(() => window.__hostile.run());
      const forgedId = await hostile.page.evaluate(() => window.__hostile.FORGED_ID);
      assert.ok(sent.frames.malformed > 500 && sent.frames.oversized === 2 && sent.frames.foreignVersion === 2 && sent.frames.notBinary > 0);

      // Every tab counts what it dropped (the relay holds a forged term up to 2 s before dropping
      // it; a loaded machine handles the flood late: the wait's bound is for a stuck test).
      const snaps = await waitFor(async () => {
        const all = await snapAll(tabs);
        return all.every((s, i) => {
          const m = s.metrics;
          const b = before[i].metrics;
          return m.droppedMalformed - b.droppedMalformed >= sent.frames.malformed &&
            m.droppedOversized - b.droppedOversized >= sent.frames.oversized &&
            m.droppedForeignVersion - b.droppedForeignVersion >= sent.frames.foreignVersion &&
            m.glue.droppedNotBinary - b.glue.droppedNotBinary >= sent.frames.notBinary &&
            s.relay.droppedMalformed >= sent.relay.malformed &&
            s.relay.droppedForeignVersion >= sent.relay.foreignVersion &&
            s.relay.droppedOversized >= sent.relay.oversized &&
            s.relay.droppedUnconfirmed + s.relay.staleDropped >= sent.relay.forged;
        }) && all;
      }, { what: 'every tab counted every dropped message', timeoutMs: 15000 });
      for (const s of snaps) {
        console.log(`  ${s.id} dropped: core malformed ${s.metrics.droppedMalformed}, oversized ${s.metrics.droppedOversized}, foreign version ${s.metrics.droppedForeignVersion}, not binary ${s.metrics.glue.droppedNotBinary}; relay malformed ${s.relay.droppedMalformed}, oversized ${s.relay.droppedOversized}, foreign version ${s.relay.droppedForeignVersion}, unconfirmed term ${s.relay.droppedUnconfirmed}, stale ${s.relay.staleDropped}`);
        assert.ok(s.feed.ids.every((id) => id < forgedId), `${s.id} never delivered a forged event`);
        assert.ok(s.relay.lastId < forgedId, `${s.id}: its cursor never moved to a forged id`);
        assert.ok(s.relay.epoch < 1e9, `${s.id} never adopted the forged term`);
      }
      const shared = await tabs[0].page.evaluate((key) => localStorage.getItem(key), `baton/${ns}/v1/relay/sse-relay/cursor`);
      assert.ok(JSON.parse(shared).id < forgedId, 'the shared cursor never moved to a forged id');
      // The forged replay requests were answered at a bounded rate, and nobody stepped down.
      const served = snaps.reduce((n, s) => n + s.relay.replaysServed, 0);
      assert.ok(served <= sent.relay.replayRequests, `at most one replay per request (${served})`);
      assert.equal(snaps.reduce((n, s) => n + s.relay.silenceAbdications, 0), 0, 'no tab abdicated');

      // Still working: one leader per resource that every tab agrees on, one stream, and the
      // feed keeps flowing with no gap in any tab.
      await assertSingleLeaders(tabs);
      const now = await snapAll(tabs);
      for (const r of RESOURCES) {
        assert.equal(new Set(now.map((s) => s.resources[r].leader)).size, 1, `${r}: every tab agrees on the leader`);
        const was = before[0].resources[r].leader;
        const is = now[0].resources[r].leader;
        if (was !== is) {
          const how = now.find((x) => x.id === is).log.filter((t) => t.resource === r && t.to === 'candidate').pop();
          const old = now.find((x) => x.id === was);
          const why = old ? old.log.filter((t) => t.resource === r && t.from === 'leader').pop() : null;
          console.log(`  note: ${r} changed leader during the flood (${was} -> ${is}, via ${how && how.reason}; ${was} stepped down: ${why && why.reason})`);
        }
      }
      const later = await waitFor(async () => {
        const all = await snapAll(tabs);
        return all.every((s, i) => s.feed.ids.length >= snaps[i].feed.ids.length + 5) && all;
      }, { what: 'events still flowing in every tab' });
      assertFeedsClean(later);
      for (const s of later) assert.equal(s.presence.length, 2, `${s.id} sees exactly the two other demo tabs (no forged candidate)`);
    } finally {
      await hostile.page.close().catch(() => {});
      await closeGroup(tabs, fixture.server);
    }
  });
});

describe('the relay over a WebSocket source', { timeout: 90000 }, () => {
  let feed;
  let tabs;
  const ns = uniqueNs('ws');
  const wsSnap = (tab) => tab.page.evaluate(() => window.__ws.snapshot());
  const wsSnapAll = (list) => Promise.all(list.map(wsSnap));

  before(async () => {
    feed = await startWsFeed({ interval: 100, heartbeatMs: 300 });
  });
  after(async () => {
    for (const tab of tabs ?? []) await tab.page.close().catch(() => {});
    await feed?.close();
  });

  async function open(id, protocol = 1) {
    const tab = await fixture.openTestPage(`ws-relay.html?ns=${encodeURIComponent(ns)}&id=${id}&protocol=${protocol}&feed=${encodeURIComponent(feed.url)}&heartbeatMs=250&suspectMs=1500&silenceMs=1500`);
    tab.id = id;
    await waitFor(() => tab.page.evaluate(() => Boolean(window.__ws)), { what: `${id} ready` });
    return tab;
  }

  /**
   * The single relay leader among `list` (stable on two polls), with an epoch above `above`.
   * The wait's bound is for a stuck test. The slowest case is the silent leader: silenceMs
   * (1500 ms) by its own timer, which a loaded machine runs up to a second late, then a
   * hand-over in the next task and an epoch transaction (up to a storage timeout, 3 s).
   */
  async function relayLeader(list, above = 0) {
    let last = null;
    return waitFor(async () => {
      const all = await wsSnapAll(list);
      const leaders = all.filter((s) => s.state === 'leader' && s.epoch > above);
      const found = leaders.length === 1 && all.filter((s) => s.state === 'leader').length === 1 ? leaders[0] : null;
      const stable = found && last && last.id === found.id && last.epoch === found.epoch;
      last = found;
      return stable ? { tab: list[all.indexOf(found)], snap: found } : false;
    }, { what: 'one relay leader', timeoutMs: 15000 });
  }

  /** Waits for `n` events of term `epoch` everywhere; checks resume, no gap, no duplicate. */
  async function checkResume(list, oldEpoch, epoch, opener, n = 5) {
    const snaps = await waitFor(async () => {
      const all = await wsSnapAll(list);
      return all.every((s) => s.epochs.filter((e) => e === epoch).length >= n) && all;
    }, { what: `${n} events of epoch ${epoch} everywhere` });
    let lastRelayed = -1;
    for (const s of snaps) s.ids.forEach((id, i) => { if (s.epochs[i] <= oldEpoch) lastRelayed = Math.max(lastRelayed, id); });
    const openerSnap = snaps.find((s) => s.id === opener.id);
    const open = openerSnap.relay.opens.find((o) => o.epoch === epoch);
    assertResumePoint(open.after, lastRelayed, openerSnap.ids.filter((id, i) => openerSnap.epochs[i] <= oldEpoch));
    assert.ok(feed.stats().connections.some((c) => c.after === open.after), `the feed server saw a connection with after=${open.after}`);
    for (const s of snaps) {
      assertConsecutive(s.ids, s.id);
      assert.equal(s.missed, 0);
      assert.equal(s.duplicates, 0);
      assert.ok(s.ids.includes(lastRelayed + 1), `${s.id} has ${lastRelayed + 1}`);
    }
    return { snaps, lastRelayed };
  }

  it('three tabs share one WebSocket; every tab gets every event in order', async () => {
    tabs = [await open('w1'), await open('w2'), await open('w3')];
    const { snap: leader } = await relayLeader(tabs);
    assert.equal(leader.id, 'w1');
    await waitFor(() => feed.stats().open === 1, { what: 'one open connection' });
    const snaps = await waitFor(async () => {
      const all = await wsSnapAll(tabs);
      return all.every((s) => s.ids.length >= 8) && all;
    }, { what: 'events in every tab' });
    // Not a wait for state: nothing may change meanwhile (no follower may open its own socket).
    await sleep(300);
    assert.equal(feed.stats().open, 1, 'one WebSocket for three tabs');
    assert.equal(feed.stats().connections.length, 1, 'and no other was ever opened');
    for (const s of snaps) {
      assertConsecutive(s.ids, s.id);
      assert.equal(s.missed + s.duplicates, 0);
    }
  });

  it('close the leader: the next tab reconnects after the last id it delivered', async () => {
    const { tab: old, snap: oldSnap } = await relayLeader(tabs);
    const survivors = tabs.filter((t) => t !== old);
    const t0 = Date.now();
    await closeTab(old);
    // The group is the survivors from now on, whatever this test finds next: a later test of
    // the group must not pick the closed tab.
    tabs = survivors;
    const { tab: next, snap } = await relayLeader(survivors, oldSnap.epoch);
    const { snaps, lastRelayed } = await checkResume(survivors, oldSnap.epoch, snap.epoch, next);
    await waitFor(() => feed.stats().open === 1, { what: 'one open connection' });
    const opener = snaps.find((s) => s.id === next.id);
    const first = opener.epochs.indexOf(snap.epoch);
    timings.add({ label: 'WebSocket source: close', electedMs: opener.elections.find((e) => e.epoch === snap.epoch).at - t0, resumedMs: opener.at[first] - t0, note: `resumed after ${lastRelayed}` });
  });

  it('a leader alive but silent (its source stalls): it steps down after silenceMs, the stream resumes', async () => {
    tabs.push(await open('w4'));
    const { tab: old, snap: oldSnap } = await relayLeader(tabs);
    const survivors = tabs.filter((t) => t !== old);
    const t0 = Date.now();
    feed.stall(); // the leader's connection stays open but sends nothing more
    const { tab: next, snap } = await relayLeader(tabs, oldSnap.epoch);
    assert.notEqual(next, old, 'another tab took over');
    const { snaps, lastRelayed } = await checkResume(tabs, oldSnap.epoch, snap.epoch, next);
    const oldNow = snaps.find((s) => s.id === old.id);
    assert.equal(oldNow.relay.silenceAbdications, 1, 'the silent leader abdicated');
    assert.ok(survivors.length > 0);
    await waitFor(() => feed.stats().open === 1, { what: 'the silent connection closed; one open connection' });
    const opener = snaps.find((s) => s.id === next.id);
    timings.add({ label: 'WebSocket source: silent leader', electedMs: opener.elections.find((e) => e.epoch === snap.epoch).at - t0, resumedMs: opener.at[opener.epochs.indexOf(snap.epoch)] - t0, note: `silenceMs 1500; resumed after ${lastRelayed}` });
  });

  it('tabs of another protocol version form their own group: own leader, own stream, never the other\'s events', async () => {
    const newer = [await open('n1', 2), await open('n2', 2)];
    tabs.push(...newer);
    const older = tabs.filter((t) => !newer.includes(t));
    const ids = (list) => new Set(list.map((t) => t.id));
    await relayLeader(older);
    await relayLeader(newer);
    await waitFor(() => feed.stats().open === 2, { what: 'one connection per protocol version' });
    const before = await wsSnapAll(tabs);
    const snaps = await waitFor(async () => {
      const all = await wsSnapAll(tabs);
      return all.every((s, i) => s.ids.length >= before[i].ids.length + 5) && all;
    }, { what: 'events flowing in both groups' });
    // (The older tabs' feeds also hold events relayed by earlier leaders of their version.)
    for (const s of snaps) {
      const mine = ids(newer).has(s.id);
      assert.ok(s.froms.every((from) => ids(newer).has(from) === mine), `${s.id} delivered only events relayed by its own version (${[...new Set(s.froms)]})`);
      assertConsecutive(s.ids, s.id);
    }
  });
});
