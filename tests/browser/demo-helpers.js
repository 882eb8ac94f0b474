// Helpers for the end-to-end tests of the demo (web-demo/): groups of demo tabs in one
// browser, polling from Node (a hidden page's rAF never runs and a frozen page runs no timers,
// so page.waitForFunction is no use), leader checks, feed checks and hand-over timings.
import assert from 'node:assert/strict';

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Fast timings for the demo (query string). */
// Short enough for a quick suite, long enough that a busy 2-core machine (several renderers,
// other jobs) does not make a live leader look stalled: its timers can run late by ~1 s.
export const FAST = 'interval=100&heartbeatMs=250&suspectMs=1500&silenceMs=2500&leaseMs=3000&refreshMs=5000&prepareMs=400';

/**
 * How long a wait for a hand-over that needs a timeout may take (a bound for a stuck test,
 * not a timing: the waits end as soon as the state shows). With FAST, the README's bounds are
 * suspect + grace + stagger x tabs + heartbeat for Web Locks and broadcast-only (1500 + 200 +
 * 150 + 250 ms, about 2.1 s) and lease + stagger x tabs + heartbeat for the lease (3000 + 150
 * + 250 ms, about 3.4 s); an epoch or lease transaction that a busy store makes time out adds
 * one storage timeout (3 s), and a loaded 2-core machine runs the tabs' timers up to about a
 * second late. About twice the lease's 6.4 s, rounded up.
 */
export const HANDOVER_MS = 15000;

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
  try {
    for (const id of ids) tabs.push(await openDemoTab(browser, server, { ns, id, query }));
  } catch (error) {
    // Leave nothing behind for the next group (its stream counts would be off).
    for (const tab of browser.tabs()) if (tab.url.includes(`ns=${encodeURIComponent(ns)}&`)) await tab.page.close().catch(() => {});
    throw error;
  }
  return tabs;
}

export async function openDemoTab(browser, server, { ns, id, query = FAST }) {
  const tab = await browser.openTab(`${server.url}?ns=${encodeURIComponent(ns)}&id=${encodeURIComponent(id)}&${query}`);
  tab.id = id;
  tab.errors = [];
  tab.page.on('pageerror', (error) => tab.errors.push(error.message));
  await waitFor(() => tab.page.evaluate(() => Boolean(window.__demo && window.__demo.ready)), {
    what: `demo ready in ${id}${tab.errors.length ? ` (page errors: ${tab.errors.join('; ')})` : ''}`,
    timeoutMs: 30000, // a page load on a 2-core machine shared with other jobs can take a while
  });
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
      if (error && error.code === 'ERR_ASSERTION') throw error; // a real failure, not a transient one
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

/** Overlapping leaders seen while polling (allowed briefly by design, invariant 1). */
export const overlaps = [];
/**
 * Violations of invariant 2 (an epoch issued to two tabs for one resource), collected over
 * the hand-overs of a file instead of failing the hand-over check that saw them: they come
 * from the core (see the `invariant 2` test of demo.test.js), not from the relay.
 */
export const termViolations = [];

/**
 * Waits until exactly one of `tabs` leads `resource` (with an epoch above `aboveEpoch`),
 * every tab names it as the leader, and that holds on two polls in a row. Two tabs may
 * briefly both believe they lead during a hand-over (DESIGN.md, invariant 1); that is
 * recorded, and their epochs must differ (the fence keeps only the newer). Returns
 * {tab, snap, snaps}.
 */
export async function waitForLeader(tabs, resource, { aboveEpoch = 0, timeoutMs = 5000 } = {}) {
  const deadline = Date.now() + timeoutMs;
  let candidate = null;
  for (;;) {
    const snaps = await snapAll(tabs);
    const leaders = snaps.filter((s) => s.resources[resource].state === 'leader');
    if (leaders.length > 1) {
      const epochs = leaders.map((s) => s.resources[resource].epoch);
      overlaps.push({ resource, leaders: leaders.map((s) => `${s.id}@${epochs[leaders.indexOf(s)]}`) });
      if (new Set(epochs).size !== epochs.length) {
        termViolations.push(`${resource}: ${leaders.map((s) => s.id).join(' and ')} led at once with the same epoch ${epochs[0]}`);
      }
    }
    let found = null;
    if (leaders.length === 1 && leaders[0].resources[resource].epoch > aboveEpoch) {
      const leader = leaders[0];
      if (snaps.every((s) => s.resources[resource].leader === leader.id && s.resources[resource].leaderEpoch === leader.resources[resource].epoch)) found = leader;
    }
    if (found && candidate && candidate.id === found.id && candidate.resources[resource].epoch === found.resources[resource].epoch) {
      return { tab: tabs[snaps.indexOf(found)], snap: found, snaps };
    }
    candidate = found;
    // A poll of every tab can itself take seconds on a loaded machine: a leader seen on the
    // last poll before the deadline gets the one more poll that confirms it (bounded).
    if (Date.now() > deadline && (!found || Date.now() > deadline + timeoutMs)) {
      assert.fail(`${resource}: no single leader above epoch ${aboveEpoch} after ${timeoutMs} ms: ${snaps.map((s) => `${s.id}=${s.resources[resource].state}/${s.resources[resource].leader}@${s.resources[resource].leaderEpoch}`).join(', ')}`);
    }
    await sleep(40);
  }
}

/**
 * Invariant 2: no two tabs ever led one resource with the same epoch (from every tab's
 * transition log). Returns the violations found and records them in `termViolations`.
 */
export function collectDuplicateTerms(snaps, label) {
  const owner = new Map();
  const found = [];
  for (const s of snaps) {
    for (const t of s.log) {
      if (t.to !== 'leader') continue;
      const key = `${t.resource}@${t.epoch}`;
      const prev = owner.get(key);
      if (prev !== undefined && prev !== s.id) found.push(`${label}: ${t.resource} epoch ${t.epoch} issued to both ${prev} and ${s.id} (${s.id} via ${t.reason})`);
      owner.set(key, s.id);
    }
  }
  termViolations.push(...found);
  return found;
}

/** The fence side of invariant 2: two owners accepted by the server with one epoch. */
export function collectFenceDuplicates(stats, fencedResource, label) {
  const owners = new Map();
  const found = [];
  for (const e of stats.log) {
    if (e.resource !== fencedResource || !e.ok) continue;
    const prev = owners.get(e.epoch);
    if (prev !== undefined && prev !== e.owner) found.push(`${label}: the server accepted ${fencedResource} writes of ${prev} and ${e.owner} with the same epoch ${e.epoch}`);
    owners.set(e.epoch, e.owner);
  }
  termViolations.push(...found.filter((f) => !termViolations.includes(f)));
  return found;
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

/**
 * Closes every still-open tab of a group, checks none reported a page error, and waits until
 * the server sees no stream and no socket left (so the next group starts from zero).
 */
export async function closeGroup(tabs, server) {
  const errors = [];
  for (const tab of tabs) {
    if (!tab.page.isClosed()) await tab.page.close({ runBeforeUnload: true }).catch(() => {});
    errors.push(...tab.errors.map((e) => `${tab.id}: ${e}`));
  }
  await waitForServer(server, (st) => st.openStreams === 0 && st.openSockets === 0, 'every stream and socket closed', 6000);
  assert.deepEqual(errors, [], 'no uncaught error in any demo tab');
}

export async function waitForServer(server, predicate, what, timeoutMs = 4000) {
  return waitFor(() => predicate(server.stats()), { what, timeoutMs });
}

/**
 * The new leader opens its source after the last id it delivered itself (README): one of the
 * ids it delivered in the old term, the last relayed one or, when the old leader is still
 * alive or its last events were still in flight, a few before it (an event and the goodbye,
 * or the lock's release, that ends the term travel on different channels, which keep no
 * order between each other; a busy renderer handles them later still). Those ids reach each
 * tab from the old term or again from the new source, and the copies are dropped (the
 * callers check: none twice, none missed). `delivered`: the ids the opener delivered in the
 * old term (a tab that delivered none resumes after the shared cursor instead).
 */
export function assertResumePoint(after, lastRelayed, delivered) {
  if (delivered.length > 0) assert.ok(delivered.includes(after), `the new source resumes after ${after}, an id the new leader delivered in the old term`);
  assert.ok(after <= lastRelayed && after >= lastRelayed - 10, `the new source resumes after ${after}, at most 10 ids before the last relayed ${lastRelayed}`);
}

/**
 * After a hand-over of sse-relay: waits for a stable new leader (epoch above `oldEpoch`)
 * among `survivors` and for every survivor to deliver `events` events of its term; then
 * checks where the first new stream resumed (assertResumePoint),
 * that every survivor has every event exactly once across the hand-over, that no epoch was
 * issued twice, and that the server sees one stream. Returns {leader, epoch, lastRelayed,
 * electedMs, resumedMs, terms, snaps}.
 */
export async function checkRelayHandover({ survivors, oldEpoch, t0, server, label = 'hand-over', events = 5, timeoutMs = 6000 }) {
  let leader = null;
  let epoch = 0;
  const snaps = await waitFor(
    async () => {
      ({ tab: leader } = await waitForLeader(survivors, 'sse-relay', { aboveEpoch: oldEpoch, timeoutMs }));
      const all = await snapAll(survivors);
      const current = all.find((s) => s.id === leader.id);
      if (!current || current.resources['sse-relay'].state !== 'leader') return false;
      epoch = current.resources['sse-relay'].epoch;
      return all.every((s) => s.feed.epochs.filter((e) => e === epoch).length >= events) && all;
    },
    { what: `a stable leader and ${events} events of its term in every tab`, timeoutMs: timeoutMs + 4000, every: 50 },
  );
  let lastRelayed = -1;
  const newEpochs = new Set();
  for (const s of snaps) {
    s.feed.ids.forEach((id, i) => {
      if (s.feed.epochs[i] <= oldEpoch) lastRelayed = Math.max(lastRelayed, id);
      else newEpochs.add(s.feed.epochs[i]);
    });
  }
  assert.ok(lastRelayed > 0, 'events were relayed before the hand-over');
  const terms = [...newEpochs].sort((a, b) => a - b);
  const first = terms[0];
  const opener = snaps.find((s) => s.relay.opens.some((o) => o.epoch === first));
  assert.ok(opener, `a survivor opened the stream in epoch ${first}`);
  const open = opener.relay.opens.find((o) => o.epoch === first);
  assertResumePoint(open.after, lastRelayed, opener.feed.ids.filter((id, i) => opener.feed.epochs[i] <= oldEpoch));
  assertFeedsClean(snaps);
  collectDuplicateTerms(snaps, label);
  for (const s of snaps) {
    const i = s.feed.ids.indexOf(lastRelayed + 1);
    assert.ok(s.feed.ids.includes(lastRelayed) && i >= 0, `${s.id} has ${lastRelayed} and ${lastRelayed + 1}`);
    assert.ok(s.feed.epochs[i] > oldEpoch, `${s.id}: ${lastRelayed + 1} came from a new term`);
  }
  await waitForServer(server, (st) => st.openStreams === 1, 'exactly one open SSE stream');
  const election = opener.elections.find((e) => e.resource === 'sse-relay' && e.epoch === first);
  const firstNew = opener.feed.epochs.indexOf(first);
  return {
    leader,
    epoch,
    lastRelayed,
    resumedAfter: open.after,
    terms,
    electedMs: election ? election.at - t0 : NaN,
    resumedMs: firstNew >= 0 ? opener.feed.at[firstNew] - t0 : NaN,
    snaps,
  };
}

/** A row of the timings table from a checkRelayHandover result. */
export function handoverRow(label, result, note = '') {
  const churn = result.terms.length > 1 ? `; re-elected after: epochs ${result.terms.join(', ')}` : '';
  return { label, electedMs: result.electedMs, resumedMs: result.resumedMs, note: `resumed after ${result.resumedAfter} (last relayed ${result.lastRelayed})${churn}${note ? `; ${note}` : ''}` };
}

/**
 * A row for a resource other than sse-relay: when the new leader's term began (from its
 * `elections`) and, for token-refresh, when its first write reached the server.
 */
export function termRow(label, leaderSnap, resource, t0, server, fencedResource, extra = '') {
  const epoch = leaderSnap.resources[resource].epoch;
  const election = leaderSnap.elections.find((e) => e.resource === resource && e.epoch === epoch);
  const write = fencedResource ? server.stats().log.find((e) => e.resource === fencedResource && e.epoch === epoch && e.ok) : null;
  return { label, electedMs: election ? election.at - t0 : NaN, resumedMs: write ? write.at - t0 : NaN, note: `${resource}, epoch ${epoch}, via ${election ? election.reason : '?'}${write ? '; resumed = first fenced write accepted' : ''}${extra ? `; ${extra}` : ''}` };
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
      if (overlaps.length) {
        console.log(`  brief double leadership seen while polling (distinct epochs, allowed by invariant 1): ${overlaps.map((o) => `${o.resource} ${o.leaders.join('+')}`).join('; ')}`);
      }
    },
  };
}
/** Each tab's relayed-feed counters (missed, duplicates) after each case, printed at a file's end. */
export function feedCountersTable() {
  const rows = [];
  return {
    record(label, snaps) {
      rows.push({ label, tabs: snaps.map((s) => ({ id: s.id, missed: s.feed.missed, duplicates: s.feed.duplicates })) });
    },
    print() {
      if (rows.length === 0) return;
      console.log('relayed feed counters per tab after each case (asserted 0 and 0):');
      for (const r of rows) console.log(`  ${r.label.padEnd(30)} ${r.tabs.map((t) => `${t.id} missed ${t.missed} dup ${t.duplicates}`).join(' | ')}`);
    },
  };
}

const fmt = (ms) => (typeof ms === 'number' && Number.isFinite(ms) ? `${ms.toFixed(0).padStart(5)} ms` : '    –   ');
