// Keeps the benchmark working: runs `bench/run.sh --quick` (builds what it needs, runs every
// case of the comparison with a trial or two in headless Chromium, does not touch
// bench/RESULTS.md) and checks that it produced figures for every library and every case.
// Timings are not asserted here: the targets are reported by the benchmark itself.
// Run: node --test tests/browser/bench-quick.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { evaluateTargets } from '../../bench/lib/report.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const LOCKS = ['baton', 'bare-locks', 'broadcast-channel', 'tab-election'];
const FALLBACK = ['baton-broadcast', 'baton-lease', 'broadcast-channel-fallback'];
const ALL = [...LOCKS, ...FALLBACK];
const BATON = ['baton', 'baton-broadcast', 'baton-lease'];
/** Measured in the fallback hand-overs only: Baton's awaforge API without Web Locks. */
const AWAFORGE = 'awaforge-fallback';
/** Every target of the hand-over issue, by the id the report gives it. */
const HANDOVER_TARGETS = [
  'close-web-locks', 'crash-web-locks', 'startup-web-locks', 'startup-broadcast',
  'frozen-baton', 'frozenSilent-baton', 'frozen-baton-lease', 'frozenSilent-baton-lease',
  'fallback-close-baton-broadcast', 'fallback-crash-baton-broadcast',
  'fallback-close-baton-lease', 'fallback-crash-baton-lease',
  `fallback-close-${AWAFORGE}`, `fallback-crash-${AWAFORGE}`, 'callbacks',
];

const isNumber = (v) => typeof v === 'number' && Number.isFinite(v);
/** A trial's figure: a number, or null when the library never got there (e.g. a frozen leader kept). */
const isFigure = (v) => v === null || isNumber(v);
const trials = (list) => (list || []).filter((r) => r && r.trial !== undefined);

function runQuick(jsonFile) {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(root, 'bench', 'run.sh'), ['--quick', '--json', jsonFile], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`bench/run.sh --quick exited with ${code}:\n${out.slice(-4000)}`))));
  });
}

test('bench/run.sh --quick produces figures for every library and case', { timeout: 300000 }, async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'baton-bench-'));
  const results = path.join(dir, 'quick.json');
  const resultsMd = path.join(root, 'bench', 'RESULTS.md');
  const mdBefore = (() => { try { return statSync(resultsMd).mtimeMs; } catch { return null; } })();
  try {
    const started = Date.now();
    const log = await runQuick(results);
    const seconds = (Date.now() - started) / 1000;
    const r = JSON.parse(readFileSync(results, 'utf8'));
    assert.equal(r.mode, 'quick');
    assert.match(log, /Targets \(quick mode/, 'the target check is printed');
    const mdAfter = (() => { try { return statSync(resultsMd).mtimeMs; } catch { return null; } })();
    assert.equal(mdAfter, mdBefore, 'quick mode does not rewrite bench/RESULTS.md');

    // Hand-over with Web Locks: close and crash, every library.
    for (const kind of ['close', 'crash']) {
      for (const key of LOCKS) {
        const t = trials(r.handover[kind][key]);
        assert.ok(t.length > 0, `hand-over ${kind}: trials for ${key}`);
        assert.ok(t.every((x) => isNumber(x.fromCommand)), `hand-over ${kind}: ${key} handed over (${JSON.stringify(r.handover[kind][key])})`);
        if (kind === 'close') assert.ok(t.every((x) => isNumber(x.fromPagehide)), `hand-over close: pagehide timing for ${key}`);
        // Where the time went: until the next tab's lock grant, and after it.
        if (key === 'baton' || key === 'bare-locks') assert.ok(t.every((x) => isNumber(x.toGrant) && isNumber(x.grantToLeader)), `hand-over ${kind}: grant split for ${key}`);
      }
    }
    // Fallback modes: close and crash.
    for (const kind of ['close', 'crash']) {
      for (const key of [...FALLBACK, AWAFORGE]) {
        const t = trials(r.fallback[kind][key]);
        assert.ok(t.length > 0, `fallback ${kind}: trials for ${key} (${JSON.stringify(r.fallback[kind][key])})`);
        assert.ok(t.every((x) => isFigure(x.fromCommand)), `fallback ${kind}: figures for ${key}`);
      }
    }
    // Frozen leader: every library (real freeze), Baton also silent.
    for (const [variant, keys] of [['frozen', ALL], ['frozenSilent', BATON]]) {
      for (const key of keys) {
        const t = trials(r[variant][key]);
        assert.ok(t.length > 0, `${variant}: trials for ${key} (${JSON.stringify(r[variant][key])})`);
        for (const x of t) {
          assert.ok(isFigure(x.replacedAfter), `${variant}: ${key} replacedAfter`);
          assert.ok(Number.isInteger(x.believers) && Number.isInteger(x.effective), `${variant}: ${key} leaders after thaw`);
          assert.ok(x.freezeSeen, `${variant}: ${key}: the tab was really frozen (freeze event)`);
        }
      }
    }
    // Start-up: every library reached a first leader; Baton's wasm instantiate was timed.
    for (const key of ALL) {
      assert.ok(r.startup[key].length > 0 && r.startup[key].every((x) => isNumber(x.toLeader)), `start-up figures for ${key} (${JSON.stringify(r.startup[key])})`);
    }
    assert.ok(r.startup.baton.every((x) => isNumber(x.wasmInstantiate)), 'wasm instantiate time in the Baton page');
    assert.ok(r.startup['baton-init'].every((x) => x.init && x.init.times.every(isNumber)), 'core module init alone');
    // Size.
    for (const k of ['shipped', 'wasm', 'runtime', 'glue']) assert.ok(isNumber(r.size[k].raw) && isNumber(r.size[k].gzip), `size: ${k}`);
    assert.ok(r.size.app.js.gzip > 0 && r.size.app.wasm.gzip > 0, 'size of an app using only createBaton: JS and wasm');
    for (const key of LOCKS.filter((k) => k !== 'baton')) assert.ok(r.size.peers[key].gzip > 0, `size of ${key}`);
    // Idle cost: every library at every N, every tab measured.
    for (const key of ALL) {
      const rows = r.idle[key].filter((x) => x.tabs);
      assert.deepEqual(rows.map((x) => x.n), r.config.idleNs, `idle rows for ${key} (${JSON.stringify(r.idle[key]).slice(0, 300)})`);
      for (const row of rows) {
        assert.equal(row.tabs.length, row.n, `idle ${key} N=${row.n}: every tab`);
        // One leader, or (a finding, not a failure of the benchmark) duplicates a library kept.
        assert.ok(row.tabs.filter((t) => t.leader).length === 1 || row.split, `idle ${key} N=${row.n}: one leader`);
        assert.ok(row.tabs.every((t) => ['posted', 'delivered', 'wakeups', 'cpuMs'].every((k) => isNumber(t[k]))), `idle ${key} N=${row.n}: rates`);
      }
    }
    // The target check: every target of the hand-over issue, met or missed (or not a timing),
    // and a missed one with its measured cause.
    const targets = evaluateTargets(r);
    for (const id of HANDOVER_TARGETS) assert.ok(targets.some((x) => x.id === id), `target ${id} in the check`);
    for (const x of targets) {
      assert.ok(x.ok === true || x.ok === false || x.ok === null, `target ${x.id}: met, missed or n/a`);
      if (x.ok === false && x.id !== 'size' && !x.id.startsWith('idle-')) assert.ok(x.cause, `missed target ${x.id} has its measured cause`);
    }
    // Requests to the leader beside tab-election's call: every round trip timed; Baton's
    // request in flight at the leader's close is answered by the next leader, none lost.
    const q = r.requests.config;
    for (const key of ['baton', 'tab-election']) {
      const x = r.requests.results[key];
      assert.equal(x.roundTrip.filter(isNumber).length, Math.ceil(q.roundTrips / q.batches) * q.batches, `requests ${key}: every round trip`);
      assert.equal(trials(x.close).length, q.closeTrials, `requests ${key}: close trials (${JSON.stringify(x.close)})`);
    }
    for (const t of trials(r.requests.results.baton.close)) {
      assert.ok(isNumber(t.firstAnswer) && t.unanswered === 0, `requests baton: answered by the next leader, none lost (${JSON.stringify(t)})`);
    }
    // Core throughput, native and wasm.
    assert.ok(r.throughput.native.decodeStep > 0 && r.throughput.wasm.glue.framesPerSecond > 0 && r.throughput.wasm.baton.framesPerSecond > 0, 'throughput');
    assert.equal(r.throughput.wasm.raw.malformed, 0, 'the JS-encoded frames decode in the core');
    console.log(`bench --quick: ${seconds.toFixed(0)} s`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
