// Epochs under storage faults (tab-baton/testing's IndexedDB with failures injected): a term's
// epoch is strictly greater than every earlier term's, or the tab says so (`degraded`, a
// reason in metrics() and support()) and fenced() refuses without running the effect. A hung
// store degrades the election instead of wedging it, and when the store recovers a later term
// gets a greater, durable epoch and `degraded` clears.
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton } from 'tab-baton';
import { createBrowser } from 'tab-baton/testing';
import { openTab, waitFor } from './helpers/tabs.js';

const FAST = { heartbeatMs: 40, suspectMs: 150, leaseMs: 300 };
const NS = 'faults';
let open = [];
afterEach(() => {
  for (const baton of open) baton.dispose();
  open = [];
});

/** A new page of the origin (a reload): a fresh Baton in a fresh tab. */
function page(browser, id, options = {}) {
  const tab = openTab(browser, id, options.indexedDB === null ? { indexedDB: null } : {});
  if (options.localStorage === null) tab.env.localStorage = null;
  const baton = createBaton({ namespace: NS, id, env: tab.env, ...FAST, authority: options.authority ?? 'auto' });
  open.push(baton);
  return { tab, baton, handle: baton.lead('ws') };
}

async function term(handle) {
  await waitFor(() => handle.state() === 'leader', { what: 'a term' });
  return handle.token().epoch;
}

/** fenced() of the current term: 'ran', or the error code it was refused with. */
async function tryFenced(handle) {
  let ran = false;
  try {
    await handle.fenced(() => {
      ran = true;
    });
  } catch (error) {
    assert.equal(ran, false, 'a refused effect did not run');
    return error.code;
  }
  return 'ran';
}

/** Ends the current term and waits for the next one in the same tab. */
async function nextTerm(handle) {
  const before = handle.token().epoch;
  handle.abdicate();
  await waitFor(() => handle.state() === 'leader' && handle.token().epoch !== before, { what: 'the next term' });
  return handle.token().epoch;
}

async function threeDurableTerms(browser) {
  const epochs = [];
  for (let i = 0; i < 3; i += 1) {
    const { baton, handle } = page(browser, `p${i}`);
    epochs.push(await term(handle));
    assert.equal(await tryFenced(handle), 'ran');
    assert.equal(baton.metrics().degraded, false);
    baton.dispose();
  }
  assert.deepEqual(epochs, [1, 2, 3]);
}

describe('IndexedDB failing after localStorage was cleared', () => {
  for (const failure of ['error', 'throw', 'abort', 'version']) {
    test(`${failure}: the next term is degraded and fenced() refuses; after recovery epochs rise past every earlier one`, async () => {
      const browser = createBrowser();
      await threeDurableTerms(browser);
      browser.localStorage.clear();
      browser.indexedDB.fail(failure);
      const { baton, handle } = page(browser, 'reloaded');
      const degradedEpoch = await term(handle);
      const metrics = baton.metrics();
      assert.equal(metrics.degraded, true, 'an epoch that may repeat is reported');
      assert.match(metrics.degradedReason, /^storage-failed:/);
      assert.equal(baton.support().degraded, true);
      assert.equal(baton.support().degradedReason, metrics.degradedReason);
      assert.equal(metrics.glue.epochsNotDurable, 1);
      assert.equal(await tryFenced(handle), 'EPOCH_NOT_DURABLE');

      browser.indexedDB.fail(false);
      const recovered = await nextTerm(handle);
      assert.ok(recovered > 3 && recovered > degradedEpoch, `epoch ${recovered} above 3 and ${degradedEpoch}`);
      assert.equal(baton.metrics().degraded, false, 'degraded clears with a durable term');
      assert.equal(baton.metrics().degradedReason, null);
      assert.equal(await tryFenced(handle), 'ran');
    });
  }
});

describe('a store that does not answer', () => {
  for (const failure of ['hang', 'blocked']) {
    test(`${failure}: the lock holder leads degraded after the storage deadline instead of staying a candidate`, async () => {
      const browser = createBrowser();
      browser.indexedDB.fail(failure);
      const { baton, handle } = page(browser, 'a');
      const epoch = await term(handle);
      assert.equal(epoch, 1);
      assert.equal(baton.metrics().degradedReason, 'storage-timeout');
      assert.equal(await tryFenced(handle), 'EPOCH_NOT_DURABLE');

      browser.indexedDB.fail(false); // the parked open answers now
      const recovered = await nextTerm(handle);
      assert.ok(recovered > epoch);
      assert.equal(baton.metrics().degraded, false);
      assert.equal(await tryFenced(handle), 'ran');
    });
  }

  test('lease mode: a hung store fails the lease transactions, falls back to broadcast-only and says so', async () => {
    const browser = createBrowser();
    browser.indexedDB.fail('hang');
    const { baton, handle } = page(browser, 'a', { authority: 'lease' });
    await waitFor(() => baton.metrics().mode === 'broadcast', { what: 'fallback to broadcast-only', timeoutMs: 20000 });
    assert.equal(baton.metrics().degradedReason, 'lease-fallback');
    await term(handle);
    assert.equal(await tryFenced(handle), 'EPOCH_NOT_DURABLE');
  });
});

describe('a store that loses writes or answers stale values', () => {
  for (const failure of ['lost-write', 'stale-read']) {
    test(`${failure}: seen when the store answers below an epoch this tab committed; never a repeated epoch`, async () => {
      const browser = createBrowser();
      const { baton, handle } = page(browser, 'a');
      const epochs = [await term(handle), await nextTerm(handle)];
      browser.indexedDB.fail(failure);
      // lost-write: this term's write is dropped (not yet visible); stale-read: the read is one write behind.
      if (failure === 'lost-write') epochs.push(await nextTerm(handle));
      epochs.push(await nextTerm(handle));
      for (let i = 1; i < epochs.length; i += 1) assert.ok(epochs[i] > epochs[i - 1], `epochs rise: ${epochs}`);
      assert.equal(baton.metrics().degradedReason, 'storage-inconsistent');
      assert.equal(await tryFenced(handle), 'EPOCH_NOT_DURABLE');

      // Recovered: the next transaction repairs the counter (it writes above every epoch this
      // tab knows); a lost write is seen until a later one reads the repair back.
      browser.indexedDB.fail(false);
      let terms = 0;
      while (baton.metrics().degraded) {
        epochs.push(await nextTerm(handle));
        terms += 1;
      }
      assert.ok(terms <= 2, `clears within two terms (took ${terms})`);
      for (let i = 1; i < epochs.length; i += 1) assert.ok(epochs[i] > epochs[i - 1], `epochs rise: ${epochs}`);
      assert.equal(await tryFenced(handle), 'ran');
    });
  }
});

describe('what durable means per backend', () => {
  test('localStorage alone (no IndexedDB) is never durable: epochs still rise, but degraded and fenced() refuses', async () => {
    const browser = createBrowser();
    const epochs = [];
    for (let i = 0; i < 2; i += 1) {
      const { baton, handle } = page(browser, `ls${i}`, { indexedDB: null });
      epochs.push(await term(handle));
      assert.equal(baton.metrics().degradedReason, 'indexeddb-unavailable');
      assert.equal(baton.support().degraded, true);
      assert.equal(await tryFenced(handle), 'EPOCH_NOT_DURABLE');
      baton.dispose();
    }
    assert.deepEqual(epochs, [1, 2], 'the localStorage mirror still keeps epochs rising');
  });

  test('no storage at all: each next term starts above the last leader\'s, stays degraded and fenced() refuses', async () => {
    const browser = createBrowser();
    const pages = ['n0', 'n1', 'n2'].map((id) => page(browser, id, { indexedDB: null, localStorage: null }));
    const epochs = [];
    let rest = pages;
    while (rest.length > 0) {
      const leader = await waitFor(() => rest.find((p) => p.handle.state() === 'leader'), { what: 'the next leader' });
      epochs.push(leader.handle.token().epoch);
      assert.equal(leader.baton.metrics().degraded, true);
      assert.equal(leader.baton.metrics().degradedReason, 'indexeddb-unavailable');
      assert.equal(await tryFenced(leader.handle), 'EPOCH_NOT_DURABLE');
      rest = rest.filter((p) => p !== leader);
      // Every other tab heard this term before its leader leaves.
      await waitFor(() => rest.every((p) => p.handle.leader()?.epoch === epochs.at(-1)), { what: 'the term is known' });
      leader.baton.dispose();
    }
    assert.deepEqual(epochs, [1, 2, 3], 'no storage, yet every term is newer than the one before');
  });

  test('IndexedDB: durable across reloads, and the counter is the stored one', async () => {
    const browser = createBrowser();
    await threeDurableTerms(browser);
    assert.equal(browser.indexedDB.peek(`baton/${NS}`, 'epochs', 'ws'), 3);
  });

  test('lease mode: the lease record epoch is committed with the counter, so it is durable', async () => {
    const browser = createBrowser();
    await threeDurableTerms(browser); // counter at 3 from Web Locks terms
    const { baton, handle } = page(browser, 'leaser', { authority: 'lease' });
    await term(handle);
    // On a loaded machine the acquiring transaction can take most of this short lease, so
    // the first term may expire (lease-expired) before it is seen here: the tab's next term
    // then has a greater epoch. Every term is checked, from the transition log.
    const epochs = baton.log().filter((t) => t.resource === 'ws' && t.to === 'leader').map((t) => t.epoch);
    assert.equal(epochs[0], 4, 'a lease term starts above the shared counter');
    for (let i = 1; i < epochs.length; i += 1) assert.ok(epochs[i] > epochs[i - 1], `epochs rise: ${epochs}`);
    assert.equal(baton.metrics().degraded, false);
    // fenced() runs the effect; it may only be refused because the term just ended, never as not durable.
    await waitFor(async () => {
      const outcome = await tryFenced(handle);
      assert.ok(outcome === 'ran' || outcome === 'STALE_OWNER', `fenced() refused with ${outcome}`);
      return outcome === 'ran';
    }, { what: 'an effect run through the fence' });
    const counter = () => browser.indexedDB.peek(`baton/${NS}`, 'epochs', 'ws');
    await waitFor(() => handle.state() === 'leader' && counter() === handle.token().epoch, { what: 'the counter follows the lease' });
  });
});
