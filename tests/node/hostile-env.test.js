// Environments that refuse: an opaque origin (a sandboxed iframe) where the BroadcastChannel
// constructor and localStorage throw SecurityError. Creating a Baton or an elector there must
// not throw; the tab runs without what it lacks and says so in support().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, createLeaderElection } from 'tab-baton';
import { createBrowser } from 'tab-baton/testing';
import { waitFor } from './helpers/tabs.js';

const denied = () => new DOMException('denied in an opaque origin', 'SecurityError');

/** A tab of `browser` whose BroadcastChannel constructor and localStorage throw. */
function opaqueTab(browser, id) {
  const env = { ...browser.tab(id), BroadcastChannel: class { constructor() { throw denied(); } } };
  Object.defineProperty(env, 'localStorage', { get() { throw denied(); }, enumerable: true });
  return env;
}

test('a BroadcastChannel constructor and localStorage that throw: nothing throws, the tab leads alone', async (t) => {
  const reported = [];
  // Reported, not thrown (Node 20 has no reportError: the package logs with console.error).
  t.mock.method(console, 'error', (error) => reported.push(error));
  const browser = createBrowser();
  const baton = createBaton({ namespace: 'opaque', env: opaqueTab(browser, 'a') });
  const handle = baton.lead('job', { serve: (message) => message + 1 });
  const elector = createLeaderElection('opaque-bc', { env: opaqueTab(browser, 'b') });
  try {
    await waitFor(() => handle.state() === 'leader');
    assert.equal(baton.support().broadcastChannel, false);
    assert.equal(baton.support().localStorage, false);
    assert.equal(await handle.fenced((token) => token.epoch), 1);
    assert.equal(await baton.request('job', 41), 42, 'a leader still answers its own tab');
    await elector.awaitLeadership();
    assert.ok(reported.length >= 2 && reported.every((error) => error.name === 'SecurityError'));
  } finally {
    baton.dispose();
    await elector.die();
  }
});
