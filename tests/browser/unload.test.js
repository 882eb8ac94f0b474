// The broadcast-channel drop-in registers a leading elector with the `unload` package where
// `unload` resolves at run time: in a page without a bundler, through its import map (the
// js-glue README says so). Then broadcast-channel's own test "should resolve when
// leader-process exits" (runAll() kills the leader, the other elector takes over) passes
// against the drop-in in Chromium, on the packed package.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { useBrowserFixture } from './fixture.js';
import { waitFor } from './demo-helpers.js';
import { unpackPackage } from './packed.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const APP = path.join(HERE, 'artifacts', 'unload-app');
const UNLOAD = path.resolve(HERE, '..', '..', 'node_modules', 'unload', 'dist', 'es');

before(() => unpackPackage(APP));

const fixture = useBrowserFixture({ mounts: { '/app/': APP, '/unload/': UNLOAD } });

describe('broadcast-channel drop-in and unload.runAll() in Chromium', { timeout: 120000 }, () => {
  it('with unload in the import map, runAll() kills the leading elector and the other leads', async () => {
    const tab = await fixture.openTestPage(`unload.html?name=unload-${process.pid}`);
    try {
      await waitFor(() => tab.page.evaluate(() => window.__unload?.done === true), { timeoutMs: 40000, what: 'the page finished' });
      const result = await tab.page.evaluate(() => window.__unload);
      assert.equal(result.error, null);
      assert.equal(result.registered, 1, 'the leader was registered with unload when awaitLeadership() resolved');
      assert.equal(result.firstDead, true, 'runAll() killed the leader');
      assert.equal(result.firstLeads, false);
      assert.equal(result.secondLeads, true);
    } finally {
      await tab.page.close().catch(() => {});
    }
  });
});
