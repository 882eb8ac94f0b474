// Bad input: a wrong or missing option throws a TypeError whose message names it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, leaderElection, createLeaderElection, requestLeadership, load } from 'tab-baton';
import { openTabs } from './helpers/tabs.js';

/** Whether `error` is a TypeError whose message names `option`. */
function namesOption(error, option) {
  assert.ok(error instanceof TypeError, `TypeError expected, got ${error}`);
  assert.ok(error.message.includes(`"${option}"`), `message names "${option}": ${error.message}`);
  return true;
}

/** Asserts `fn` throws a TypeError whose message names `option`. */
function throwsNaming(fn, option) {
  assert.throws(fn, (error) => namesOption(error, option));
}

/** Asserts that the promise-returning `fn` does not throw but rejects with such a TypeError. */
async function rejectsNaming(fn, option) {
  let promise;
  assert.doesNotThrow(() => { promise = fn(); });
  await assert.rejects(promise, (error) => namesOption(error, option));
}

describe('option validation', () => {
  const { tabs } = openTabs(1);
  const env = tabs[0].env;

  test('createBaton', () => {
    throwsNaming(() => createBaton(), 'options');
    throwsNaming(() => createBaton({}), 'namespace');
    throwsNaming(() => createBaton({ namespace: '' }), 'namespace');
    throwsNaming(() => createBaton({ namespace: 7 }), 'namespace');
    const ok = { namespace: 'n', env };
    throwsNaming(() => createBaton({ ...ok, protocolVersion: 1.5 }), 'protocolVersion');
    throwsNaming(() => createBaton({ ...ok, protocolVersion: '1' }), 'protocolVersion');
    throwsNaming(() => createBaton({ ...ok, appVersion: 3 }), 'appVersion');
    throwsNaming(() => createBaton({ ...ok, appVersion: 'x'.repeat(33) }), 'appVersion');
    throwsNaming(() => createBaton({ ...ok, capabilities: 'ws' }), 'capabilities');
    throwsNaming(() => createBaton({ ...ok, capabilities: [1] }), 'capabilities');
    throwsNaming(() => createBaton({ ...ok, capabilities: ['c'.repeat(33)] }), 'capabilities');
    throwsNaming(() => createBaton({ ...ok, capabilities: Array.from({ length: 9 }, (_, i) => `c${i}`) }), 'capabilities');
    throwsNaming(() => createBaton({ ...ok, id: '' }), 'id');
    throwsNaming(() => createBaton({ ...ok, id: 'x'.repeat(65) }), 'id');
    throwsNaming(() => createBaton({ ...ok, heartbeatMs: 0 }), 'heartbeatMs');
    throwsNaming(() => createBaton({ ...ok, heartbeatMs: Infinity }), 'heartbeatMs');
    throwsNaming(() => createBaton({ ...ok, heartbeatMs: 1000, suspectMs: 500 }), 'suspectMs');
    throwsNaming(() => createBaton({ ...ok, leaseMs: -5 }), 'leaseMs');
    throwsNaming(() => createBaton({ ...ok, authority: 'paxos' }), 'authority');
    throwsNaming(() => createBaton({ ...ok, env: { ...env, indexedDB: undefined }, authority: 'lease' }), 'authority'); // no indexedDB
    throwsNaming(() => createBaton({ ...ok, env: 5 }), 'env');
    throwsNaming(() => createBaton({ ...ok, testHooks: 'yes' }), 'testHooks');
    // Nothing in this file calls enableTestHooks(): the hooks are not there to install.
    throwsNaming(() => createBaton({ ...ok, testHooks: true }), 'testHooks');
    throwsNaming(() => createBaton({ ...ok, seed: -1 }), 'seed');
    throwsNaming(() => createBaton({ ...ok, heartbeatMS: 10 }), 'heartbeatMS'); // a typo is unknown
  });

  test('load', () => {
    throwsNaming(() => load(5), 'options');
    throwsNaming(() => load({ wsam: '/x.wasm' }), 'wsam');
    throwsNaming(() => load({ wasm: 5 }), 'wasm');
    throwsNaming(() => load({ wasm: { url: '/x.wasm' } }), 'wasm');
  });

  test('baton.lead and the handle', async () => {
    const baton = createBaton({ namespace: 'n', env });
    try {
      throwsNaming(() => baton.lead(), 'resource');
      throwsNaming(() => baton.lead(''), 'resource');
      throwsNaming(() => baton.lead('r'.repeat(49)), 'resource');
      throwsNaming(() => baton.lead('é'.repeat(25)), 'resource'); // 50 bytes of UTF-8
      throwsNaming(() => baton.lead('ws', 'fast'), 'options');
      throwsNaming(() => baton.lead('ws', { run: 1 }), 'run');
      throwsNaming(() => baton.lead('ws', { preferVisible: 1 }), 'preferVisible');
      throwsNaming(() => baton.lead('ws', { eligible: true }), 'eligible');
      throwsNaming(() => baton.lead('ws', { eligible: { capability: 3 } }), 'capability');
      throwsNaming(() => baton.lead('ws', { eligible: { capability: 'c'.repeat(33) } }), 'capability');
      throwsNaming(() => baton.lead('ws', { eligible: { hidden: 'no' } }), 'hidden');
      throwsNaming(() => baton.lead('ws', { eligible: { network: 0 } }), 'network');
      throwsNaming(() => baton.lead('ws', { eligible: { newestAppOnly: null } }), 'newestAppOnly');
      throwsNaming(() => baton.lead('ws', { eligible: { visible: true } }), 'visible');
      const handle = baton.lead('ws');
      baton.lead('r'.repeat(48)); // the longest resource name
      for (let i = 2; i < 8; i += 1) baton.lead(`r${i}`);
      assert.throws(() => baton.lead('r9'), /at most 8 resources/);
      throwsNaming(() => handle.onChange('x'), 'fn');
      await rejectsNaming(() => handle.fenced(), 'fn');
      await rejectsNaming(() => baton.request(''), 'resource');
      await rejectsNaming(() => baton.request('ws', 1, { timeoutMs: '5' }), 'timeoutMs');
    } finally {
      baton.dispose();
    }
  });

  test('leaderElection.create (awaforge)', () => {
    throwsNaming(() => leaderElection.create(), 'opts');
    throwsNaming(() => leaderElection.create({}), 'channel');
    throwsNaming(() => leaderElection.create({ channel: 'c', heartbeatMs: -1, env }), 'heartbeatMs');
    throwsNaming(() => leaderElection.create({ channel: 'c', takeoverMs: 10, env }), 'takeoverMs');
    throwsNaming(() => leaderElection.create({ channel: 'c', _forceFallback: 'true', env }), '_forceFallback');
    throwsNaming(() => leaderElection.create({ channel: 'c', id: 42, env }), 'id');
    throwsNaming(() => leaderElection.create({ channel: 'c'.repeat(129), env }), 'channel'); // Baton's namespace limit
    throwsNaming(() => leaderElection.create({ channel: 'c\uD800', env }), 'channel');
    throwsNaming(() => leaderElection.create({ channel: '-leader', env }), 'channel'); // Web Locks refuse a lock name starting with '-'
    const election = leaderElection.create({ channel: 'c', env });
    throwsNaming(() => election.onLeader(null), 'fn');
    throwsNaming(() => election.onFollower(), 'fn');
    election.dispose();
  });

  test('createLeaderElection and requestLeadership', () => {
    throwsNaming(() => createLeaderElection(), 'channel');
    throwsNaming(() => createLeaderElection('c', { responseTime: -1, env }), 'responseTime');
    throwsNaming(() => requestLeadership(1, () => {}), 'name');
    throwsNaming(() => requestLeadership('n', () => {}, { authority: 'x', env }), 'authority');
    throwsNaming(() => requestLeadership('n', () => {}, { onFollower: 1, env }), 'onFollower');
    // The election's name is Baton's namespace: its limits, named as each API calls it.
    throwsNaming(() => requestLeadership('n'.repeat(129), () => {}, { env }), 'name');
    throwsNaming(() => requestLeadership('-leader', () => {}, { env }), 'name');
    createLeaderElection('-app', { env }).die(); // its lock is pubkey-bc||native||-app: a valid name
    throwsNaming(() => createLeaderElection('n'.repeat(129), { env }), 'channel');
    throwsNaming(() => createLeaderElection('c', { heartbeatMs: 500, fallbackInterval: 400, env }), 'heartbeatMs');
    // Without a fallbackInterval, a long heartbeat gets one of 3 heartbeats (as createBaton's suspectMs).
    const elector = createLeaderElection('slow', { heartbeatMs: 5000, env });
    elector.die();
  });
});
