// Broadcast-only: a leader frozen without a `freeze` event (its timers stop, its page still
// handles frames, as a frozen Chromium tab does) is replaced by the first candidacy, within
// the suspect timeout and a heartbeat of the freeze. Its timer ran once more after its last
// heartbeat, sending nothing (a wake-up for an election: a follower was hidden); the answer
// its page sends the candidate from a message handler must not show that run, which the
// others would take for progress made as the answer arrives: the candidate would yield to
// the frozen leader once its epoch is committed and try again a suspect timeout later (seen
// in Chromium: 5.3 s instead of 2.4 s). The store answers the candidate's epoch only after
// the answer has come, as on a busy machine. Run on a virtual clock, so the figure is exact.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, load } from 'tab-baton';
import { createBrowser, createIndexedDB } from 'tab-baton/testing';
import { leaderIndexes, openTab } from './helpers/tabs.js';
import { settle, virtualClock } from './helpers/virtual-clock.js';

const SUSPECT_MS = 3000; // the defaults
const HEARTBEAT_MS = 1000;

test("broadcast-only: a silently frozen leader's answer is no progress; the first candidacy leads (virtual clock)", async () => {
  await load(); // the core loads in real time: have it before time is virtual
  const clock = virtualClock();
  const browser = createBrowser();
  const idb = createIndexedDB();
  const tabs = ['a', 'b', 'c'].map((id) => openTab(browser, id, { indexedDB: idb.indexedDB, clock }));
  const batons = tabs.map((tab) => createBaton({ namespace: 'silent-freeze', id: tab.id, env: tab.env, authority: 'broadcast' }));
  try {
    const handles = batons.map((baton) => baton.lead('job'));
    await clock.until(() => leaderIndexes(handles).length === 1, { what: 'a leader' });
    await clock.run(3 * HEARTBEAT_MS);
    const [old] = leaderIndexes(handles);
    const oldEpoch = handles[old].token().epoch;
    const followers = [0, 1, 2].filter((i) => i !== old);

    // Right after one of its heartbeats, a follower is hidden: the leader's timer wakes for an
    // election (the presence changed) and sends nothing, a heartbeat is not due yet.
    const sent = () => batons[old].metrics().framesSent;
    const heartbeats = sent();
    await clock.until(() => sent() > heartbeats, { what: "the leader's next heartbeat" });
    const fires = batons[old].metrics().glue.timerFires;
    tabs[followers[1]].setVisibility('hidden');
    await clock.run(HEARTBEAT_MS / 2);
    assert.equal(sent(), heartbeats + 1, 'the leader sent nothing since its heartbeat');
    assert.ok(batons[old].metrics().glue.timerFires > fires, "the leader's timer ran since its heartbeat");

    // Frozen silently; the store hangs until the frozen leader has answered the candidacy.
    tabs[old].freeze();
    const frozenAt = clock.now();
    const logged = batons.map((baton) => baton.log().length);
    const answers = sent();
    idb.fail('hang');
    await clock.until(() => followers.some((i) => handles[i].state() === 'candidate'), { what: 'a candidacy' });
    await settle(); // the candidacy reaches the frozen page, and its answer comes back
    assert.ok(sent() > answers, 'the frozen page answered the candidacy');
    idb.fail(false);

    await clock.until(() => followers.some((i) => handles[i].state() === 'leader'), { what: 'a new leader' });
    const tookOverMs = clock.now() - frozenAt;
    const [next] = followers.filter((i) => handles[i].state() === 'leader');
    const transitions = batons[next].log().slice(logged[next]).map((t) => `${t.to} (${t.reason})`);
    assert.deepEqual(transitions, ['candidate (takeover)', 'leader (epoch-ready)'], 'the first candidacy leads; it did not yield to the frozen leader');
    assert.equal(handles[next].token().epoch, oldEpoch + 1, 'one new term');
    assert.ok(tookOverMs <= SUSPECT_MS + HEARTBEAT_MS, `replaced ${tookOverMs} ms after the freeze`);
  } finally {
    for (const baton of batons) baton.dispose();
  }
});
