// The behaviours broadcast-channel's own leader-election tests check, run against the
// drop-in (each elector in its own simulated tab, with broadcast-channel's channels):
// one elector alone leads after applyOnce(); of two or twenty electors exactly one leads;
// after the leader dies (die(), its channel closed, or its tab gone silent) another leads;
// awaitLeadership() resolves then. And the one behaviour left out on purpose: the unload
// package's runAll() does not kill a Baton elector (see the README).
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

  test("unload's runAll() does not kill a Baton elector (documented difference)", async () => {
    const [a, b] = electors(2);
    await a.elector.awaitLeadership();
    b.elector.awaitLeadership();
    await unload.runAll();
    unload._resetUnloaded?.();
    assert.equal(a.elector.isDead, false);
    assert.equal(a.elector.isLeader, true);
    assert.equal(b.elector.isLeader, false);
  });
});
