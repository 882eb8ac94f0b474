// Start-up order under Web Locks: lead() asks for the lock in its own task, before the core
// is loaded and before the tab reads or opens its storage, so that the browser answers it
// while the rest loads; an observe-only elector asks for none, neither early nor once the
// core is there. This file must run in its own process (node --test does so), where
// nothing has loaded the core yet.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BroadcastChannel as PubkeyChannel } from 'broadcast-channel';
import { createBaton, createLeaderElection, ready, __internal } from 'tab-baton';
import { openTabs, waitFor } from './helpers/tabs.js';

const loaded = () => (__internal.module?.() ?? null) !== null;

/** The tab's env, with its lock requests, localStorage reads and IndexedDB opens logged in `calls`. */
function logged(env, calls) {
  const { locks, localStorage, indexedDB } = env;
  return {
    ...env,
    locks: {
      request: (name, ...rest) => {
        calls.push(`lock ${name}${typeof rest[0] === 'object' && rest[0].ifAvailable ? ' ifAvailable' : ''}`);
        return locks.request(name, ...rest);
      },
      query: () => locks.query(),
    },
    localStorage: {
      getItem: (key) => {
        calls.push(`read ${key}`);
        return localStorage.getItem(key);
      },
      setItem: (key, value) => localStorage.setItem(key, value),
      removeItem: (key) => localStorage.removeItem(key),
    },
    indexedDB: {
      open: (...args) => {
        calls.push(`open ${args[0]}`);
        return indexedDB.open(...args);
      },
    },
  };
}

test('lead() requests the lock first, in its own task, while the core loads; an observe-only elector none', async (t) => {
  assert.equal(loaded(), false, 'the core is not loaded yet in this process');
  const calls = [];
  const observed = [];
  const { tabs } = openTabs(2);
  const baton = createBaton({ namespace: 'order', env: logged(tabs[0].env, calls) });
  const channel = new PubkeyChannel('observer', { type: 'simulate' });
  const observer = createLeaderElection(channel, { env: logged(tabs[1].env, observed) });
  t.after(async () => {
    baton.dispose();
    await observer.die();
    await channel.close();
  });
  assert.deepEqual(calls, [], 'createBaton itself asks for nothing');

  const handle = baton.lead('ws');
  assert.equal(loaded(), false, 'lead() returned before the core is there');
  assert.deepEqual(calls.slice(0, 2), [
    'lock baton/order/v1/ws', // the resource's lock, first
    'lock baton/order/v1/ ifAvailable', // the probe of the lock manager (locks-probe.js), after it
  ]);
  // Then the epoch's storage, in whatever order the epoch store asks for it.
  assert.deepEqual(calls.slice(2).sort(), ['open baton/order', 'read baton/order/epoch/ws']);
  assert.deepEqual(observed.filter((c) => c.startsWith('lock')), [], 'the observer asks for no lock while the core loads');

  // `ready` settles before the core steps what queued while it loaded; a leader needs both.
  await ready;
  await waitFor(() => handle.state() === 'leader', { what: 'the tab leads' });
  assert.equal(baton.metrics().lockRequests, 1, 'the core took the early request over instead of asking again');
  assert.equal(calls.filter((c) => c === 'lock baton/order/v1/ws').length, 1, 'one request of the lock in all');
  assert.equal(await observer.hasLeader(), false, 'a different election');
  assert.deepEqual(observed.filter((c) => c.startsWith('lock')), [], 'nor once the core is there');
});
