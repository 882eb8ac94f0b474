// Start-up under Web Locks: a lock granted before the WebAssembly core is loaded starts the
// epoch's transaction at once, so that it runs while the core loads, and the core, once
// loaded, leads on that epoch without a transaction of its own, but only while that grant
// stands (a grant the core gives back leaves an epoch that later terms must not reuse). This file must run in its own process (node --test does so), where nothing has
// loaded the core yet; it holds the core's bytes back until it has seen the epochs committed.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createBaton, load, ready, __internal } from 'tab-baton';
import { openTab, openTabs, waitFor } from './helpers/tabs.js';

/** Opens the namespace's database through the fake IndexedDB and runs `body(store)` in one transaction. */
function withEpochs(indexedDB, namespace, mode, body) {
  return new Promise((resolve, reject) => {
    const open = indexedDB.open(`baton/${namespace}`, 1);
    open.onupgradeneeded = () => {
      for (const store of ['epochs', 'leases']) open.result.createObjectStore(store);
    };
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const db = open.result;
      const tx = db.transaction(['epochs'], mode);
      let result;
      body(tx.objectStore('epochs'), (value) => {
        result = value;
      });
      tx.oncomplete = () => {
        db.close();
        resolve(result);
      };
      tx.onerror = () => reject(tx.error);
    };
  });
}

const storedEpoch = (indexedDB, namespace, resource) =>
  withEpochs(indexedDB, namespace, 'readonly', (store, answer) => {
    const get = store.get(resource);
    get.onsuccess = () => answer(get.result ?? 0);
  });

describe('the epoch of a lock granted before the core is loaded', () => {
  test('is committed while the core loads and used while that grant stands; after the grant was given back, a term gets a transaction of its own', async (t) => {
    assert.equal(__internal.module?.() ?? null, null, 'the core is not loaded yet in this process');
    const bytes = await readFile(new URL('../../js-glue/dist/baton-core.wasm', import.meta.url));
    let release;
    const held = new Promise((resolve) => {
      release = resolve;
    });
    const body = new ReadableStream({
      async pull(controller) {
        await held;
        controller.enqueue(new Uint8Array(bytes));
        controller.close();
      },
    });
    load({ wasm: new Response(body) });

    const { browser, tabs: [solo, a] } = openTabs(2);
    // b may lead only while visible, and starts hidden: once loaded, its core gives the early
    // grant back, and b leads only later, after a.
    const b = openTab(browser, 'b', { hidden: true });
    const batons = [];
    t.after(() => batons.forEach((baton) => baton.dispose()));
    const start = (tab, namespace, options) => {
      const baton = createBaton({ namespace, id: tab.id, env: tab.env });
      batons.push(baton);
      const handle = baton.lead('ws', options);
      const elected = [];
      handle.onChange((change) => {
        if (change.type === 'elected') elected.push(change.token.epoch);
      });
      return { tab, baton, handle, elected };
    };
    const committed = (side, namespace) => waitFor(async () => storedEpoch(side.tab.env.indexedDB, namespace, 'ws'), { what: `${side.tab.id}: an epoch committed before the core is loaded` });

    const x = start(solo, 'solo');
    assert.equal(await committed(x, 'solo'), 1);
    const y = start(b, 'shared', { eligible: { hidden: false } });
    assert.equal(await committed(y, 'shared'), 1);
    const z = start(a, 'shared');
    assert.equal(__internal.module?.() ?? null, null, 'the core is still not loaded');
    assert.equal(x.handle.state(), 'follower', 'no term without the core');

    release();
    await ready;
    await waitFor(() => x.handle.state() === 'leader' && z.handle.state() === 'leader', { what: 'x and a lead' });
    assert.deepEqual(x.elected, [1], 'x leads on the epoch committed early');
    assert.equal(await storedEpoch(solo.env.indexedDB, 'solo', 'ws'), 1, 'x asked for no second epoch');
    assert.deepEqual(z.elected, [2], "a's term is above b's early epoch");
    assert.equal(y.handle.state(), 'follower');

    z.baton.dispose();
    b.setVisibility('visible');
    await waitFor(() => y.handle.state() === 'leader', { what: 'b leads' });
    assert.deepEqual(y.elected, [3], "b's term is above a's, not on its early epoch of a grant given back");
    for (const { baton } of [x, y]) {
      assert.equal(baton.metrics().glue.epochsNotDurable, 0);
      assert.equal(baton.support().degraded, false, 'durable terms');
    }
  });
});
