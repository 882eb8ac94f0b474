// Same-origin code with no Baton code writes Baton's storage. A write can make epochs jump
// (that is a denial of service the README's security model grants it), but then every tab
// must still agree on who leads: a tab that joins where epochs are far above 0 (more than the
// core's jump bound for claims, 2^20) reads the counter when joining and follows the healthy
// leader, instead of dropping its claims as forged and stealing its lock. The same holds for
// an origin that simply handed a resource over that many times.
//
// On a virtual clock, so that "no steal within the suspect timeouts" is exact.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, load } from 'tab-baton';
import { createBrowser } from 'tab-baton/testing';
import { openTab } from './helpers/tabs.js';
import { virtualClock } from './helpers/virtual-clock.js';

const TIMING = { heartbeatMs: 100, suspectMs: 300 };
const NS = 'app';
const RESOURCE = 'ws';
/** Far above the core's jump bound for a claim (2^20), below the plausibility bound (2^40). */
const RAISED = 5 * 2 ** 20;

await load(); // the core loads in real time: have it before time is virtual

/** What a page with no Baton code does: one read-write transaction on Baton's `epochs` store. */
function writeEpochs(indexedDB, write) {
  return new Promise((resolve, reject) => {
    const open = indexedDB.open(`baton/${NS}`, 1);
    open.onupgradeneeded = () => {
      for (const store of ['epochs', 'leases']) open.result.createObjectStore(store);
    };
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const db = open.result;
      const tx = db.transaction(['epochs'], 'readwrite');
      write(tx.objectStore('epochs'));
      tx.oncomplete = () => {
        db.close();
        resolve();
      };
      tx.onerror = () => reject(tx.error);
    };
  });
}

const localStorageValue = (browser, key) => browser.localStorage.getItem(key);

/** Opens pages of the origin; `lease`: with no Web Locks, the IndexedDB lease decides. */
function tabs(t, browser, clock, { lease = false } = {}) {
  const batons = [];
  t.after(() => batons.forEach((b) => b.dispose()));
  return (id) => {
    const tab = openTab(browser, id, { clock });
    if (lease) tab.env.locks = undefined;
    const baton = createBaton({ namespace: NS, id, env: tab.env, ...TIMING, authority: lease ? 'lease' : 'auto' });
    batons.push(baton);
    return { tab, baton, handle: baton.lead(RESOURCE) };
  };
}

/**
 * No tab stole or stepped down, and every tab names `leader`. (A tab may drop a claim of the
 * leader as forged if it heard it before its read of the counter answered.)
 */
function assertFollowed(pages, leader, epoch) {
  assert.equal(leader.handle.state(), 'leader', 'the leader still leads');
  assert.equal(leader.handle.token().epoch, epoch, 'in the same term');
  for (const p of pages) {
    const m = p.baton.metrics();
    assert.equal(p.handle.leader()?.id, leader.baton.id, `${p.baton.id} names the leader`);
    assert.equal(m.steals, 0, `${p.baton.id} stole nothing`);
    assert.equal(m.stepDowns, 0, `${p.baton.id} never stepped down`);
  }
}

test('a counter raised far above 0 before the tabs open: each tab that joins follows the leader', async (t) => {
  const clock = virtualClock();
  const browser = createBrowser();
  await writeEpochs(browser.tab('mallory').indexedDB, (epochs) => epochs.put(RAISED, RESOURCE));
  const open = tabs(t, browser, clock);
  const a = open('a');
  await clock.until(() => a.handle.state() === 'leader', { what: 'a leads' });
  assert.equal(a.handle.token().epoch, RAISED + 1, 'the term is above the stored counter');
  assert.equal(a.baton.metrics().degraded, false);
  const rest = [open('b'), open('c')];
  await clock.run(10 * TIMING.suspectMs);
  assertFollowed([a, ...rest], a, RAISED + 1);
});

test('a localStorage mirror raised before a tab joins: its term is far above, and the older tabs follow it', async (t) => {
  const clock = virtualClock();
  const browser = createBrowser();
  const open = tabs(t, browser, clock);
  const a = open('a');
  await clock.until(() => a.handle.state() === 'leader', { what: 'a leads' });
  const b = open('b'); // joins before the write: it read the counter (1) and the mirror (1)
  await clock.run(2 * TIMING.suspectMs);
  assert.equal(b.handle.leader()?.id, 'a');
  const mirror = `baton/${NS}/epoch/${RESOURCE}`;
  browser.tab('mallory').localStorage.setItem(mirror, String(RAISED));
  const c = open('c'); // joins after it: the mirror is its floor
  await clock.run(2 * TIMING.suspectMs);
  // b waits behind c for the lock, so that c takes the next term.
  b.handle.release();
  b.handle = b.baton.lead(RESOURCE);
  await clock.run(TIMING.suspectMs);
  a.baton.dispose();
  await clock.until(() => c.handle.state() === 'leader', { what: 'c leads' });
  const epoch = c.handle.token().epoch;
  assert.equal(epoch, RAISED + 1, 'the mirror was the floor of c\'s term');
  // c raised the mirror: the browser tells every other tab (the fake's storage does not).
  await clock.run(0);
  b.tab.fire('window', 'storage', { key: mirror, newValue: localStorageValue(browser, mirror) });
  await clock.run(10 * TIMING.suspectMs);
  assertFollowed([b, c], c, epoch);
});

test('a counter raised to the last plausible epoch: the terms after it repeat 2^40 - 1, say so, and every tab follows', async (t) => {
  const last = 2 ** 40 - 1; // a claim at or above 2^40 is taken for forged by every tab
  const clock = virtualClock();
  const browser = createBrowser();
  await writeEpochs(browser.tab('mallory').indexedDB, (epochs) => epochs.put(last - 1, RESOURCE));
  const open = tabs(t, browser, clock);
  const a = open('a');
  await clock.until(() => a.handle.state() === 'leader', { what: 'a leads' });
  assert.equal(a.handle.token().epoch, last, 'the last epoch, durable');
  assert.equal(a.baton.metrics().degraded, false);
  const [b, c] = [open('b'), open('c')];
  await clock.run(4 * TIMING.suspectMs);
  assertFollowed([a, b, c], a, last);
  a.baton.dispose();
  await clock.until(() => b.handle.state() === 'leader', { what: 'b leads' });
  assert.equal(b.handle.token().epoch, last, 'no epoch above the last');
  assert.equal(b.baton.metrics().degraded, true, 'a term that repeats an epoch says so');
  await assert.rejects(b.handle.fenced(() => {}), { code: 'EPOCH_NOT_DURABLE' });
  await clock.run(10 * TIMING.suspectMs);
  assertFollowed([b, c], b, last);
});

test('the lease on a counter raised to the last plausible epoch: one leader at a time, the repeated epoch said', async (t) => {
  const last = 2 ** 40 - 1;
  const clock = virtualClock();
  const browser = createBrowser();
  await writeEpochs(browser.tab('mallory').indexedDB, (epochs) => epochs.put(last - 1, RESOURCE));
  const open = tabs(t, browser, clock, { lease: true });
  const a = open('a');
  await clock.until(() => a.handle.state() === 'leader', { what: 'a leads' });
  assert.equal(a.handle.token().epoch, last);
  const rest = [open('b'), open('c')];
  await clock.run(4 * TIMING.suspectMs);
  a.baton.dispose();
  await clock.until(() => rest.some((p) => p.handle.state() === 'leader'), { what: 'the next leader' });
  for (let i = 0; i < 20; i += 1) {
    await clock.run(TIMING.heartbeatMs);
    assert.ok(rest.filter((p) => p.handle.state() === 'leader').length <= 1, 'never two leaders');
  }
  const next = rest.find((p) => p.handle.state() === 'leader');
  assert.equal(next.handle.token().epoch, last, 'no epoch above the last');
  assert.equal(next.baton.metrics().degraded, true, 'a term that repeats an epoch says so');
  await assert.rejects(next.handle.fenced(() => {}), { code: 'EPOCH_NOT_DURABLE' });
});
