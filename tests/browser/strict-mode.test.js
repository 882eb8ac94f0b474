// In real Chromium: React StrictMode's mount, unmount, mount in a fresh page. lead() requests
// the lock in its own task, and the first Baton's dispose() aborts that request in the same
// task, before the lock manager has received it: Chromium ignores such an abort, so
// WebLocks aborts only once the lock manager has answered its probe (web-locks.js). The
// first Baton's request must leave the queue, not wait in it for the lock and be given back.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowserFixture } from './fixture.js';
import { waitFor } from './demo-helpers.js';

const fixture = useBrowserFixture();

/** A fresh page of the test server's origin that has used no lock yet (any path will do). */
const freshPage = (name) => fixture.browser.openTab(`${fixture.server.url}test-pages/${name}-has-no-page`);
const lockRequests = async (tab, state) =>
  (await tab.page.evaluate(() => navigator.locks.query()))[state].filter((l) => l.name === 'baton/strict/v1/r').length;

describe('StrictMode in a fresh page', () => {
  it("the unmounted Baton's request leaves the queue; the mounted one leads once the leader goes", async () => {
    const leader = await freshPage('leader');
    await leader.page.evaluate(async () => {
      const { createBaton } = await import('/tab-baton/index.js');
      window.baton = createBaton({ namespace: 'strict' });
      const handle = window.baton.lead('r');
      await new Promise((resolve) => handle.onChange((c) => c.type === 'elected' && resolve()));
    });

    const page = await freshPage('strict');
    await page.page.evaluate(async () => {
      const { createBaton } = await import('/tab-baton/index.js');
      // The README's effect: create and lead in the effect, dispose in its cleanup, at once.
      window.unmounted = createBaton({ namespace: 'strict' });
      window.unmounted.lead('r');
      window.unmounted.dispose();
      window.mounted = createBaton({ namespace: 'strict' });
      window.handle = window.mounted.lead('r');
    });
    await waitFor(async () => (await lockRequests(page, 'pending')) === 1, { what: 'one request queued: the mounted Baton\'s' });

    await leader.page.evaluate(() => window.baton.dispose());
    await page.page.waitForFunction(() => window.handle.state() === 'leader');
    assert.equal(await lockRequests(page, 'held'), 1);
    assert.equal(await lockRequests(page, 'pending'), 0);
    assert.equal(await page.page.evaluate(() => window.unmounted.metrics().glue.staleGrants), 0, 'the unmounted Baton was never granted the lock');
  });
});
