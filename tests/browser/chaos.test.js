// The short chaos run (the long one is bench/chaos.mjs): 8 tabs, 16 random actions from a
// fixed seed. Stale effects accepted, epochs with two owners, and events missed or
// duplicated in any tab must all be zero; the figures are printed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowserFixture } from './fixture.js';
import { runChaos } from './chaos.js';

// The browser is chaos.js's own: it launches one per run.
const fixture = useBrowserFixture({ browser: false });

test('chaos: 8 tabs, random close/crash/freeze/thaw/reload/hide/show/open', { timeout: 240_000 }, async () => {
  const figures = await runChaos({ server: fixture.server, seed: 7, actions: 16, log: (line) => console.log(line) });
  console.log(`chaos figures: ${JSON.stringify(figures)}`);
  assert.ok(figures.actions >= 10, 'enough actions were performed');
  assert.ok(figures.accepted > 0, 'the leaders performed fenced effects');
  assert.equal(figures.staleAccepted, 0, 'no effect accepted from a stale epoch');
  assert.equal(figures.sameEpochOwners, 0, 'no epoch accepted from two owners');
  assert.equal(figures.missed, 0, 'no relayed event missed in any tab');
  assert.equal(figures.duplicates, 0, 'no relayed event delivered twice in any tab');
});
