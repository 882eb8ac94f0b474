// Start-up order under Web Locks: createBaton starts the core's load before anything else;
// lead() asks for the lock in its own task, before the core is loaded and before the tab
// reads or opens its storage, so that the browser answers it while the rest loads; the lock
// manager's probe follows after the task; an observe-only elector asks for no lock, neither
// early nor once the core is there. This file must run in its own process (node --test does so), where
// nothing has loaded the core yet.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
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

/** Logs in `calls` when the core's wasm is read from disk (in Node, its load's first request). */
function logWasmReads(t, calls) {
  const { readFile } = fs.promises;
  fs.promises.readFile = (file, ...rest) => {
    if (String(file).endsWith('baton-core.wasm')) calls.push('load baton-core.wasm');
    return readFile(file, ...rest);
  };
  t.after(() => {
    fs.promises.readFile = readFile;
  });
}

test('createBaton starts the core\'s load; lead() requests the lock first, in its own task, then the storage; the probe after; an observe-only elector no lock', async (t) => {
  assert.equal(loaded(), false, 'the core is not loaded yet in this process');
  const calls = [];
  logWasmReads(t, calls);
  const observed = [];
  const { tabs } = openTabs(2);
  // A call that throws (an authority this environment lacks) starts nothing.
  const { locks, ...withoutLocks } = tabs[0].env;
  assert.throws(() => createBaton({ namespace: 'order', env: withoutLocks, authority: 'web-locks' }), /authority/);
  assert.deepEqual(calls, [], 'a createBaton that throws does not load the core');
  const baton = createBaton({ namespace: 'order', env: logged(tabs[0].env, calls) });
  t.after(() => baton.dispose());
  // The core's chain (fetch, compile, instantiate, first steps) is the longest: it starts first.
  assert.deepEqual(calls, ['load baton-core.wasm'], 'createBaton starts the core\'s load, and asks for nothing else');
  assert.equal(baton.metrics().core.state, 'loading');

  const handle = baton.lead('ws');
  assert.equal(loaded(), false, 'lead() returned before the core is there');
  assert.equal(calls[1], 'lock baton/order/v1/ws', 'the resource\'s lock, first');
  // Then the epoch's storage, in whatever order the epoch store asks for it.
  assert.deepEqual(calls.slice(2).sort(), ['open baton/order', 'read baton/order/epoch/ws']);
  // The probe of the lock manager (locks-probe.js) follows the request, after the task.
  await new Promise((resolve) => setImmediate(resolve));
  const probes = calls.filter((c) => c === 'lock baton/order/v1/ ifAvailable');
  assert.equal(probes.length, 1, 'one probe');
  assert.ok(calls.indexOf(probes[0]) >= 4, 'the probe after the task\'s requests');

  const channel = new PubkeyChannel('observer', { type: 'simulate' });
  const observer = createLeaderElection(channel, { env: logged(tabs[1].env, observed) });
  t.after(async () => {
    await observer.die();
    await channel.close();
  });
  assert.deepEqual(observed.filter((c) => c.startsWith('lock')), [], 'the observer asks for no lock while the core loads');

  // `ready` settles before the core steps what queued while it loaded; a leader needs both.
  await ready;
  await waitFor(() => handle.state() === 'leader', { what: 'the tab leads' });
  assert.equal(baton.metrics().lockRequests, 1, 'the core took the early request over instead of asking again');
  assert.equal(calls.filter((c) => c === 'lock baton/order/v1/ws').length, 1, 'one request of the lock in all');
  assert.equal(await observer.hasLeader(), false, 'a different election');
  assert.deepEqual(observed.filter((c) => c.startsWith('lock')), [], 'nor once the core is there');
});
