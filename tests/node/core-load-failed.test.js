// A core that cannot load, in Node (its own process: the core is loaded once per process).
// What waits for leadership must not wait forever: broadcast-channel's awaitLeadership()
// rejects with the load error (the library's rejects when its lock request fails), and
// applyOnce() resolves false. Nothing else holds the process open.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, createLeaderElection, load, ready } from 'tab-baton';
import { createBrowser } from 'tab-baton/testing';

const NOT_THE_CORE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 9]); // a wasm header, then garbage

const failedLoad = (error) => error?.code === 'CORE_LOAD_FAILED';

test('a failed core load: awaitLeadership() rejects with it, applyOnce() resolves false, handles stay followers', { timeout: 10_000 }, async () => {
  await assert.rejects(load({ wasm: NOT_THE_CORE }), failedLoad);
  await assert.rejects(ready, failedLoad);
  const browser = createBrowser();

  const before = createLeaderElection('failed-core', { env: browser.tab('a') });
  await assert.rejects(before.awaitLeadership(), failedLoad);
  assert.equal(before.isLeader, false);
  assert.equal(await before.applyOnce(), false);
  await before.die();

  const dead = createLeaderElection('failed-core-dead', { env: browser.tab('b') });
  await dead.die();
  let settled = false;
  dead.awaitLeadership().then(() => { settled = true; }, () => { settled = true; });
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(settled, false, 'a dead elector never settles, as in the library');

  const baton = createBaton({ namespace: 'failed-core', env: browser.tab('c') });
  const handle = baton.lead('job');
  assert.equal(baton.support().core.state, 'failed');
  assert.equal(handle.state(), 'follower');
  baton.dispose();
});
