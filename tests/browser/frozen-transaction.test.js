// A page frozen while its read-write transaction waits for it (a lease's renewal: the read
// answered, the page to decide and write) holds the store in Chromium: another page's
// read-write transaction waits. The transaction's deadline is a timer, which a frozen page
// does not run; its message handlers do run, and there the glue ends the operations past
// their deadline (Database.expireOverdue, called by the runtime on every frame): the store
// is free again. The fake IndexedDB's frozen client (js-glue/src/testing/indexeddb.js)
// models this; tests/node/lease-silent-freeze.test.js runs the lease over it.
// tests/browser/pages/frozen-transaction.html runs the glue's Database alone.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { freezeTab, thawTab } from './harness.js';
import { GLUE_SOURCES, useBrowserFixture } from './fixture.js';
import { sleep, uniqueNs, waitFor } from './demo-helpers.js';

const fixture = useBrowserFixture({ mounts: GLUE_SOURCES });
// Long enough that the holder is frozen well before its deadline, on a loaded machine too.
const DEADLINE_MS = 2000;

describe('a transaction of a frozen page, in Chromium', () => {
  it('holds the store while the page is frozen; a message handler ends it past its deadline, and the store is free', async () => {
    const ns = uniqueNs('frozen-tx');
    const tabs = [];
    // The other page waits longer than the test: its transaction ends only once the store is free.
    for (const [id, timeoutMs] of [['holder', DEADLINE_MS], ['other', 60_000]]) {
      const tab = await fixture.openTestPage(`frozen-transaction.html?ns=${ns}&timeoutMs=${timeoutMs}&id=${id}`);
      await waitFor(() => tab.page.evaluate(() => Boolean(window.__tx)), { what: `${id} ready`, timeoutMs: 30000 });
      await tab.page.evaluate(() => window.__tx.open());
      tabs.push(tab);
    }
    const [a, b] = tabs;
    await a.page.evaluate(() => { window.__tx.listen(); window.__tx.hold(); });
    await freezeTab(a);
    await b.page.evaluate(() => window.__tx.write());
    // Past the frozen page's deadline (by its clock): its timer does not fire, the store stays held.
    await sleep(DEADLINE_MS + 500);
    assert.equal(await b.page.evaluate(() => window.__tx.outcome()), 'pending', "the other page's transaction waits for the frozen page's");
    // A frame reaches the frozen page; its handler ends the overdue transaction.
    await b.page.evaluate((name) => new BroadcastChannel(name).postMessage('frame'), `frozen-transaction/${ns}`);
    await waitFor(async () => (await b.page.evaluate(() => window.__tx.outcome())) === 'committed', { what: "the other page's transaction commits", timeoutMs: 10000 });
    await thawTab(a);
    assert.equal(await a.page.evaluate(() => window.__tx.outcome()), 'TimeoutError', "the frozen page's transaction ended at its deadline");
  });
});
