// The IndexedDB lease: a leader frozen without a `freeze` event while its renewal's
// transaction waits for the page (the read is answered, the page must decide and write)
// holds the store: the transaction's deadline is a timer, which a frozen page does not run,
// and every other tab's lease transaction waits behind it (seen in Chromium: no tab led for
// 8 s, until the thaw). A frozen page still handles frames: there it ends a transaction
// past its deadline, and the others take the lease over. Run on a virtual clock, with each
// tab's own IndexedDB client, which holds a frozen page's answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, load } from 'tab-baton';
import { createBrowser } from 'tab-baton/testing';
import { leaderIndexes, openTab } from './helpers/tabs.js';
import { settle, virtualClock } from './helpers/virtual-clock.js';

const WAIT_MS = 10_000; // the leader stays frozen this long (virtual)

test('lease: a leader frozen silently with its renewal in flight does not hold the store; another tab takes over (virtual clock)', async () => {
  await load(); // the core loads in real time: have it before time is virtual
  const clock = virtualClock();
  const browser = createBrowser();
  const tabs = ['a', 'b', 'c'].map((id) => openTab(browser, id, { clock }));
  const batons = tabs.map((tab) => createBaton({ namespace: 'lease-freeze', id: tab.id, env: tab.env, authority: 'lease' }));
  try {
    const handles = batons.map((baton) => baton.lead('job'));
    await clock.until(() => leaderIndexes(handles).length === 1, { what: 'a leader' });
    await clock.run(3000);
    const [old] = leaderIndexes(handles);
    const oldEpoch = handles[old].token().epoch;

    // Timer by timer, until the leader's timer begins a renewal: frozen in that very task,
    // before the store answers its read.
    const renewals = () => batons[old].metrics().glue.leaseTransactions;
    const before = renewals();
    for (let i = 0; renewals() === before; i += 1) {
      assert.ok(i < 10_000 && clock.step(Infinity), 'the leader renews');
      if (renewals() === before) await settle();
    }
    tabs[old].freeze({ storage: true });
    const frozenAt = clock.now();

    const others = [0, 1, 2].filter((i) => i !== old);
    await clock.until(() => others.some((i) => handles[i].state() === 'leader'), { limitMs: WAIT_MS, what: 'another tab leads while the old leader is frozen' });
    const tookOverMs = clock.now() - frozenAt;
    const [next] = others.filter((i) => handles[i].state() === 'leader');
    assert.ok(handles[next].token().epoch > oldEpoch, 'a newer term');
    assert.equal(batons[next].metrics().degraded, false, 'the lease still decides');
    // The renewal's deadline (2.5 s), then the first frame the frozen page handles ends it,
    // the core gives the term up and its goodbye names a successor: within the suspect
    // timeout and a heartbeat (the benchmark's bound for a silent freeze).
    assert.ok(tookOverMs <= 3000 + 1000, `taken over ${tookOverMs} ms after the freeze`);

    tabs[old].thaw();
    await clock.until(() => handles[old].state() !== 'leader', { what: 'the thawed leader steps down' });
    await clock.run(2000);
    assert.deepEqual(leaderIndexes(handles), [next], 'one leader after the thaw');
  } finally {
    for (const baton of batons) baton.dispose();
  }
});
