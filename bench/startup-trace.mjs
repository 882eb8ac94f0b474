#!/usr/bin/env node
// The timeline of one tab's start-up, to see where navigation -> first leader goes: each
// trial opens a fresh tab of a bench page with ?trace=1 (bench/pages/instrument.js), waits
// for its leader, and prints, in milliseconds after navigation start, the resources (script,
// wasm: fetch start and end), the entry's start, the election asked for, every lock request
// and grant, storage reads and writes, WebAssembly calls, long tasks, and the leader.
// Needs the bench pages built (node bench/build-pages.mjs).
//
//   node bench/startup-trace.mjs [--page baton] [--trials 3] [--query k=v,...] [--summary]
//     --page P    the page bench/pages/P.html (dist/before/baton: bench/build-before.mjs's); a
//                 comma-separated list: the pages take turns in each trial
//     --summary   one line per trial: the milestones after the entry starts, and medians
//     --returning each trial is a returning visit: a first tab of the same names (which makes
//                 the database and the first epoch) leads and is closed before the measured one
import { launchBrowser } from '../tests/browser/harness.js';
import { startServer } from '../web-demo/server.js';

const argv = process.argv.slice(2);
const option = (name, fallback) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : fallback; };
const pages = option('--page', 'baton').split(',');
const trials = Number(option('--trials', '3'));
const summary = argv.includes('--summary');
const returning = argv.includes('--returning');
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
/** One measured start-up of `page`: the sorted trace rows, in ms after navigation start. */
async function trial(browser, server, page, i) {
  const q = new URLSearchParams({ ns: `trace-${Date.now()}-${i}`, id: `t${i}`, trace: '1', ...extra });
  if (returning) {
    // A first visit that makes the database and the epoch, closed before the measured one.
    const first = await browser.openTab(`${server.url}bench/${page}.html?${q}&id=first${i}`);
    await first.page.waitForFunction(() => window.__bench.becameLeaderAt !== null, null, { timeout: 15000 });
    await first.page.close({ runBeforeUnload: true });
  }
  const tab = await browser.openTab(`${server.url}bench/${page}.html?${q}`);
  await tab.page.waitForFunction(() => window.__bench.becameLeaderAt !== null, null, { timeout: 15000 });
  const rows = await tab.page.evaluate(() => {
    const b = window.__bench;
    const rel = (abs) => abs - b.timeOrigin;
    const out = [];
    for (const r of performance.getEntriesByType('resource')) {
      out.push([r.startTime, `fetch ${r.name.split('/').pop().split('?')[0]} (${r.transferSize} B)`]);
      out.push([r.responseEnd, `fetched ${r.name.split('/').pop().split('?')[0]}`]);
    }
    out.push([b.entryAt, 'entry runs']);
    out.push([rel(b.requestedAt), 'election asked for']);
    for (const w of b.wasm) out.push([w.startMs, `WebAssembly.${w.api}`], [w.endMs, `WebAssembly.${w.api} done`]);
    for (const [what, at] of b.trace || []) if (!/^(timer|post|delivered)$/.test(what)) out.push([rel(at), what]);
    out.push([rel(b.becameLeaderAt), 'LEADER']);
    return out.sort((x, y) => x[0] - y[0]);
  });
  await tab.page.close();
  return rows;
}

const median = (xs) => {
  const v = xs.filter((x) => x !== undefined && !Number.isNaN(x)).sort((a, b) => a - b);
  return v.length ? (v[(v.length - 1) >> 1] + v[v.length >> 1]) / 2 : undefined;
};

const server = await startServer({ port: 0 });
const browser = await launchBrowser();
const lines = new Map(pages.map((page) => [page, []]));
try {
  for (let i = 0; i < trials; i += 1) {
    // The pages take turns, in a rotating order, so that the machine's load hits them alike.
    const order = pages.map((_, k) => pages[(i + k) % pages.length]);
    for (const page of order) {
      const rows = await trial(browser, server, page, i);
      if (summary) {
        const line = milestones(rows);
        lines.get(page).push(line);
        console.log(`${page} ${i + 1}: ${format(line)}`);
      } else {
        console.log(`\n${page} trial ${i + 1}:`);
        for (const [at, what] of rows) console.log(`${at.toFixed(1).padStart(8)}  ${what}`);
      }
    }
  }
  if (summary) {
    for (const [page, list] of lines) {
      console.log(`${page} median (n ${list.length}): ${format(Object.fromEntries(MILESTONES.map(([key]) => [key, median(list.map((l) => l[key]))])))}`);
    }
  }
} finally {
  await browser.close();
  await server.close();
}
