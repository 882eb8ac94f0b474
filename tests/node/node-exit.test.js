// In Node, Baton never keeps the process alive: a Baton (or a compatibility object) that is
// never disposed must not hang a test runner or an SSR process. Its timers and channels are
// unref'd. And createBaton without `env` in Node says which mode it chose and why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';

/** Runs `source` as an ES module in a fresh Node; resolves with its exit code and output. */
function runNode(source) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', source], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => { stdout += chunk; });
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

const LEADING = `
import { createBaton, createLeaderElection, createRelay, leaderElection, requestLeadership } from 'tab-baton';
import { createBrowser } from 'tab-baton/testing';

const until = (predicate) => new Promise((resolve) => {
  const poll = () => (predicate() ? resolve() : setTimeout(poll, 5));
  poll();
});
// Node's own globals: broadcast-only over Node's BroadcastChannel.
const plain = createBaton({ namespace: 'exit', heartbeatMs: 20 });
const job = plain.lead('job');
// A relay and the talk channel (leader state) on Node's own BroadcastChannel: channels of their own.
const delivered = [];
createRelay(plain, {
  resource: 'feed',
  source: (after, emit) => { emit({ id: 1, data: 'first' }); },
  onEvent: (event) => delivered.push(event.id),
});
const view = plain.leaderState('job');
// Simulated tabs.
const browser = createBrowser();
const tabs = [browser.tab('a'), browser.tab('b')];
const batons = tabs.map((tab) => createBaton({ namespace: 'exit', env: tab, heartbeatMs: 20 }));
const handles = batons.map((baton) => baton.lead('job'));
// The lease mode over the in-memory IndexedDB (a tab without Web Locks).
const leased = createBaton({ namespace: 'exit-lease', env: { ...browser.tab('e'), locks: null }, heartbeatMs: 20 });
const lease = leased.lead('job');
const election = leaderElection.create({ channel: 'exit-election', heartbeatMs: 20, takeoverMs: 60 });
requestLeadership('exit-lock', () => {}, { env: browser.tab('c') });
const elector = createLeaderElection('exit-elector', { env: browser.tab('d') });
await elector.awaitLeadership();
await until(() => job.state() === 'leader' && handles.some((h) => h.state() === 'leader') && election.isLeader() && lease.state() === 'leader' && delivered.length === 1);
console.log(JSON.stringify({ leading: true, support: plain.support(), leaseMode: leased.support().mode }));
// No dispose(), no die(), no relinquish: the process must end here by itself.
`;

test('a process whose Batons are never disposed exits by itself, and says which mode it chose', { timeout: 60_000 }, async () => {
  const { code, signal, stdout, stderr } = await runNode(LEADING);
  assert.equal(signal, null, stderr);
  assert.equal(code, 0, stderr);
  const report = JSON.parse(stdout.trim().split('\n').pop());
  assert.equal(report.leading, true);
  assert.equal(report.support.mode, 'broadcast');
  assert.equal(report.leaseMode, 'lease');
  assert.match(report.support.reason, /no navigator\.locks or indexedDB/);
  assert.match(report.support.reason, /tab-baton\/testing/);
  // Said once, on stderr, for the first Baton made on Node's own globals.
  const warnings = stderr.split('\n').filter((line) => line.startsWith('tab-baton:'));
  assert.equal(warnings.length, 1, stderr);
  assert.match(warnings[0], /createBaton\(\) in Node without env: broadcast mode, no navigator\.locks or indexedDB/);
});

test('a timer of the process itself still keeps it alive (Baton unrefs only its own)', { timeout: 60_000 }, async () => {
  const { code, stdout } = await runNode(`
    import { createBaton } from 'tab-baton';
    createBaton({ namespace: 'exit', heartbeatMs: 20 }).lead('job');
    setTimeout(() => console.log('app timer ran'), 50);
  `);
  assert.equal(code, 0);
  assert.match(stdout, /app timer ran/);
});
