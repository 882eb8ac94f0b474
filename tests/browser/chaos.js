// A chaos run in real Chromium: 8 demo tabs, random actions (close, crash, freeze, thaw,
// reload, hide, show, open) from a fixed seed, while the leader of token-refresh posts
// fenced side effects to the demo server and the leader of sse-relay relays the stream.
// It measures, and returns: effects accepted from a stale epoch (must be 0), epochs
// accepted from two owners (must be 0), events missed or duplicated in any tab's feed
// (must be 0), the longest time without a running leader, the hand-overs performed, and
// the tabs the machine could not open in time.
// The short run is tests/browser/chaos.test.js; the long one bench/chaos.mjs.
import { launchBrowser, closeTab, crashTab, freezeTab, thawTab, hideTab, showTab } from './harness.js';
import { openDemoTab, snap, sleep, uniqueNs, waitFor } from './demo-helpers.js';

const QUERY = 'interval=100&heartbeatMs=200&suspectMs=1000&silenceMs=2500&leaseMs=1500&refreshMs=300&prepareMs=200';
const ACTIONS = ['close', 'crash', 'freeze', 'thaw', 'reload', 'hide', 'show', 'open'];

/** Small deterministic PRNG (mulberry32): the same seed, the same sequence of actions. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * @param {{server: {url: string, stats(): any}, seed?: number, actions?: number, tabs?: number,
 *          pauseMs?: number, log?: (line: string) => void}} options
 */
export async function runChaos({ server, seed = 1, actions = 20, tabs: count = 8, pauseMs = 600, log = () => {} }) {
  const rand = random(seed);
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const ns = uniqueNs(`chaos-${seed}`);
  const browser = await launchBrowser();
  try {
    return await chaos({ browser, server, seed, rand, pick, ns, count, actions, pauseMs, log });
  } finally {
    await browser.close(); // also when a step fails, so no Chromium outlives the run
  }
}

async function chaos({ browser, server, seed, rand, pick, ns, count, actions, pauseMs, log }) {
  const tabs = []; // {tab, state: 'running'|'frozen'|'hidden'}
  let opened = 0;
  const figures = { seed, actions: 0, byAction: {}, handovers: 0, longestLeaderlessMs: 0, missed: 0, duplicates: 0, staleAccepted: 0, sameEpochOwners: 0, staleRejected: 0, accepted: 0, openFailures: 0 };
  // A tab that a loaded machine cannot open in time is a fault of the machine, not of Baton:
  // it is counted, closed if it appeared, and the run goes on without it.
  const open = async () => {
    const id = `c${(opened += 1)}`;
    try {
      const tab = await openDemoTab(browser, server, { ns, id, query: QUERY });
      tabs.push({ tab, state: 'running' });
    } catch (error) {
      figures.openFailures += 1;
      log(`chaos: could not open ${id} (${error.message})`);
      const mine = `ns=${encodeURIComponent(ns)}&id=${id}&`;
      for (const page of browser.context.pages()) if (page.url().includes(mine)) await page.close().catch(() => {});
    }
  };

  // The leader watch: polls every running tab for the sse-relay leader and its epoch.
  let watching = true;
  let leaderlessSince = null;
  const terms = new Set();
  const watch = (async () => {
    while (watching) {
      const running = tabs.filter((t) => t.state !== 'frozen' && !t.tab.page.isClosed());
      const snaps = await Promise.all(running.map((t) => snap(t.tab).catch(() => null)));
      const leading = snaps.filter((s) => s && s.resources['sse-relay'].state === 'leader');
      for (const s of leading) terms.add(`${s.id}@${s.resources['sse-relay'].epoch}`);
      const now = Date.now();
      if (leading.length === 0) leaderlessSince ??= now;
      else if (leaderlessSince !== null) {
        figures.longestLeaderlessMs = Math.max(figures.longestLeaderlessMs, now - leaderlessSince);
        leaderlessSince = null;
      }
      await sleep(50);
    }
  })();

  try {
    for (let i = 0; i < count; i += 1) await open();
    for (let n = 0; n < actions; n += 1) {
      const action = pick(ACTIONS);
      const running = tabs.filter((t) => t.state === 'running');
      const frozen = tabs.filter((t) => t.state === 'frozen');
      const hidden = tabs.filter((t) => t.state === 'hidden');
      let done = true;
      if (action === 'open' || (tabs.length < 3 && action !== 'thaw')) {
        if (tabs.length < count) await open();
        else done = false;
      } else if (action === 'thaw') {
        if (frozen.length === 0) done = false;
        else {
          const t = pick(frozen);
          await thawTab(t.tab, { show: true });
          t.state = 'running';
        }
      } else if (action === 'show') {
        if (hidden.length === 0) done = false;
        else {
          const t = pick(hidden);
          await showTab(t.tab);
          t.state = 'running';
        }
      } else if (running.length < 2) {
        done = false; // keep someone able to lead
      } else {
        const t = pick(running);
        if (action === 'close') {
          await closeTab(t.tab);
          tabs.splice(tabs.indexOf(t), 1);
        } else if (action === 'crash') {
          crashTab(t.tab);
          tabs.splice(tabs.indexOf(t), 1);
          await sleep(100);
          await t.tab.page.close().catch(() => {});
        } else if (action === 'freeze') {
          await freezeTab(t.tab);
          t.state = 'frozen';
        } else if (action === 'hide') {
          await hideTab(t.tab);
          t.state = 'hidden';
        } else if (action === 'reload') {
          await t.tab.page.reload();
          await waitFor(() => t.tab.page.evaluate(() => Boolean(window.__demo && window.__demo.ready)), { what: 'reloaded demo ready', timeoutMs: 30000 });
        }
      }
      if (done) {
        figures.actions += 1;
        figures.byAction[action] = (figures.byAction[action] ?? 0) + 1;
        log(`chaos ${n + 1}/${actions}: ${action} (${tabs.length} tabs)`);
      }
      await sleep(pauseMs);
    }

    // Faults stop: thaw and show everyone, then wait for one leader and a settled feed.
    for (const t of tabs) {
      if (t.state === 'frozen') await thawTab(t.tab, { show: true });
      else if (t.state === 'hidden') await showTab(t.tab);
      t.state = 'running';
    }
    await waitFor(async () => {
      const snaps = await Promise.all(tabs.map((t) => snap(t.tab)));
      const leaders = snaps.filter((s) => s.resources['sse-relay'].state === 'leader');
      if (leaders.length !== 1) return false;
      const head = leaders[0].feed.last;
      return snaps.every((s) => s.feed.last >= head - 1 && s.feed.last > 0);
    }, { what: 'one leader and every feed caught up', timeoutMs: 15000 });
    await sleep(500);
  } finally {
    watching = false;
    await watch;
  }

  // Figures from every tab still open and from the server's fence.
  const snaps = await Promise.all(tabs.map((t) => snap(t.tab)));
  for (const s of snaps) {
    figures.missed += s.feed.missed;
    figures.duplicates += s.feed.duplicates;
    for (let i = 1; i < s.feed.ids.length; i += 1) {
      const step = s.feed.ids[i] - s.feed.ids[i - 1];
      if (step <= 0) figures.duplicates += 1;
      else if (step > 1) figures.missed += step - 1;
    }
  }
  const stats = server.stats();
  const mine = stats.log.filter((e) => e.resource === `${ns}/token-refresh`);
  let highest = 0;
  const owners = new Map();
  for (const e of mine) {
    if (!e.ok) continue;
    if (e.epoch < highest) figures.staleAccepted += 1;
    highest = Math.max(highest, e.epoch);
    if (owners.has(e.epoch) && owners.get(e.epoch) !== e.owner) figures.sameEpochOwners += 1;
    owners.set(e.epoch, e.owner);
  }
  figures.accepted = mine.filter((e) => e.ok).length;
  figures.staleRejected = mine.filter((e) => !e.ok).length;
  figures.handovers = Math.max(0, terms.size - 1);
  return figures;
}
