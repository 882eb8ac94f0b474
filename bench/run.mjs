#!/usr/bin/env node
// The comparison: Baton beside broadcast-channel's LeaderElection, tab-election and the bare
// navigator.locks hand-over, in the same run, in real headless Chromium; plus size and core
// throughput. Run through bench/run.sh (which builds what this needs first).
//
//   node bench/run.mjs [--quick] [--write] [--json FILE] [--only PHASES] [--no-write]
//     --quick     few trials, small N (about 90 s); does not rewrite bench/RESULTS.md unless --write
//     --write     rewrite bench/RESULTS.md (the default without --quick)
//     --json F    also write the raw results as JSON to F (default bench/out/results-<mode>.json)
//     --only P    comma-separated subset of: size,throughput,startup,handover,diagnose,fallback,fallback-close,diagnose-fallback,frozen,silent,idle,requests
//                 (silent: only Baton's silent freeze, a part of frozen: under Web Locks, or
//                 with --subjects, in each Baton subject named there;
//                 fallback-close: only the close hand-overs of fallback;
//                 diagnose-fallback: Baton's fallback close hand-overs traced, see goodbyeBreakdown)
//                 (with --only requests, --write replaces only that section of bench/RESULTS.md)
//     --trials N  N trials per hand-over, frozen and start-up case instead of the mode's count
//     --trace     frozen and silent: the pages' timelines (?trace=1) and Baton's transitions
//                 around each trial, in the raw JSON (the wrapping costs a little time)
//     --tabs N    N tabs per group instead of the mode's count (requests too: the asking tab and N - 1 leaders)
//     --idle-ns L comma-separated tab counts for the idle phase instead of the mode's (e.g. 2,10)
//     --subjects K  comma-separated subject keys (e.g. baton-lease): only those are measured
//                 (baton-before, baton-broadcast-before, baton-lease-before: the page of
//                 node bench/build-before.mjs REF, measured only when named; bare-locks-idb:
//                 the bare lock plus one IndexedDB transaction at the grant, hand-overs only,
//                 measured only when named)
//     --before F  an earlier run's raw JSON: its targets beside this run's (printed, and in RESULTS.md)
//     --report F  measure nothing: print the target check of a raw JSON written earlier (with
//                 --write, render bench/RESULTS.md from it; --before as above)
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../web-demo/server.js';
import { launchBrowser, CHROMIUM } from '../tests/browser/harness.js';
import { attachConsoleRouter, sameWindowOpener } from './lib/tabs.mjs';
import { handovers, frozen, startup, idle } from './lib/scenarios.mjs';
import { measureSizes } from './lib/size.mjs';
import { renderMarkdown, renderTargets } from './lib/report.mjs';
import { requests } from './lib/requests.mjs';
import { requestsSection, summarizeRequests, withRequestsSection } from './lib/requests-report.mjs';
import { ms, summarize } from './lib/stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const argv = process.argv.slice(2);
const flag = (name) => argv.includes(name);
const option = (name) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : undefined; };
const quick = flag('--quick');
const write = flag('--write') || (!quick && !flag('--no-write'));
const mode = quick ? 'quick' : 'full';
const jsonOut = option('--json') || path.join(root, 'bench', 'out', `results-${mode}.json`);
const only = option('--only') ? new Set(option('--only').split(',')) : null;
const phase = (name) => !only || only.has(name);
const onlyRequests = only && only.size === 1 && only.has('requests');
if (only && write && !onlyRequests) {
  console.error('bench/run.mjs: a partial run (--only) rewrites bench/RESULTS.md only for --only requests; add --no-write');
  process.exit(2);
}

const version = (pkg) => JSON.parse(readFileSync(path.join(root, 'node_modules', pkg, 'package.json'), 'utf8')).version;

// Baton's timings are its defaults (heartbeat 1 s, suspect 3 s, lease 5 s), as an app gets them.
export const BATON_DEFAULTS = { heartbeatMs: 1000, suspectMs: 3000, leaseMs: 5000 };
export const AWAFORGE_TIMINGS = { heartbeatMs: 500, takeoverMs: 1500 };
export const SUBJECTS = [
  { key: 'baton', page: 'baton', query: {}, label: 'Baton (Web Locks)', group: 'locks', fenced: true, baton: true },
  { key: 'bare-locks', page: 'bare-locks', query: {}, label: 'bare navigator.locks', group: 'locks' },
  // Only when named in --subjects, hand-overs only: the bare lock plus one IndexedDB transaction
  // at the grant (bench/pages/src/bare-locks-idb.js), the floor of a hand-over that commits an epoch.
  { key: 'bare-locks-idb', page: 'bare-locks-idb', query: {}, label: 'bare navigator.locks + one IndexedDB transaction', group: 'locks', handoverOnly: true, onlyNamed: true },
  { key: 'broadcast-channel', page: 'broadcast-channel', query: {}, label: `broadcast-channel ${version('broadcast-channel')} (LeaderElectionWebLock)`, group: 'locks' },
  { key: 'tab-election', page: 'tab-election', query: {}, label: `tab-election ${version('tab-election')}`, group: 'locks' },
  { key: 'baton-broadcast', page: 'baton', query: { authority: 'broadcast', locks: 'off' }, label: 'Baton broadcast-only (no Web Locks)', group: 'fallback', fenced: true, baton: true },
  { key: 'baton-lease', page: 'baton', query: { authority: 'lease', locks: 'off' }, label: 'Baton IndexedDB lease (no Web Locks)', group: 'fallback', fenced: true, baton: true },
  { key: 'broadcast-channel-fallback', page: 'broadcast-channel', query: { locks: 'off' }, label: `broadcast-channel ${version('broadcast-channel')} fallback elector (no Web Locks)`, group: 'fallback', openOneByOne: true },
  // Only when named in --subjects: Baton's page built from an earlier commit's glue (bench/build-before.mjs).
  { key: 'baton-before', page: 'dist/before/baton', query: {}, label: 'Baton (Web Locks), earlier build', group: 'locks', fenced: true, baton: true, onlyNamed: true },
  { key: 'baton-broadcast-before', page: 'dist/before/baton', query: { authority: 'broadcast', locks: 'off' }, label: 'Baton broadcast-only (no Web Locks), earlier build', group: 'fallback', fenced: true, baton: true, onlyNamed: true },
  { key: 'baton-lease-before', page: 'dist/before/baton', query: { authority: 'lease', locks: 'off' }, label: 'Baton IndexedDB lease (no Web Locks), earlier build', group: 'fallback', fenced: true, baton: true, onlyNamed: true },
  // Hand-overs only: its documented bound (takeoverMs + heartbeatMs) on the authority `auto` picks.
  { key: 'awaforge-fallback', page: 'awaforge', query: { locks: 'off', ...AWAFORGE_TIMINGS }, label: `Baton's awaforge API, no Web Locks (heartbeatMs ${AWAFORGE_TIMINGS.heartbeatMs}, takeoverMs ${AWAFORGE_TIMINGS.takeoverMs})`, group: 'fallback', handoverOnly: true },
];
// --subjects K: only those subjects are measured (their rows only; the others say "not measured").
const chosen = option('--subjects') ? new Set(option('--subjects').split(',')) : null;
const measured = (s) => (chosen ? chosen.has(s.key) : !s.onlyNamed);
const LOCKS = SUBJECTS.filter((s) => s.group === 'locks' && measured(s));
const FALLBACK = SUBJECTS.filter((s) => s.group === 'fallback' && measured(s));

const CONFIG = quick
  ? { tabs: 2, handoverTrials: 1, fallbackCloseTrials: 1, fallbackCrashTrials: 1, frozenTrials: 1, startupTrials: 1, diagnoseTrials: 0,
      idleNs: [2, 3], idleWarmupMs: 300, idleWindowMs: 1000, frozenWaitMs: 4500, frozenSettleMs: 500, frozenLeadMs: 300,
      handoverSettleMs: 150, frames: 100000, requests: { tabs: 3, roundTrips: 20, batches: 2, closeTrials: 1, timeoutMs: 10000 } }
  : { tabs: 5, handoverTrials: 20, fallbackCloseTrials: 20, fallbackCrashTrials: 20, frozenTrials: 10, startupTrials: 20, diagnoseTrials: 10,
      idleNs: [2, 10, 50], idleWarmupMs: 1500, idleWindowMs: 6000, frozenWaitMs: 8000, frozenSettleMs: 1000, frozenLeadMs: 1000,
      handoverSettleMs: 250, frames: 1000000, requests: { tabs: 5, roundTrips: 300, batches: 6, closeTrials: 10, timeoutMs: 5000 } };
if (option('--trials')) {
  const n = Number(option('--trials'));
  for (const key of ['handoverTrials', 'fallbackCloseTrials', 'fallbackCrashTrials', 'frozenTrials', 'startupTrials', 'diagnoseTrials']) CONFIG[key] = n;
}
if (option('--tabs')) CONFIG.tabs = CONFIG.requests.tabs = Number(option('--tabs'));
if (option('--idle-ns')) CONFIG.idleNs = option('--idle-ns').split(',').map(Number);
/** Subjects measured in every phase (not only hand-overs). */
const EVERY_PHASE = SUBJECTS.filter((s) => !s.handoverOnly && measured(s));

const started = Date.now();
// Other work on the machine shows up in every figure: the 1-minute load average is sampled.
const loadSamples = [];
setInterval(() => loadSamples.push(os.loadavg()[0]), 5000).unref();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(0)} s`;
const log = (msg) => console.log(`[${elapsed().padStart(5)}] ${msg}`);

function machine() {
  const cpus = os.cpus();
  let chromium = '';
  try { chromium = execFileSync(CHROMIUM, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim(); } catch { chromium = CHROMIUM; }
  return { cpu: cpus[0]?.model || 'unknown', cores: cpus.length, memoryGb: Math.round(os.totalmem() / 2 ** 30), node: process.version, chromium, os: `${os.type()} ${os.release()}`, loadAtStart: os.loadavg().map((x) => Number(x.toFixed(2))) };
}

/** Native and wasm throughput; each the best of three runs (the machine may be busy). */
function throughput() {
  const nativeBin = path.join(root, 'build', 'native', 'bench', 'baton_bench_core');
  const runNative = () => {
    const out = execFileSync(nativeBin, [String(CONFIG.frames)], { encoding: 'utf8' });
    const grab = (re) => Number(re.exec(out)?.[1]);
    return {
      frameBytes: grab(/heartbeat frame (\d+) bytes/),
      decode: grab(/decode\s+(\d+) frames\/s/),
      decodeStep: grab(/decode \+ step\s+(\d+) frames\/s/),
      output: out.trim(),
    };
  };
  const runWasm = () => JSON.parse(execFileSync(process.execPath, [path.join(here, 'wasm-throughput.mjs'), String(CONFIG.frames), '--json'], { encoding: 'utf8' }));
  const runs = [0, 1, 2].map(() => ({ native: runNative(), wasm: runWasm() }));
  const best = (get) => runs.map(get).reduce((a, b) => (b.framesPerSecond > a.framesPerSecond ? b : a));
  const native = runs.map((x) => x.native).reduce((a, b) => (b.decodeStep > a.decodeStep ? b : a));
  native.decode = Math.max(...runs.map((x) => x.native.decode));
  const wasm = { ...runs[0].wasm, raw: best((x) => x.wasm.raw), glue: best((x) => x.wasm.glue), baton: best((x) => x.wasm.baton) };
  return { native, wasm, frames: CONFIG.frames, runs: runs.length, date: new Date().toISOString() };
}

async function main() {
  const results = { mode, date: new Date().toISOString(), config: CONFIG, batonDefaults: BATON_DEFAULTS, awaforgeTimings: AWAFORGE_TIMINGS, machine: machine(), subjects: SUBJECTS.map(({ key, label, group, fenced }) => ({ key, label, group, fenced: Boolean(fenced) })) };
  log(`bench (${mode}): ${results.machine.chromium}, ${results.machine.cores} cores, Node ${results.machine.node}`);

  if (phase('size')) {
    results.size = await measureSizes(root, { namesBuild: path.join(root, 'build', 'bench-wasm-names', 'baton-core.js') });
    const z = results.size;
    log(`size: an app using only createBaton loads ${z.shipped.gzip} B gzip = JS ${z.app.js.gzip} B + wasm ${z.wasm.gzip} B (binary ${z.wasm.raw} B raw); Emscripten/embind runtime ${z.runtime.gzip} B, whole glue ${z.glue.gzip} B`);
    if (z.code) log(`size: wasm code by origin: ${z.code.groups.map((g) => `${g.label.split(' (')[0]} ${g.bytes}`).join(', ')}`);
  }
  if (phase('throughput')) {
    results.throughput = throughput();
    const t = results.throughput;
    log(`throughput: native ${t.native.decodeStep.toFixed(0)} frames/s, wasm (glue) ${t.wasm.glue.framesPerSecond.toFixed(0)} frames/s`);
  }

  const server = await startServer({ port: 0 });
  // Idle cost wants background tabs unthrottled (see idle() in lib/scenarios.mjs).
  const NO_THROTTLE = ['--disable-background-timer-throttling', '--disable-renderer-backgrounding', '--disable-backgrounding-occluded-windows'];
  const open = async (args = []) => {
    const browser = await launchBrowser({ args });
    return { browser, server, router: attachConsoleRouter(browser), openSameWindow: sameWindowOpener(browser) };
  };
  const common = { tabs: CONFIG.tabs, settleMs: CONFIG.handoverSettleMs, log };

  const runStartup = async (bench) => {
    results.startup = {};
    const subjects = [...EVERY_PHASE, { key: 'baton-init', page: 'baton-init', query: { runs: 3 }, label: 'Baton core module init alone' }];
    for (const s of subjects) results.startup[s.key] = [];
    for (let i = 0; i < CONFIG.startupTrials; i += 1) {
      const order = i % 2 ? [...subjects].reverse() : subjects;
      for (const s of order) results.startup[s.key].push(await startup(bench, s));
    }
    log(`startup: ${CONFIG.startupTrials} trials per subject done`);
  };
  // Milliseconds-scale: one trial at a time, the libraries interleaved (see handovers()).
  /** One line per subject: its close hand-overs (the figures to compare side by side). */
  const logCloses = (closes) => {
    for (const [key, trials] of Object.entries(closes)) {
      const f = (field) => {
        const x = summarize(trials.map((t) => t[field] ?? null));
        return `p50 ${ms(x.median)}, p95 ${ms(x.p95)}`;
      };
      log(`close ${key} (n ${trials.length}): command -> leader ${f('fromCommand')}; pagehide -> leader ${f('fromPagehide')}; own pagehide work ${f('pagehideWork')}`);
    }
  };
  const runHandovers = async (bench) => {
    if (phase('handover')) {
      // Close and crash trials alternate in the same tabs.
      const x = await handovers(bench, LOCKS, { ...common, kinds: ['close', 'crash'], trials: CONFIG.handoverTrials, timeoutMs: 5000 });
      results.handover = { close: {}, crash: {} };
      for (const s of LOCKS) {
        results.handover.close[s.key] = x[s.key].close;
        results.handover.crash[s.key] = x[s.key].crash;
      }
      logCloses(results.handover.close);
    }
    if ((phase('diagnose') && CONFIG.diagnoseTrials) || (only && only.has('diagnose'))) {
      const traced = { ...SUBJECTS[0], key: 'baton-traced', query: { trace: '1' } };
      const x = (await handovers(bench, [traced], { ...common, kinds: ['close', 'crash'], trials: CONFIG.diagnoseTrials || 2, timeoutMs: 5000 }))[traced.key];
      results.diagnose = x.close;
      results.diagnoseCrash = x.crash;
    }
    if (only && only.has('diagnose-fallback')) {
      const traced = FALLBACK.filter((x) => x.baton).map((x) => ({ ...x, key: `${x.key}-traced`, query: { ...x.query, trace: '1' } }));
      const x = await handovers(bench, traced, { ...common, kinds: ['close'], trials: CONFIG.diagnoseTrials || 2, timeoutMs: 10000 });
      results.diagnoseFallback = Object.fromEntries(traced.map((t) => [t.key, x[t.key].close]));
      for (const [key, trials] of Object.entries(results.diagnoseFallback)) {
        const f = (field) => ms(summarize(trials.map((t) => t[field] ?? null)).median);
        log(`traced close ${key} (n ${trials.length}), medians: own pagehide work ${f('oldWork')}; pagehide -> goodbye heard ${f('goodbyeHeard')}; goodbye -> transaction begun ${f('goodbyeToTx')}; transaction ${f('txSpan')}; transaction complete -> leader ${f('txToLeader')}; goodbye -> leader ${f('goodbyeToLeader')}; total ${f('total')}`);
      }
    }
    if (phase('fallback') || (only && only.has('fallback-close'))) {
      results.fallback ??= { close: {}, crash: {} };
      const x = await handovers(bench, FALLBACK, { ...common, kinds: ['close'], trials: CONFIG.fallbackCloseTrials, timeoutMs: 10000 });
      for (const s of FALLBACK) results.fallback.close[s.key] = x[s.key].close;
      logCloses(results.fallback.close);
    }
  };
  // Requests to the leader beside tab-election's call (lib/requests.mjs): milliseconds-scale,
  // after the hand-overs; in quick mode side by side with the other phases.
  const runRequests = async (bench) => {
    const load1 = os.loadavg()[0];
    const measured = await requests(bench, { ...CONFIG.requests, log });
    results.requests = { config: CONFIG.requests, date: new Date().toISOString(), command: `node bench/run.mjs ${argv.join(' ')}`.trim(), load1, results: measured };
    for (const [key, x] of Object.entries(summarizeRequests(results.requests))) {
      log(`requests ${key}: round trip p50 ${ms(x.roundTrip.median, 2)}, p95 ${ms(x.roundTrip.p95, 2)}; close -> first answer median ${ms(x.firstAnswer.median)}, ${x.answeredByNext}/${x.trials} answered by the next leader, ${x.unanswered} unanswered`);
    }
  };
  // Seconds-scale phases run side by side (separate windows and names), in two batches to
  // keep the machine's load moderate: (1) the frozen leader with Web Locks (every library,
  // plus Baton with the lifecycle events hidden from it: silent freeze); (2) the same
  // without Web Locks, and the fallback crash hand-overs.
  const runSeconds = async (bench) => {
    const trace = flag('--trace');
    const frozenJob = (s) => frozen(bench, trace ? { ...s, query: { ...s.query, trace: '1' } } : s, { trials: CONFIG.frozenTrials, tabs: CONFIG.tabs, waitMs: CONFIG.frozenWaitMs, settleMs: CONFIG.frozenSettleMs, leadMs: CONFIG.frozenLeadMs, trace, log })
      .then((x) => { (s.silent ? results.frozenSilent : results.frozen)[s.key] = x; });
    const silentOf = (s) => ({ ...s, query: { ...s.query, freeze: 'silent' }, silent: true });
    const batches = [[], []];
    if (phase('frozen')) {
      results.frozen = {};
      results.frozenSilent = {};
      for (const s of LOCKS.filter((x) => !x.handoverOnly)) batches[0].push(() => frozenJob(s));
      if (measured(SUBJECTS[0])) batches[0].push(() => frozenJob(silentOf(SUBJECTS[0])));
      for (const s of FALLBACK.filter((x) => !x.handoverOnly)) batches[1].push(() => frozenJob(s));
      for (const s of FALLBACK.filter((x) => x.baton)) batches[1].push(() => frozenJob(silentOf(s)));
    } else if (phase('silent')) {
      results.frozenSilent = {};
      const silentSubjects = chosen ? EVERY_PHASE.filter((s) => s.baton) : [SUBJECTS[0]];
      for (const s of silentSubjects) batches[0].push(() => frozenJob(silentOf(s)));
    }
    if (phase('fallback')) {
      results.fallback ??= { close: {}, crash: {} };
      for (const s of FALLBACK) {
        batches[1].push(() => handovers(bench, [s], { ...common, kinds: ['crash'], trials: CONFIG.fallbackCrashTrials, timeoutMs: 15000 }).then((x) => { results.fallback.crash[s.key] = x[s.key].crash; }));
      }
    }
    // Quick mode: one batch.
    if (quick) await Promise.all(batches.flat().map((job) => job()));
    else for (const batch of batches) await Promise.all(batch.map((job) => job()));
  };
  const idleOpts = { ns: CONFIG.idleNs, warmupMs: CONFIG.idleWarmupMs, windowMs: CONFIG.idleWindowMs, log };

  try {
    const browserPhases = ['startup', 'handover', 'diagnose', 'fallback', 'fallback-close', 'diagnose-fallback', 'frozen', 'silent', 'requests'].some(phase);
    // Quick mode runs in one browser (launched unthrottled for the idle phase) and measures
    // the idle cost of all subjects at once: it keeps the benchmark working, it does not
    // measure cleanly.
    const main = browserPhases || quick ? await open(quick ? NO_THROTTLE : []) : null;
    try {
      if (quick) {
        // Quick mode overlaps the milliseconds chain with the seconds-scale phase.
        await Promise.all([(async () => { if (phase('startup')) await runStartup(main); await runHandovers(main); })(), runSeconds(main), phase('requests') && runRequests(main)]);
      } else {
        if (phase('startup')) await runStartup(main);
        await runHandovers(main);
        if (phase('requests')) await runRequests(main);
        await runSeconds(main);
      }
      if (phase('idle') && quick) {
        results.idle = {};
        await Promise.all(EVERY_PHASE.map(async (s) => { results.idle[s.key] = await idle(main, s, idleOpts); }));
      }
    } finally {
      await main?.browser.close();
    }
    if (phase('idle') && !quick) {
      results.idle = {};
      for (const s of EVERY_PHASE) {
        const bench = await open(NO_THROTTLE); // a fresh browser per subject
        try {
          results.idle[s.key] = await idle(bench, s, idleOpts);
        } finally {
          await bench.browser.close();
        }
      }
    }
  } finally {
    await server.close();
  }
  results.seconds = (Date.now() - started) / 1000;
  results.machine.loadAtEnd = os.loadavg().map((x) => Number(x.toFixed(2)));
  const sorted = [...loadSamples].sort((a, b) => a - b);
  results.machine.load1 = sorted.length ? { min: sorted[0], median: sorted[sorted.length >> 1], max: sorted[sorted.length - 1], samples: sorted.length } : null;

  mkdirSync(path.dirname(jsonOut), { recursive: true });
  writeFileSync(jsonOut, `${JSON.stringify(results, null, 1)}\n`);
  console.log(`\n${renderTargets(results)}`);
  const before = option('--before') ? JSON.parse(readFileSync(option('--before'), 'utf8')) : null;
  if (before) console.log(`\nBefore (${before.mode} run of ${before.date}):\n${renderTargets(before)}`);
  if (write && onlyRequests) {
    const file = path.join(here, 'RESULTS.md');
    writeFileSync(file, withRequestsSection(readFileSync(file, 'utf8'), requestsSection(results)));
    log('wrote the requests section of bench/RESULTS.md');
  } else if (write) {
    // The reliability figures come from other long runs (soak, fuzzing, chaos): kept as written.
    const reliability = path.join(here, 'RELIABILITY.md');
    writeFileSync(path.join(here, 'RESULTS.md'), renderMarkdown(results, { before }) + readFileSync(reliability, 'utf8'));
    log(`wrote bench/RESULTS.md`);
  }
  log(`raw results: ${path.relative(process.cwd(), jsonOut)}; done in ${elapsed()}`);
}

/** --report F: the target check of a saved run; with --write, bench/RESULTS.md rendered from it. */
function report(file) {
  const results = JSON.parse(readFileSync(file, 'utf8'));
  const before = option('--before') ? JSON.parse(readFileSync(option('--before'), 'utf8')) : null;
  console.log(renderTargets(results));
  if (flag('--write')) {
    writeFileSync(path.join(here, 'RESULTS.md'), renderMarkdown(results, { before }) + readFileSync(path.join(here, 'RELIABILITY.md'), 'utf8'));
    console.log(`wrote bench/RESULTS.md from ${file}`);
  }
}

if (option('--report')) report(option('--report'));
else await main();
