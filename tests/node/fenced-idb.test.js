// tab-baton/fenced-idb in Node over tab-baton/testing's in-memory IndexedDB: the way an app
// tests its offline queue. A stale epoch's transaction writes nothing; a wrong argument
// rejects (the call returns a promise and never throws).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StaleOwnerError } from 'tab-baton';
import { createFenceStore, fencedTransaction } from 'tab-baton/fenced-idb';
import { createIndexedDB } from 'tab-baton/testing';

/** Opens the app's database with its queue store and the fence store. */
function openAppDatabase(factory) {
  return new Promise((resolve, reject) => {
    const request = factory.open('app', 1);
    request.onupgradeneeded = () => {
      createFenceStore(request.result);
      createFenceStore(request.result); // idempotent
      request.result.createObjectStore('queue');
    };
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

/** Reads one key of one store. */
function read(db, store, key) {
  return new Promise((resolve, reject) => {
    const get = db.transaction([store], 'readonly').objectStore(store).get(key);
    get.onsuccess = () => resolve(get.result);
    get.onerror = () => reject(get.error);
  });
}

const mark = (value) => (tx) => {
  tx.objectStore('queue').put(value, 'batch-1');
  return value;
};

test('fencedTransaction: the newest epoch writes, an older one is refused and writes nothing', async () => {
  const db = await openAppDatabase(createIndexedDB().indexedDB);
  assert.equal(await fencedTransaction(db, { resource: 'queue', epoch: 5 }, ['queue'], mark('in-flight@5')), 'in-flight@5');
  assert.equal(await fencedTransaction(db, { resource: 'queue', epoch: 5 }, ['queue'], mark('again@5')), 'again@5'); // a term may act many times
  const refused = await fencedTransaction(db, { resource: 'queue', epoch: 4 }, ['queue'], mark('stale@4')).then(() => null, (e) => e);
  assert.ok(refused instanceof StaleOwnerError, `StaleOwnerError expected, got ${refused}`);
  assert.deepEqual([refused.code, refused.epoch, refused.highest], ['STALE_OWNER', 4, 5]);
  assert.equal(await read(db, 'queue', 'batch-1'), 'again@5');
  assert.equal(await read(db, 'baton_fence', 'queue'), 5);
  // Another resource has its own fence.
  assert.equal(await fencedTransaction(db, { resource: 'other', epoch: 1 }, ['queue'], () => 'ok'), 'ok');
});

test('fencedTransaction: an empty one at the start of a term claims the fence (the README\'s recipe): the older term is refused before the new one writes', async () => {
  const db = await openAppDatabase(createIndexedDB().indexedDB);
  assert.equal(await fencedTransaction(db, { resource: 'queue', epoch: 5 }, ['queue'], mark('in-flight@5')), 'in-flight@5');
  await fencedTransaction(db, { resource: 'queue', epoch: 6 }, [], () => {});
  assert.equal(await read(db, 'baton_fence', 'queue'), 6);
  const refused = await fencedTransaction(db, { resource: 'queue', epoch: 5 }, ['queue'], mark('late@5')).then(() => null, (e) => e);
  assert.equal(refused?.code, 'STALE_OWNER');
  assert.equal(await read(db, 'queue', 'batch-1'), 'in-flight@5');
});

test('fencedTransaction: a body that throws aborts the transaction and records no epoch', async () => {
  const db = await openAppDatabase(createIndexedDB().indexedDB);
  const failure = new Error('app failure');
  const thrown = await fencedTransaction(db, { resource: 'queue', epoch: 7 }, ['queue'], (tx) => {
    tx.objectStore('queue').put('half', 'batch-1');
    throw failure;
  }).then(() => null, (e) => e);
  assert.equal(thrown, failure);
  assert.equal(await read(db, 'queue', 'batch-1'), undefined);
  assert.equal(await read(db, 'baton_fence', 'queue'), undefined);
});

test('fencedTransaction: wrong arguments reject with a TypeError naming them', async () => {
  const db = await openAppDatabase(createIndexedDB().indexedDB);
  const cases = [
    [() => fencedTransaction(null, { resource: 'q', epoch: 1 }, ['queue'], () => {}), 'db'],
    [() => fencedTransaction(db, { resource: 'q' }, ['queue'], () => {}), 'token'],
    [() => fencedTransaction(db, { resource: 'q', epoch: 0 }, ['queue'], () => {}), 'token'],
    [() => fencedTransaction(db, { resource: 'q', epoch: 1 }, 'queue', () => {}), 'stores'],
    [() => fencedTransaction(db, { resource: 'q', epoch: 1 }, ['queue']), 'body'],
    [() => fencedTransaction(db, { resource: 'q', epoch: 1 }, ['queue'], () => {}, { fenceStore: '' }), 'fenceStore'],
    [() => fencedTransaction(db, { resource: 'q', epoch: 1 }, ['queue'], () => {}, null), 'options'],
    [() => fencedTransaction(db, { resource: 'q', epoch: 1 }, ['queue'], () => {}, 'baton_fence'), 'options'],
    [() => fencedTransaction(db, { resource: 'q', epoch: 1 }, ['queue'], () => {}, { fencestore: 'f' }), 'fencestore'],
  ];
  for (const [call, name] of cases) {
    let promise;
    assert.doesNotThrow(() => { promise = call(); });
    await assert.rejects(promise, (e) => e instanceof TypeError && e.message.includes(`"${name}"`));
  }
});
