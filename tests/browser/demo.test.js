// End-to-end: the demo (web-demo/) in real headless Chromium, Web Locks authority.
// Four tabs elect one leader per resource and share one SSE stream (the relay); the leader
// closes, crashes, freezes (with and without the `freeze` event) and hides; every hand-over
// resumes the stream right after the last relayed id, with no event missed or repeated in
// any tab; a thawed stale leader's fenced write is rejected by the server (409 STALE_OWNER).
// A screenshot of the four tabs is kept (tests/browser/artifacts/demo-4-tabs.png, and
// web-demo/screenshot.png for the README).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile, copyFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../../web-demo/server.js';
import { launchBrowser, closeTab, crashTab, freezeTab, thawTab, hideTab, showTab } from './harness.js';
import {
  FAST,
  assertFeedsClean,
  checkRelayHandover,
  openGroup,
  snap,
  snapAll,
  sleep,
  timingsTable,
  uniqueNs,
  waitFor,
  waitForLeader,
  waitForServer,
} from './demo-helpers.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ARTIFACTS = path.join(HERE, 'artifacts');
const SCREENSHOT = path.join(ARTIFACTS, 'demo-4-tabs.png');
const README_SCREENSHOT = path.join(HERE, '..', '..', 'web-demo', 'screenshot.png');
const RESOURCES = ['websocket-owner', 'sse-relay', 'token-refresh'];

describe('demo with Web Locks (headless Chromium, four tabs)', { timeout: 150000 }, () => {
  let server;
  let browser;
  const timings = timingsTable();
  const counters = [];

  before(async () => {
    server = await startServer({ port: 0 });
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    timings.print('hand-over times, Web Locks');
    if (counters.length) {
      console.log('relayed feed counters per tab (asserted 0 and 0):');
      for (const c of counters) console.log(`  ${c.label.padEnd(30)} ${c.tabs.map((t) => `${t.id}: missed ${t.missed}, duplicates ${t.duplicates}`).join('; ')}`);
    }
  });

  const recordCounters = (label, snaps) =>
    counters.push({ label, tabs: snaps.map((s) => ({ id: s.id, missed: s.feed.missed, duplicates: s.feed.duplicates })) });

  /** Checks every resource has one leader among `tabs`, and the server one stream and one socket. */
  async function assertSingleLeaders(tabs) {
    const leaders = {};
    for (const resource of RESOURCES) leaders[resource] = (await waitForLeader(tabs, resource)).snap;
    await waitForServer(server, (st) => st.openStreams === 1 && st.openSockets === 1, 'one SSE stream and one WebSocket');
    return leaders;
  }

  describe('one group: four tabs, then close, crash, logout', () => {
    let tabs;
    const ns = uniqueNs('main');

    it('four tabs: exactly one leader per resource, one SSE stream and one WebSocket at the server', async () => {
      tabs = await openGroup(browser, server, { ns, ids: ['t1', 't2', 't3', 't4'] });
      const leaders = await assertSingleLeaders(tabs);
      for (const resource of RESOURCES) assert.equal(leaders[resource].id, 't1', `${resource}: the first tab to ask leads`);
      // Stable: still one stream and one leader a moment later, every tab fed without gaps.
      await sleep(600);
      const snaps = await snapAll(tabs);
      for (const resource of RESOURCES) {
        assert.deepEqual(snaps.filter((s) => s.resources[resource].state === 'leader').map((s) => s.id), ['t1']);
        for (const s of snaps) assert.equal(s.resources[resource].leader, 't1', `${s.id} knows the leader of ${resource}`);
      }
      const st = server.stats();
      assert.equal(st.openStreams, 1, 'one SSE stream for four tabs');
      assert.equal(st.totalStreams, 1, 'no other stream was ever opened');
      assert.equal(st.openSockets, 1, 'one WebSocket for four tabs');
      for (const s of snaps) {
        assert.ok(s.feed.ids.length >= 3, `${s.id} receives the relayed feed`);
        assert.equal(s.presence.length, 3, `${s.id} sees the three other tabs`);
        assert.equal(s.metrics.mode, 'web-locks');
      }
      assertFeedsClean(snaps);
      assert.ok(st.fenced.accepted >= 1, 'the token-refresh leader wrote through the fence');
    });

    it('screenshot of the four tabs, with the leader badge in the leader tab', async () => {
      const shots = [];
      for (const tab of tabs) {
        await tab.page.setViewportSize({ width: 1200, height: 900 });
        await tab.page.evaluate(() => window.__demo.render());
      }
      await sleep(700); // one more refresh of the page (every 500 ms)
      for (const tab of tabs) {
        const badges = await tab.page.evaluate(() =>
          [...document.querySelectorAll('.resource')].map((card) => {
            const badge = card.querySelector('[data-badge]');
            const r = badge.getBoundingClientRect();
            return { resource: card.dataset.resource, text: badge.textContent, leader: badge.classList.contains('leader'), visible: r.width > 0 && r.height > 0 && r.bottom <= innerHeight };
          }),
        );
        for (const b of badges) {
          assert.ok(b.visible, `${tab.id}: the ${b.resource} badge is on screen`);
          if (tab.id === 't1') {
            assert.equal(b.text, 'LEADER', `${tab.id}: ${b.resource} badge says LEADER`);
            assert.ok(b.leader, `${tab.id}: ${b.resource} badge is styled as leader`);
          } else {
            assert.notEqual(b.text, 'LEADER', `${tab.id} is no leader of ${b.resource}`);
          }
        }
        const rows = await tab.page.evaluate(() => document.querySelectorAll('#presence-rows tr').length);
        assert.equal(rows, 4, `${tab.id} shows four tabs in the presence table`);
        shots.push((await tab.page.screenshot({ type: 'png' })).toString('base64'));
      }
      // Tile the four screenshots (2 x 2) in a blank page of the same browser.
      const mosaic = await browser.openTab('about:blank');
      await mosaic.page.setViewportSize({ width: 1800, height: 1370 });
      await mosaic.page.setContent(`<!doctype html><style>
        body{margin:0;background:#cfd5df;display:grid;grid-template-columns:1fr 1fr;gap:10px;padding:10px;font:600 15px system-ui,sans-serif}
        figure{margin:0} img{width:100%;display:block;border-radius:6px;box-shadow:0 2px 8px rgb(0 0 0 / 25%)}
        figcaption{padding:0 0 4px 2px;color:#334}</style>
        ${shots.map((b64, i) => `<figure><figcaption>tab ${tabs[i].id}${i === 0 ? ' (leader of every resource)' : ''}</figcaption><img src="data:image/png;base64,${b64}"></figure>`).join('')}`);
      await mosaic.page.waitForFunction(() => [...document.images].every((img) => img.complete && img.naturalWidth > 0));
      const png = await mosaic.page.screenshot({ type: 'png', fullPage: true });
      await mosaic.page.close();
      await mkdir(ARTIFACTS, { recursive: true });
      await writeFile(SCREENSHOT, png);
      await copyFile(SCREENSHOT, README_SCREENSHOT);
      assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG');
      assert.ok(png.length > 50000, `a real screenshot (${png.length} bytes)`);
      console.log(`screenshot: ${path.relative(process.cwd(), SCREENSHOT)} (${(png.length / 1024).toFixed(0)} KiB), copied to web-demo/screenshot.png`);
    });

    it('close the leader: another tab leads at once, the stream resumes after the last relayed id, every tab has every event once', async () => {
      const before = await snap(tabs[0]);
      const oldEpoch = before.resources['sse-relay'].epoch;
      assert.ok(oldEpoch > 0);
      const survivors = tabs.slice(1);
      const t0 = Date.now();
      await closeTab(tabs[0]);
      const result = await checkRelayHandover({ survivors, oldEpoch, t0, server });
      await assertSingleLeaders(survivors);
      timings.add({ label: 'close (pagehide)', electedMs: result.electedMs, resumedMs: result.resumedMs, note: `resumed after ${result.lastRelayed}` });
      recordCounters('after close', result.snaps);
      tabs = survivors;
    });

    it('crash the leader (CDP Page.crash): the same', async () => {
      const { tab: leader, snap: leaderSnap } = await waitForLeader(tabs, 'sse-relay');
      const oldEpoch = leaderSnap.resources['sse-relay'].epoch;
      const survivors = tabs.filter((t) => t !== leader);
      const t0 = Date.now();
      const crashed = crashTab(leader);
      const result = await checkRelayHandover({ survivors, oldEpoch, t0, server });
      await crashed;
      await assertSingleLeaders(survivors);
      timings.add({ label: 'crash (Page.crash)', electedMs: result.electedMs, resumedMs: result.resumedMs, note: `resumed after ${result.lastRelayed}` });
      recordCounters('after crash', result.snaps);
      await leader.page.close().catch(() => {});
      tabs = survivors;
    });

    it('logout closes the stream and clears the relay state in every tab; login starts it again', async () => {
      const cursorKey = `baton/${ns}/relay/v1/sse-relay/cursor`;
      assert.ok(await tabs[0].page.evaluate((k) => localStorage.getItem(k), cursorKey), 'a cursor is kept while logged in');
      await tabs[1].page.evaluate(() => window.__demo.logout());
      await waitForServer(server, (st) => st.openStreams === 0, 'the stream closed');
      await waitFor(async () => (await snapAll(tabs)).every((s) => s.relay.state === 'stopped' && s.relay.lastId === null && s.feed.resets === 1), { what: 'every tab logged out' });
      assert.equal(await tabs[0].page.evaluate((k) => localStorage.getItem(k), cursorKey), null, 'the cursor is cleared');
      for (const s of await snapAll(tabs)) assert.equal(s.resources['sse-relay'].state, 'released', `${s.id} no longer competes for the stream`);
      await sleep(400);
      assert.equal(server.stats().openStreams, 0, 'no tab reopened it');

      await tabs[0].page.evaluate(() => window.__demo.login('user-2'));
      const { snap: leader } = await waitForLeader(tabs, 'sse-relay');
      await waitForServer(server, (st) => st.openStreams === 1, 'one stream again');
      const snaps = await waitFor(async () => {
        const all = await snapAll(tabs);
        return all.every((s) => s.relay.session === 'user-2' && s.relay.delivered >= 3) && all;
      }, { what: 'events flowing again in the new session' });
      assertFeedsClean(snaps);
      assert.equal(leader.relay.opens[leader.relay.opens.length - 1].after, null, 'the new session starts from the head, not from the old cursor');
      recordCounters('after logout + login', snaps);
      for (const tab of tabs) await closeTab(tab);
      await waitForServer(server, (st) => st.openStreams === 0 && st.openSockets === 0, 'all closed');
    });
  });

  describe('frozen leader', () => {
    it('frozen without a freeze event: a follower takes over after the suspect timeout; after thaw the old leader steps down and its fenced write is rejected (409 STALE_OWNER)', async () => {
      const ns = uniqueNs('freeze');
      const tabs = await openGroup(browser, server, { ns, ids: ['t1', 't2', 't3', 't4'], query: `${FAST}&swallowFreeze=1` });
      await assertSingleLeaders(tabs);
      const [old] = tabs;
      const before = await waitFor(async () => {
        const s = await snap(old);
        return s.fenced.some((f) => f.ok) && s;
      }, { what: 't1 wrote through the fence once' });
      const oldEpochs = Object.fromEntries(RESOURCES.map((r) => [r, before.resources[r].epoch]));
      for (const r of RESOURCES) assert.equal(before.resources[r].state, 'leader', `t1 leads ${r}`);

      // A refresh is under way (the token is being minted) when the tab freezes.
      assert.equal(await old.page.evaluate(() => window.__demo.beginRefresh('in flight at freeze')), true);
      const t0 = Date.now();
      await freezeTab(old);
      const survivors = tabs.slice(1);
      const result = await checkRelayHandover({ survivors, oldEpoch: oldEpochs['sse-relay'], t0, server });
      const refresh = await waitForLeader(survivors, 'token-refresh', { aboveEpoch: oldEpochs['token-refresh'] });
      const ws = await waitForLeader(survivors, 'websocket-owner', { aboveEpoch: oldEpochs['websocket-owner'] });
      const newRefreshEpoch = refresh.snap.resources['token-refresh'].epoch;
      await waitForServer(server, (st) => st.log.some((e) => e.resource === `${ns}/token-refresh` && e.epoch === newRefreshEpoch && e.ok), 'the new leader wrote through the fence');
      timings.add({ label: 'freeze, no freeze event (suspect timeout)', electedMs: result.electedMs, resumedMs: result.resumedMs, note: `suspectMs 800; resumed after ${result.lastRelayed}` });
      assert.ok(ws.snap.resources['websocket-owner'].electedAt - t0 > 0);

      // Thaw (and show) the old leader: its in-flight write goes out with the stale epoch.
      await thawTab(old, { show: true });
      await waitForServer(
        server,
        (st) => st.log.some((e) => e.resource === `${ns}/token-refresh` && e.owner === 't1' && e.epoch === oldEpochs['token-refresh'] && !e.ok),
        "the server rejected the thawed leader's write",
      );
      const rejected = server.stats().log.filter((e) => e.resource === `${ns}/token-refresh` && e.owner === 't1' && !e.ok);
      assert.ok(rejected.every((e) => e.highest >= newRefreshEpoch), 'rejected against the newer epoch');
      const thawed = await waitFor(async () => {
        const s = await snap(old);
        return RESOURCES.every((r) => s.resources[r].state === 'follower') && s.fenced.some((f) => f.error === 'STALE_OWNER') && s;
      }, { what: 't1 is a follower everywhere and saw STALE_OWNER' });
      const reasons = thawed.log.filter((t) => t.from === 'leader').map((t) => t.reason);
      assert.ok(reasons.length >= 3 && reasons.every((r) => ['stalled', 'lock-lost', 'abdicate'].includes(r)), `t1 stepped down as a stalled leader: ${reasons}`);
      // One leader per resource again among all four, one stream, one socket; no tab missed or repeated an event.
      await assertSingleLeaders(tabs);
      const snaps = await snapAll(tabs);
      assertFeedsClean(snaps);
      recordCounters('freeze, no freeze event', snaps);
      for (const tab of tabs) await closeTab(tab);
      await waitForServer(server, (st) => st.openStreams === 0 && st.openSockets === 0, 'all closed');
    });

    it('frozen with the freeze event: the leader steps down in its freeze handler and a follower takes over; the stale write is rejected too', async () => {
      const ns = uniqueNs('freeze-event');
      const tabs = await openGroup(browser, server, { ns, ids: ['t1', 't2', 't3'] });
      await assertSingleLeaders(tabs);
      const [old] = tabs;
      const before = await waitFor(async () => {
        const s = await snap(old);
        return s.fenced.some((f) => f.ok) && s;
      }, { what: 't1 wrote through the fence once' });
      assert.equal(await old.page.evaluate(() => window.__demo.beginRefresh('in flight at freeze')), true);
      const t0 = Date.now();
      await freezeTab(old);
      const survivors = tabs.slice(1);
      const result = await checkRelayHandover({ survivors, oldEpoch: before.resources['sse-relay'].epoch, t0, server });
      const refresh = await waitForLeader(survivors, 'token-refresh', { aboveEpoch: before.resources['token-refresh'].epoch });
      const newRefreshEpoch = refresh.snap.resources['token-refresh'].epoch;
      await waitForServer(server, (st) => st.log.some((e) => e.resource === `${ns}/token-refresh` && e.epoch === newRefreshEpoch && e.ok), 'the new leader wrote through the fence');
      const how = result.snaps.find((s) => s.id === result.leader.id).log.filter((t) => t.resource === 'sse-relay' && t.to === 'candidate').pop();
      timings.add({ label: 'freeze, with freeze event', electedMs: result.electedMs, resumedMs: result.resumedMs, note: `new leader via ${how && how.reason}` });
      await thawTab(old, { show: true });
      await waitForServer(server, (st) => st.log.some((e) => e.resource === `${ns}/token-refresh` && e.owner === 't1' && !e.ok), "the server rejected the thawed leader's write");
      const thawed = await snap(old);
      const reasons = thawed.log.filter((t) => t.from === 'leader').map((t) => t.reason);
      assert.ok(reasons.length >= 3 && reasons.every((r) => r === 'frozen'), `t1 stepped down when it froze: ${reasons}`);
      await assertSingleLeaders(tabs);
      const snaps = await snapAll(tabs);
      assertFeedsClean(snaps);
      recordCounters('freeze, with freeze event', snaps);
      for (const tab of tabs) await closeTab(tab);
      await waitForServer(server, (st) => st.openStreams === 0 && st.openSockets === 0, 'all closed');
    });
  });

  it('a hidden leader hands over to a tab that becomes visible, for the resources that preferVisible', async () => {
    // Hidden tabs' timers run about once a second: a suspect timeout above that.
    const query = FAST.replace('heartbeatMs=200', 'heartbeatMs=500').replace('suspectMs=800', 'suspectMs=2500');
    const ns = uniqueNs('visible');
    const tabs = await openGroup(browser, server, { ns, ids: ['t1', 't2', 't3'], query });
    await assertSingleLeaders(tabs);
    const [t1, t2, t3] = tabs;
    await hideTab(t2);
    await hideTab(t3);
    await hideTab(t1);
    await waitFor(async () => (await snapAll(tabs)).every((s) => s.visibility === 'hidden'), { what: 'all three hidden' });
    await sleep(1500);
    const hidden = await snapAll(tabs);
    for (const r of RESOURCES) assert.equal(hidden[0].resources[r].state, 'leader', `with no visible tab, hidden t1 keeps ${r}`);
    const oldEpoch = hidden[0].resources['sse-relay'].epoch;
    const t0 = Date.now();
    await showTab(t3);
    const result = await checkRelayHandover({ survivors: tabs, oldEpoch, t0, server });
    assert.equal(result.leader, t3, 'the tab that became visible leads sse-relay');
    const ws = await waitForLeader(tabs, 'websocket-owner', { aboveEpoch: hidden[0].resources['websocket-owner'].epoch });
    assert.equal(ws.tab, t3, 'and websocket-owner');
    const refresh = await waitForLeader(tabs, 'token-refresh');
    assert.equal(refresh.tab, t1, 'token-refresh (no preferVisible) stays with hidden t1');
    await waitForServer(server, (st) => st.openStreams === 1 && st.openSockets === 1, 'one stream and one socket');
    timings.add({ label: 'hidden leader -> visible tab (preferVisible)', electedMs: result.electedMs, resumedMs: result.resumedMs, note: `resumed after ${result.lastRelayed}` });
    recordCounters('hidden -> visible', result.snaps);
    for (const tab of tabs) await closeTab(tab);
    await waitForServer(server, (st) => st.openStreams === 0 && st.openSockets === 0, 'all closed');
  });
});
