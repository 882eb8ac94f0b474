// In real Chromium: a user callback that blocks the main thread for 200 ms does not delay
// the hand-over, under Web Locks, broadcast-only and the IndexedDB lease. The leader enters the bfcache (a persisted pagehide); its onChange('deposed')
// listener blocks at least 200 ms (and until it sees, through a cookie, that another tab was
// elected, at most 5 s). The next tab is elected before that callback ends, and the callback
// ran after the pagehide handlers, not inside them. Ordering is by one clock (Date.now() of
// one machine), not by durations.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowserFixture } from './fixture.js';
import { waitFor } from './demo-helpers.js';

const fixture = useBrowserFixture();

const snap = (tab) => tab.page.evaluate(() => window.__tab.snapshot());

async function openTab(ns, id, query = '') {
  const tab = await fixture.openTestPage(`tab.html?ns=${ns}&id=${id}&heartbeatMs=250${query}`);
  await waitFor(() => tab.page.evaluate(() => Boolean(window.__tab)), { what: `${id} ready`, timeoutMs: 30000 });
  return tab;
}

describe('callbacks and the hand-over', { timeout: 180000 }, () => {
  // Under Web Locks (auto), and without: the goodbye names the next tab, which takes over at once.
  for (const authority of ['auto', 'broadcast', 'lease']) {
    it(`a 200 ms blocking onChange in the leader does not delay the next tab (authority ${authority})`, async () => {
      const ns = `block-${authority}-${process.pid}`;
      const a = await openTab(ns, 'a', `&blockMs=200&authority=${authority}`);
      await waitFor(async () => (await snap(a)).state === 'leader', { what: 'a leads' });
      const b = await openTab(ns, 'b', `&authority=${authority}`);
      await waitFor(async () => (await snap(b)).leader?.id === 'a', { what: 'b knows a leads' });

      await a.page.evaluate(() => window.__tab.pagehide());
      const bSnap = await waitFor(async () => { const s = await snap(b); return s.state === 'leader' && s; }, { what: 'b leads' });
      const aSnap = await waitFor(async () => { const s = await snap(a); return s.blocked.length === 1 && s; }, { what: "a's blocking callback ended" });
      const record = aSnap.blocked[0];
      const elected = bSnap.events.find((e) => e.type === 'elected');
      console.log(`  ${authority}: a's callback: ${record.end - record.start} ms (saw b elected: ${record.sawNext}); b elected ${elected.at - record.start} ms after it began`);
      assert.equal(record.insidePagehide, false, 'the callback ran after the pagehide handlers returned');
      assert.ok(record.end - record.start >= 200, 'the callback blocked at least 200 ms');
      assert.ok(elected.at < record.end, `b was elected (${elected.at}) before a's blocking callback ended (${record.end})`);
      assert.ok(elected.epoch > aSnap.events.find((e) => e.type === 'elected').epoch, 'with a newer term');
      assert.equal(bSnap.log.filter((t) => t.to === 'candidate').pop().reason, authority === 'auto' ? 'lock-granted' : 'leader-goodbye', 'the next tab took over on the release, not after a timeout');
      await a.page.close();
      await b.page.close();
    });
  }
});
