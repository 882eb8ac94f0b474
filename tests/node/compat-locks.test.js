// The compatibility APIs hold exactly the Web Lock their original documents: awaforge's
// `channel`, the article's `requestLeadership(id)`, broadcast-channel's
// `pubkey-bc||<method type>||<name>`. A tab still running the original code and a Baton tab
// exclude each other (rolling deploys): Baton never steals a lock held by foreign code, yet
// still replaces a frozen Baton leader (its marker lock shows a Baton holder of its wire version).
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BroadcastChannel as PubkeyChannel, createLeaderElection as libraryElection } from 'broadcast-channel';
import { __internal, createLeaderElection, leaderElection, requestLeadership } from 'tab-baton';
import { openTabs, sleep, waitFor } from './helpers/tabs.js';
import { PROTOCOL_VERSION } from '../../js-glue/src/constants.js';

const FAST = { heartbeatMs: 20, takeoverMs: 60 };
let cleanups = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The plain Web Locks pattern of the article, in one tab: holds `name` until relinquished. */
function plainLeader(locks, name) {
  const state = { leading: false, relinquish: null };
  const held = new Promise((resolve) => {
    state.relinquish = resolve;
  });
  state.done = locks.request(name, () => {
    state.leading = true;
    return held.then(() => {
      state.leading = false;
    });
  });
  return state;
}

const heldNames = async (browser) => (await browser.locks.query()).held.map((l) => l.name).sort();

describe('exact lock names: awaforge, requestLeadership, broadcast-channel', () => {
  test('awaforge: the lock is `channel`; a plain Web Locks tab holding it is never stolen from', async () => {
    const { browser, tabs } = openTabs(2);
    const plain = plainLeader(tabs[0].env.locks, 'ws-leader');
    await waitFor(() => plain.leading);
    const election = leaderElection.create({ channel: 'ws-leader', env: tabs[1].env, ...FAST });
    cleanups.push(() => election.dispose());
    let led = 0;
    election.onLeader(() => {
      led += 1;
    });
    // Wait until Baton has considered stealing (suspect timeout passed, with no Baton
    // leader known) and refused twice because the holder is not a Baton tab.
    const baton = batonMetrics(election);
    await waitFor(() => baton().glue.foreignHolderWaits >= 2, { what: 'two refused steals' });
    assert.equal(plain.leading, true, 'the plain tab still holds its lock');
    assert.equal(election.isLeader(), false);
    assert.equal(led, 0, 'both never lead at once');
    assert.equal(baton().steals, baton().glue.foreignHolderWaits, 'each steal the core wanted was refused');
    plain.relinquish();
    await waitFor(() => election.isLeader(), { what: 'Baton leads once the plain tab lets go' });
    assert.deepEqual(await heldNames(browser), [`baton/ws-leader/v1/leader/w${PROTOCOL_VERSION}`, 'ws-leader']);
    // And the other way round: the plain tab queues behind the Baton leader.
    const late = plainLeader(tabs[0].env.locks, 'ws-leader');
    await sleep(100);
    assert.equal(late.leading, false, 'the plain tab waits while Baton leads');
    election.dispose();
    await waitFor(() => late.leading, { what: 'the plain tab leads after dispose()' });
    late.relinquish();
  });

  test('requestLeadership: the lock is the id itself, and the article code and Baton exclude each other', async () => {
    const { browser, tabs } = openTabs(2);
    let batonLeads = false;
    const relinquish = requestLeadership('leader-election', () => {
      batonLeads = true;
    }, { env: tabs[0].env, heartbeatMs: 20, suspectMs: 60 });
    cleanups.push(() => relinquish());
    await waitFor(() => batonLeads);
    assert.deepEqual(await heldNames(browser), [`baton/leader-election/v1/leader/w${PROTOCOL_VERSION}`, 'leader-election']);
    const plain = plainLeader(tabs[1].env.locks, 'leader-election');
    await sleep(150);
    assert.equal(plain.leading, false);
    relinquish();
    await waitFor(() => plain.leading, { what: 'the article code leads after relinquish()' });
    plain.relinquish();
  });

  test('broadcast-channel: the library elector (Web Locks mode) and the drop-in never both lead', async (t) => {
    const { browser, tabs } = openTabs(2);
    // The library looks for Web Locks on the global navigator: give it tab 0's.
    const hadNavigator = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
    Object.defineProperty(globalThis, 'navigator', { value: { locks: tabs[0].env.locks }, configurable: true, writable: true });
    t.after(() => {
      if (hadNavigator) Object.defineProperty(globalThis, 'navigator', hadNavigator);
      else delete globalThis.navigator;
    });
    const libraryChannel = new PubkeyChannel('app', { type: 'simulate' });
    const library = libraryElection(libraryChannel);
    cleanups.push(() => libraryChannel.close());
    await library.awaitLeadership();
    assert.equal(library.isLeader, true);

    const ours = createLeaderElection(new PubkeyChannel('app', { type: 'simulate' }), { env: tabs[1].env, heartbeatMs: 20, fallbackInterval: 60 });
    cleanups.push(() => ours.die());
    let oursLeads = false;
    ours.awaitLeadership().then(() => {
      oursLeads = true;
    });
    assert.equal(await ours.hasLeader(), true, 'the library leader counts as a leader');
    const baton = batonMetrics(ours);
    await waitFor(() => baton().glue.foreignHolderWaits >= 2, { what: 'two refused steals' });
    assert.equal(oursLeads, false);
    assert.equal(library.isLeader, true);
    assert.deepEqual(await heldNames(browser), ['pubkey-bc||simulate||app']);
    await library.die();
    await waitFor(() => oursLeads, { what: 'the drop-in leads after the library elector dies' });
    assert.equal(ours.isLeader, true);
  });

  test('a frozen Baton leader under an exact lock name is still replaced (its marker shows a Baton holder)', async () => {
    const { tabs } = openTabs(2);
    const election = tabs.map((tab) => leaderElection.create({ channel: 'cron', env: tab.env, ...FAST }));
    cleanups.push(() => election.forEach((e) => e.dispose()));
    await waitFor(() => election.filter((e) => e.isLeader()).length === 1);
    const first = election.findIndex((e) => e.isLeader());
    const other = 1 - first;
    tabs[first].freeze({ deaf: true }); // no timers, no messages: it cannot hand over by itself
    await waitFor(() => election[other].isLeader(), { what: 'the live tab steals from the frozen Baton leader' });
    const metrics = batonMetrics(election[other])();
    assert.ok(metrics.steals >= 1);
    assert.equal(metrics.glue.foreignHolderWaits, 0, 'a Baton holder is not foreign');
    tabs[first].thaw();
    await waitFor(() => !election[first].isLeader(), { what: 'the thawed leader steps down' });
  });
});

describe('awaforge onLeader while already leading', () => {
  test('is called at once (and again on later terms); unsubscribe stops it', async () => {
    const { tabs } = openTabs(1);
    const election = leaderElection.create({ channel: 'observable', env: tabs[0].env, ...FAST });
    cleanups.push(() => election.dispose());
    await waitFor(() => election.isLeader());
    let calls = 0;
    const off = election.onLeader(() => {
      calls += 1;
    });
    assert.equal(calls, 1, 'called synchronously on registration');
    off();
    const late = [];
    election.onLeader(() => late.push('a'));
    election.onLeader(() => {
      throw new Error('a throwing listener is reported, not thrown into onLeader()');
    });
    assert.deepEqual(late, ['a']);
    assert.equal(calls, 1);
  });

  test('registered before leading: called once, when the term begins', async () => {
    const { tabs } = openTabs(1);
    const election = leaderElection.create({ channel: 'observable-2', env: tabs[0].env, ...FAST });
    cleanups.push(() => election.dispose());
    let calls = 0;
    election.onLeader(() => {
      calls += 1;
    });
    assert.equal(calls, 0);
    await waitFor(() => election.isLeader());
    await sleep(50);
    assert.equal(calls, 1);
  });
});

/** The metrics of the Baton behind a compatibility object (for the assertions only). */
function batonMetrics(api) {
  return () => __internal.metricsOf(api);
}
