// The IndexedDB lease in real Chromium when its leader freezes (CDP
// Page.setWebLifecycleState): tests/browser/pages/lease-tab.html, three tabs per case.
// - Frozen with the `freeze` event while its renewal is in flight: an open read-write
//   transaction of a frozen page holds the store until the page thaws, so the freeze
//   handler aborts it. The successor named in the goodbye leads while the old leader is
//   still frozen, with a higher epoch, and the abort is no storage failure.
// - Frozen silently (the page's lifecycle events never reach Baton): another tab takes the
//   record over once the leader is silent; at the thaw the old leader steps down, and no
//   two tabs ever lead with the same epoch.
// - Closed (pagehide), also with its renewal in flight (aborted first): the leader releases
//   its record without reading it; the next tab takes it on its first try, with the next
//   epoch.
// Everything waits for state; nothing asserts a time.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowserFixture } from './fixture.js';
import { closeTab, freezeTab, thawTab } from './harness.js';
import { uniqueNs, waitFor } from './demo-helpers.js';

// Long enough that a busy 2-core machine does not make a live leader look stalled.
const TIMINGS = 'heartbeatMs=250&suspectMs=1500&leaseMs=3000';
// Slower renewals (every 3 s), for what must happen between two renewals on a loaded
// machine, where a held renewal or a CDP command can take a while: a close while the term
// is valid (in doubt it releases nothing, scenario lease_close_in_doubt.txt), and a silent
// freeze with no renewal open (an open one would hold the store until the thaw).
const SLOW_TIMINGS = 'heartbeatMs=500&suspectMs=6000&leaseMs=12000';
// Generous: a loaded machine runs the renderers late; the waits end as soon as the state shows.
const WAIT = { timeoutMs: 30000 };

const fixture = useBrowserFixture();
const snap = (tab) => tab.page.evaluate(() => window.__tab.snapshot());

async function openTabs(label, query = '', timings = TIMINGS) {
  const ns = uniqueNs(label);
  const tabs = [];
  for (const id of ['a', 'b', 'c']) {
    const tab = await fixture.openTestPage(`lease-tab.html?ns=${ns}&id=${id}&${timings}${query}`);
    tab.id = id;
    await waitFor(() => tab.page.evaluate(() => Boolean(window.__tab)), { what: `${id} ready`, ...WAIT });
    tabs.push(tab);
  }
  return tabs;
}

/**
 * Waits until exactly one of `tabs` leads with an epoch above `aboveEpoch` (and none of them
 * leads with another epoch); returns its snapshot. Checks every sample on the way: no two
 * tabs ever lead with one epoch (the fence could not tell them apart).
 */
async function waitForOneLeader(tabs, { aboveEpoch = 0, what = 'one leader' } = {}) {
  return waitFor(async () => {
    const snaps = await Promise.all(tabs.map(snap));
    const leaders = snaps.filter((s) => s.state === 'leader');
    const epochs = leaders.map((s) => s.token.epoch);
    assert.equal(new Set(epochs).size, epochs.length, `two tabs lead with one epoch: ${JSON.stringify(leaders.map((s) => [s.id, s.token.epoch]))}`);
    return leaders.length === 1 && leaders[0].token.epoch > aboveEpoch ? leaders[0] : null;
  }, { what, ...WAIT });
}

/**
 * Each tab's transitions from `since` on (its log's times are this machine's clock), for
 * failure messages: who was named (its 'leader-goodbye' candidacy) and who took the record.
 */
async function transitionsSince(tabs, since) {
  const snaps = await Promise.all(tabs.map(snap));
  return snaps.map((x) => `${x.id}: ${x.log.filter((t) => t.at >= since).map((t) => `+${Math.round(t.at - since)} ms ${t.from}->${t.to} (${t.reason}, epoch ${t.epoch})`).join(', ')}`).join('; ');
}

/** The reason this tab's term with `epoch` began (its transition log): why it became candidate. */
function termCause(s, epoch) {
  const elected = s.log.findLastIndex((t) => t.to === 'leader' && t.epoch === epoch);
  return s.log.slice(0, elected).findLast((t) => t.to === 'candidate')?.reason ?? null;
}

describe('lease: a leader that closes (headless Chromium)', { timeout: 120000 }, () => {
  it('closed: the successor named in the goodbye takes the released record on its first try', async () => {
    const tabs = await openTabs('lease-close', '', SLOW_TIMINGS);
    try {
      const first = await waitForOneLeader(tabs);
      const old = tabs.find((t) => t.id === first.id);
      const others = tabs.filter((t) => t !== old);
      const closedAt = Date.now(); // the pages' log times are this machine's wall clock too
      await closeTab(old);
      const next = await waitForOneLeader(others, { aboveEpoch: first.token.epoch, what: 'the successor' });
      assert.equal(next.token.epoch, first.token.epoch + 1, 'the next epoch');
      // The successor the goodbye names tries at once (the other tab waits its rank's turn)
      // and finds the record released: no try lost to it.
      const cause = termCause(next, next.token.epoch);
      if (cause !== 'leader-goodbye') assert.fail(`${next.id} took over (${cause}), not as the successor named in the goodbye; since the close: ${await transitionsSince(others, closedAt)}`);
      const lost = next.log.filter((t) => t.at >= closedAt && t.reason === 'lease-lost');
      assert.deepEqual(lost, [], `${next.id} took the record on its first try`);
    } finally {
      for (const tab of tabs) await closeTab(tab).catch(() => {});
    }
  });

  it('closed with its renewal in flight: pagehide aborts it and still releases the record', async () => {
    const tabs = await openTabs('lease-close-in-flight', '', SLOW_TIMINGS);
    try {
      const first = await waitForOneLeader(tabs);
      const old = tabs.find((t) => t.id === first.id);
      const others = tabs.filter((t) => t !== old);
      await old.page.evaluate(() => window.__tab.holdLeaseTransaction());
      await waitFor(async () => (await snap(old)).held, { what: 'the renewal held open', ...WAIT });
      const closedAt = Date.now();
      await closeTab(old);
      const next = await waitForOneLeader(others, { aboveEpoch: first.token.epoch, what: 'the successor' });
      assert.equal(next.token.epoch, first.token.epoch + 1, 'the next epoch');
      const lost = next.log.filter((t) => t.at >= closedAt && t.reason === 'lease-lost');
      assert.deepEqual(lost, [], `${next.id} took the record on its first try`);
    } finally {
      for (const tab of tabs) await closeTab(tab).catch(() => {});
    }
  });
});

describe('lease: a frozen leader (headless Chromium)', { timeout: 180000 }, () => {
  it('frozen with its renewal in flight: the freeze handler aborts it, and the named successor leads while it is frozen', async () => {
    const tabs = await openTabs('lease-freeze-in-flight');
    try {
      const first = await waitForOneLeader(tabs);
      const old = tabs.find((t) => t.id === first.id);
      const others = tabs.filter((t) => t !== old);
      await old.page.evaluate(() => window.__tab.holdLeaseTransaction());
      await waitFor(async () => (await snap(old)).held, { what: 'the renewal held open', ...WAIT });
      await freezeTab(old);
      // Without the abort, the held transaction blocks the store until the thaw: no tab could lead.
      const next = await waitForOneLeader(others, { aboveEpoch: first.token.epoch, what: 'a new leader while the old one is frozen' });
      assert.equal(termCause(next, next.token.epoch), 'leader-goodbye', `${next.id} took over as the successor named in the goodbye`);
      await thawTab(old);
      const thawed = await waitFor(async () => {
        const s = await snap(old);
        return s.state !== 'leader' && s.state !== 'candidate' ? s : null;
      }, { what: 'the thawed tab settled as a follower', ...WAIT });
      const stepDown = thawed.log.find((t) => t.from === 'leader' && t.epoch === first.token.epoch);
      assert.equal(stepDown?.reason, 'frozen', 'it stepped down on its freeze event');
      assert.equal(thawed.metrics.degraded, false, 'an aborted transaction is no storage failure');
      assert.equal(thawed.metrics.storageFailures, 0);
      assert.equal(thawed.metrics.glue.leaseFailures, 0);
      const settled = await waitForOneLeader(tabs, { what: 'one leader after the thaw' });
      assert.equal(settled.id, next.id, 'the new leader keeps leading');
    } finally {
      for (const tab of tabs) await closeTab(tab).catch(() => {});
    }
  });

  it('frozen silently: taken over once silent; thawed, it steps down and no epoch leads twice', async () => {
    const tabs = await openTabs('lease-freeze-silent', '&silent=1', SLOW_TIMINGS);
    try {
      const first = await waitForOneLeader(tabs);
      const old = tabs.find((t) => t.id === first.id);
      const others = tabs.filter((t) => t !== old);
      // Frozen between renewals: a renewal in flight at a silent freeze would hold the store
      // until the thaw (the first test's case, which only the freeze event can handle).
      await waitFor(async () => (await snap(old)).justRenewed, { what: 'a renewal just committed', every: 5, ...WAIT });
      await freezeTab(old);
      const next = await waitForOneLeader(others, { aboveEpoch: first.token.epoch, what: 'a new leader while the old one is frozen' });
      await thawTab(old);
      // From the thaw on, the old leader must not lead with its old term, nor ever share an epoch.
      const thawed = await waitFor(async () => {
        const [s, ...rest] = await Promise.all([old, ...others].map(snap));
        const epochs = [s, ...rest].filter((x) => x.state === 'leader').map((x) => x.token.epoch);
        assert.equal(new Set(epochs).size, epochs.length, 'two tabs lead with one epoch');
        return s.log.some((t) => t.from === 'leader' && t.epoch === first.token.epoch) ? s : null;
      }, { what: 'the thawed leader to end its term', ...WAIT });
      const ended = thawed.log.find((t) => t.from === 'leader' && t.epoch === first.token.epoch);
      assert.ok(['lease-expired', 'lease-lost', 'stalled'].includes(ended.reason), `ended because ${ended.reason}`);
      assert.equal(thawed.events.filter((e) => e.type === 'deposed' && e.epoch === first.token.epoch).length, 1, 'one deposed notice for the old term');
      const settled = await waitForOneLeader(tabs, { what: 'one leader after the thaw' });
      assert.ok(settled.token.epoch >= next.token.epoch, 'no older term leads again');
    } finally {
      for (const tab of tabs) await closeTab(tab).catch(() => {});
    }
  });
});
