// Self-test of the browser harness and the demo server, in real headless Chromium:
// bare navigator.locks election (tests/browser/pages/bare-lock.html), hand-over on close and
// crash, real freeze/thaw, hide/show, and the SSE feed seen through EventSource.
// Run: node --test tests/browser/
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowserFixture } from './fixture.js';
import { crashTab, freezeTab, thawTab, closeTab, hideTab, showTab } from './harness.js';

const ROUNDS = Number(process.env.BATON_HANDOVER_ROUNDS) || 3; // per kind, in the measuring test
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const state = (tab) => tab.page.evaluate(() => window.__state);
const eventTypes = (s) => s.events.map((e) => e.type);
/**
 * A wait's bound for a page's state that comes late on a loaded machine: a hidden page's
 * timer ticks (throttled to about one a second), a message from another tab. A bound for a
 * stuck test, not a timing: the waits end as soon as the state shows.
 */
const WAIT_MS = 10000;
// Polls from Node, not in the page: page.waitForFunction polls with requestAnimationFrame
// (never runs in a hidden page) or page timers (stopped in a frozen page).
async function waitFor(tab, fn, arg, timeout = 3000) {
  const deadline = Date.now() + timeout;
  while (!(await tab.page.evaluate(fn, arg))) {
    if (Date.now() > deadline) assert.fail(`timed out after ${timeout} ms waiting for ${fn}`);
    await sleep(10);
  }
}

/** Waits until exactly one of tabs leads and stays so for settleMs; returns it. */
async function waitForSingleLeader(tabs, { timeoutMs = 5000, settleMs = 100 } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const leaders = [];
    for (const tab of tabs) if ((await state(tab)).isLeader) leaders.push(tab);
    if (leaders.length > 1) assert.fail(`${leaders.length} tabs lead at once`);
    if (leaders.length === 1) {
      await sleep(settleMs);
      const again = [];
      for (const tab of tabs) if ((await state(tab)).isLeader) again.push(tab);
      assert.deepEqual(again, leaders, 'leadership must be stable');
      return leaders[0];
    }
    if (Date.now() > deadline) assert.fail('no leader elected in time');
    await sleep(5);
  }
}

// A bound for a hung browser, not a wall-time check: under a load of 14 on 2 cores the
// file has taken 54 s.
describe('browser harness (headless Chromium, bare navigator.locks)', { timeout: 180000 }, () => {
  const fixture = useBrowserFixture();
  let pageUrl;
  const handovers = [];
  const tabs = {};

  before(() => {
    pageUrl = `${fixture.server.url}test-pages/bare-lock.html`;
  });

  after(() => {
    if (handovers.length) {
      console.log('hand-over times (ms, command sent -> new leader granted the lock):');
      for (const h of handovers) console.log(`  ${h.kind.padEnd(28)} ${h.ms.toFixed(1)}${h.note ? `  (${h.note})` : ''}`);
    }
  });

  it('opens 3 tabs; exactly one holds the lock', async () => {
    for (const id of ['A', 'B', 'C']) tabs[id] = await fixture.browser.openTab(`${pageUrl}?id=${id}`);
    const leader = await waitForSingleLeader(Object.values(tabs));
    assert.equal(leader, tabs.A, 'the first tab to ask gets the lock');
    for (const id of ['A', 'B', 'C']) {
      const s = await state(tabs[id]);
      assert.equal(s.visibility, 'visible', `tab ${id} is visible`);
    }
  });

  it('closing the leader (gracefully, pagehide runs) hands over', async () => {
    const t0 = Date.now();
    await closeTab(tabs.A);
    const next = await waitForSingleLeader([tabs.B, tabs.C]);
    assert.equal(next, tabs.B, 'Web Locks grant in request order');
    // The closed tab ran pagehide: its BroadcastChannel message arrives. Waited for: the
    // channel and the lock manager keep no order between them, so B may be granted the lock
    // before it handles the message.
    await waitFor(next, () => window.__state.messages.some((m) => m.type === 'pagehide' && m.id === 'A'), null, WAIT_MS);
    const s = await state(next);
    const pagehide = s.messages.find((m) => m.type === 'pagehide' && m.id === 'A');
    assert.equal(pagehide.wasLeader, true);
    handovers.push({ kind: 'close (held to teardown)', ms: s.leaderAt - t0, note: `${(s.leaderAt - pagehide.at).toFixed(1)} ms after pagehide` });
  });

  it('crashing the leader hands over', async () => {
    const t0 = Date.now();
    const crashed = crashTab(tabs.B);
    const next = await waitForSingleLeader([tabs.C]);
    await crashed;
    handovers.push({ kind: 'crash', ms: (await state(next)).leaderAt - t0 });
  });

  it('freezing a tab fires freeze and stops its timers, BroadcastChannel still handled; thaw resumes', async () => {
    const frozen = tabs.C; // the leader
    tabs.D = await fixture.browser.openTab(`${pageUrl}?id=D`);
    const probe = tabs.D;
    // Pings from D are answered by C's message handler with C's tick counter.
    const ping = (seq) => probe.page.evaluate(async ([seq, timeoutMs]) => {
      const bc = new BroadcastChannel('bare-lock');
      try {
        return await new Promise((resolve, reject) => {
          const t = setTimeout(() => reject(new Error('no pong')), timeoutMs);
          bc.onmessage = (e) => {
            if (e.data.type === 'pong' && e.data.to === 'probe' && e.data.seq === seq) { clearTimeout(t); resolve(e.data); }
          };
          bc.postMessage({ type: 'ping', from: 'probe', seq, target: 'C' });
        });
      } finally { bc.close(); }
    }, [seq, WAIT_MS]);

    const before = await ping(1);
    assert.equal(before.id, 'C');
    await freezeTab(frozen);
    await waitFor(frozen, () => window.__state.frozen, null, 3000);
    const s1 = await state(frozen);
    assert.ok(eventTypes(s1).includes('freeze'), 'freeze fired');
    assert.equal(s1.visibility, 'hidden', 'a frozen page is hidden');

    const p1 = await ping(2);
    // Not a wait for state: the frozen tab's ticks may not change meanwhile.
    await sleep(400);
    const p2 = await ping(3);
    assert.equal(p2.ticks, p1.ticks, `timers stopped while frozen (ticks ${p1.ticks} -> ${p2.ticks})`);
    assert.ok(p2.at - p1.at >= 350, 'yet the frozen tab handled both BroadcastChannel messages');
    assert.equal((await state(probe)).isLeader, false, 'a frozen holder keeps its Web Lock');

    await thawTab(frozen);
    await waitFor(frozen, () => !window.__state.frozen, null, 3000);
    assert.ok(eventTypes(await state(frozen)).includes('resume'), 'resume fired');
    // After a thaw the page stays hidden, so its timers are throttled (about 1/s) but run.
    // The waits for ticks are bounds for a stuck test: a loaded machine runs a throttled
    // timer a second or more late.
    await waitFor(frozen, (n) => window.__state.ticks > n, p2.ticks, WAIT_MS);
    await showTab(frozen);
    await waitFor(frozen, () => document.visibilityState === 'visible', null, 3000);
    const t = (await state(frozen)).ticks;
    await waitFor(frozen, (n) => window.__state.ticks >= n + 5, t, WAIT_MS);
  });

  it('hideTab/showTab change visibility without freezing', async () => {
    const tab = tabs.D;
    await hideTab(tab);
    await waitFor(tab, () => document.visibilityState === 'hidden', null, 3000);
    const t = (await state(tab)).ticks;
    await waitFor(tab, (n) => window.__state.ticks > n, t, WAIT_MS); // throttled, not stopped
    assert.ok(!eventTypes(await state(tab)).includes('freeze'), 'hidden is not frozen');
    await showTab(tab);
    await waitFor(tab, () => document.visibilityState === 'visible', null, 3000);
    const s = await state(tab);
    assert.deepEqual(
      s.events.filter((e) => e.type === 'visibilitychange').map((e) => e.visibility),
      ['hidden', 'visible'],
    );
  });

  it('measures more hand-overs (2 tabs per round, fresh lock each round)', async () => {
    const kinds = [
      ['close (held to teardown)', '', (t) => closeTab(t)],
      ['close (released in pagehide)', '&release=pagehide', (t) => closeTab(t)],
      ['crash', '', (t) => { crashTab(t); }],
    ];
    let round = 0;
    for (const [kind, query, end] of kinds) {
      for (let i = 0; i < ROUNDS; i++) {
        const lock = `m${++round}`;
        // b opens once a holds the lock: on a loaded machine a's request, made first, need
        // not reach the lock manager first.
        const a = await fixture.browser.openTab(`${pageUrl}?id=a${round}&lock=${lock}${query}`);
        await waitForSingleLeader([a], { settleMs: 0 });
        const b = await fixture.browser.openTab(`${pageUrl}?id=b${round}&lock=${lock}${query}`);
        assert.equal(await waitForSingleLeader([a, b], { settleMs: 0 }), a);
        const t0 = Date.now();
        await end(a);
        await waitForSingleLeader([b], { settleMs: 0 });
        handovers.push({ kind, ms: (await state(b)).leaderAt - t0 });
        await closeTab(b);
        if (!a.page.isClosed()) await a.page.close().catch(() => {});
      }
    }
  });

  it('the fenced endpoint rejects a stale epoch', async () => {
    const results = await tabs.D.page.evaluate(async () => {
      const post = (epoch, owner) => fetch('/fenced', {
        method: 'POST',
        body: JSON.stringify({ resource: 'harness', epoch, owner, effect: 'write' }),
      }).then(async (r) => ({ status: r.status, body: await r.json() }));
      return [await post(5, 'new'), await post(4, 'old'), await post(5, 'new')];
    });
    assert.deepEqual(results.map((r) => r.status), [200, 409, 200]);
    assert.deepEqual(results[1].body, { ok: false, error: 'STALE_OWNER', highest: 5 });
    const { fenced, log } = fixture.server.stats();
    assert.equal(fenced.highest.harness, 5);
    assert.deepEqual(log.filter((e) => e.resource === 'harness').map((e) => e.ok), [true, false, true]);
  });

  it('the SSE feed delivers numbered events to EventSource; the server counts one open stream', async () => {
    const page = tabs.D.page;
    assert.equal(fixture.server.stats().openStreams, 0);
    const ids = await page.evaluate(() => new Promise((resolve, reject) => {
      const got = [];
      const es = window.__es = new EventSource('/stream?interval=50');
      es.onmessage = (e) => {
        const data = JSON.parse(e.data);
        if (String(data.n) !== e.lastEventId) reject(new Error(`id ${e.lastEventId} != n ${data.n}`));
        got.push(data.n);
        if (got.length === 5) resolve(got);
      };
      setTimeout(() => reject(new Error(`only ${got.length} events`)), 5000);
    }));
    for (let i = 1; i < ids.length; i++) assert.equal(ids[i], ids[i - 1] + 1, `consecutive ids: ${ids}`);
    assert.equal(fixture.server.stats().openStreams, 1);
    assert.ok(fixture.server.stats().totalStreams >= 1);

    // Resuming after an id replays what was missed, in order, at once.
    const from = ids[0];
    const replay = await page.evaluate((from) => new Promise((resolve, reject) => {
      const got = [];
      const es = new EventSource(`/stream?interval=50&after=${from}`);
      es.onmessage = (e) => { got.push(Number(e.lastEventId)); if (got.length === 4) { es.close(); resolve(got); } };
      setTimeout(() => reject(new Error('no replay')), 3000);
    }), from);
    assert.deepEqual(replay, [from + 1, from + 2, from + 3, from + 4]);

    await page.evaluate(() => window.__es.close());
    const deadline = Date.now() + 3000;
    while (fixture.server.stats().openStreams !== 0 && Date.now() < deadline) await sleep(20);
    assert.equal(fixture.server.stats().openStreams, 0, 'closing the EventSource closes the stream');
  });
});
