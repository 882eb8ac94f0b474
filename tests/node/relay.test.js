// The relay against the BUILT package, several "tabs" in one process over tab-baton/testing:
// one stream for all tabs, every event once and in order in every tab across hand-overs,
// gaps repaired by the leader, forged and impersonated events, bounded buffers, protocol
// versions kept apart.
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, createRelay } from 'tab-baton';
import { openTab, openTabs, sleep, waitFor } from './helpers/tabs.js';
import { contiguous, createFeed } from './helpers/feed.js';

const FAST = { heartbeatMs: 40, suspectMs: 150 };
let cleanup = [];
afterEach(() => {
  for (const fn of cleanup.reverse()) fn();
  cleanup = [];
});

/** One Baton and relay per tab; `received[i]` lists tab i's delivered events. */
function relaysFor(tabs, feed, { batonOptions = {}, relayOptions = {}, envOf = (tab) => tab.env } = {}) {
  const received = tabs.map(() => []);
  const batons = tabs.map((tab) => createBaton({ namespace: 'app', id: tab.id, env: envOf(tab), ...FAST, ...batonOptions }));
  const relays = batons.map((baton, i) =>
    createRelay(baton, { resource: 'feed', source: feed.source, onEvent: (event) => received[i].push(event), silenceMs: 5000, ...relayOptions }),
  );
  cleanup.push(() => batons.forEach((b) => b.dispose()));
  return { batons, relays, received };
}

const ids = (events) => events.map((e) => e.id);
const leaderOf = (relays) => relays.findIndex((r) => r.stats().state === 'leader');

/** Waits until exactly one relay leads and its source is open. */
async function streaming(relays, feed, opens = 1) {
  await waitFor(() => relays.filter((r) => r.stats().state === 'leader').length === 1 && feed.opens.length >= opens && feed.open() >= 1, { what: 'one relay leader with its source open' });
  return leaderOf(relays);
}

/** A tab whose relay channel loses the messages `lose(message)` picks (as if it never heard them). */
function lossyEnv(tab, lose) {
  class Lossy extends tab.env.BroadcastChannel {
    addEventListener(type, listener, options) {
      if (!this.name.includes('/relay/')) return super.addEventListener(type, listener, options);
      return super.addEventListener(type, (event) => (lose(event.data) ? undefined : listener(event)), options);
    }
  }
  return { ...tab.env, BroadcastChannel: Lossy };
}

describe('relay', () => {
  test('one source for all tabs: every tab gets every event once, in order', async () => {
    const { tabs } = openTabs(3);
    const feed = createFeed();
    const { relays, received } = relaysFor(tabs, feed);
    const leader = await streaming(relays, feed);
    feed.push(20);
    await waitFor(() => received.every((r) => r.length === 20), { what: 'every tab got 20 events' });
    for (const r of received) assert.deepEqual(ids(r), Array.from({ length: 20 }, (_, i) => i + 1));
    assert.equal(feed.opens.length, 1, 'one source opened');
    assert.equal(relays[leader].stats().relayed, 20);
    assert.ok(received.every((r) => r.every((e) => e.from === tabs[leader].id)));
  });

  test('hand-over on dispose and on crash: the next leader resumes after the last id, nothing missed', async () => {
    const { tabs } = openTabs(4);
    const feed = createFeed();
    const { batons, relays, received } = relaysFor(tabs, feed);
    const first = await streaming(relays, feed);
    feed.push(10);
    await waitFor(() => received.every((r) => r.length === 10));
    batons[first].dispose();
    const alive = relays.filter((_, i) => i !== first);
    const second = relays.indexOf(alive[await streaming(alive, feed, 2)]);
    assert.equal(feed.opens.at(-1), 10, 'resumed right after the last relayed id');
    feed.push(10);
    await waitFor(() => received.every((r, i) => i === first || r.length === 20));
    tabs[second].crash();
    const left = relays.filter((_, i) => i !== first && i !== second);
    await streaming(left, feed, 3);
    feed.push(10);
    await waitFor(() => received.every((r, i) => i === first || i === second || r.length === 30), { what: 'the survivors got 30 events' });
    for (const [i, r] of received.entries()) {
      if (i === first || i === second) continue;
      assert.deepEqual(ids(r), Array.from({ length: 30 }, (_, k) => k + 1), `tab ${i}: every event once, in order`);
    }
  });

  test('a follower that lost events gets them replayed from the leader', async () => {
    const { tabs } = openTabs(3);
    const feed = createFeed();
    const lost = new Set([5, 6, 7]);
    const { relays, received } = relaysFor(tabs, feed, { envOf: (tab) => (tab.id === 't2' ? lossyEnv(tab, (m) => m && m.kind === 'event' && lost.has(m.id)) : tab.env) });
    const leader = await streaming(relays, feed);
    if (leader === 2) return; // the lossy tab leads: nothing to lose (the order of election decides)
    feed.push(12);
    await waitFor(() => received[2].length === 12, { what: `the lossy tab got all 12 events ${JSON.stringify(relays.map((r) => r.stats()))} ${JSON.stringify(ids(received[2]))}` });
    assert.deepEqual(ids(received[2]), Array.from({ length: 12 }, (_, k) => k + 1));
    const s = relays[2].stats();
    assert.ok(s.gapsDetected >= 1 && s.gapsRepaired >= 1 && s.replayed >= 3, `repaired by a replay (${JSON.stringify(s)})`);
    assert.equal(s.gapsSkipped, 0);
    assert.equal(relays[leader].stats().replaysServed, 1);
  });

  test('a gap older than the leader keeps is read again from the source', async () => {
    const { tabs } = openTabs(3);
    const feed = createFeed({ data: (id) => 'x'.repeat(200) + id });
    const lost = new Set(Array.from({ length: 30 }, (_, k) => k + 3));
    const { relays, received } = relaysFor(tabs, feed, {
      relayOptions: { maxDataBytes: 512, maxBufferBytes: 2048 },
      envOf: (tab) => (tab.id === 't2' ? lossyEnv(tab, (m) => m && m.kind === 'event' && lost.has(m.id)) : tab.env),
    });
    const leader = await streaming(relays, feed);
    if (leader === 2) return;
    feed.push(40);
    await waitFor(() => received[2].length === 40, { what: 'the lossy tab got all 40 events' });
    assert.ok(contiguous(ids(received[2])));
    assert.ok(relays[leader].stats().refetches >= 1, 'the leader reopened its source');
    assert.ok(feed.opens.includes(2), 'from the follower\'s last id');
    assert.ok(relays[leader].stats().replayBufferBytes <= 2048, 'the replay buffer stays within maxBufferBytes');
    assert.deepEqual(ids(received[leader]), Array.from({ length: 40 }, (_, k) => k + 1), 'the leader delivered nothing twice');
  });

  test('a relay event forged at the current epoch is neither delivered nor moves the cursor', async () => {
    const { browser, tabs } = openTabs(3);
    const feed = createFeed();
    const { relays, received, batons } = relaysFor(tabs, feed);
    const leader = await streaming(relays, feed);
    feed.push(5);
    await waitFor(() => received.every((r) => r.length === 5));
    const epoch = relays[leader].stats().epoch;
    const hostile = new (openTab(browser, 'evil').env.BroadcastChannel)('baton/app/v1/relay/feed');
    const base = { v: 2, from: 'evil', session: '' };
    hostile.postMessage({ ...base, kind: 'event', epoch, id: 999999999999, prev: 5, data: 'forged' });
    hostile.postMessage({ ...base, kind: 'lead', epoch: epoch + 1, after: 999999999998 });
    hostile.postMessage({ ...base, kind: 'event', epoch: epoch + 1, id: 999999999999, prev: 999999999998, data: 'forged' });
    hostile.postMessage({ ...base, kind: 'event', epoch: 1e9, id: 999999999999, prev: null, data: 'forged' });
    hostile.postMessage({ ...base, kind: 'event', epoch, id: 6, prev: 5, data: { nested: ['y'.repeat(300 * 1024)] } });
    feed.push(5);
    const dropped = (r) => r.stats().droppedUnconfirmed + r.stats().staleDropped;
    await waitFor(() => relays.every((r, i) => i === leader || dropped(r) >= 4), { what: 'every follower dropped the forgeries', timeoutMs: 8000 });
    await waitFor(() => received.every((r) => r.length === 10));
    for (const r of received) assert.deepEqual(ids(r), Array.from({ length: 10 }, (_, k) => k + 1));
    assert.ok(received.flat().every((e) => e.data !== 'forged' && e.from === tabs[leader].id));
    assert.ok(relays.every((r) => r.cursor() === 10), 'no cursor moved past the real stream');
    assert.equal(JSON.parse(tabs[0].env.localStorage.getItem('baton/app/v1/relay/feed/cursor')).id, 10);
    assert.ok(relays.every((r, i) => i === leader || r.stats().droppedOversized >= 1), 'nested data is measured too');
    hostile.close();
    void batons;
  });

  test('an event posted under the leader\'s own id: the leader notices, followers lose no real event', async () => {
    const { browser, tabs } = openTabs(3);
    const feed = createFeed();
    const { relays, received } = relaysFor(tabs, feed);
    const leader = await streaming(relays, feed);
    feed.push(5);
    await waitFor(() => received.every((r) => r.length === 5));
    const epoch = relays[leader].stats().epoch;
    const hostile = new (openTab(browser, 'evil').env.BroadcastChannel)('baton/app/v1/relay/feed');
    hostile.postMessage({ v: 2, from: tabs[leader].id, session: '', kind: 'event', epoch, id: 999999999999, prev: 5, data: 'forged' });
    await waitFor(() => relays[leader].stats().impersonations === 1, { what: 'the leader saw its id used' });
    feed.push(5);
    await waitFor(() => received.every((r) => r.filter((e) => e.data !== 'forged').length === 10), { what: 'every tab got the 10 real events' });
    for (const [i, r] of received.entries()) {
      assert.deepEqual(ids(r.filter((e) => e.data !== 'forged')), Array.from({ length: 10 }, (_, k) => k + 1), `tab ${i}`);
      if (i !== leader) assert.equal(relays[i].stats().forks, 1, `tab ${i} saw the fork and stepped back`);
    }
    assert.equal(JSON.parse(tabs[0].env.localStorage.getItem('baton/app/v1/relay/feed/cursor')).id, 10, 'the shared cursor follows the leader\'s source only');
    hostile.close();
  });

  test('held messages are bounded in bytes', async () => {
    const { browser, tabs } = openTabs(2);
    const feed = createFeed();
    const maxBufferBytes = 1024 * 1024;
    const { relays } = relaysFor(tabs, feed, { relayOptions: { maxBufferBytes } });
    const leader = await streaming(relays, feed);
    const epoch = relays[leader].stats().epoch;
    const hostile = new (openTab(browser, 'evil').env.BroadcastChannel)('baton/app/v1/relay/feed');
    const big = 'z'.repeat(200 * 1024);
    for (let i = 0; i < 512; i += 1) hostile.postMessage({ v: 2, from: 'evil', session: '', kind: 'event', epoch: epoch + 1, id: i + 1, prev: i || null, data: big });
    // Each message is held, dropped for room, or (on a slow machine) already expired unconfirmed.
    await waitFor(() => relays.every((r) => r.stats().droppedBufferFull + r.stats().pending + r.stats().droppedUnconfirmed >= 512), { what: 'every message held or dropped', timeoutMs: 30000 });
    let most = 0;
    for (const r of relays) {
      const s = r.stats();
      most = Math.max(most, s.pendingBytes);
      assert.ok(s.pendingBytes <= maxBufferBytes, `held ${s.pendingBytes} bytes, at most ${maxBufferBytes}`);
    }
    console.log(`512 forged events of 200 KiB: at most ${(most / 1024).toFixed(0)} KiB held per tab (bound ${maxBufferBytes / 1024} KiB; unbounded: ${(512 * 200) / 1024} MiB)`);
    await waitFor(() => relays.every((r) => r.stats().pending === 0), { what: 'the unconfirmed messages expire' });
    hostile.close();
  });

  test('two protocol versions: each group elects its own leader and never delivers the other stream', async () => {
    const { tabs } = openTabs(4);
    const feeds = [createFeed({ data: () => 'v1' }), createFeed({ data: () => 'v2' })];
    const groups = [0, 1].map((g) =>
      relaysFor(tabs.slice(2 * g, 2 * g + 2), feeds[g], { batonOptions: { protocolVersion: g + 1 } }),
    );
    for (const [g, group] of groups.entries()) await streaming(group.relays, feeds[g]);
    feeds[0].push(5);
    feeds[1].push(7);
    await waitFor(() => groups[0].received.every((r) => r.length === 5) && groups[1].received.every((r) => r.length === 7));
    await sleep(50);
    for (const [g, group] of groups.entries()) {
      for (const r of group.received) assert.ok(r.every((e) => e.data === `v${g + 1}`), `group v${g + 1} delivered only its own stream`);
    }
  });

  test('a leader whose source is silent for silenceMs steps down, and another tab takes the stream', async () => {
    const { tabs } = openTabs(2);
    const feed = createFeed();
    let silent = true;
    const source = (after, emit, signal) => (silent ? undefined : feed.source(after, emit, signal));
    const { relays } = relaysFor(tabs, feed, { relayOptions: { source, silenceMs: 300 } });
    await waitFor(() => relays.some((r) => r.stats().silenceAbdications === 1), { what: 'the silent leader abdicated' });
    silent = false;
    await waitFor(() => relays.filter((r) => r.stats().state === 'leader').length === 1 && feed.open() === 1, { what: 'a leader with a live source' });
  });

  test('the silence watchdog runs on the monotonic clock: a wall clock set back an hour does not keep a silent source', async () => {
    const { tabs } = openTabs(2);
    const feed = createFeed();
    let wallBack = 0;
    // The wall clock goes back an hour as the leader opens its (silent) source.
    const source = () => {
      wallBack = 3_600_000;
    };
    const envOf = (tab) => ({ ...tab.env, now: () => Date.now() - wallBack, monotonic: () => performance.now() });
    const { relays } = relaysFor(tabs, feed, { envOf, relayOptions: { source, silenceMs: 300 } });
    await waitFor(() => relays.some((r) => r.stats().silenceAbdications === 1), { what: 'the silent leader abdicated after silenceMs' });
  });

  test('logout in one tab closes the stream everywhere; login starts it again from the head', async () => {
    const { tabs } = openTabs(3);
    const feed = createFeed();
    const resets = [];
    const { relays, received } = relaysFor(tabs, feed, { relayOptions: { onReset: (info) => resets.push(info) } });
    await streaming(relays, feed);
    feed.push(3);
    await waitFor(() => received.every((r) => r.length === 3));
    relays[1].logout();
    await waitFor(() => relays.every((r) => r.stats().state === 'stopped' && r.cursor() === null) && feed.open() === 0, { what: 'every tab logged out' });
    assert.equal(resets.length, 3);
    relays[0].login('user-2');
    await waitFor(() => relays.every((r) => r.stats().session === 'user-2') && relays.filter((r) => r.stats().state === 'leader').length === 1 && feed.open() === 1);
    assert.equal(feed.opens.at(-1), null, 'the new session starts from the head');
  });

  test('options are checked', () => {
    const { tabs } = openTabs(1);
    const baton = createBaton({ namespace: 'app', id: tabs[0].id, env: tabs[0].env, ...FAST });
    cleanup.push(() => baton.dispose());
    const base = { resource: 'r', source: () => {}, onEvent: () => {} };
    assert.throws(() => createRelay(baton, { ...base, maxBufferBytes: 0 }), /maxBufferBytes/);
    assert.throws(() => createRelay(baton, { ...base, maxDataBytes: 4096, maxBufferBytes: 1024 }), /maxBufferBytes/);
    assert.throws(() => createRelay(baton, { ...base, silenceMs: -1 }), /silenceMs/);
    assert.throws(() => createRelay(baton, { ...base, bogus: 1 }), /bogus/);
  });
});

describe('relay: what the source hands over', () => {
  test('an event whose data cannot be cloned is dropped in the leader too (sourceMalformed): no tab delivers it, none sees a gap', async () => {
    const { tabs } = openTabs(2);
    let emit = null;
    const source = (after, e) => { emit = e; };
    const { relays, received } = relaysFor(tabs, { source });
    await waitFor(() => emit !== null && relays.every((r) => r.handle?.leader()), { what: 'a leader with its source open' });
    const leader = leaderOf(relays);
    emit({ id: 1, data: { n: 1 } });
    emit({ id: 2, data: { callback: () => {} } });
    emit({ id: 3, data: Symbol('not data') });
    emit({ id: 4, data: { n: 4 } });
    // Events are delivered in order: once the last one is there, nothing before it can follow.
    await waitFor(() => received.every((r) => ids(r).includes(4)), { what: 'every tab delivered the last event' });
    for (const r of received) assert.deepEqual(ids(r), [1, 4]);
    assert.equal(relays[leader].stats().sourceMalformed, 2);
    for (const relay of relays) assert.equal(relay.stats().gapsDetected, 0);
  });
});
