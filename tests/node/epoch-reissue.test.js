// Ways an epoch could be issued twice, found in review: each sequence here once gave a tab an
// epoch that another term had already held as durable. Epochs strictly rise across tabs and
// both authorities (Web Locks and the IndexedDB lease), and what the glue reads from storage
// is bounded like any claim, so that a forged value cannot wrap the counter back to 0.
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton } from 'tab-baton';
import { createBrowser } from 'tab-baton/testing';
import { Database } from '../../js-glue/src/idb.js';
import { openTab, waitFor } from './helpers/tabs.js';

const FAST = { heartbeatMs: 40, suspectMs: 150, leaseMs: 300 };
const NS = 'reissue';
let open = [];
afterEach(() => {
  for (const baton of open) baton.dispose();
  open = [];
});

/** A new page of the origin: a fresh Baton in a fresh tab. */
function page(browser, id, authority = 'auto') {
  const tab = openTab(browser, id);
  const baton = createBaton({ namespace: NS, id, env: tab.env, ...FAST, authority });
  open.push(baton);
  return { tab, baton };
}

/** Leads 'job' in `baton` until it is leader; returns the handle and its epoch. */
async function lead(baton) {
  const handle = baton.lead('job');
  await waitFor(() => handle.state() === 'leader', { what: 'a term' });
  return { handle, epoch: handle.token().epoch };
}

const counter = (browser) => browser.indexedDB.peek(`baton/${NS}`, 'epochs', 'job');
const MIRROR = `baton/${NS}/epoch/job`;
const MAX_SAFE = 9007199254740991;

/** Writes `value` as the epoch counter of 'job', as a same-origin script could. */
function forgeCounter(browser, value) {
  const database = new Database({ indexedDB: browser.indexedDB.indexedDB, name: `baton/${NS}`, timeoutMs: 2500, now: () => performance.now(), setTimeout, clearTimeout, refused: () => {} });
  return database.readwrite(['epochs'], ({ epochs }) => epochs.put(value, 'job')).finally(() => database.close?.());
}

/** Leads 'job' in a new page until elected; returns its epoch, whether it is durable (the page is not degraded), and the Baton. */
async function term(browser, id, authority) {
  const { baton } = page(browser, id, authority);
  const { handle, epoch } = await lead(baton);
  return { baton, epoch, durable: !baton.metrics().degraded };
}

describe('epochs are never reissued', () => {
  test('a lease tab that takes its own released record back goes above a Web Locks term in between', async () => {
    const browser = createBrowser();
    const l = page(browser, 'l', 'lease');
    const first = await lead(l.baton);
    assert.equal(first.epoch, 1);
    first.handle.release();
    const w = page(browser, 'w');
    const between = await lead(w.baton);
    assert.equal(between.epoch, 2, 'the Web Locks term above the lease term');
    w.baton.dispose();
    const again = await lead(l.baton);
    assert.ok(again.epoch > between.epoch, `the lease term again (${again.epoch}) above the Web Locks term (${between.epoch})`);
    await waitFor(() => counter(browser) >= again.epoch, { what: 'the counter raised to the lease term' });
    assert.equal(browser.indexedDB.peek(`baton/${NS}`, 'epochs', ['job', between.epoch + 1]), again.epoch, 'with the key of the allocation above the counter');
    assert.equal(l.baton.metrics().degraded, false);
  });

  test('a forged localStorage mirror at the top of the safe integers is ignored, not committed', async () => {
    const browser = createBrowser();
    browser.localStorage.setItem(MIRROR, String(MAX_SAFE));
    const first = await term(browser, 'a');
    assert.deepEqual([first.epoch, first.durable], [1, true], 'the forged mirror is no floor');
    assert.ok(first.baton.metrics().glue.storageErrors >= 1, 'and it is counted');
    first.baton.dispose();
    await waitFor(() => browser.localStorage.getItem(MIRROR) === '1', { what: 'the mirror written over' });
    const reloaded = await term(browser, 'b');
    assert.deepEqual([reloaded.epoch, reloaded.durable], [2, true]);
  });

  test('a counter at or above the plausibility bound, or unreadable, is inconsistent, never 0: the term is not durable', async () => {
    for (const authority of ['auto', 'lease']) {
      for (const forged of [2 ** 53, 2 ** 40, 'garbage']) {
        const browser = createBrowser();
        const first = await term(browser, 'a', authority);
        first.baton.dispose();
        await forgeCounter(browser, forged);
        const next = await term(browser, 'b', authority);
        const what = `${authority}, counter ${forged}`;
        assert.equal(next.durable, false, `${what}: epoch ${next.epoch} not durable`);
        assert.equal(next.baton.metrics().degraded, true, what);
        assert.ok(next.epoch > first.epoch, what);
        next.baton.dispose();
      }
    }
  });

  test('a lease record with an implausible epoch counts as no record', async () => {
    const browser = createBrowser();
    const first = await term(browser, 'a', 'lease');
    first.baton.dispose();
    const database = new Database({ indexedDB: browser.indexedDB.indexedDB, name: `baton/${NS}`, timeoutMs: 2500, now: () => performance.now(), setTimeout, clearTimeout, refused: () => {} });
    await database.readwrite(['leases'], ({ leases }) => leases.put({ owner: 'x', generation: 1, epoch: 2 ** 53, expiresMs: Date.now() + 60000, takeoverMs: Date.now() + 60000 }, 'v1/job'));
    const next = await term(browser, 'b', 'lease');
    assert.deepEqual([next.epoch, next.durable], [2, true], 'above the counter, not the forged record, which holds no lease');
  });
});
