// The lease decision is a step of the core: the transaction's read goes in as a lease_read
// event, synchronously inside the transaction, and the lease_write the step answers with is
// written there. Its answer must come for as long as the core lives, also after dispose():
// a renewal still in flight then becomes the release, which lets the next tab in at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, load } from 'tab-baton';
import { createBrowser } from 'tab-baton/testing';
import { virtualClock } from './helpers/virtual-clock.js';

test('a renewal in flight when the tab disposes writes the release', async () => {
  await load(); // the core loads in real time: have it before time is virtual
  const clock = virtualClock(); // the store's deadline cannot pass while the test looks
  const browser = createBrowser();
  const baton = createBaton({ namespace: 'read', env: { ...browser.tab('a'), locks: null, ...clock.env() }, heartbeatMs: 50, suspectMs: 300 });
  const handle = baton.lead('job');
  await clock.until(() => handle.state() === 'leader', { what: 'the lease term' });
  const epoch = handle.token().epoch;
  const peek = () => browser.indexedDB.peek('baton/read', 'leases', 'v1/job');
  const { owner, expiresMs } = peek();
  assert.ok(expiresMs > 0, 'the term holds its record');

  // The store hangs until a renewal is in flight; the tab disposes meanwhile.
  browser.indexedDB.fail('hang');
  const attempts = baton.metrics().leaseAttempts;
  await clock.until(() => baton.metrics().leaseAttempts > attempts, { what: 'a renewal in flight' });
  baton.dispose();
  browser.indexedDB.fail(false);

  await clock.until(() => peek().expiresMs === 0, { what: 'the release written by the transaction begun as a renewal' });
  assert.equal(peek().owner, owner);
  assert.equal(peek().epoch, epoch, 'a release keeps the epoch, for the next owner to go above');
});
