// End-to-end in Chromium: the compatibility APIs beside the code they replace, as in a
// rolling deploy where some tabs still run the old code. Each pair holds the same Web Lock
// (awaforge's `channel`, the article's `requestLeadership(id)`, broadcast-channel's
// `pubkey-bc||native||<name>`), so they exclude each other both ways: Baton refuses to steal
// from a holder that is not a Baton tab, and the old code queues behind a Baton leader.
// A watcher polls every tab throughout and fails the test if two ever lead at once.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { useBrowserFixture } from './fixture.js';
import { closeTab } from './harness.js';
import { waitFor } from './demo-helpers.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ARTIFACTS = path.join(HERE, 'artifacts', 'compat');

before(async () => {
  // broadcast-channel for the browser, as an app's bundler would make it.
  mkdirSync(ARTIFACTS, { recursive: true });
  await build({
    stdin: { contents: "export { BroadcastChannel, createLeaderElection } from 'broadcast-channel';", resolveDir: HERE },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    outfile: path.join(ARTIFACTS, 'broadcast-channel.js'),
    logLevel: 'warning',
  });
});

const fixture = useBrowserFixture({ mounts: { '/artifacts/': ARTIFACTS } });

let nameSeq = 0;
const uniqueName = (label) => `${label}-${process.pid}-${(nameSeq += 1)}`;

async function openCompat(api, name) {
  const tab = await fixture.openTestPage(`compat.html?api=${api}&name=${encodeURIComponent(name)}`);
  tab.api = api;
  await waitFor(() => tab.page.evaluate(() => window.__compat && (window.__compat.ready || window.__compat.error)), { timeoutMs: 30000, what: `${api} tab ready` });
  const error = await tab.page.evaluate(() => window.__compat.error);
  assert.equal(error, null, `${api} tab: ${error}`);
  return tab;
}

const leading = (tab) => (tab.page.isClosed() ? false : tab.page.evaluate(() => window.__compat.leading).catch(() => false));
const metrics = (tab) => tab.page.evaluate(() => window.__compat.metrics());
const release = (tab) => tab.page.evaluate(() => window.__compat.release());
const locks = (tab) => tab.page.evaluate(() => navigator.locks.query());

/**
 * Polls the tabs until stopped; counts the polls where more than one led. Reads of different
 * tabs are no snapshot: each runs in its own renderer whenever it gets to it, so a read of the
 * old leader from before a hand-over and a read of the new one from after it would look like
 * two leaders at once. So the tabs are read one after the other, and a poll that finds two
 * leaders reads the first of them again after the others: an overlap is counted only when it
 * still led then, i.e. led both before and after another tab was seen leading.
 */
function watchExclusion(tabs) {
  let stopped = false;
  let overlaps = 0;
  let polls = 0;
  const loop = (async () => {
    while (!stopped) {
      const leaders = [];
      for (const tab of [...tabs]) if (await leading(tab)) leaders.push(tab);
      polls += 1;
      if (leaders.length > 1 && (await leading(leaders[0]))) overlaps += 1;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  return {
    tabs,
    async stop() {
      stopped = true;
      await loop;
      return { overlaps, polls };
    },
  };
}

/**
 * The old code leads first; the Baton tab waits (it considers a steal after the suspect
 * timeout and refuses it, twice); the old tab closes and Baton leads; a new old-code tab
 * queues behind Baton until Baton gives up.
 */
async function oldFirstThenBaton({ old, baton, lockName, name }) {
  const first = await openCompat(old, name);
  await waitFor(() => leading(first), { what: `${old} leads` });
  const ours = await openCompat(baton, name);
  const watch = watchExclusion([first, ours]);
  try {
    await waitFor(async () => (await metrics(ours)).glue.foreignHolderWaits >= 2, { timeoutMs: 15000, what: 'Baton refused to steal twice' });
    assert.equal(await leading(first), true, `${old} still leads`);
    assert.equal(await leading(ours), false, `${baton} does not lead beside it`);
    assert.deepEqual((await locks(ours)).held.map((l) => l.name), [lockName], 'only the old code holds the lock');
    // After each refused steal Baton backs off, then queues again.
    await waitFor(async () => (await locks(ours)).pending.some((l) => l.name === lockName), { what: 'Baton waits in the lock queue' });

    await closeTab(first);
    // A grant and an epoch transaction: seconds on a loaded machine.
    await waitFor(() => leading(ours), { timeoutMs: 20000, what: `${baton} leads after the ${old} tab closed` });
    assert.ok((await locks(ours)).held.some((l) => l.name === lockName), `${baton} holds the lock ${lockName}`);

    const second = await openCompat(old, name);
    watch.tabs.push(second);
    await waitFor(async () => (await locks(second)).pending.some((l) => l.name === lockName), { what: `the new ${old} tab queues` });
    assert.equal(await leading(second), false);
    assert.equal(await leading(ours), true);
    await release(ours);
    await waitFor(() => leading(second), { timeoutMs: 20000, what: `${old} leads after ${baton} gave up` });
    await release(second);
  } finally {
    const { overlaps, polls } = await watch.stop();
    assert.ok(polls > 10, `the watcher ran (${polls} polls)`);
    assert.equal(overlaps, 0, `two leaders seen in ${overlaps} of ${polls} polls`);
    for (const tab of watch.tabs) await tab.page.close().catch(() => {});
  }
}

/**
 * Runs in the page: broadcast-channel's leader-election checks against the drop-in, every
 * elector in this one page (as the library's browser tests run), with Web Locks and, for
 * the last check, without them. Returns the first failure, or null.
 */
async function libraryChecksInPage() {
  const { BroadcastChannel, createLeaderElection } = window.__bc;
  let seq = 0;
  const open = () => new BroadcastChannel(`bc-suite-${Date.now()}-${(seq += 1)}`);
  const pair = () => {
    const a = open();
    const b = new BroadcastChannel(a.name);
    return [a, b].map((channel) => ({ channel, elector: createLeaderElection(channel) }));
  };
  const until = async (predicate, what) => {
    const start = performance.now();
    while (!(await predicate())) {
      if (performance.now() - start > 20000) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const leaders = (list) => list.filter((c) => c.elector.isLeader).length;
  const check = (ok, what) => {
    if (!ok) throw new Error(what);
  };
  try {
    // A single elector leads.
    const [solo] = [{ channel: open() }].map((c) => ({ ...c, elector: createLeaderElection(c.channel) }));
    await solo.elector.awaitLeadership();
    check(solo.elector.isLeader, 'a single elector leads');
    await solo.channel.close();
    check(solo.elector.isDead, 'closing the channel kills the elector');

    // Of twenty, exactly one, and all know it; onduplicate stays silent.
    const name = open().name;
    const many = Array.from({ length: 20 }, () => {
      const channel = new BroadcastChannel(name);
      return { channel, elector: createLeaderElection(channel) };
    });
    const duplicates = [];
    many.forEach((c) => {
      c.elector.onduplicate = () => duplicates.push(c.elector.token);
      c.elector.awaitLeadership();
    });
    await until(() => leaders(many) >= 1, 'one of twenty leads');
    await until(async () => (await Promise.all(many.map((c) => c.elector.hasLeader()))).every(Boolean), 'all twenty know a leader');
    // Not a wait for state: no second leader may appear meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 200));
    check(leaders(many) === 1, `one of twenty leads (${leaders(many)})`);
    check(duplicates.length === 0, 'no onduplicate');
    await Promise.all(many.map((c) => c.elector.die()));
    await Promise.all(many.map((c) => c.channel.close()));

    // die() hands over; awaitLeadership() of the other resolves.
    const [a, b] = pair();
    await a.elector.awaitLeadership();
    let resolved = false;
    b.elector.awaitLeadership().then(() => (resolved = true));
    check(await b.elector.hasLeader(), 'the other knows the leader');
    await a.elector.die();
    await until(() => resolved, 'the other leads after die()');
    check(!a.elector.isLeader && b.elector.isLeader, 'one leader after die()');
    const [other] = pair();
    check((await other.elector.hasLeader()) === false, 'no leader on another channel');
    await Promise.all([a, b, other].map((c) => c.channel.close()));

    // Closing the leader's channel hands over too.
    const [c, d] = pair();
    await c.elector.awaitLeadership();
    await c.channel.close();
    check(c.elector.isDead, 'closing the channel kills the leader');
    await d.elector.awaitLeadership();
    await d.channel.close();

    // Without Web Locks: die() during the election, and the elector never leads.
    Object.defineProperty(navigator, 'locks', { value: undefined, configurable: true });
    try {
      const channel = open();
      const elector = createLeaderElection(channel);
      check(typeof elector.applyOnce === 'function', 'applyOnce()');
      elector.awaitLeadership();
      await elector.die();
      // Not a wait for state: the dead elector may not lead meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 500));
      check(elector.isDead && !elector.isLeader, 'an elector that died during the election never leads');
      await channel.close();
    } finally {
      delete navigator.locks;
      check(navigator.locks, 'navigator.locks is back');
    }
    return null;
  } catch (error) {
    return String(error?.stack ?? error);
  }
}

describe('compatibility APIs beside the code they replace, in Chromium', { timeout: 120000 }, () => {
  it("broadcast-channel's own election checks, every elector in one page", async () => {
    const tab = await fixture.openTestPage('bc-suite.html');
    try {
      await waitFor(() => tab.page.evaluate(() => window.__bc.ready || window.__bc.error !== null), { timeoutMs: 30000, what: 'page ready' });
      assert.equal(await tab.page.evaluate(() => window.__bc.error), null);
      assert.equal(await tab.page.evaluate(libraryChecksInPage), null);
    } finally {
      await tab.page.close().catch(() => {});
    }
  });

  it('awaforge leaderElection and the plain Web Locks pattern on lock `channel` exclude each other', async () => {
    const name = uniqueName('ws-leader');
    await oldFirstThenBaton({ old: 'plain', baton: 'awaforge', lockName: name, name });
  });

  it('requestLeadership and the article code on lock `id` exclude each other', async () => {
    const name = uniqueName('leader-election');
    await oldFirstThenBaton({ old: 'plain', baton: 'request', lockName: name, name });
  });

  it("broadcast-channel's own elector and the drop-in on pubkey-bc||native||<name> exclude each other", async () => {
    const name = uniqueName('app');
    await oldFirstThenBaton({ old: 'bc-library', baton: 'bc-ours', lockName: `pubkey-bc||native||${name}`, name });
  });

  it('the drop-in in same-origin iframes (broadcast-channel\'s e2e setup): one leads; removing its iframe hands over', async () => {
    const tab = await fixture.openTestPage('bc-suite.html');
    const name = uniqueName('iframes');
    try {
      await tab.page.evaluate((src) => {
        for (let i = 0; i < 3; i += 1) {
          const frame = document.createElement('iframe');
          frame.src = src;
          document.body.append(frame);
        }
      }, `/test-pages/compat.html?api=bc-ours&name=${encodeURIComponent(name)}`);
      const states = () =>
        tab.page.evaluate(() => [...document.querySelectorAll('iframe')].map((f) => {
          const state = f.contentWindow.__compat;
          return state ? { ready: state.ready, error: state.error, leading: state.ready && state.isLeader() } : null;
        }));
      await waitFor(async () => (await states()).every((s) => s && (s.ready || s.error)), { timeoutMs: 30000, what: 'three iframes ready' });
      assert.deepEqual((await states()).map((s) => s.error), [null, null, null]);
      await waitFor(async () => (await states()).filter((s) => s.leading).length === 1, { timeoutMs: 20000, what: 'one iframe leads' });
      const removed = await tab.page.evaluate(() => {
        const frames = [...document.querySelectorAll('iframe')];
        const index = frames.findIndex((f) => f.contentWindow.__compat.isLeader());
        frames[index].remove();
        return index;
      });
      assert.ok(removed >= 0);
      await waitFor(async () => (await states()).filter((s) => s.leading).length === 1, { timeoutMs: 20000, what: 'another iframe leads' });
      assert.equal((await states()).length, 2);
    } finally {
      await tab.page.close().catch(() => {});
    }
  });

  it('a Baton tab that leads makes the plain pattern wait, in every style', async () => {
    for (const baton of ['awaforge', 'request']) {
      const name = uniqueName(`first-${baton}`);
      const ours = await openCompat(baton, name);
      await waitFor(() => leading(ours), { what: `${baton} leads` });
      const plain = await openCompat('plain', name);
      const watch = watchExclusion([ours, plain]);
      try {
        await waitFor(async () => (await locks(plain)).pending.some((l) => l.name === name), { what: 'the plain tab queues' });
        assert.equal(await leading(plain), false);
        await closeTab(ours);
        await waitFor(() => leading(plain), { timeoutMs: 20000, what: `plain leads after the ${baton} tab closed` });
      } finally {
        const { overlaps } = await watch.stop();
        assert.equal(overlaps, 0);
        await plain.page.close().catch(() => {});
        await ours.page.close().catch(() => {});
      }
    }
  });
});
