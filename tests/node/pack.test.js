// `npm pack` of js-glue gives an installable tarball with the built wasm inside: it is
// installed into an empty scratch project, imported and run there in plain Node. The
// install is offline, so the package's dependencies are packed from the copies the lock
// file installed here and installed beside it: a fresh machine's npm cache holds their
// tarballs but not the registry metadata that resolving a version range needs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const pkgDir = path.join(root, 'js-glue');
const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

const SCRIPT = `
import { createBaton, leaderElection, requestLeadership, createLeaderElection, Fence, ready } from 'tab-baton';
import { createBrowser } from 'tab-baton/testing';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const until = async (done) => { while (!done()) await sleep(5); };
const browser = createBrowser();
const tabs = ['a', 'b', 'c'].map((id) => browser.tab(id));
const batons = tabs.map((tab) => createBaton({ namespace: 'scratch', id: tab.id, env: tab, heartbeatMs: 30 }));
const handles = batons.map((b) => b.lead('job'));
await ready; // the core loads on first use (from disk in Node)
await until(() => handles[0].state() === 'leader');
const first = handles.map((h) => h.state());
const oldToken = handles[0].token();
tabs[0].crash();
await until(() => handles.slice(1).some((h) => h.state() === 'leader'));
const second = handles.slice(1).map((h) => h.state());
const fence = new Fence();
fence.check(handles.slice(1).find((h) => h.state() === 'leader').token()); // a's zombie still thinks it leads
const staleRejected = !fence.admit(oldToken);
// Requests load dist/talk.js on first use, from the installed package.
const server = createBaton({ namespace: 'scratch', id: 'g', env: browser.tab('g') });
server.lead('echo', { serve: (m) => m + 1 });
const answered = await batons[1].request('echo', 41);
[...batons, server].forEach((b) => b.dispose());

const election = leaderElection.create({ channel: 'x', env: browser.tab('d') });
let led = false;
election.onLeader(() => { led = true; });
const relinquish = requestLeadership('y', () => {}, { env: browser.tab('e') });
const elector = createLeaderElection('z', { env: browser.tab('f') });
await elector.awaitLeadership();
await sleep(20);
election.dispose();
relinquish();
await elector.die();
// The default environment in Node: its own BroadcastChannel, broadcast-only, no durable store.
const plain = createBaton({ namespace: 'plain', heartbeatMs: 30 });
const support = plain.support();
plain.dispose();
// Each subpath entry exports what its declarations say, and no more.
const entries = {};
for (const sub of ['relay', 'awaforge', 'request-leadership', 'broadcast-channel', 'server', 'fenced-idb']) {
  entries[sub] = Object.keys(await import('tab-baton/' + sub)).sort();
}
console.log(JSON.stringify({ first, second, staleRejected, answered, led, support, support2: leaderElection.support(), entries }));
`;

const CJS_SCRIPT = `
const { createBaton, ready, StaleOwnerError, Fence } = require('tab-baton');
const { createBrowser } = require('tab-baton/testing');
const server = require('tab-baton/server');
const fencedIdb = require('tab-baton/fenced-idb');
// One class across the CommonJS entries: an error thrown by one is an instance of the others'.
const serverFence = new server.ServerFence();
serverFence.check({ resource: 'r', epoch: 2 });
let thrown = null;
try { serverFence.check({ resource: 'r', epoch: 1 }); } catch (error) { thrown = error; }
const staleClass = {
  server: server.StaleOwnerError === StaleOwnerError,
  fencedIdb: fencedIdb.StaleOwnerError === StaleOwnerError,
  thrownIsMain: thrown instanceof StaleOwnerError,
};
const browser = createBrowser();
const batons = ['a', 'b'].map((id) => createBaton({ namespace: 'cjs', id, env: browser.tab(id), heartbeatMs: 30 }));
const handles = batons.map((b) => b.lead('job'));
const before = handles.map((h) => h.state());
const leading = () => handles.some((h) => h.state() === 'leader');
ready.then(function poll() {
  if (!leading()) return new Promise((r) => setTimeout(r, 10)).then(poll);
  const fence = new Fence();
  fence.check({ resource: 'r', epoch: 2 });
  try { fence.check({ resource: 'r', epoch: 1 }); } catch (error) { staleClass.coreThrownIsServer = error instanceof server.StaleOwnerError; }
  const out = { before, states: handles.map((h) => h.state()), core: batons[0].support().core, staleClass };
  batons.forEach((b) => b.dispose());
  console.log(JSON.stringify(out));
});
`;

test('npm pack -> install into an empty project -> import and run in Node', { timeout: 120_000 }, () => {
  assert.ok(existsSync(path.join(pkgDir, 'dist', 'index.js')), 'build first: node js-glue/build.mjs');
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'tab-baton-pack-'));
  try {
    const [packed] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', scratch], pkgDir));
    const files = packed.files.map((f) => f.path).filter((f) => !/^dist\/chunk-[A-Z0-9]+\.js$/.test(f)).sort();
    assert.deepEqual(files, [
      'LICENSE', 'README.md', 'awaforge.d.ts', 'broadcast-channel.d.ts',
      'dist/awaforge.js', 'dist/baton-core.wasm', 'dist/broadcast-channel.js',
      'dist/fenced-idb.cjs', 'dist/fenced-idb.d.cts', 'dist/fenced-idb.js', 'dist/index.cjs', 'dist/index.d.cts', 'dist/index.js',
      'dist/lease.js', 'dist/relay.js', 'dist/request-leadership.js', 'dist/server.cjs', 'dist/server.d.cts', 'dist/server.js',
      'dist/stale-owner-error.cjs', 'dist/talk.js', 'dist/testing.cjs', 'dist/testing.d.cts', 'dist/testing.js',
      'fenced-idb.d.ts', 'index.d.ts', 'package.json', 'relay.d.ts', 'request-leadership.d.ts', 'server.d.ts', 'testing.d.ts',
    ]);
    const tarball = path.join(scratch, packed.filename);

    const project = path.join(scratch, 'project');
    run('mkdir', ['-p', project], scratch);
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }));
    const dependencies = Object.keys(JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8')).dependencies ?? {});
    const packedDependencies = dependencies.map((name) => {
      const [dep] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', scratch, path.join(root, 'node_modules', name)], scratch));
      return path.join(scratch, dep.filename);
    });
    run('npm', ['install', ...packedDependencies, tarball, '--offline', '--no-audit', '--no-fund'], project);
    writeFileSync(path.join(project, 'main.js'), SCRIPT);
    writeFileSync(path.join(project, 'main.cjs'), CJS_SCRIPT);
    const out = JSON.parse(run(process.execPath, ['main.js'], project).trim().split('\n').pop());
    assert.deepEqual(out.first, ['leader', 'follower', 'follower']);
    assert.equal(out.second.filter((s) => s === 'leader').length, 1);
    assert.equal(out.staleRejected, true);
    assert.equal(out.answered, 42);
    assert.equal(out.led, true);
    assert.equal(out.support.mode, 'broadcast');
    assert.equal(out.support.webLocks, false);
    assert.deepEqual(out.support2, { webLocks: false, broadcastChannel: true });
    assert.deepEqual(out.entries, {
      relay: ['createRelay', 'eventSourceSource', 'webSocketSource'],
      awaforge: ['leaderElection'],
      'request-leadership': ['requestLeadership'],
      'broadcast-channel': ['createLeaderElection'],
      server: ['ServerFence', 'StaleOwnerError', 'admitInPostgres', 'checkToken', 'fenceSql', 'staleOwnerError'],
      'fenced-idb': ['FENCE_STORE', 'StaleOwnerError', 'createFenceStore', 'fencedTransaction'],
    });

    // require() in Node 20: the CommonJS entry reads the same wasm from disk.
    const cjs = JSON.parse(run(process.execPath, ['main.cjs'], project).trim().split('\n').pop());
    assert.deepEqual(cjs.before, ['follower', 'follower']);
    assert.equal(cjs.states.filter((s) => s === 'leader').length, 1);
    assert.deepEqual(cjs.core, { state: 'ready', error: null });
    assert.deepEqual(cjs.staleClass, { server: true, fencedIdb: true, thrownIsMain: true, coreThrownIsServer: true });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
});
