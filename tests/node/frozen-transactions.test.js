// Web Locks: a frozen page begins no IndexedDB transaction. Its timers stop, but it still
// runs its message handlers (measured in Chromium 156) and perhaps its lock callbacks (not
// measured; the fakes run them), and a transaction it begins there is answered only once it
// thaws. Seen in Chromium's silent-freeze test: the frozen leader began reads of the epoch
// counter in message handlers, and the other tabs' epoch allocations waited past their
// deadline until the thaw (how is not pinned down). The glue begins such a read in a timer
// task (EpochStore.heard), and the core gives up a frozen tab's place in the lock's queue in
// its `freeze` event's step. Each tab's transactions are counted as it begins them. On a
// virtual clock, so that the figures are exact.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, load } from 'tab-baton';
import { createBrowser } from 'tab-baton/testing';
import { DEFAULT_STEAL_GRACE_MS } from '../../js-glue/src/constants.js';
import { leaderIndexes, openTab } from './helpers/tabs.js';
import { virtualClock } from './helpers/virtual-clock.js';

const TIMING = { heartbeatMs: 250, suspectMs: 1500 };

/**
 * Counts the transactions `tab` begins: its env's IndexedDB becomes a view of the same
 * databases whose connections count each `transaction()` call.
 */
function countTransactions(tab) {
  const factory = tab.env.indexedDB;
  const counter = { begun: 0 };
  tab.env.indexedDB = {
    open(...args) {
      const req = factory.open(...args);
      let onsuccess = null;
      Object.defineProperty(req, 'onsuccess', {
        get: () => onsuccess,
        set(fn) {
          onsuccess = (event) => {
            const db = req.result;
            const transaction = db.transaction.bind(db);
            db.transaction = (...rest) => {
              counter.begun += 1;
              return transaction(...rest);
            };
            fn(event);
          };
        },
      });
      return req;
    },
  };
  return counter;
}

test("web-locks: a silently frozen leader that hears another resource's new term begins no transaction; its resource is taken over with a durable epoch (virtual clock)", async () => {
  await load(); // the core loads in real time: have it before time is virtual
  const clock = virtualClock();
  const browser = createBrowser();
  const tabs = ['a', 'b', 'c', 'd'].map((id) => openTab(browser, id, { clock }));
  const counted = countTransactions(tabs[0]);
  // Tab a cannot lead 'other': it follows that resource's terms, and only hears of them.
  const batons = tabs.map((tab, i) => createBaton({ namespace: 'frozen-read', id: tab.id, env: tab.env, authority: 'web-locks', capabilities: i === 0 ? [] : ['other'], ...TIMING }));
  try {
    const jobs = [batons[0].lead('job')];
    await clock.until(() => jobs[0].state() === 'leader', { what: 'tab a leads job' });
    jobs.push(...batons.slice(1).map((baton) => baton.lead('job')));
    const others = batons.map((baton) => baton.lead('other', { eligible: { capability: 'other' } }));
    await clock.until(() => leaderIndexes(others).length === 1, { what: "a leader of 'other'" });
    await clock.run(4 * TIMING.heartbeatMs);
    assert.deepEqual(leaderIndexes(jobs), [0]);
    const oldEpoch = jobs[0].token().epoch;

    // Frozen silently, then 'other' changes hands: the frozen page hears the new term.
    tabs[0].freeze({ storage: true });
    const frozenAt = clock.now();
    const begun = counted.begun;
    assert.ok(begun > 0, "the tab's transactions are counted");
    const [otherLeader] = leaderIndexes(others);
    const otherEpoch = others[otherLeader].token().epoch;
    others[otherLeader].abdicate();
    await clock.until(() => others[0].leader()?.epoch > otherEpoch, { what: "the frozen tab hears of the new term of 'other'" });

    await clock.until(() => jobs.slice(1).some((handle) => handle.state() === 'leader'), { what: 'another tab leads job' });
    const tookOverMs = clock.now() - frozenAt;
    const next = leaderIndexes(jobs).find((i) => i !== 0);
    assert.ok(jobs[next].token().epoch > oldEpoch, 'a newer term');
    assert.equal(batons[next].metrics().degraded, false, "the new term's epoch is durable");
    assert.equal(await jobs[next].fenced((token) => token.epoch), jobs[next].token().epoch, 'fenced() runs under it');
    // The leader's last heartbeat came at most a heartbeat before the freeze; a follower
    // suspects it a suspect timeout later, asks it to abdicate, and steals after the grace.
    const bound = TIMING.suspectMs + TIMING.heartbeatMs + DEFAULT_STEAL_GRACE_MS;
    assert.ok(tookOverMs <= bound, `taken over ${tookOverMs} ms after the freeze (bound ${bound} ms)`);
    assert.equal(counted.begun, begun, 'the frozen page began no transaction');
  } finally {
    for (const baton of batons) baton.dispose();
  }
});

// A follower frozen by its `freeze` event knows it may not lead, but its timers, which would
// withdraw its lock request, stop: kept in the queue, it was granted the lock when the leader
// left, took an epoch and began its transaction in the frozen page, and only then gave the
// lock back.
test("web-locks: a follower frozen by its freeze event gives up its place in the lock's queue and begins no transaction; the next tab leads at once (virtual clock)", async () => {
  await load();
  const clock = virtualClock();
  const browser = createBrowser();
  const tabs = ['a', 'b', 'c'].map((id) => openTab(browser, id, { clock }));
  const counted = countTransactions(tabs[1]);
  const batons = tabs.map((tab) => createBaton({ namespace: 'frozen-queue', id: tab.id, env: tab.env, authority: 'web-locks', ...TIMING }));
  try {
    // Joined in turn: b queues on the lock before c.
    const handles = [];
    for (const baton of batons) {
      handles.push(baton.lead('job'));
      await clock.run(TIMING.heartbeatMs);
    }
    await clock.until(() => leaderIndexes(handles).length === 1, { what: 'a leader' });
    assert.deepEqual(leaderIndexes(handles), [0]);
    const oldEpoch = handles[0].token().epoch;

    tabs[1].fire('document', 'freeze');
    tabs[1].freeze({ storage: true });
    const begun = counted.begun;
    assert.ok(begun > 0, "the tab's transactions are counted");
    const leftAt = clock.now();
    batons[0].dispose();
    await clock.until(() => handles[2].state() === 'leader', { what: 'c leads' });
    assert.equal(handles[2].token().epoch, oldEpoch + 1, 'the next term');
    assert.equal(batons[2].metrics().degraded, false, "the new term's epoch is durable");
    // Handed over by the lock and the goodbye, with no timeout on the way.
    assert.ok(clock.now() - leftAt < TIMING.heartbeatMs, `led ${clock.now() - leftAt} ms after the leader left`);
    assert.equal(counted.begun, begun, 'the frozen page began no transaction');

    // Thawed, b queues again and is the next leader.
    tabs[1].thaw();
    tabs[1].fire('document', 'resume');
    await clock.run(2 * TIMING.heartbeatMs);
    const cEpoch = handles[2].token().epoch;
    batons[2].dispose();
    await clock.until(() => handles[1].state() === 'leader', { what: 'b leads after its thaw' });
    assert.ok(handles[1].token().epoch > cEpoch);
    assert.equal(batons[1].metrics().degraded, false);
  } finally {
    for (const baton of batons) baton.dispose();
  }
});
