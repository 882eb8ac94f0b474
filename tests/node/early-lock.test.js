// Start-up under Web Locks: the lock is requested before the WebAssembly core is loaded,
// and the core decides once it is. This file must run in its own process (node --test
// does so), where nothing has loaded the core yet.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, ready } from 'tab-baton';
import { __internal } from 'tab-baton';
import { isMarker, openTabs, waitFor } from './helpers/tabs.js';

describe('the Web Lock is requested before the core is loaded', () => {
  test('the request waits in the lock manager while the core loads; the core takes it over', async (t) => {
    assert.equal(__internal.module?.() ?? null, null, 'the core is not loaded yet in this process');
    const { tabs } = openTabs(2);
    const [a, b] = tabs.map((tab, i) => createBaton({ namespace: 'early', id: `t${i}`, env: tab.env }));
    t.after(() => {
      a.dispose();
      b.dispose();
    });
    const able = a.lead('ws');
    // Not eligible: it needs a capability this tab does not have.
    const unable = b.lead('ws', { eligible: { capability: 'none-here' } });
    const name = (locks) => locks.filter((l) => !isMarker(l.name)).map((l) => l.clientId);
    const before = await waitFor(async () => {
      const s = await tabs[0].env.locks.query();
      return name(s.held).length + name(s.pending).length === 2 && s;
    }, { what: 'both early requests in the lock manager' });
    assert.deepEqual(name(before.held), [tabs[0].id], 'the first tab holds the lock before the core is there');
    assert.deepEqual(name(before.pending), [tabs[1].id]);
    assert.equal(able.state(), 'follower', 'no term without the core');

    await ready;
    await waitFor(() => able.state() === 'leader', { what: 'the first tab leads' });
    assert.equal(a.metrics().lockRequests, 1, 'the core took the early request over instead of asking again');
    // The tab the core finds ineligible gives its early request back.
    const after = await waitFor(async () => {
      const s = await tabs[0].env.locks.query();
      return s.pending.length === 0 && s;
    }, { what: 'the ineligible tab withdrew its request' });
    assert.deepEqual(name(after.held), [tabs[0].id]);
    assert.equal(unable.state(), 'follower');
    assert.equal(b.metrics().lockRequests, 0);
  });
});
