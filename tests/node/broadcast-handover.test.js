// Broadcast-only hand-overs whose next leader is slow to claim: its epoch's IndexedDB
// transaction takes longer than the rank stagger, as on a loaded machine. The other tabs
// wait for that tab's claim instead of taking over themselves, so the lead moves once, to
// one tab, with one epoch allocated: after a close (the goodbye named the successor) and
// after a crash (the successor announced its candidacy before its transaction). Run on a
// virtual clock, so the slow transaction is exactly as slow on any machine.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, load } from 'tab-baton';
import { createBrowser } from 'tab-baton/testing';
import { settle, virtualClock } from './helpers/virtual-clock.js';

const IDS = ['a', 'b', 'c', 'd'];

/** Four broadcast-only tabs on one virtual clock, each with its own window for pagehide. */
async function openGroup() {
  await load(); // the core loads in real time: have it before time is virtual
  const clock = virtualClock();
  const browser = createBrowser();
  const tabs = IDS.map((id) => {
    const tab = browser.tab(id);
    const window = new EventTarget();
    const env = {
      ...tab,
      locks: null,
      ...clock.env(),
      addEventListener: (...args) => window.addEventListener(...args),
      removeEventListener: (...args) => window.removeEventListener(...args),
    };
    const baton = createBaton({ namespace: 'slow-claim', id, authority: 'broadcast', env });
    return { id, tab, window, baton, handle: baton.lead('ws'), elected: 0 };
  });
  for (const t of tabs) t.handle.onChange((change) => { if (change.type === 'elected') t.elected += 1; });
  const leaders = () => tabs.filter((t) => !t.gone && t.handle.state() === 'leader');
  /** Runs virtual time until `until()` holds (or, with `for`, for that long). */
  const run = async ({ until = () => false, forMs = Infinity, limitMs = 60_000 } = {}) => {
    const end = clock.now() + Math.min(forMs, limitMs);
    for (;;) {
      await settle();
      if (until()) return;
      if (!clock.step(end)) {
        if (forMs !== Infinity) return;
        assert.fail(`nothing left to run before ${end}: leaders ${leaders().map((t) => t.id)}`);
      }
    }
  };
  const allocations = (except) => tabs.filter((t) => t !== except).reduce((n, t) => n + t.baton.metrics().glue.epochAllocations, 0);
  const dispose = () => { for (const t of tabs) if (!t.gone) t.baton.dispose(); };
  return { clock, browser, tabs, leaders, run, allocations, dispose };
}

for (const ending of ['close', 'crash']) {
  test(`broadcast-only ${ending}: the others wait for a successor whose epoch is slow, one tab takes over (virtual clock)`, async (t) => {
    const g = await openGroup();
    t.after(g.dispose);
    await g.run({ until: () => g.leaders().length === 1 && g.tabs.every((x) => x.handle.leader()) });
    const [old] = g.leaders();
    await g.run({ forMs: 2000 });
    const before = g.allocations(old);
    const electedBefore = g.tabs.map((x) => x.elected);

    g.browser.indexedDB.fail('hang'); // the next epoch's transaction waits
    if (ending === 'close') {
      old.window.dispatchEvent(Object.assign(new Event('pagehide'), { persisted: false }));
    }
    old.tab.crash();
    old.gone = true;
    // Long enough for the slowest rank position to have taken over (stagger 150 ms per
    // position; a crash first waits the suspect timeout), short of the store's deadline.
    await g.run({ forMs: ending === 'close' ? 1000 : 3000 + 1000 });
    g.browser.indexedDB.fail(false);
    await g.run({ until: () => g.leaders().length === 1 });
    await g.run({ forMs: 2000 });

    const [next] = g.leaders();
    assert.notEqual(next, old);
    assert.equal(g.allocations(old) - before, 1, 'one epoch allocated for the hand-over');
    const newTerms = g.tabs.map((x, i) => x.elected - electedBefore[i]);
    assert.deepEqual(newTerms.filter((n) => n > 0), [1], `one tab took over, once (${newTerms})`);
    assert.ok(g.tabs.every((x) => x.gone || x.handle.leader()?.id === next.id), 'every tab follows it');
  });
}
