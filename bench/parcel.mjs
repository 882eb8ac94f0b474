#!/usr/bin/env node
// Parcel, the bundler the suite's matrix (tests/bundlers) leaves out: its install (Parcel 2
// with its native SWC, lightningcss and watcher binaries, some 200 packages) takes minutes
// on this machine and would dominate the suite. Same check as the matrix: `npm pack` of the
// built package installed into a scratch project, the scratch app
// of tests/bundlers/app built with Parcel's default configuration (`parcel build
// index.html`), served and opened in headless Chromium, where it must load the wasm and
// elect a leader. Prints the output's sizes (every script, and the wasm, gzip -9).
// The project lives outside the repository (in the system's temporary folder, reused across
// runs): inside it, module resolution would walk up to the repository's own node_modules,
// which an app does not have (an optional package such as `unload` would resolve there).
//   node bench/parcel.mjs            (after ./toolchain/build.sh)
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { launchBrowser } from '../tests/browser/harness.js';
import { serve } from '../tests/bundlers/serve.js';

/** The Parcel release this check was written against. */
const PARCEL = '2.16.4';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const scratch = path.join(os.tmpdir(), 'baton-parcel-scratch');
const app = path.join(root, 'tests', 'bundlers', 'app');

if (!existsSync(path.join(root, 'js-glue', 'dist', 'baton-core.wasm'))) {
  console.error('bench/parcel.mjs: build first (./toolchain/build.sh)');
  process.exit(1);
}

// The project: the packed package and Parcel, installed as an app's author would.
mkdirSync(scratch, { recursive: true });
for (const f of readdirSync(scratch)) if (f.endsWith('.tgz')) rmSync(path.join(scratch, f));
const [packed] = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', scratch], { cwd: path.join(root, 'js-glue'), encoding: 'utf8' }));
writeFileSync(path.join(scratch, 'package.json'), JSON.stringify({
  name: 'parcel-scratch',
  private: true,
  source: 'index.html',
  dependencies: { 'tab-baton': `file:./${packed.filename}`, parcel: PARCEL },
}, null, 2));
console.log(`parcel: npm install (tab-baton from ${packed.filename}, parcel ${PARCEL})`);
execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-package-lock'], { cwd: scratch, stdio: 'inherit' });

for (const f of readdirSync(app)) copyFileSync(path.join(app, f), path.join(scratch, f));
writeFileSync(path.join(scratch, 'index.html'), '<!doctype html><meta charset="utf-8"><title>scratch</title><script type="module" src="./main.js"></script>\n');
const out = path.join(scratch, 'dist');
rmSync(out, { recursive: true, force: true });
rmSync(path.join(scratch, '.parcel-cache'), { recursive: true, force: true });
execFileSync(path.join(scratch, 'node_modules', '.bin', 'parcel'), ['build', 'index.html', '--no-autoinstall'], { cwd: scratch, stdio: 'inherit' });

const files = readdirSync(out, { recursive: true }).map((f) => path.join(out, f));
const gz = (f) => gzipSync(readFileSync(f), { level: 9 }).length;
const wasm = files.filter((f) => f.endsWith('.wasm'));
const js = files.filter((f) => f.endsWith('.js')).reduce((n, f) => n + gz(f), 0);
if (wasm.length !== 1) throw new Error(`parcel: expected the wasm as one file of its own in dist/, found ${wasm.length}`);

const server = await serve(out);
const browser = await launchBrowser();
let failure = null;
try {
  const tab = await browser.openTab(server.url);
  const result = await (await tab.page.waitForFunction(() => window.__result, null, { timeout: 60_000, polling: 50 })).jsonValue();
  if (result.error) failure = result.error;
  else if (result.state !== 'leader' || result.core?.state !== 'ready') failure = `unexpected result ${JSON.stringify(result)}`;
  else if (!server.requests.some((r) => r.endsWith('.wasm'))) failure = 'the page did not fetch the wasm';
} finally {
  await browser.close();
  await server.close();
}
console.log(`parcel ${PARCEL}: JS ${js} B gzip + wasm ${gz(wasm[0])} B gzip = ${js + gz(wasm[0])} B; ${failure ? `FAILED: ${failure}` : 'loads the wasm and elects in Chromium'}`);
process.exit(failure ? 1 : 0);
