// A lease term in doubt: past the time its record lets other tabs take it over, with the
// renewal still uncommitted (a busy store), this tab must not act on the term, yet the term
// has not ended. What the README promises: state() says 'candidate', token() is null and
// fenced() refuses, while onChange stays silent and the term's signal is not aborted; a
// renewal that commits confirms the same term (still silent), one that fails ends it with
// a 'deposed' notice. On a virtual clock: the store's deadline and the takeover time are
// exact, so a loaded machine cannot end the term in doubt before the test looks at it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, load } from 'tab-baton';
import { createBrowser } from 'tab-baton/testing';
import { virtualClock } from './helpers/virtual-clock.js';

/** One lease leader (no Web Locks) with fast renewals, its clock, and what its handle reported. */
async function leaseLeader(browser) {
  await load(); // the core loads in real time: have it before time is virtual
  const clock = virtualClock();
  const baton = createBaton({ namespace: 'doubt', env: { ...browser.tab('a'), locks: null, ...clock.env() }, heartbeatMs: 50, suspectMs: 300 });
  const changes = [];
  let signal = null;
  const handle = baton.lead('job', { run: (token, termSignal) => { signal = termSignal; } });
  handle.onChange((change) => changes.push(change));
  await clock.until(() => handle.state() === 'leader' && signal);
  return { clock, baton, handle, changes, signal, epoch: handle.token().epoch };
}

/** Hangs the store until the term is in doubt; checks what the handle says meanwhile. */
async function hangUntilInDoubt(browser, { clock, handle, changes, signal }) {
  const before = changes.length;
  browser.indexedDB.fail('hang');
  await clock.until(() => handle.state() !== 'leader', { what: 'the renewal to hang past the takeover time' });
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
    await leader.clock.until(() => leader.handle.state() === 'leader', { what: 'the renewal to commit' });
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
    await leader.clock.until(() => leader.changes.some((change) => change.type === 'deposed'), { what: 'the deposed notice' });
    const deposed = leader.changes.find((change) => change.type === 'deposed');
    assert.equal(deposed.token.epoch, leader.epoch);
    assert.ok(['storage-failed', 'lease-expired'].includes(deposed.reason), deposed.reason);
    assert.equal(leader.signal.aborted, true);
    browser.indexedDB.fail(false);
    leader.baton.dispose();
  });
});
