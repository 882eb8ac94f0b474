// broadcast-channel's LeaderElector API: an app switches by changing the import of
// `createLeaderElection` (its channels can stay broadcast-channel's).
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BroadcastChannel as PubkeyChannel } from 'broadcast-channel';
import { createLeaderElection } from 'tab-baton';
import { openTabs, sleep, waitFor } from './helpers/tabs.js';
import { PROTOCOL_VERSION } from '../../js-glue/src/constants.js';

let electors = [];
afterEach(async () => {
  await Promise.all(electors.map((e) => e.die()));
  electors = [];
});

function electorsFor(tabs, name, options = {}) {
  const list = tabs.map((tab) => createLeaderElection(new PubkeyChannel(name, { type: 'simulate' }), { env: tab.env, ...options }));
  electors.push(...list);
  return list;
}

describe('broadcast-channel createLeaderElection', () => {
  test('the README example: awaitLeadership, hasLeader, die', async () => {
    const { tabs } = openTabs(3);
    const elector = electorsFor(tabs, 'foobar');
    const leaders = [];
    elector.forEach((e, i) => e.awaitLeadership().then(() => leaders.push(i)));
    await waitFor(() => leaders.length === 1);
    await sleep(30);
    assert.equal(leaders.length, 1);
    const [first] = leaders;
    assert.equal(elector[first].isLeader, true);
    for (const e of elector) assert.equal(await e.hasLeader(), true);
    assert.equal(typeof elector[first].token, 'string');
    assert.equal(elector[first].broadcastChannel.name, 'foobar');

    const died = elector[first].die();
    assert.equal(elector[first].die(), died, 'die() is idempotent');
    await died;
    assert.equal(elector[first].isDead, true);
    assert.equal(elector[first].isLeader, false);
    assert.equal(await elector[first].hasLeader(), false);
    await waitFor(() => leaders.length === 2);
    assert.notEqual(leaders[1], first);
  });

  test('the election is lazy: no lock is requested before awaitLeadership(), but the leader is known', async () => {
    const { browser, tabs } = openTabs(2);
    const [observer, candidate] = electorsFor(tabs, 'lazy');
    await sleep(30);
    assert.deepEqual(await browser.locks.query(), { held: [], pending: [] });
    assert.equal(await observer.hasLeader(), false);
    await candidate.awaitLeadership();
    assert.equal(candidate.isLeader, true);
    assert.equal(await observer.hasLeader(), true, 'hasLeader() of a non-candidate');
    await waitFor(() => observer.isLeader === false);
    const { held } = await browser.locks.query();
    // The library's own lock name, and Baton's marker beside it, both held by the candidate.
    assert.deepEqual(held.map((l) => [l.name, l.clientId]).sort(), [
      [`baton/lazy/v1/leader/w${PROTOCOL_VERSION}`, tabs[1].id],
      ['pubkey-bc||simulate||lazy', tabs[1].id],
    ]);
    assert.equal(await observer.applyOnce(), false, 'applyOnce: the other tab leads');
  });

  test('closing a broadcast-channel channel kills its elector; one elector per channel', async () => {
    const { tabs } = openTabs(1);
    const channel = new PubkeyChannel('closing', { type: 'simulate' });
    const elector = createLeaderElection(channel, { env: tabs[0].env });
    electors.push(elector);
    assert.throws(() => createLeaderElection(channel, { env: tabs[0].env }), /already has a leader-elector/);
    await elector.awaitLeadership();
    await channel.close();
    assert.equal(elector.isDead, true);
    assert.equal(elector.isLeader, false);
  });

  test('onduplicate fires in both leaders when they meet (broadcast-only mode after a partition), with a typed event', async () => {
    const { browser, tabs } = openTabs(2);
    const elector = electorsFor(tabs, 'dup', { authority: 'broadcast', heartbeatMs: 30, fallbackInterval: 120 });
    const duplicates = [];
    elector.forEach((e, i) => {
      e.onduplicate = function (event) {
        duplicates.push({ i, event, self: this });
      };
    });
    for (const tab of tabs) for (const ch of tab.channels) browser.hub.pause(ch);
    elector.forEach((e) => e.awaitLeadership());
    await waitFor(() => elector.every((e) => e.isLeader), { what: 'both lead while partitioned' });
    for (const tab of tabs) for (const ch of tab.channels) browser.hub.resume(ch);
    await waitFor(() => new Set(duplicates.map((d) => d.i)).size === 2, { what: 'onduplicate in both leaders' });
    await waitFor(() => elector.filter((e) => e.isLeader).length === 1);
    const deposed = duplicates.find((d) => d.event.reason !== 'told');
    const told = duplicates.find((d) => d.event.reason === 'told' && d.i !== deposed?.i);
    assert.ok(deposed && told, 'one saw its term end, the other was told');
    assert.equal(told.event.other, elector[deposed.i].token, 'the told leader knows who overlapped');
    for (const d of duplicates) {
      assert.equal(d.event.type, 'duplicate');
      assert.ok(Number.isInteger(d.event.epoch) && d.event.epoch > 0);
      assert.equal(d.self, elector[d.i].broadcastChannel, 'called with the channel as this, as the library does');
    }
    const terms = duplicates.map((d) => `${d.i}@${d.event.epoch}`);
    assert.equal(new Set(terms).size, terms.length, `once per term on each side: ${terms}`);
  });

  test('onduplicate fires in both leaders under Web Locks too: a frozen leader replaced by steal, then thawed', async () => {
    const { tabs } = openTabs(2);
    const elector = electorsFor(tabs, 'dup-locks', { heartbeatMs: 30, fallbackInterval: 120 });
    const duplicates = [];
    elector.forEach((e, i) => {
      e.onduplicate = (event) => duplicates.push({ i, event });
    });
    await elector[0].awaitLeadership();
    elector[1].awaitLeadership();
    await waitFor(() => elector[1].hasLeader(), { what: 'the other elector knows the leader' });
    tabs[0].freeze({ deaf: true });
    await waitFor(() => elector[1].isLeader, { what: 'the other elector steals the lock from the frozen leader' });
    tabs[0].thaw();
    await waitFor(() => new Set(duplicates.map((d) => d.i)).size === 2, { what: 'onduplicate in both leaders' });
    assert.equal(elector[0].isLeader, false);
    const byTab = Object.fromEntries(duplicates.map((d) => [d.i, d.event]));
    assert.equal(byTab[0].reason, 'lock-lost', 'the thawed leader saw its lock taken');
    assert.equal(byTab[1].reason, 'told');
    assert.equal(byTab[1].other, elector[0].token, 'the new leader is told who overlapped');
    assert.ok(byTab[1].epoch > byTab[0].epoch, 'each reports its own term');
    await sleep(200);
    assert.equal(duplicates.length, 2, 'once per term on each side');
  });

  test('a native BroadcastChannel or a name works too; options are checked', async () => {
    const { tabs } = openTabs(1);
    const native = new BroadcastChannel('native');
    const e1 = createLeaderElection(native, { env: tabs[0].env });
    const e2 = createLeaderElection('by-name', { env: tabs[0].env });
    electors.push(e1, e2);
    native.close();
    assert.throws(() => createLeaderElection({}), (e) => e instanceof TypeError && /"channel"/.test(e.message));
    assert.throws(() => createLeaderElection('x', { fallbackInterval: 'soon' }), /"fallbackInterval"/);
    assert.throws(() => createLeaderElection('x', { colour: 1 }), /unknown option "colour"/);
  });
});
