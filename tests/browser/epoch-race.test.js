// Two tabs of one origin racing the epoch's one-trip path in real Chromium: both know the
// same top `b` (each read it from the store), both ask for an epoch at once, and both
// transactions `add` key [resource, b + 1] and commit at once. IndexedDB runs overlapping
// read-write transactions one after the other: the second's add finds the key, fails with
// a ConstraintError, its transaction aborts whole (explicitly committed or not), and that
// tab goes on from the counter it read in that transaction (answered before the abort): one
// more trip, b + 2. So every round gives b + 1 and b + 2, both
// durable, never one epoch twice. tests/browser/pages/epoch-race.html runs the glue's
// epoch store alone (js-glue/src mounted at /glue-src/).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GLUE_SOURCES, useBrowserFixture } from './fixture.js';
import { uniqueNs, waitFor } from './demo-helpers.js';

const fixture = useBrowserFixture({ mounts: GLUE_SOURCES });
const ROUNDS = 20;

describe('the epoch in one trip, in Chromium', () => {
  it('two tabs racing with the same top never issue the same epoch: one commits b + 1 in one trip, the other misses and takes b + 2', async () => {
    const ns = uniqueNs('epoch-race');
    const tabs = [];
    for (const id of ['a', 'b']) {
      const tab = await fixture.openTestPage(`epoch-race.html?ns=${ns}&id=${id}`);
      await waitFor(() => tab.page.evaluate(() => Boolean(window.__race)), { what: `${id} ready`, timeoutMs: 30000 });
      tabs.push(tab);
    }
    const issued = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      // Both read the store's top, then both allocate at once.
      const tops = await Promise.all(tabs.map((tab) => tab.page.evaluate(() => window.__race.join())));
      assert.equal(tops[0], tops[1], 'both know the same top');
      const b = tops[0];
      const got = await Promise.all(tabs.map((tab) => tab.page.evaluate(() => window.__race.allocate())));
      for (const x of got) assert.equal(x.top, b, 'each allocated from that top');
      assert.ok(got.every((x) => x.durable), `round ${round}: both durable: ${JSON.stringify(got)}`);
      assert.deepEqual(got.map((x) => x.epoch).sort((x, y) => x - y), [b + 1, b + 2], `round ${round} from top ${b}: ${JSON.stringify(got)}`);
      issued.push(...got.map((x) => x.epoch));
    }
    assert.equal(new Set(issued).size, issued.length, 'no epoch issued twice');
    assert.equal(Math.max(...issued), 2 * ROUNDS);
    for (const tab of tabs) assert.equal(await tab.page.evaluate(() => window.__race.failure()), null);
  });
});
