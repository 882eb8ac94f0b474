// Tests of the `tab-baton/testing` fakes: in-memory Web Locks, BroadcastChannel,
// localStorage and IndexedDB. Run: node --test tests/node/
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import {
  createBrowser,
  createChannelHub,
  createIndexedDB,
  createLockManager,
  createStorage,
} from '../../js-glue/src/testing/index.js';

/** Lets every pending microtask run (lock grants and releases are microtasks). */
const flush = () => new Promise((resolve) => setImmediate(resolve));

/** Waits long enough for channel deliveries (setTimeout 0 tasks) to happen. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

/** 'resolved', 'rejected' or 'pending' once the microtasks have run. */
async function stateOf(promise) {
  let state = 'pending';
  promise.then(() => { state = 'resolved'; }, () => { state = 'rejected'; });
  await flush();
  return state;
}

/** A promise with its resolve function, to hold a lock until the test says so. */
function deferred() {
  let resolve;
  const promise = new Promise((r) => { resolve = r; });
  return { promise, resolve };
}

describe('locks', () => {
  test('exclusive: FIFO hand-over, request resolves with the callback result', async () => {
    const broker = createLockManager();
    const [a, b, c] = ['a', 'b', 'c'].map((id) => broker.client(id));
    const order = [];
    const releaseA = deferred();

    const pa = a.request('r', async (lock) => {
      order.push(`a:${lock.name}:${lock.mode}`);
      await releaseA.promise;
      return 'done-a';
    });
    const pb = b.request('r', () => { order.push('b'); return 'done-b'; });
    const pc = c.request('r', () => { order.push('c'); });

    await flush();
    assert.deepEqual(order, ['a:r:exclusive'], 'only the first requester holds the lock');
    assert.equal(await stateOf(pb), 'pending');

    releaseA.resolve();
    assert.equal(await pa, 'done-a');
    assert.equal(await pb, 'done-b');
    await pc;
    assert.deepEqual(order, ['a:r:exclusive', 'b', 'c']);
    assert.deepEqual(await broker.query(), { held: [], pending: [] });
  });

  test('a callback that throws rejects the request and releases the lock', async () => {
    const broker = createLockManager();
    const a = broker.client('a');
    const failure = new Error('boom');
    const pa = a.request('r', () => { throw failure; });
    const pb = a.request('r', () => 'next');
    await assert.rejects(pa, (error) => error === failure);
    assert.equal(await pb, 'next');
  });

  test('shared: granted together, exclusive waits for all, later shared waits behind it', async () => {
    const broker = createLockManager();
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((id) => broker.client(id));
    const holdA = deferred();
    const holdB = deferred();
    const granted = [];

    a.request('r', { mode: 'shared' }, (lock) => { granted.push(`a:${lock.mode}`); return holdA.promise; });
    b.request('r', { mode: 'shared' }, (lock) => { granted.push(`b:${lock.mode}`); return holdB.promise; });
    const pc = c.request('r', (lock) => { granted.push(`c:${lock.mode}`); });
    const pd = d.request('r', { mode: 'shared' }, () => { granted.push('d'); });
    await flush();

    assert.deepEqual(granted, ['a:shared', 'b:shared']);
    const { held, pending } = await broker.query();
    assert.deepEqual(held.map((l) => l.clientId), ['a', 'b']);
    assert.deepEqual(pending.map((l) => `${l.clientId}:${l.mode}`), ['c:exclusive', 'd:shared'],
      'a shared request does not overtake a queued exclusive one');
    assert.equal(await d.request('r', { mode: 'shared', ifAvailable: true }, (lock) => lock), null,
      'nor does an ifAvailable one');

    holdA.resolve();
    await flush();
    assert.deepEqual(granted, ['a:shared', 'b:shared'], 'exclusive waits for every shared holder');
    holdB.resolve();
    await Promise.all([pc, pd]);
    assert.deepEqual(granted, ['a:shared', 'b:shared', 'c:exclusive', 'd']);
  });

  test('ifAvailable: callback gets null when the lock is taken, the lock when free', async () => {
    const broker = createLockManager();
    const [a, b] = [broker.client('a'), broker.client('b')];
    const hold = deferred();
    a.request('r', () => hold.promise);

    const seen = await b.request('r', { ifAvailable: true }, (lock) => lock);
    assert.equal(seen, null);
    assert.deepEqual((await broker.query()).pending, [], 'a refused ifAvailable request is not queued');
    const free = await b.request('other', { ifAvailable: true }, (lock) => lock?.name);
    assert.equal(free, 'other');

    hold.resolve();
    await flush();
    assert.equal(await b.request('r', { ifAvailable: true }, (lock) => lock?.mode), 'exclusive');
  });

  test('steal: holder rejects with AbortError, stealer granted at once, queue kept', async () => {
    const broker = createLockManager();
    const [a, b, c] = ['a', 'b', 'c'].map((id) => broker.client(id));
    const aStillRunning = deferred();
    const granted = [];
    const pa = a.request('r', () => aStillRunning.promise);
    const pc = c.request('r', () => { granted.push('c'); return 'c'; });
    await flush();

    const pb = b.request('r', { steal: true }, (lock) => { granted.push(`b:${lock.name}`); return 'b'; });
    await assert.rejects(pa, (error) => error instanceof DOMException && error.name === 'AbortError');
    assert.equal(await pb, 'b');
    assert.equal(await pc, 'c', 'the queue behind the stealer is preserved');
    assert.deepEqual(granted, ['b:r', 'c'], 'the stealer goes before the queued request');

    // The old holder finishing later must not release anyone else's lock.
    const hold = deferred();
    c.request('r', () => hold.promise);
    await flush();
    aStillRunning.resolve();
    await flush();
    assert.deepEqual((await broker.query()).held.map((l) => l.clientId), ['c']);
  });

  test('signal: aborting a queued request removes it and rejects with the reason', async () => {
    const broker = createLockManager();
    const [a, b, c] = ['a', 'b', 'c'].map((id) => broker.client(id));
    const hold = deferred();
    a.request('r', () => hold.promise);

    const controller = new AbortController();
    let bCalled = false;
    const pb = b.request('r', { signal: controller.signal }, () => { bCalled = true; });
    const pc = c.request('r', () => 'c');
    await flush();
    assert.deepEqual((await broker.query()).pending.map((l) => l.clientId), ['b', 'c']);

    const reason = new Error('gave up');
    controller.abort(reason);
    await assert.rejects(pb, (error) => error === reason);
    assert.deepEqual((await broker.query()).pending.map((l) => l.clientId), ['c']);

    hold.resolve();
    assert.equal(await pc, 'c');
    assert.equal(bCalled, false, 'an aborted request never gets the lock');

    const aborted = AbortSignal.abort();
    await assert.rejects(
      b.request('r', { signal: aborted }, () => {}),
      (error) => error.name === 'AbortError',
      'an already aborted signal rejects at once');
  });

  test('crash: locks and requests vanish without settling, next waiter granted', async () => {
    const broker = createLockManager();
    const [a, b] = [broker.client('a'), broker.client('b')];
    const blocker = deferred();
    b.request('q', () => blocker.promise);
    const aWork = deferred();
    const held = a.request('r', () => aWork.promise);
    const queued = a.request('q', { mode: 'shared' }, () => {});
    await flush();
    const bHolds = deferred();
    b.request('r', () => { bHolds.resolve('granted'); return new Promise(() => {}); });

    let ranAfterCrash = false;
    const justGranted = a.request('s', () => { ranAfterCrash = true; }); // callback not run yet

    broker.crash('a');
    assert.equal(await bHolds.promise, 'granted');
    assert.equal(await stateOf(justGranted), 'pending');
    assert.equal(ranAfterCrash, false, 'a granted callback of a crashed tab never runs');
    aWork.resolve('code still running in the crashed tab finishes');
    assert.equal(await stateOf(held), 'pending');
    assert.deepEqual((await broker.query()).held.filter((l) => l.name === 'r'),
      [{ name: 'r', mode: 'exclusive', clientId: 'b' }],
      'and does not release the lock of the next holder');
    blocker.resolve();
    assert.equal(await stateOf(queued), 'pending');

    let called = false;
    const later = a.request('z', () => { called = true; });
    assert.equal(await stateOf(later), 'pending', 'a crashed tab gets no answer');
    assert.equal(called, false);
    const { held: heldNow, pending } = await broker.query();
    assert.ok([...heldNow, ...pending].every((l) => l.clientId !== 'a'), 'nothing of a is left');

    const reloaded = broker.client('a');
    assert.equal(await reloaded.request('z', () => 'alive'), 'alive', 'a new client may reuse the id');
  });

  test('query: held and pending with name, mode and clientId, from any client', async () => {
    const broker = createLockManager();
    const [a, b] = [broker.client('a'), broker.client('b')];
    const hold = deferred();
    a.request('x', () => hold.promise);
    a.request('y', { mode: 'shared' }, () => hold.promise);
    b.request('x', { mode: 'shared' }, () => {});
    await flush();
    const expected = {
      held: [
        { name: 'x', mode: 'exclusive', clientId: 'a' },
        { name: 'y', mode: 'shared', clientId: 'a' },
      ],
      pending: [{ name: 'x', mode: 'shared', clientId: 'b' }],
    };
    assert.deepEqual(await b.query(), expected);
    assert.deepEqual(await broker.query(), expected);
    hold.resolve();
  });

  test('validation rejects (never throws) with the errors of the spec', async () => {
    const locks = createLockManager().client('a');
    const cb = () => {};
    const signal = new AbortController().signal;
    const notSupported = (error) => error instanceof DOMException && error.name === 'NotSupportedError';
    const typeError = (error) => error instanceof TypeError;

    await assert.rejects(locks.request('-reserved', cb), notSupported);
    await assert.rejects(locks.request('r', { steal: true, ifAvailable: true }, cb), notSupported);
    await assert.rejects(locks.request('r', { steal: true, mode: 'shared' }, cb), notSupported);
    await assert.rejects(locks.request('r', { steal: true, signal }, cb), notSupported);
    await assert.rejects(locks.request('r', { ifAvailable: true, signal }, cb), notSupported);
    await assert.rejects(locks.request('r', { mode: 'bogus' }, cb), typeError);
    await assert.rejects(locks.request('r'), typeError);
    await assert.rejects(locks.request('r', {}, 'not a function'), typeError);
    await assert.rejects(locks.request('r', { signal: {} }, cb), typeError);
    assert.deepEqual(await locks.query(), { held: [], pending: [] });
  });
});

describe('BroadcastChannel', () => {
  test('delivers to the other channels of the same name, not to the sender', async () => {
    const hub = createChannelHub();
    const sender = new hub.BroadcastChannel('news');
    const viaProperty = new hub.BroadcastChannel('news');
    const viaListener = new hub.BroadcastChannel('news');
    const otherName = new hub.BroadcastChannel('sports');
    const received = [];
    sender.onmessage = () => received.push('sender');
    viaProperty.onmessage = function (event) { received.push(`property:${event.data}:${this === viaProperty}`); };
    const listener = (event) => received.push(`listener:${event.data}:${event.type}`);
    viaListener.addEventListener('message', listener);
    otherName.onmessage = () => received.push('other name');

    sender.postMessage('hi');
    assert.deepEqual(received, [], 'delivery is asynchronous');
    await settle();
    assert.deepEqual(received, ['property:hi:true', 'listener:hi:message']);
    assert.equal(viaProperty.name, 'news');

    viaListener.removeEventListener('message', listener);
    viaProperty.onmessage = null;
    sender.postMessage('again');
    await settle();
    assert.equal(received.length, 2, 'removed listeners and a null handler receive nothing');
  });

  test('messages arrive in posting order', async () => {
    const hub = createChannelHub();
    const [a, b, c] = [1, 2, 3].map(() => new hub.BroadcastChannel('order'));
    const atC = [];
    c.onmessage = (event) => atC.push(event.data);
    for (let i = 0; i < 5; i += 1) {
      a.postMessage(`a${i}`);
      b.postMessage(`b${i}`);
    }
    await settle();
    assert.deepEqual(atC, ['a0', 'b0', 'a1', 'b1', 'a2', 'b2', 'a3', 'b3', 'a4', 'b4']);
  });

  test('each receiver gets its own structured clone; Uint8Array survives', async () => {
    const hub = createChannelHub();
    const sender = new hub.BroadcastChannel('bytes');
    const receivers = [new hub.BroadcastChannel('bytes'), new hub.BroadcastChannel('bytes')];
    const got = [];
    for (const channel of receivers) channel.onmessage = (event) => got.push(event.data);

    const frame = { kind: 1, bytes: new Uint8Array([1, 2, 3]) };
    sender.postMessage(frame);
    frame.bytes[0] = 99; // a change after posting is not seen
    await settle();

    assert.equal(got.length, 2);
    for (const data of got) {
      assert.ok(data.bytes instanceof Uint8Array);
      assert.deepEqual([...data.bytes], [1, 2, 3]);
      assert.notEqual(data, frame);
    }
    assert.notEqual(got[0].bytes, got[1].bytes, 'receivers do not share objects');
    assert.throws(() => sender.postMessage({ fn() {} }), (error) => error.name === 'DataCloneError');
  });

  test('close: posting throws InvalidStateError, pending messages are dropped', async () => {
    const hub = createChannelHub();
    const a = new hub.BroadcastChannel('c');
    const b = new hub.BroadcastChannel('c');
    let received = 0;
    b.onmessage = () => { received += 1; };
    a.postMessage('lost');
    b.close();
    b.close(); // idempotent
    await settle();
    assert.equal(received, 0, 'a closed channel receives nothing, even what was in flight');
    assert.throws(() => b.postMessage('x'), (error) => error instanceof DOMException && error.name === 'InvalidStateError');
    assert.deepEqual(hub.stats(), { posted: 1, delivered: 0, dropped: 1 });
  });

  test('disconnect, pause/resume and stats', async () => {
    const hub = createChannelHub();
    const [a, b, c] = [1, 2, 3].map(() => new hub.BroadcastChannel('f'));
    const atB = [];
    const atC = [];
    b.onmessage = (event) => atB.push(event.data);
    c.onmessage = (event) => atC.push(event.data);

    hub.pause(b);
    a.postMessage(1);
    a.postMessage(2);
    await settle();
    assert.deepEqual(atB, [], 'a paused channel holds its messages');
    assert.deepEqual(atC, [1, 2]);
    hub.resume(b);
    a.postMessage(3);
    await settle();
    assert.deepEqual(atB, [1, 2, 3], 'held messages come first, in order');

    hub.disconnect(c);
    a.postMessage(4);
    c.postMessage('from the dead'); // no error, goes nowhere
    await settle();
    assert.deepEqual(atC, [1, 2, 3]);
    assert.deepEqual(atB, [1, 2, 3, 4]);
    assert.deepEqual(hub.stats(), { posted: 5, delivered: 7, dropped: 1 });
  });

  test('channels of different hubs do not meet', async () => {
    const one = createChannelHub();
    const two = createChannelHub();
    const sender = new one.BroadcastChannel('x');
    const stranger = new two.BroadcastChannel('x');
    let received = false;
    stranger.onmessage = () => { received = true; };
    sender.postMessage('hello');
    await settle();
    assert.equal(received, false);
  });
});

describe('localStorage', () => {
  test('Storage semantics: string coercion, key, length, remove, clear', () => {
    const storage = createStorage();
    assert.equal(storage.getItem('missing'), null);
    storage.setItem('n', 42);
    storage.setItem('nothing', null);
    storage.setItem(7, { a: 1 });
    assert.equal(storage.getItem('n'), '42');
    assert.equal(storage.getItem('nothing'), 'null');
    assert.equal(storage.getItem('7'), '[object Object]');
    assert.equal(storage.length, 3);
    assert.deepEqual([0, 1, 2, 3].map((i) => storage.key(i)), ['n', 'nothing', '7', null]);
    storage.removeItem('n');
    assert.equal(storage.getItem('n'), null);
    assert.equal(storage.length, 2);
    storage.clear();
    assert.equal(storage.length, 0);
    assert.throws(() => storage.setItem('only a key'), TypeError);
  });

  test('shared by the tabs of one browser', () => {
    const browser = createBrowser();
    const a = browser.tab('a');
    const b = browser.tab('b');
    a.localStorage.setItem('epoch', '5');
    assert.equal(b.localStorage.getItem('epoch'), '5');
    assert.equal(browser.localStorage.getItem('epoch'), '5');
    assert.equal(createBrowser().tab('a').localStorage.getItem('epoch'), null, 'other browsers do not share it');
  });

  test('fail(): SecurityError on every call, QuotaExceededError on writes, data kept', () => {
    const storage = createStorage();
    storage.setItem('k', 'v');
    const named = (name) => (error) => error instanceof DOMException && error.name === name;

    storage.fail('SecurityError');
    assert.throws(() => storage.getItem('k'), named('SecurityError'));
    assert.throws(() => storage.setItem('k', 'w'), named('SecurityError'));
    assert.throws(() => storage.removeItem('k'), named('SecurityError'));
    assert.throws(() => storage.clear(), named('SecurityError'));
    assert.throws(() => storage.key(0), named('SecurityError'));
    assert.throws(() => storage.length, named('SecurityError'));

    storage.fail('QuotaExceededError');
    assert.throws(() => storage.setItem('k', 'w'), named('QuotaExceededError'));
    assert.equal(storage.getItem('k'), 'v', 'reads still work when storage is full');

    storage.fail(false);
    storage.setItem('k', 'w');
    assert.equal(storage.getItem('k'), 'w');
    assert.throws(() => storage.fail('Nope'), TypeError);
  });
});

describe('IndexedDB', () => {
  /** Resolves with the connection to database 'db' (store 's'), through `factory`. */
  const openDb = (factory) => new Promise((resolve, reject) => {
    const req = factory.open('db', 1);
    req.onupgradeneeded = () => req.result.createObjectStore('s');
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });

  /** Runs `ops(store)` in a read-write transaction; resolves with how it ended. */
  const run = (db, ops) => new Promise((resolve) => {
    const tx = db.transaction(['s'], 'readwrite');
    ops(tx.objectStore('s'), tx);
    tx.oncomplete = () => resolve('complete');
    tx.onabort = () => resolve(`abort:${tx.error.name}`);
  });

  test('transaction(): a store that does not exist is a NotFoundError, no store an InvalidAccessError, as in browsers', async () => {
    const db = await openDb(createIndexedDB().indexedDB);
    assert.throws(() => db.transaction(['s', 'missing'], 'readwrite'), (e) => e.name === 'NotFoundError');
    assert.throws(() => db.transaction('missing', 'readonly'), (e) => e.name === 'NotFoundError');
    assert.throws(() => db.transaction([], 'readwrite'), (e) => e.name === 'InvalidAccessError');
    assert.equal(await run(db, (store) => store.put('v', 'k')), 'complete');
  });

  test('abort() rolls back the writes the transaction made', async () => {
    const idb = createIndexedDB();
    const db = await openDb(idb.indexedDB);
    assert.equal(await run(db, (store) => store.put('kept', 'k')), 'complete');
    const ended = await run(db, (store, tx) => {
      store.put('new', 'k');
      store.put('other', 'j').onsuccess = () => tx.abort();
    });
    assert.equal(ended, 'abort:AbortError');
    assert.equal(idb.peek('db', 's', 'k'), 'kept');
    assert.equal(idb.peek('db', 's', 'j'), undefined);
  });

  test('add(): a key that exists fails with a ConstraintError and aborts the transaction (all its writes), unless prevented and not told to commit', async () => {
    const idb = createIndexedDB();
    const db = await openDb(idb.indexedDB);
    assert.equal(await run(db, (store) => store.add('first', ['r', 1])), 'complete');
    assert.equal(idb.peek('db', 's', ['r', 1]), 'first', 'array keys compare by value');
    let error = null;
    assert.equal(await run(db, (store) => {
      store.put('lost', 'counter');
      store.add('second', ['r', 1]).onerror = (event) => {
        error = event.target.error.name;
      };
      store.put('lost too', 'other');
    }), 'abort:ConstraintError');
    assert.equal(error, 'ConstraintError');
    assert.equal(idb.peek('db', 's', ['r', 1]), 'first');
    assert.equal(idb.peek('db', 's', 'counter'), undefined, 'a write before the failed add is rolled back');
    assert.equal(idb.peek('db', 's', 'other'), undefined, 'and one after it never happens');
    // Prevented: the transaction goes on.
    assert.equal(await run(db, (store) => {
      store.add('second', ['r', 1]).onerror = (event) => event.preventDefault();
      store.put('kept', 'counter');
    }), 'complete');
    assert.equal(idb.peek('db', 's', 'counter'), 'kept');
    // Told to commit: any failed request aborts it, as in browsers.
    assert.equal(await run(db, (store, tx) => {
      store.add('second', ['r', 1]).onerror = (event) => event.preventDefault();
      store.put('not kept', 'counter');
      tx.commit();
    }), 'abort:ConstraintError');
    assert.equal(idb.peek('db', 's', 'counter'), 'kept');
    assert.equal(await run(db, (store, tx) => {
      store.add('two', ['r', 2]);
      tx.commit();
    }), 'complete');
    assert.equal(idb.peek('db', 's', ['r', 2]), 'two');
    await assert.rejects(run(db, (store) => store.put('x', { not: 'a key' })), (e) => e.name === 'DataError');
  });

  test("client().crash(): the tab's transaction is rolled back without a callback, its requests are never answered, the others go on", async () => {
    const idb = createIndexedDB();
    const a = idb.client();
    const b = idb.client();
    const [dbA, dbB] = await Promise.all([openDb(a.indexedDB), openDb(b.indexedDB)]);
    assert.equal(await run(dbB, (store) => store.put('from b', 'k')), 'complete', 'clients share the data');
    // A's transaction crashes between its two writes; a queued one of A's is dropped.
    const callbacks = [];
    const txA = dbA.transaction(['s'], 'readwrite');
    const storeA = txA.objectStore('s');
    storeA.put('from a', 'k').onsuccess = () => a.crash();
    storeA.put('never', 'j');
    for (const event of ['oncomplete', 'onerror', 'onabort']) txA[event] = () => callbacks.push(event);
    const queuedA = dbA.transaction(['s'], 'readwrite');
    queuedA.objectStore('s').put('queued', 'q');
    queuedA.oncomplete = () => callbacks.push('queued complete');
    // B's transaction, queued behind A's, still runs once A's vanished.
    assert.equal(await run(dbB, (store) => { store.get('k').onsuccess = (e) => callbacks.push(`b read ${e.target.result}`); }), 'complete');
    assert.deepEqual(callbacks, ['b read from b'], "A's write rolled back, none of its callbacks ran");
    assert.equal(idb.peek('db', 's', 'j'), undefined);
    assert.equal(idb.peek('db', 's', 'q'), undefined);
    // After the crash nothing A asks for is answered.
    const late = a.indexedDB.open('db', 1);
    late.onsuccess = () => callbacks.push('late open');
    late.onerror = () => callbacks.push('late open error');
    const lateTx = dbA.transaction(['s'], 'readwrite');
    lateTx.objectStore('s').put('late', 'k');
    lateTx.oncomplete = () => callbacks.push('late tx');
    assert.equal(await run(dbB, () => {}), 'complete');
    await settle();
    assert.deepEqual(callbacks, ['b read from b']);
    assert.equal(idb.peek('db', 's', 'k'), 'from b');
  });

  test("client().freeze(): a read the frozen page begins and commits does not hold the store; its answers reach the page at the thaw, as in Chromium", async () => {
    const idb = createIndexedDB();
    const a = idb.client();
    const b = idb.client();
    const [dbA, dbB] = await Promise.all([openDb(a.indexedDB), openDb(b.indexedDB)]);
    const events = [];
    a.freeze();
    // Begun in a message handler of the frozen page.
    const read = dbA.transaction(['s'], 'readonly');
    read.objectStore('s').get('k').onsuccess = () => events.push('a read');
    read.oncomplete = () => events.push('a complete');
    read.commit();
    assert.equal(await run(dbB, (store) => store.put('b', 'k')), 'complete', "the other page's write commits while A is frozen");
    await settle();
    assert.deepEqual(events, [], 'nothing reaches the frozen page');
    a.thaw();
    await settle();
    assert.deepEqual(events, ['a read', 'a complete']);
  });
});

describe('createBrowser', () => {
  test('options are checked: a wrong or unknown one throws a TypeError naming it', () => {
    const naming = (option) => (error) => error instanceof TypeError && error.message.includes(`"${option}"`);
    assert.throws(() => createBrowser({ indexedDB: 'no' }), naming('indexedDB'));
    assert.throws(() => createBrowser({ indexeddb: false }), naming('indexeddb'));
    assert.throws(() => createBrowser({ schedule: 5 }), naming('schedule'));
    assert.throws(() => createBrowser(null), naming('options'));
    assert.throws(() => createChannelHub({ schedual: () => {} }), naming('schedual'));
    assert.equal(createBrowser({ indexedDB: false }).indexedDB, null);
    assert.ok(createBrowser().indexedDB);
  });

  test('tab.crash() hands the lock over and silences the tab', async () => {
    const browser = createBrowser();
    const a = browser.tab('a');
    const b = browser.tab('b');
    assert.throws(() => browser.tab('a'), /already open/);

    const aLeads = a.locks.request('leader', () => new Promise(() => {}));
    const bLeads = deferred();
    b.locks.request('leader', (lock) => {
      bLeads.resolve(lock.name);
      return new Promise(() => {});
    });

    const aChannel = new a.BroadcastChannel('baton');
    const bChannel = new b.BroadcastChannel('baton');
    assert.ok(aChannel instanceof browser.BroadcastChannel);
    const atA = [];
    const atB = [];
    aChannel.onmessage = (event) => atA.push(event.data);
    bChannel.onmessage = (event) => atB.push(event.data);

    a.crash();
    assert.equal(await bLeads.promise, 'leader');
    assert.equal(await stateOf(aLeads), 'pending', 'the crashed tab is never told');

    aChannel.postMessage('heartbeat from a');
    bChannel.postMessage('hello a?');
    const lateChannel = new a.BroadcastChannel('baton');
    lateChannel.postMessage('late');
    await settle();
    assert.deepEqual(atA, []);
    assert.deepEqual(atB, []);

    const { held } = await browser.locks.query();
    assert.deepEqual(held, [{ name: 'leader', mode: 'exclusive', clientId: 'b' }]);
    assert.equal(browser.tab('a').id, 'a', 'the id can be reused by a new tab');
  });
});
