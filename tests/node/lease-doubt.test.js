// A lease term in doubt: past the time its record lets other tabs take it over, with the
// renewal still uncommitted (a busy store), this tab must not act on the term, yet the term
// has not ended. What the README promises: state() says 'candidate', token() is null and
// fenced() refuses, while onChange stays silent and the term's signal is not aborted; a
// renewal that commits confirms the same term (still silent), one that fails ends it with
// a 'deposed' notice.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton } from 'tab-baton';
import { createBrowser } from 'tab-baton/testing';
import { waitFor } from './helpers/tabs.js';

/** One lease leader (no Web Locks) with fast renewals, and what its handle reported. */
async function leaseLeader(browser) {
  const baton = createBaton({ namespace: 'doubt', env: { ...browser.tab('a'), locks: null }, heartbeatMs: 50, suspectMs: 300 });
  const changes = [];
  let signal = null;
  const handle = baton.lead('job', { run: (token, termSignal) => { signal = termSignal; } });
  handle.onChange((change) => changes.push(change));
  await waitFor(() => handle.state() === 'leader' && signal);
  return { baton, handle, changes, signal, epoch: handle.token().epoch };
}

/** Hangs the store until the term is in doubt; checks what the handle says meanwhile. */
async function hangUntilInDoubt(browser, { handle, changes, signal }) {
  const before = changes.length;
  browser.indexedDB.fail('hang');
  await waitFor(() => handle.state() !== 'leader', { what: 'the renewal to hang past the takeover time' });
  assert.equal(handle.state(), 'candidate');
  assert.equal(handle.token(), null);
  await assert.rejects(handle.fenced(() => 'ran'), (error) => error.code === 'STALE_OWNER');
  assert.equal(signal.aborted, false, 'the term has not ended');
  assert.equal(changes.length, before, 'no onChange notice for a term in doubt');
}

describe('lease: a term in doubt while its renewal is in flight', () => {
  test('a renewal that commits confirms the same term, without a notice', async () => {
    const browser = createBrowser();
    const leader = await leaseLeader(browser);
    await hangUntilInDoubt(browser, leader);
    const before = leader.changes.length;
    browser.indexedDB.fail(false);
    await waitFor(() => leader.handle.state() === 'leader', { what: 'the renewal to commit' });
    assert.equal(leader.handle.token().epoch, leader.epoch, 'the same term');
    assert.equal(await leader.handle.fenced(() => 'ran'), 'ran');
    assert.equal(leader.signal.aborted, false);
    assert.equal(leader.changes.length, before, 'no notice when the term is confirmed');
    leader.baton.dispose();
  });

  test('a renewal that fails ends the term with a deposed notice', async () => {
    const browser = createBrowser();
    const leader = await leaseLeader(browser);
    await hangUntilInDoubt(browser, leader);
    await waitFor(() => leader.changes.some((change) => change.type === 'deposed'), { what: 'the deposed notice' });
    const deposed = leader.changes.find((change) => change.type === 'deposed');
    assert.equal(deposed.token.epoch, leader.epoch);
    assert.ok(['storage-failed', 'lease-expired'].includes(deposed.reason), deposed.reason);
    assert.equal(leader.signal.aborted, true);
    browser.indexedDB.fail(false);
    leader.baton.dispose();
  });
});
