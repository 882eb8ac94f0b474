// Helpers for the end-to-end tests of the demo (web-demo/): groups of demo tabs in one
// browser, polling from Node (a hidden page's rAF never runs and a frozen page runs no timers,
// so page.waitForFunction is no use), leader checks, feed checks and hand-over timings.
import assert from 'node:assert/strict';

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Fast timings for the demo (query string). */
export const FAST = 'interval=100&heartbeatMs=200&suspectMs=800&silenceMs=1500&leaseMs=1200&refreshMs=5000&prepareMs=400';

let groupSeq = 0;
/** A namespace unique to this run, so that groups never hear each other. */
export function uniqueNs(label) {
  groupSeq += 1;
  return `${label}-${process.pid}-${groupSeq}`;
}

/**
 * Opens one demo tab per id in namespace `ns` (in order: the first asks first).
 * Each tab gets `.id`; page errors fail the test run loudly (collected in `.errors`).
 */
export async function openGroup(browser, server, { ns, ids, query = FAST }) {
  const tabs = [];
  for (const id of ids) tabs.push(await openDemoTab(browser, server, { ns, id, query }));
  return tabs;
}

export async function openDemoTab(browser, server, { ns, id, query = FAST }) {
  const tab = await browser.openTab(`${server.url}?ns=${encodeURIComponent(ns)}&id=${encodeURIComponent(id)}&${query}`);
  tab.id = id;
  tab.errors = [];
  tab.page.on('pageerror', (error) => tab.errors.push(error.message));
  await waitFor(() => tab.page.evaluate(() => Boolean(window.__demo && window.__demo.ready)), { what: `demo ready in ${id}`, timeoutMs: 10000 });
  return tab;
}

/** Polls `predicate` (sync or async) every few ms until truthy; fails after `timeoutMs`. */
export async function waitFor(predicate, { timeoutMs = 5000, what = String(predicate), every = 25 } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await predicate();
      if (last) return last;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    await sleep(every);
  }
}

export const snap = (tab) => tab.page.evaluate(() => window.__demo.snapshot());

/** Snapshots of every tab, in parallel. */
export const snapAll = (tabs) => Promise.all(tabs.map(snap));

/** Ids of the tabs that lead `resource` by their own account. */
export async function leadersOf(tabs, resource) {
  const snaps = await snapAll(tabs);
  return snaps.filter((s) => s.resources[resource].state === 'leader').map((s) => s.id);
}

/**
 * Waits until exactly one of `tabs` leads `resource` (with an epoch above `aboveEpoch`) and
 * every tab names it as the leader; fails at once if two lead together. Returns
 * {tab, snap, snaps}.
 */
export async function waitForLeader(tabs, resource, { aboveEpoch = 0, timeoutMs = 5000 } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const snaps = await snapAll(tabs);
    const leaders = snaps.filter((s) => s.resources[resource].state === 'leader');
    assert.ok(leaders.length <= 1, `${resource}: ${leaders.map((s) => s.id).join(' and ')} lead at once`);
    if (leaders.length === 1 && leaders[0].resources[resource].epoch > aboveEpoch) {
      const leader = leaders[0];
      if (snaps.every((s) => s.resources[resource].leader === leader.id)) {
        return { tab: tabs[snaps.indexOf(leader)], snap: leader, snaps };
      }
    }
    if (Date.now() > deadline) {
      assert.fail(`${resource}: no single leader above epoch ${aboveEpoch} after ${timeoutMs} ms: ${snaps.map((s) => `${s.id}=${s.resources[resource].state}/${s.resources[resource].leader}@${s.resources[resource].leaderEpoch}`).join(', ')}`);
    }
    await sleep(20);
  }
}

/** Asserts that `ids` are consecutive integers, each once. Returns nothing; fails with the first gap or repeat. */
export function assertConsecutive(ids, who) {
  for (let i = 1; i < ids.length; i++) {
    if (ids[i] !== ids[i - 1] + 1) {
      assert.fail(`${who}: event ${ids[i]} follows ${ids[i - 1]} (${ids[i] <= ids[i - 1] ? 'duplicate or out of order' : `${ids[i] - ids[i - 1] - 1} missed`})`);
    }
  }
}

/** Every tab's feed: no gap, no duplicate, and the demo's own counters agree (0 and 0). */
export function assertFeedsClean(snaps) {
  for (const s of snaps) {
    assertConsecutive(s.feed.ids, s.id);
    assert.equal(s.feed.missed, 0, `${s.id}: missed counter`);
    assert.equal(s.feed.duplicates, 0, `${s.id}: duplicates counter`);
    assert.equal(s.relay.gapsSeen, 0, `${s.id}: relay saw gaps`);
  }
}

export async function waitForServer(server, predicate, what, timeoutMs = 4000) {
  return waitFor(() => predicate(server.stats()), { what, timeoutMs });
}

/**
 * After a hand-over of sse-relay: waits for the new leader (epoch above `oldEpoch`) among
 * `survivors`, for every survivor to deliver `events` events of the new term; then checks
 * that the new stream resumed right after the last id relayed in older terms, that every
 * survivor has every event exactly once across the hand-over, and that the server sees one
 * stream. Returns {leader, epoch, lastRelayed, electedMs, resumedMs}.
 */
export async function checkRelayHandover({ survivors, oldEpoch, t0, server, events = 5, timeoutMs = 6000 }) {
  const { tab: leader, snap: leaderSnap } = await waitForLeader(survivors, 'sse-relay', { aboveEpoch: oldEpoch, timeoutMs });
  const epoch = leaderSnap.resources['sse-relay'].epoch;
  const snaps = await waitFor(
    async () => {
      const all = await snapAll(survivors);
      return all.every((s) => s.feed.epochs.filter((e) => e === epoch).length >= events) && all;
    },
    { what: `${events} events of epoch ${epoch} in every tab`, timeoutMs: 5000 },
  );
  const newLeader = snaps.find((s) => s.id === leader.id);
  let lastRelayed = -1;
  for (const s of snaps) {
    s.feed.ids.forEach((id, i) => {
      if (s.feed.epochs[i] < epoch) lastRelayed = Math.max(lastRelayed, id);
    });
  }
  assert.ok(lastRelayed > 0, 'events were relayed before the hand-over');
  const open = newLeader.relay.opens.find((o) => o.epoch === epoch);
  assert.ok(open, `${newLeader.id} opened a stream in epoch ${epoch}`);
  assert.equal(open.after, lastRelayed, `the new stream resumes right after the last relayed id (${lastRelayed})`);
  assertFeedsClean(snaps);
  for (const s of snaps) {
    assert.ok(s.feed.ids.includes(lastRelayed) && s.feed.ids.includes(lastRelayed + 1), `${s.id} has ${lastRelayed} and ${lastRelayed + 1}`);
    const i = s.feed.ids.indexOf(lastRelayed + 1);
    assert.equal(s.feed.epochs[i], epoch, `${s.id}: ${lastRelayed + 1} came from the new term`);
  }
  await waitForServer(server, (st) => st.openStreams === 1, 'exactly one open SSE stream');
  const firstNew = newLeader.feed.epochs.indexOf(epoch);
  return {
    leader,
    epoch,
    lastRelayed,
    electedMs: newLeader.resources['sse-relay'].electedAt - t0,
    resumedMs: newLeader.feed.at[firstNew] - t0,
    snaps,
  };
}

/** Timings collected over a file, printed at its end. */
export function timingsTable() {
  const rows = [];
  return {
    add(row) {
      rows.push(row);
    },
    print(title) {
      if (rows.length === 0) return;
      console.log(`${title} (ms from the action; not asserted):`);
      for (const r of rows) {
        console.log(`  ${r.label.padEnd(44)} elected ${fmt(r.electedMs)}  stream resumed ${fmt(r.resumedMs)}${r.note ? `  (${r.note})` : ''}`);
      }
    },
  };
}
const fmt = (ms) => (typeof ms === 'number' && Number.isFinite(ms) ? `${ms.toFixed(0).padStart(5)} ms` : '    –   ');
