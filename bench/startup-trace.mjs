#!/usr/bin/env node
// The timeline of one tab's start-up, to see where navigation -> first leader goes: each
// trial opens a fresh tab of a bench page with ?trace=1 (bench/pages/instrument.js), waits
// for its leader, and prints, in milliseconds after navigation start, the resources (script,
// wasm: fetch start and end), the entry's start, the election asked for, every lock request
// and grant, storage reads and writes, WebAssembly calls, long tasks, and the leader.
// Needs the bench pages built (node bench/build-pages.mjs).
//
//   node bench/startup-trace.mjs [--page baton] [--trials 3] [--query k=v,...] [--summary]
//     --page P    the page bench/pages/P.html (dist/before/baton: bench/build-before.mjs's)
//     --summary   one line per trial: the milestones after the entry starts, and medians
import { launchBrowser } from '../tests/browser/harness.js';
import { startServer } from '../web-demo/server.js';

const argv = process.argv.slice(2);
const option = (name, fallback) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : fallback; };
const page = option('--page', 'baton');
const trials = Number(option('--trials', '3'));
const summary = argv.includes('--summary');
const extra = Object.fromEntries((option('--query', '') || '').split(',').filter(Boolean).map((kv) => kv.split('=')));

/** The milestones of a summary line: [key, how the trace row's text starts]. */
const MILESTONES = [
  ['entry', 'entry runs'],
  ['idbAsked', 'idb-open baton/'],
  ['lockAsked', 'lock-request baton/'],
  ['granted', 'lock-granted baton/'],
  ['wasmFetched', 'fetched baton-core.wasm'],
  ['compiled', 'WebAssembly.instantiateStreaming done'],
  ['idbUpgrade', 'idb-open upgrade'],
  ['idbOpen', 'idb-open done'],
  ['leader', 'LEADER'],
];
/** Milliseconds after the entry starts of the first row of each milestone (the lock's, not the probe's). */
function milestones(rows) {
  const entry = rows.find(([, what]) => what === 'entry runs')[0];
  const first = (prefix) => rows.find(([, what]) => what.startsWith(prefix) && !what.endsWith('/ {"ifAvailable":true}') && !/\/v1\/$/.test(what))?.[0];
  return Object.fromEntries(MILESTONES.map(([key, prefix]) => [key, key === 'entry' ? entry : first(prefix) - entry]));
}
const format = (line) => MILESTONES.map(([key]) => `${key} ${line[key] === undefined || Number.isNaN(line[key]) ? '-' : line[key].toFixed(1)}`).join(', ');
const lines = [];

const server = await startServer({ port: 0 });
const browser = await launchBrowser();
try {
  for (let i = 0; i < trials; i += 1) {
    const q = new URLSearchParams({ ns: `trace-${Date.now()}-${i}`, id: `t${i}`, trace: '1', ...extra });
    const tab = await browser.openTab(`${server.url}bench/${page}.html?${q}`);
    await tab.page.waitForFunction(() => window.__bench.becameLeaderAt !== null, null, { timeout: 15000 });
    const t = await tab.page.evaluate(() => {
      const b = window.__bench;
      const rel = (abs) => abs - b.timeOrigin;
      const rows = [];
      for (const r of performance.getEntriesByType('resource')) {
        rows.push([r.startTime, `fetch ${r.name.split('/').pop().split('?')[0]} (${r.transferSize} B)`]);
        rows.push([r.responseEnd, `fetched ${r.name.split('/').pop().split('?')[0]}`]);
      }
      rows.push([b.entryAt, 'entry runs']);
      rows.push([rel(b.requestedAt), 'election asked for']);
      for (const w of b.wasm) rows.push([w.startMs, `WebAssembly.${w.api}`], [w.endMs, `WebAssembly.${w.api} done`]);
      for (const [what, at] of b.trace || []) if (!/^(timer|post|delivered)$/.test(what)) rows.push([rel(at), what]);
      rows.push([rel(b.becameLeaderAt), 'LEADER']);
      return rows.sort((x, y) => x[0] - y[0]);
    });
    await tab.page.close();
    if (summary) {
      const line = milestones(t);
      lines.push(line);
      console.log(`${page} ${i + 1}: ${format(line)}`);
    } else {
      console.log(`\n${page} trial ${i + 1}:`);
      for (const [at, what] of t) console.log(`${at.toFixed(1).padStart(8)}  ${what}`);
    }
  }
  if (summary) {
    const median = (xs) => { const v = xs.filter((x) => x !== undefined).sort((a, b) => a - b); return v.length ? (v[(v.length - 1) >> 1] + v[v.length >> 1]) / 2 : undefined; };
    console.log(`${page} median: ${format(Object.fromEntries(MILESTONES.map(([key]) => [key, median(lines.map((l) => l[key]))])))}`);
  }
} finally {
  await browser.close();
  await server.close();
}
