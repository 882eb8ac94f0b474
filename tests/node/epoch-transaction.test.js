// The epoch's transaction on the grant path: one read-write transaction with relaxed
// durability, told to commit as soon as it has written (no trip back to the page for the
// put's success event), and the same for the lease's transactions. Epochs still rise by one
// per term across hand-overs.
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton } from 'tab-baton';
import { createIndexedDB } from 'tab-baton/testing';
import { leaderIndexes, openTabs, waitFor } from './helpers/tabs.js';

let open = [];
afterEach(() => {
  for (const baton of open) baton.dispose();
  open = [];
});

function leadIn(tabs, namespace, options = {}) {
  const batons = tabs.map((tab) => createBaton({ namespace, id: tab.id, env: tab.env, ...options }));
  open.push(...batons);
  return { batons, handles: batons.map((baton) => baton.lead('job')) };
}

describe("the epoch's transaction", () => {
  test('under Web Locks: each term commits its epoch in one relaxed transaction, committed at once', async () => {
    const idb = createIndexedDB();
    const { tabs } = openTabs(3, { indexedDB: idb.indexedDB });
    const { batons, handles } = leadIn(tabs, 'epoch-tx');
    const epochs = [];
    for (let term = 0; term < 3; term += 1) {
      const [leader] = await waitFor(() => {
        const leaders = leaderIndexes(handles).filter((i) => !epochs.some((e) => e.index === i));
        return leaders.length === 1 && leaders;
      }, { what: `the leader of term ${term + 1}` });
      epochs.push({ index: leader, epoch: handles[leader].token().epoch });
      assert.equal(batons[leader].metrics().degraded, false);
      // The followers have heard of this term and read the store's new top (so that the next
      // grant takes one transaction, not a wasted one first: epoch-one-trip.test.js).
      await waitFor(() => {
        const s = idb.stats();
        return handles.every((h) => h.state() === 'released' || h.leader()?.epoch === epochs.at(-1).epoch) && s.committed + s.failed === s.transactions;
      }, { what: 'the followers know the term' });
      handles[leader].release(); // the next tab in the lock's queue takes over
    }
    assert.deepEqual(epochs.map((e) => e.epoch), [1, 2, 3], 'one more per term');
    assert.equal(idb.peek('baton/epoch-tx', 'epochs', 'job'), 3);
    const stats = idb.stats();
    assert.equal(stats.transactions - stats.readonly, 3, 'one read-write transaction per term');
    assert.equal(stats.relaxed, 3, 'every one asks for relaxed durability');
    assert.ok(stats.readonly > 0, 'the followers read the new top');
    // Read-only ones too: a page frozen before a read's answer reaches it must not hold the
    // store open, or every tab's next epoch waits behind it (a silently frozen leader was
    // never replaced within the suspect timeout).
    assert.equal(stats.explicitCommits, stats.transactions, 'every one commits as soon as it has made its last request');
    assert.equal(stats.committed - stats.readonly, 3);
  });

  test("a hand-over's grant begins the epoch's transaction before the core steps the grant, and the core leads on that epoch", async () => {
    const idb = createIndexedDB();
    // What the core had made of the grant (the handle's state) when each epoch transaction began.
    const seen = [];
    let handles = [];
    const watched = (index) => ({
      open(...args) {
        const req = idb.indexedDB.open(...args);
        const onsuccess = () => {
          const db = req.result;
          const transaction = db.transaction.bind(db);
          db.transaction = (names, ...rest) => {
            if (names.includes('epochs') && rest[0] === 'readwrite') seen.push({ index, state: handles[index]?.state() });
            return transaction(names, ...rest);
          };
        };
        return new Proxy(req, {
          set(target, key, value) {
            target[key] = key === 'onsuccess' ? () => (onsuccess(), value()) : value;
            return true;
          },
        });
      },
    });
    const { tabs } = openTabs(2, { indexedDB: undefined });
    tabs.forEach((tab, i) => {
      tab.env.indexedDB = watched(i);
    });
    const led = leadIn(tabs, 'epoch-tx-grant');
    handles = led.handles;
    const [first] = await waitFor(() => {
      const leaders = leaderIndexes(handles);
      return leaders.length === 1 && leaders;
    }, { what: 'the first leader' });
    const next = 1 - first;
    const before = seen.length;
    handles[first].release();
    await waitFor(() => handles[next].state() === 'leader', { what: 'the other tab leads' });
    assert.deepEqual(seen.slice(before), [{ index: next, state: 'follower' }], 'one transaction, begun while the core had not stepped the grant yet');
    assert.equal(handles[next].token().epoch, 2, 'the core led on the epoch that transaction committed');
    assert.equal(idb.peek('baton/epoch-tx-grant', 'epochs', 'job'), 2);
    assert.equal(led.batons[next].metrics().glue.epochAllocations, 1, 'the core asked once');
  });

  test('in the lease mode: every lease transaction commits at once too', async () => {
    const idb = createIndexedDB();
    const { tabs } = openTabs(2, { indexedDB: idb.indexedDB });
    for (const tab of tabs) tab.env.locks = undefined; // no Web Locks: the lease
    const { batons, handles } = leadIn(tabs, 'epoch-tx-lease', { heartbeatMs: 250, suspectMs: 1500, leaseMs: 3000 });
    const [leader] = await waitFor(() => {
      const leaders = leaderIndexes(handles);
      return leaders.length === 1 && leaders;
    });
    assert.equal(batons[leader].metrics().mode, 'lease');
    await waitFor(() => idb.stats().committed >= 3, { timeoutMs: 20000, what: 'three lease transactions' });
    handles[leader].release();
    await waitFor(() => handles[1 - leader].state() === 'leader', { timeoutMs: 20000, what: 'the other tab leads' });
    const stats = idb.stats();
    assert.ok(stats.transactions >= 4);
    assert.equal(stats.relaxed, stats.transactions - stats.readonly, 'every lease transaction asks for relaxed durability');
    // A transaction still running when the numbers were read has not committed yet.
    assert.ok(stats.explicitCommits >= stats.committed - stats.readonly, `${JSON.stringify(stats)}: every committed read-write one was told to commit`);
    assert.equal(handles[1 - leader].token().epoch, 2);
  });
});
