// The epoch in one trip to the store: a tab that knows a top `b` the store had (read or
// committed by itself) allocates `b + 1` by adding key [resource, b + 1] and committing at
// once, with no read to wait for; if someone allocated after `b`, that key exists, the add
// fails, the whole transaction aborts, and the tab reads and writes above the store's top
// (two trips). Epochs still rise strictly across tabs, the lease included, and a store
// that fails or answers inconsistently makes the term not durable.
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton } from 'tab-baton';
import { createIndexedDB } from 'tab-baton/testing';
import { EpochStore, storedEpoch, successorKey } from '../../js-glue/src/epoch-store.js';
import { Database } from '../../js-glue/src/idb.js';
import { LeaseAuthority } from '../../js-glue/src/lease.js';
import { StorageHealth } from '../../js-glue/src/storage-health.js';
import { leaderIndexes, openTabs, waitFor } from './helpers/tabs.js';

/**
 * An IndexedDB factory over `factory` whose databases hand every transaction they begin to
 * `wrap(tx, names, mode)` and return what it returns.
 */
function wrapTransactions(factory, wrap) {
  return {
    open(...args) {
      const req = factory.open(...args);
      let onsuccess = null;
      Object.defineProperty(req, 'onsuccess', {
        get: () => () => {
          const db = req.result;
          const transaction = db.transaction.bind(db);
          db.transaction = (names, mode, ...rest) => wrap(transaction(names, mode, ...rest), names, mode);
          onsuccess?.();
        },
        set: (fn) => {
          onsuccess = fn;
        },
      });
      return req;
    },
  };
}

/**
 * Wraps a fake IndexedDB factory to record each read-write transaction over `epochs`: its
 * requests (`late`: made after the transaction's first answer, i.e. one more trip) and how
 * it ended ('complete' or the abort's error name; `onAbort(record)` is called then).
 */
function traced(factory, { onAbort = () => {} } = {}) {
  const trips = [];
  const onceAnswered = (target, record, names) => {
    for (const name of names) {
      let handler = null;
      Object.defineProperty(target, name, {
        get: () => (...args) => {
          record.answered = true;
          return handler?.(...args);
        },
        set: (fn) => {
          handler = fn;
        },
      });
    }
  };
  const indexedDB = wrapTransactions(factory, (tx, names, mode) => {
    if (mode !== 'readwrite' || !names.includes('epochs')) return tx;
    const record = { requests: [], answered: false, outcome: null };
    trips.push(record);
    let oncomplete = null;
    let onabort = null;
    Object.defineProperty(tx, 'oncomplete', { get: () => () => ((record.outcome = 'complete'), oncomplete?.()), set: (fn) => (oncomplete = fn) });
    Object.defineProperty(tx, 'onabort', { get: () => () => ((record.outcome = tx.error.name), onAbort(record), onabort?.()), set: (fn) => (onabort = fn) });
    const objectStore = tx.objectStore.bind(tx);
    tx.objectStore = (name) => {
      const store = objectStore(name);
      const call = (op) => (...a) => {
        const r = store[op](...a);
        record.requests.push({ op, key: JSON.stringify(op === 'get' ? a[0] : a[1]), late: record.answered });
        onceAnswered(r, record, ['onsuccess', 'onerror']);
        return r;
      };
      return { get: call('get'), put: call('put'), add: call('add') };
    };
    return tx;
  });
  return { indexedDB, trips };
}

/**
 * Wraps a fake IndexedDB factory so that a failed `add` fires no error at its request: the
 * transaction aborts with the ConstraintError on `tx.error` only, as the IndexedDB spec
 * allows for a request that fails after `commit()`.
 */
function errorOnTransactionOnly(factory) {
  return wrapTransactions(factory, (tx) => {
    const objectStore = tx.objectStore.bind(tx);
    tx.objectStore = (name) => {
      const store = objectStore(name);
      const add = (...b) => {
        const r = store.add(...b);
        Object.defineProperty(r, 'onerror', { get: () => null, set: () => {} });
        return r;
      };
      return { get: store.get, put: store.put, add };
    };
    return tx;
  });
}

/** Whether a recorded transaction made all its requests before any answer came back. */
const oneTrip = (trip) => trip.requests.every((r) => !r.late);

/** One tab's epoch store over `factory`, as the glue makes it (no localStorage). */
function storeOver(factory, namespace = 'one-trip', timers = { setTimeout, clearTimeout }) {
  const counters = { epochAllocations: 0, epochsNotDurable: 0, storageErrors: 0, leaseTransactions: 0, leaseFailures: 0 };
  const database = new Database({ indexedDB: factory, name: `baton/${namespace}`, timeoutMs: 2500, now: () => performance.now(), setTimeout, clearTimeout, refused: () => {} });
  const health = new StorageHealth(true);
  const epochs = new EpochStore({ localStorage: null, database, key: (r) => `epoch/${r}`, health, counters, read: () => {}, ...timers });
  return { epochs, database, health, counters };
}

/**
 * n tabs sharing one fake IndexedDB, each through its own `traced` wrapper; `idle()` says
 * every transaction begun so far has ended.
 */
function tracedTabs(n) {
  const idb = createIndexedDB();
  const { tabs } = openTabs(n, { indexedDB: undefined });
  const trace = tabs.map((tab) => {
    const t = traced(idb.client().indexedDB);
    tab.env.indexedDB = t.indexedDB;
    return t;
  });
  // A read prompted by a frame begins in a timer task of its own (EpochStore.heard): the
  // store is idle once no such task is due and every transaction begun has ended.
  const tasksDue = new Set();
  for (const tab of tabs) {
    const { setTimeout: schedule, clearTimeout: cancel } = tab.env;
    tab.env.setTimeout = (fn, ms) => {
      if (ms !== 0) return schedule(fn, ms);
      const timer = schedule(() => {
        tasksDue.delete(timer);
        fn();
      }, 0);
      tasksDue.add(timer);
      return timer;
    };
    tab.env.clearTimeout = (timer) => {
      tasksDue.delete(timer);
      cancel(timer);
    };
  }
  const idle = () => {
    const s = idb.stats();
    return tasksDue.size === 0 && s.committed + s.failed === s.transactions;
  };
  return { idb, tabs, trace, idle };
}

/** Allocates one epoch for 'job' above `floor`; resolves to `{epoch, durable}`. */
const allocate = (epochs, floor = 0) => new Promise((resolve) => epochs.allocate('job', floor, (epoch, durable) => resolve({ epoch, durable })));

/** Joins 'job' and waits until the top has been read. */
async function joined(store) {
  store.epochs.warm('job');
  await waitFor(() => store.epochs.top.has('job') && !store.epochs.reading.has('job'), { what: 'the top read when joining' });
}

let open = [];
afterEach(() => {
  for (const baton of open) baton.dispose();
  open = [];
});

describe('the epoch in one trip', () => {
  test('under Web Locks, a follower that heard the last term takes one trip at its grant: every request made before any answer, committed', async () => {
    // Each follower reads the store's top when it hears of a new term; at its grant it knows it.
    const { idb, tabs, trace, idle } = tracedTabs(4);
    const batons = tabs.map((tab) => createBaton({ namespace: 'one-trip-locks', id: tab.id, env: tab.env }));
    open.push(...batons);
    const handles = batons.map((baton) => baton.lead('job'));
    const terms = [];
    for (let term = 1; term <= 4; term += 1) {
      const [leader] = await waitFor(() => {
        const leaders = leaderIndexes(handles);
        return leaders.length === 1 && leaders;
      }, { what: `the leader of term ${term}` });
      const epoch = handles[leader].token().epoch;
      // Every tab has heard of this term, and the followers' reads of the store have answered.
      await waitFor(() => handles.every((h) => h.state() === 'released' || h.leader()?.epoch === epoch) && idle(), { what: `everyone knows term ${term}` });
      const mine = trace[leader].trips;
      terms.push({ epoch, last: mine[mine.length - 1] });
      handles[leader].release(); // the next tab in the lock's queue takes over
    }
    assert.deepEqual(terms.map((t) => t.epoch), [1, 2, 3, 4]);
    // The first term's grant came before its join's read had answered: read and write.
    for (const { epoch, last } of terms.slice(1)) {
      assert.ok(oneTrip(last), `term ${epoch}: one trip (${JSON.stringify(last.requests)})`);
      assert.equal(last.outcome, 'complete');
      assert.ok(last.requests.some((r) => r.op === 'add' && r.key === JSON.stringify(['job', epoch])), `term ${epoch} claims its own key`);
    }
    const all = trace.flatMap((t) => t.trips);
    assert.equal(all.length, 4, `one read-write transaction per term, none wasted: ${JSON.stringify(all)}`);
    assert.equal(idb.peek('baton/one-trip-locks', 'epochs', 'job'), 4, 'the counter follows');
    for (let n = 1; n <= 4; n += 1) assert.equal(idb.peek('baton/one-trip-locks', 'epochs', ['job', n]), n);
  });

  for (const withEvent of [false, true]) {
    test(`after a crash, before the followers follow the new leader: ${withEvent ? "the new term's localStorage mirror (a storage event) has them read the top, and the next grant takes one trip" : 'without a storage event the next grant misses once, and takes two trips'}`, async () => {
      const { idb, tabs, trace, idle } = tracedTabs(4);
      // Slow timings: a crashed leader stays "not silent" for the whole test, so the others
      // do not adopt its successor (a follower moves to a new leader once the old is silent).
      const batons = tabs.map((tab) => createBaton({ namespace: 'one-trip-crash', id: tab.id, env: tab.env, heartbeatMs: 10000, suspectMs: 60000 }));
      open.push(...batons);
      const handles = batons.map((baton) => baton.lead('job'));
      const leads = (skip) => waitFor(() => {
        const leaders = leaderIndexes(handles).filter((i) => !skip.includes(i));
        return leaders.length === 1 && leaders;
      }, { what: 'one leader' }).then(([leader]) => leader);
      const first = await leads([]);
      await waitFor(() => handles.every((h) => h.leader()?.epoch === 1) && idle(), { what: 'everyone follows term 1' });
      tabs[first].crash();
      const second = await leads([first]);
      assert.equal(handles[second].token().epoch, 2);
      const others = [0, 1, 2, 3].filter((i) => i !== first && i !== second);
      await waitFor(idle, { what: 'the store idle' });
      assert.ok(others.every((i) => handles[i].leader()?.epoch === 1), 'the others still follow the crashed leader');
      if (withEvent) {
        // What the browser does when the new leader raises its mirror: the other tabs of the
        // origin get a storage event (the testing localStorage does not send them).
        const key = 'baton/one-trip-crash/epoch/job';
        await waitFor(() => tabs[second].env.localStorage.getItem(key) === '2', { what: 'the mirror raised' });
        for (const i of others) tabs[i].fire('window', 'storage', { key, newValue: '2' });
        await waitFor(idle, { what: 'the reads answered' });
      }
      const before = others.map((i) => trace[i].trips.length);
      tabs[second].crash();
      const third = await leads([first, second]);
      assert.equal(handles[third].token().epoch, 3);
      const trips = trace[third].trips.slice(before[others.indexOf(third)]);
      assert.deepEqual(trips.map((t) => [oneTrip(t), t.outcome]), withEvent ? [[true, 'complete']] : [[true, 'ConstraintError'], [true, 'complete']]);
    });
  }

  test('a stale top (another tab allocated in between): the add fails, nothing of that transaction is written, and the counter read beside it gives a strictly higher epoch in one more trip', async () => {
    const idb = createIndexedDB();
    const a = storeOver(idb.indexedDB);
    const tb = traced(idb.indexedDB);
    const b = storeOver(tb.indexedDB);
    await joined(a);
    await joined(b);
    assert.deepEqual(await allocate(a.epochs), { epoch: 1, durable: true });
    assert.deepEqual(await allocate(a.epochs), { epoch: 2, durable: true });
    // b still believes the top is 0.
    assert.equal(b.epochs.top.get('job'), 0);
    assert.deepEqual(await allocate(b.epochs), { epoch: 3, durable: true });
    const [tried, retried] = tb.trips;
    assert.ok(oneTrip(tried) && tried.outcome === 'ConstraintError', `the one trip claimed a taken key: ${JSON.stringify(tried)}`);
    assert.ok(oneTrip(retried) && retried.outcome === 'complete', `then one trip from the counter it read: ${JSON.stringify(retried)}`);
    assert.equal(tb.trips.length, 2);
    assert.equal(idb.peek('baton/one-trip', 'epochs', 'job'), 3);
    assert.equal(idb.peek('baton/one-trip', 'epochs', ['job', 1]), 1, 'the aborted add did not overwrite the key');
    assert.equal(b.health.failure, null);
    // Now b knows the top: its next one is one trip again; a's (top 2) falls back and goes above.
    assert.deepEqual(await allocate(b.epochs), { epoch: 4, durable: true });
    assert.ok(oneTrip(tb.trips[2]) && tb.trips[2].outcome === 'complete');
    assert.deepEqual(await allocate(a.epochs), { epoch: 5, durable: true });
  });

  test('a first visit: the tab whose open created the store takes one trip from 0, even with the grant before the open', async () => {
    const idb = createIndexedDB();
    const t = traced(idb.indexedDB);
    const a = storeOver(t.indexedDB);
    // Granted at once, as a start-up often is: the database is not open yet, nothing was read.
    a.epochs.warm('job');
    assert.equal(a.epochs.top.has('job'), false);
    assert.deepEqual(await allocate(a.epochs), { epoch: 1, durable: true });
    assert.equal(a.database.createdEpochs, true, 'this open created the store');
    assert.equal(t.trips.length, 1);
    assert.ok(oneTrip(t.trips[0]) && t.trips[0].outcome === 'complete', `one trip: ${JSON.stringify(t.trips[0])}`);
    assert.ok(t.trips[0].requests.some((r) => r.op === 'add' && r.key === JSON.stringify(['job', 1])), 'it claims key [job, 1]');
    // A later visit opens the store it finds: it knows no top until it has read one.
    const b = storeOver(idb.indexedDB);
    await b.database.open();
    assert.equal(b.database.createdEpochs, false);
  });

  test('a first visit whose creator is not the first to allocate: its add from 0 misses, and it goes above the other\'s epoch', async () => {
    const idb = createIndexedDB();
    const t = traced(idb.indexedDB);
    const a = storeOver(t.indexedDB);
    await a.database.open(); // a creates the store
    const b = storeOver(idb.indexedDB);
    await joined(b);
    assert.deepEqual(await allocate(b.epochs), { epoch: 1, durable: true });
    assert.deepEqual(await allocate(a.epochs), { epoch: 2, durable: true });
    const [tried, retried] = t.trips;
    assert.ok(oneTrip(tried) && tried.outcome === 'ConstraintError', `the add of [job, 1] missed: ${JSON.stringify(tried)}`);
    assert.ok(oneTrip(retried) && retried.outcome === 'complete', `then one trip from the counter it read: ${JSON.stringify(retried)}`);
    assert.equal(idb.peek('baton/one-trip', 'epochs', ['job', 1]), 1, 'the miss wrote nothing');
    assert.equal(a.health.failure, null);
  });

  test('a taken key reported on the transaction only (no error at the request) is a miss, not a storage failure', async () => {
    const idb = createIndexedDB();
    const a = storeOver(idb.indexedDB);
    const b = storeOver(errorOnTransactionOnly(idb.indexedDB));
    await joined(a);
    await joined(b);
    assert.deepEqual(await allocate(a.epochs), { epoch: 1, durable: true });
    assert.equal(b.epochs.top.get('job'), 0);
    assert.deepEqual(await allocate(b.epochs), { epoch: 2, durable: true });
    assert.equal(b.counters.storageErrors, 0);
    assert.equal(b.health.failure, null);
  });

  test('missed twice (someone allocates again before the second trip): the read and write, strictly higher', async () => {
    const idb = createIndexedDB();
    const a = storeOver(idb.indexedDB);
    let answers = [];
    // The first two times b's one trip misses, a allocates before b tries again.
    const tb = traced(idb.indexedDB, { onAbort: () => answers.length < 2 && answers.push(allocate(a.epochs)) });
    const b = storeOver(tb.indexedDB);
    await joined(a);
    await joined(b);
    assert.deepEqual(await allocate(a.epochs), { epoch: 1, durable: true });
    const got = await allocate(b.epochs);
    answers = await Promise.all(answers);
    assert.deepEqual(answers.map((x) => x.epoch), [2, 3], 'a allocated after each miss');
    assert.deepEqual(tb.trips.map((t) => [oneTrip(t), t.outcome]), [[true, 'ConstraintError'], [true, 'ConstraintError'], [false, 'complete']], 'two misses, then the read');
    assert.deepEqual(got, { epoch: 4, durable: true });
  });

  test('a forged high floor or claim never gives a one-trip epoch above what the store showed: it sends the tab to the read', async () => {
    const idb = createIndexedDB();
    const ta = traced(idb.indexedDB);
    const a = storeOver(ta.indexedDB);
    const tb = traced(idb.indexedDB);
    const b = storeOver(tb.indexedDB);
    await joined(a);
    await joined(b);
    // The core's floor (from frames) above the top a read: two trips, above the floor.
    assert.deepEqual(await allocate(a.epochs, 50), { epoch: 51, durable: true });
    assert.ok(!oneTrip(ta.trips[0]));
    // That read-and-write also claimed key 1 (the successor of the top it read): b, which
    // read 0, cannot take 1 in one trip.
    assert.deepEqual(await allocate(b.epochs), { epoch: 52, durable: true });
    assert.equal(tb.trips[0].outcome, 'ConstraintError');
    // A frame's claim above the known top: the next allocation reads, whatever the claim.
    a.epochs.heard('job', 1000);
    assert.deepEqual(await allocate(a.epochs), { epoch: 53, durable: true });
    assert.ok(!oneTrip(ta.trips[1]), 'a claim the store does not show forces the read');
  });

  test('a claim heard in a message handler is read from a timer task, never in the handler (a frozen page runs its handlers, not its timers); a burst of claims costs one read', async () => {
    const idb = createIndexedDB();
    const begun = [];
    const factory = wrapTransactions(idb.indexedDB, (tx, names, mode) => {
      begun.push(mode);
      return tx;
    });
    const timerTasks = [];
    const a = storeOver(factory, 'one-trip', { setTimeout: (fn) => timerTasks.push(fn), clearTimeout: () => {} });
    await joined(a);
    const before = begun.length;
    a.epochs.heard('job', 7);
    a.epochs.heard('job', 8);
    assert.equal(begun.length, before, 'no transaction begun in the handler');
    assert.equal(timerTasks.length, 1, 'one read for the burst');
    timerTasks.shift()();
    assert.deepEqual(begun.slice(before), ['readonly'], 'the timer task reads the top');
    a.epochs.heard('job', 9);
    assert.equal(timerTasks.length, 1, 'a claim after that is read again');
  });

  test('a lease term and a Web Locks term never share an epoch: the lease writes the same keys', async () => {
    const idb = createIndexedDB();
    const a = storeOver(idb.indexedDB);
    await joined(a); // top 0
    const lease = storeOver(idb.indexedDB);
    // A tab that takes the lease over above the record and the counter, as the core does.
    const leaseTab = (owner) => new LeaseAuthority({
      database: lease.database,
      health: lease.health,
      owner,
      key: (r) => `v1/${r}`,
      successorKey,
      storedEpoch,
      read: (resource, record, counter) => ({ owner, generation: 1, epoch: Math.max(record?.epoch ?? 0, counter) + 1, expiresMs: 1, takeoverMs: 1 }),
      committed: () => {},
      failed: (resource, error) => assert.fail(error),
      counters: lease.counters,
    });
    const authority = leaseTab('lease-1');
    await authority.run('job');
    assert.equal(idb.peek('baton/one-trip', 'leases', 'v1/job').epoch, 1);
    const { epoch, durable } = await allocate(a.epochs);
    assert.ok(durable && epoch > 1, `the lock holder's epoch ${epoch} is above the lease's 1, durably`);
    await leaseTab('lease-2').run('job');
    assert.ok(idb.peek('baton/one-trip', 'leases', 'v1/job').epoch > epoch, 'and the next lease term above that');
    // The lease's term moved the top from the lock holder's: its one trip falls back, above.
    const after = await allocate(a.epochs);
    assert.ok(after.durable && after.epoch > idb.peek('baton/one-trip', 'leases', 'v1/job').epoch);
  });

  test('a store that fails: the term is not durable and says why', async () => {
    for (const failure of ['error', 'abort']) {
      const idb = createIndexedDB();
      const a = storeOver(idb.indexedDB);
      await joined(a);
      idb.fail(failure);
      const { durable } = await allocate(a.epochs);
      assert.equal(durable, false, failure);
      assert.equal(a.counters.epochsNotDurable, 1);
      assert.match(a.health.failure, /^storage-failed:/);
      idb.fail(false);
      assert.deepEqual(await allocate(a.epochs), { epoch: 2, durable: true }, 'recovered, above the epoch reported');
    }
  });

  test('a counter moved without its key (an unsupported earlier build): the one-trip term is not durable, and this tab\'s next goes above it', async () => {
    const idb = createIndexedDB();
    const a = storeOver(idb.indexedDB);
    await joined(a);
    assert.deepEqual(await allocate(a.epochs), { epoch: 1, durable: true });
    // An earlier build's allocation: the counter only.
    await new Promise((resolve) => {
      a.database.readwrite(['epochs'], ({ epochs }) => epochs.put(7, 'job')).then(resolve);
    });
    assert.deepEqual(await allocate(a.epochs), { epoch: 8, durable: false }, 'key 2 was free, but the counter said 7: above it, not durable');
    assert.equal(a.health.failure, 'storage-inconsistent');
    // What the README says of such a build: the trip's own put moved the counter down.
    assert.equal(idb.peek('baton/one-trip', 'epochs', 'job'), 2);
    const next = await allocate(a.epochs);
    assert.ok(next.durable && next.epoch > 7, `then ${next.epoch}, above the earlier build's 7`);
  });
});
