// The documented examples of the APIs Baton replaces, run as written in Chromium against the
// package as users get it: `npm pack` of js-glue, unpacked under /app/ and loaded through an
// import map (tests/browser/pages/seed-examples.html holds the examples verbatim). Three
// tabs run each example; exactly one does the leader's work, and when it closes (or, for the
// article, abdicates) another takes the work over.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { useBrowserFixture } from './fixture.js';
import { closeTab } from './harness.js';
import { waitFor } from './demo-helpers.js';
import { unpackPackage } from './packed.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const APP = path.join(HERE, 'artifacts', 'seed-examples');

before(async () => {
  unpackPackage(APP);
});

const fixture = useBrowserFixture({ mounts: { '/app/': APP } });

async function openExample(example) {
  const tab = await fixture.openTestPage(`seed-examples.html?example=${example}`);
  await waitFor(() => tab.page.evaluate(() => window.__seed.ready || window.__seed.error !== null), { timeoutMs: 30000, what: `${example} tab ready` });
  assert.equal(await seedOf(tab).then((s) => s.error), null);
  return tab;
}

const seedOf = (tab) => tab.page.evaluate(() => JSON.parse(JSON.stringify(window.__seed)));

/** Opens three tabs of `example`; returns them with the one doing the leader's work. */
async function threeTabs(example, doesLeaderWork) {
  const tabs = [];
  for (let i = 0; i < 3; i += 1) tabs.push(await openExample(example));
  await waitFor(async () => (await Promise.all(tabs.map(seedOf))).filter(doesLeaderWork).length === 1, { timeoutMs: 20000, what: `one ${example} tab does the leader's work` });
  const seeds = await Promise.all(tabs.map(seedOf));
  const leader = tabs[seeds.findIndex(doesLeaderWork)];
  return { tabs, leader, others: tabs.filter((tab) => tab !== leader) };
}

/** The leader's tab closes: exactly one of the others takes the work over; no page error. */
async function handOverOnClose({ tabs, leader, others }, example, doesLeaderWork) {
  await closeTab(leader);
  await waitFor(async () => (await Promise.all(others.map(seedOf))).filter(doesLeaderWork).length === 1, { timeoutMs: 20000, what: `another ${example} tab took over` });
  const seeds = await Promise.all(others.map(seedOf));
  assert.equal(seeds.filter(doesLeaderWork).length, 1, 'exactly one successor');
  assert.deepEqual(seeds.map((s) => s.error), [null, null]);
  for (const tab of tabs) await tab.page.close().catch(() => {});
}

describe('the documented examples, as written, against the packed package', { timeout: 180000 }, () => {
  it('awaforge "Singleton WebSocket connection": one socket across three tabs, reopened by the next leader', async () => {
    const opened = (s) => s.sockets.opened > 0;
    const group = await threeTabs('ws', opened);
    assert.equal((await seedOf(group.leader)).sockets.opened, 1);
    await handOverOnClose(group, 'ws', opened);
  });

  it('awaforge "SharedWorker fallback": one sync job, started in the next tab when the leader closes', async () => {
    const running = (s) => s.jobs.started > s.jobs.stopped;
    const group = await threeTabs('fallback', running);
    await handOverOnClose(group, 'fallback', running);
  });

  it('awaforge "Singleton sync": only the leader loops over runSyncTask()', async () => {
    const syncing = (s) => s.syncs > 0;
    const group = await threeTabs('sync', syncing);
    // The loop goes round (sleep is 100 ms here) in the leader only.
    const first = (await seedOf(group.leader)).syncs;
    await waitFor(async () => (await seedOf(group.leader)).syncs >= first + 2, { what: 'the leader loops' });
    assert.deepEqual((await Promise.all(group.others.map(seedOf))).map((s) => s.syncs), [0, 0]);
    await handOverOnClose(group, 'sync', syncing);
  });

  it("the Web Locks article's requestLeadership: one leader; abdicate() hands over to exactly one other tab", async () => {
    const leads = (s) => s.leads > 0;
    const { tabs, leader, others } = await threeTabs('article', leads);
    assert.equal(await leader.page.evaluate(() => amILeader), true);
    await leader.page.evaluate(() => abdicate());
    assert.equal(await leader.page.evaluate(() => amILeader), false);
    await waitFor(async () => (await Promise.all(others.map(seedOf))).filter(leads).length === 1, { timeoutMs: 20000, what: 'another tab leads after abdicate()' });
    assert.deepEqual(await Promise.all(others.map((tab) => tab.page.evaluate(() => amILeader))).then((v) => v.filter(Boolean).length), 1);
    assert.equal((await seedOf(leader)).leads, 1, 'the tab that abdicated does not lead again');
    for (const tab of tabs) await tab.page.close().catch(() => {});
  });
});
