// In real Chromium, a same-origin page with no Baton code (./pages/attacker.html) writes
// Baton's storage and takes its locks, where a single write or a single theft used to have a
// lasting effect:
// - it raises the `epochs` counter far above 0 (5 * 2^20) before the tabs open: each tab
//   that joins must follow the leader, not take its claims for forged and steal its lock;
// - it steals the leader's marker lock (`<lock>/w<wire version>`) and gives it back at once:
//   the leader must hold it again, so that the other tabs still replace it once it stalls.
// Asserted: who leads, its epoch, steals and step-downs in metrics(); the Node tests
// (tests/node/hostile-storage.test.js, hostile-locks.test.js) check the same on a virtual clock.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowserFixture } from './fixture.js';
import { crashTab } from './harness.js';
import { waitFor } from './demo-helpers.js';

// Suspect timeout: 1.5 s, as the demo's fast timings: a loaded 2-core machine runs a live
// leader's timers up to about a second late, and with 600 ms (a 200 ms heartbeat) such a
// leader was rightly replaced, which these tests would take for the attack working.
const HEARTBEAT_MS = 500;
const RAISED = 5 * 2 ** 20;
const fixture = useBrowserFixture();

const snap = (tab) => tab.page.evaluate(() => window.__tab.snapshot());
const snapAll = (tabs) => Promise.all(tabs.map(snap));

async function openTab(ns, id) {
  const tab = await fixture.openTestPage(`tab.html?ns=${ns}&id=${id}&heartbeatMs=${HEARTBEAT_MS}`);
  await waitFor(() => tab.page.evaluate(() => Boolean(window.__tab)), { what: `${id} ready`, timeoutMs: 30000 });
  return tab;
}

/** Waits until every tab in `tabs` received `frames` more frames than in `before` (time passes in heartbeats). */
async function heartbeats(tabs, before, frames) {
  await waitFor(async () => (await snapAll(tabs)).every((s, i) => s.metrics.framesReceived - before[i].metrics.framesReceived >= frames), {
    what: `${frames} more frames in every tab`,
    timeoutMs: 60000,
  });
}

function assertFollowed(all, leader, epoch) {
  for (const s of all) {
    assert.equal(s.leader?.id, leader, `${s.id} names ${leader}`);
    assert.equal(s.metrics.steals, 0, `${s.id} stole nothing`);
    assert.equal(s.metrics.stepDowns, 0, `${s.id} never stepped down`);
  }
  assert.equal(all.find((s) => s.id === leader).token.epoch, epoch, `${leader} leads epoch ${epoch}`);
}

describe('a same-origin page writes Baton\'s storage and takes its locks, in Chromium', { timeout: 180000 }, () => {
  it('a counter raised far above 0 before the tabs open: each tab that joins follows the leader', async () => {
    const ns = `raised-${process.pid}`;
    const attacker = await fixture.openTestPage(`attacker.html?ns=${ns}`);
    const tabs = [];
    try {
      await attacker.page.evaluate(({ name, raised }) => new Promise((resolve, reject) => {
        const open = indexedDB.open(name, 1);
        open.onupgradeneeded = () => ['epochs', 'leases'].forEach((store) => open.result.createObjectStore(store));
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const tx = open.result.transaction(['epochs'], 'readwrite');
          tx.objectStore('epochs').put(raised, 'ws');
          tx.oncomplete = () => {
            open.result.close();
            resolve();
          };
        };
      }), { name: `baton/${ns}`, raised: RAISED });
      tabs.push(await openTab(ns, 'h1'));
      await waitFor(async () => (await snap(tabs[0])).state === 'leader', { what: 'h1 leads', timeoutMs: 30000 });
      for (const id of ['h2', 'h3']) tabs.push(await openTab(ns, id));
      await heartbeats(tabs.slice(1), await snapAll(tabs.slice(1)), 1);
      await heartbeats(tabs, await snapAll(tabs), 10); // about 3 suspect timeouts
      assertFollowed(await snapAll(tabs), 'h1', RAISED + 1);
    } finally {
      for (const tab of [attacker, ...tabs]) await tab.page.close().catch(() => {});
    }
  });

  it('the leader\'s marker lock stolen and given back: it holds it again, and a stalled leader is still replaced', async () => {
    const ns = `marker-${process.pid}`;
    const attacker = await fixture.openTestPage(`attacker.html?ns=${ns}`);
    const tabs = [];
    let stalled = null;
    try {
      for (const id of ['h1', 'h2']) tabs.push(await openTab(ns, id));
      const settled = await waitFor(async () => {
        const all = await snapAll(tabs);
        const leaders = all.filter((s) => s.state === 'leader');
        return leaders.length === 1 && all.every((s) => s.leader?.id === leaders[0].id) && leaders[0];
      }, { what: 'one leader both tabs name', timeoutMs: 30000 });
      const marker = `baton/${ns}/v1/ws/w`;
      const held = await attacker.page.evaluate(async (prefix) => {
        const name = (await navigator.locks.query()).held.find((lock) => lock.name.startsWith(prefix)).name;
        await navigator.locks.request(name, { steal: true }, () => {});
        return name;
      }, marker);
      const leaderTab = tabs.find((_, i) => ['h1', 'h2'][i] === settled.id);
      const follower = tabs.find((tab) => tab !== leaderTab);
      await waitFor(async () => (await attacker.page.evaluate(async () => (await navigator.locks.query()).held.map((l) => l.name))).includes(held), {
        what: 'the leader holds its marker again',
        timeoutMs: 10000,
      });
      assert.equal((await snap(leaderTab)).metrics.glue.markersLost, 1, 'the theft is counted');
      // The leader's main thread stalls for longer than the wait below (no freeze event, no
      // timer, no message handler): only a steal can replace it meanwhile. Before the fix,
      // the follower waited behind it as behind foreign code until it ran again.
      stalled = leaderTab;
      leaderTab.page.evaluate(() => {
        const end = Date.now() + 90000;
        while (Date.now() < end);
      }).catch(() => {});
      const next = await waitFor(async () => {
        const s = await snap(follower);
        return s.state === 'leader' && s;
      }, { what: 'the stalled leader replaced', timeoutMs: 45000 });
      assert.equal(next.metrics.steals, 1, 'by steal');
      assert.equal(next.metrics.glue.foreignHolderWaits, 0, 'the leader was not taken for foreign code');
      assert.equal(next.token.epoch, settled.token.epoch + 1);
    } finally {
      if (stalled) crashTab(stalled); // its main thread does not answer a close
      for (const tab of [attacker, ...tabs]) await tab.page.close().catch(() => {});
    }
  });
});
