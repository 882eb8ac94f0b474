// The behaviours broadcast-channel's own leader-election tests check, run against the
// drop-in (each elector in its own simulated tab, with broadcast-channel's channels):
// one elector alone leads after applyOnce(); of two or twenty electors exactly one leads;
// after the leader dies (die(), its channel closed, the `unload` package's runAll(), or its
// tab gone silent) another leads and awaitLeadership() resolves; die() during the election
// means never leading; hasLeader() in both tabs, false for another channel and after the
// leader died; onduplicate stays silent in a normal election; unload entries are cleaned up.
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BroadcastChannel as PubkeyChannel } from 'broadcast-channel';
import unload from 'unload';
import { createLeaderElection } from 'tab-baton';
import { openTabs, waitFor } from './helpers/tabs.js';

const FAST = { heartbeatMs: 20, fallbackInterval: 80 };
let channels = [];
afterEach(async () => {
  await Promise.all(channels.map((c) => c.close()));
  channels = [];
});

let seq = 0;
/** `n` electors on one channel name, each in its own tab. */
function electors(n, options = FAST) {
  const name = `parity-${(seq += 1)}`;
  const { tabs } = openTabs(n);
  return tabs.map((tab) => {
    const channel = new PubkeyChannel(name, { type: 'simulate' });
    channels.push(channel);
    return { tab, channel, elector: createLeaderElection(channel, { env: tab.env, ...options }) };
  });
}
const leaders = (list) => list.filter((c) => c.elector.isLeader);

describe("broadcast-channel's leader-election behaviours, against the drop-in", () => {
  test('a single elector becomes leader with applyOnce()', async () => {
    // applyOnce() is one heartbeat of election: the default 1 s, room for a loaded machine.
    const [one] = electors(1, {});
    assert.equal(await one.elector.applyOnce(), true);
    assert.equal(one.elector.isLeader, true);
  });

  for (const n of [2, 20]) {
    test(`of ${n} electors that apply, exactly one becomes leader`, async () => {
      const list = electors(n);
      await Promise.all(list.map((c) => c.elector.applyOnce()));
      await waitFor(() => leaders(list).length >= 1);
      // Stable: every elector has heard the leader, and still exactly one leads.
      await waitFor(async () => (await Promise.all(list.map((c) => c.elector.hasLeader()))).every(Boolean));
      assert.equal(leaders(list).length, 1);
    });
  }

  test('after the leader dies, another can become leader', async () => {
    const [a, b] = electors(2);
    await waitFor(async () => (await a.elector.applyOnce()) === true, { what: 'a leads' });
    await a.elector.die();
    await waitFor(async () => (await b.elector.applyOnce()) === true, { what: 'b leads after a died' });
    assert.equal(b.elector.isLeader, true);
  });

  test("closing the leader's channel kills it, and another becomes leader", async () => {
    const [a, b] = electors(2);
    await waitFor(async () => (await a.elector.applyOnce()) === true, { what: 'a leads' });
    await a.channel.close();
    assert.equal(a.elector.isDead, true);
    await waitFor(async () => (await b.elector.applyOnce()) === true, { what: 'b leads after a closed' });
  });

  test('awaitLeadership() resolves when the other leader dies', async () => {
    const [a, b] = electors(2);
    await a.elector.awaitLeadership();
    let resolved = false;
    b.elector.awaitLeadership().then(() => {
      resolved = true;
    });
    a.elector.die();
    await waitFor(() => resolved, { what: 'b resolved' });
    assert.equal(b.elector.isLeader, true);
  });

  test('awaitLeadership() resolves when the leader stops responding (its tab is gone)', async () => {
    const [a, b] = electors(2);
    await a.elector.awaitLeadership();
    let resolved = false;
    b.elector.awaitLeadership().then(() => {
      resolved = true;
    });
    a.tab.crash();
    await waitFor(() => resolved, { what: 'b resolved' });
  });

  test("unload's runAll() kills the leading elector, as broadcast-channel's does; the other leads", async () => {
    const [a, b] = electors(2);
    await a.elector.awaitLeadership();
    let resolved = false;
    b.elector.awaitLeadership().then(() => {
      resolved = true;
    });
    const before = unload.getSize();
    assert.ok(before >= 1, 'the leader registered with unload');
    await unload.runAll();
    assert.equal(a.elector.isDead, true);
    assert.equal(a.elector.isLeader, false);
    await waitFor(() => resolved, { what: 'b resolved after runAll()' });
    assert.equal(b.elector.isLeader, true);
    await b.channel.close();
    assert.equal(unload.getSize(), 0, "a dead elector leaves no entry in unload");
  });

  test('a closed channel or die() takes the leader out of unload again', async () => {
    const before = unload.getSize();
    const [a, b] = electors(2);
    await a.elector.awaitLeadership();
    await waitFor(() => unload.getSize() === before + 1, { what: 'the leader registered' });
    await a.channel.close();
    assert.equal(unload.getSize(), before);
    await b.elector.awaitLeadership();
    await waitFor(() => unload.getSize() === before + 1, { what: 'the next leader registered' });
    await b.elector.die();
    assert.equal(unload.getSize(), before);
  });

  test('die() during the election: the elector never leads', async () => {
    const [a] = electors(1);
    let resolved = false;
    a.elector.awaitLeadership().then(() => {
      resolved = true;
    });
    await a.elector.die();
    assert.equal(a.elector.isDead, true);
    // Longer than an election of a lone elector (FAST: 20 ms heartbeats), twice over.
    const [probe] = electors(1);
    await probe.elector.awaitLeadership();
    assert.equal(a.elector.isLeader, false);
    assert.equal(resolved, false);
    assert.equal(await a.elector.applyOnce(), false);
    assert.equal(await a.elector.hasLeader(), false);
  });

  test('hasLeader(): true in both tabs after an election, false on another channel, false after the leader died', async () => {
    const [a, b] = electors(2);
    await Promise.race([a.elector.awaitLeadership(), b.elector.awaitLeadership()]);
    await waitFor(async () => (await a.elector.hasLeader()) && (await b.elector.hasLeader()), { what: 'both know a leader' });
    const [other] = electors(1);
    assert.equal(await other.elector.hasLeader(), false);

    // An observer (it never asked to lead) sees the leader go when it dies.
    const [leader, watcher] = electors(2);
    await leader.elector.awaitLeadership();
    await waitFor(() => watcher.elector.hasLeader(), { what: 'the watcher knows the leader' });
    await leader.elector.die();
    await waitFor(async () => (await watcher.elector.hasLeader()) === false, { what: 'no leader after die()' });
  });

  test('onduplicate stays silent in a normal election; twenty electors can die at once', async () => {
    const list = electors(20);
    const fired = [];
    for (const c of list) c.elector.onduplicate = () => fired.push(c.elector.token);
    await Promise.race(list.map((c) => c.elector.awaitLeadership()));
    await waitFor(async () => (await Promise.all(list.map((c) => c.elector.hasLeader()))).every(Boolean));
    assert.equal(leaders(list).length, 1);
    assert.deepEqual(fired, []);
    await Promise.all(list.map((c) => c.elector.die()));
    assert.ok(list.every((c) => c.elector.isDead && !c.elector.isLeader));
  });

  test('one elector per channel, even after it died', async () => {
    const [a] = electors(1);
    await a.elector.die();
    assert.throws(() => createLeaderElection(a.channel, { env: a.tab.env }), /already has a leader-elector/);
  });
});

describe("broadcast-channel's tests in Node as they run there (Node's own BroadcastChannel, no Web Locks)", () => {
  test('of two electors exactly one leads; runAll() hands over', async () => {
    const name = `parity-node-${process.pid}-${(seq += 1)}`;
    const list = [0, 1].map(() => {
      const channel = new PubkeyChannel(name, { type: 'simulate' });
      channels.push(channel);
      return { channel, elector: createLeaderElection(channel) };
    });
    list.forEach((c) => c.elector.awaitLeadership());
    await waitFor(() => leaders(list).length >= 1, { what: 'a leader' });
    await waitFor(async () => (await Promise.all(list.map((c) => c.elector.hasLeader()))).every(Boolean));
    assert.equal(leaders(list).length, 1);
    const [first] = leaders(list);
    const second = list.find((c) => c !== first);
    await unload.runAll();
    assert.equal(first.elector.isDead, true);
    // Waits for the state: awaitLeadership() may have resolved already, as the library's
    // does, if both electors led for a moment in the election (see the next test).
    await second.elector.awaitLeadership();
    await waitFor(() => second.elector.isLeader, { what: 'the other elector leads after runAll()' });
  });

  // broadcast-channel's test: twenty electors, one leader 200 ms after the first appears.
  // Broadcast-only has no authority: electors whose hellos were not handled within the
  // hello window (all due timers of a busy process run before its messages) each lead,
  // until their claims are delivered. A leader of an older epoch, or of the same epoch and
  // a worse rank, yields on the first claim it hears, so the overlap is as long as frame
  // delivery: 200 ms of wall time is a bound a loaded machine does not keep.
  // So this waits for the state instead (one leader, known to all twenty); that it settles
  // on the first frames, whatever their timing, is the core scenario
  // tests/core/testdata/broadcast_simultaneous_candidates.txt.
  test('of twenty electors one leads once their frames are delivered', async () => {
    const name = `parity-node20-${process.pid}-${(seq += 1)}`;
    const list = Array.from({ length: 20 }, () => {
      const channel = new PubkeyChannel(name, { type: 'simulate' });
      channels.push(channel);
      return { channel, elector: createLeaderElection(channel) };
    });
    list.forEach((c) => c.elector.awaitLeadership());
    const settled = async () =>
      leaders(list).length === 1 && (await Promise.all(list.map((c) => c.elector.hasLeader()))).every(Boolean);
    await waitFor(settled, { what: 'one leader that every elector knows' });
    assert.equal(leaders(list).length, 1);
  });
});
