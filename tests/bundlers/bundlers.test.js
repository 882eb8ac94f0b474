// The bundler matrix: `npm pack` of the built package, installed into a scratch project
// (build/bundlers/, ignored), bundled by each bundler with its default configuration
// (builds.js), then served and opened in headless Chromium, where the app must load the
// wasm, elect a leader and get an answer to a request (code the package imports on first
// use). Each output must contain the wasm as a file of its own.
// Run: node --test tests/bundlers/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { launchBrowser } from '../browser/harness.js';
import { BUILDS } from './builds.js';
import { serve } from './serve.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const scratch = path.join(root, 'build', 'bundlers');
const pkg = path.join(scratch, 'node_modules', 'tab-baton');
const WASM_MAGIC = Buffer.from([0, 0x61, 0x73, 0x6d]);

/** Packs js-glue and unpacks the tarball where the scratch projects resolve `tab-baton`. */
function install() {
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(pkg, { recursive: true });
  const [packed] = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', scratch], { cwd: path.join(root, 'js-glue'), encoding: 'utf8' }));
  execFileSync('tar', ['-xzf', path.join(scratch, packed.filename), '-C', pkg, '--strip-components=1']);
}

/** Files of `dir` (recursively) that are WebAssembly binaries. */
function wasmFiles(dir) {
  return readdirSync(dir, { recursive: true })
    .map((f) => path.join(dir, f))
    .filter((f) => f.endsWith('.wasm') && readFileSync(f).subarray(0, 4).equals(WASM_MAGIC));
}

/** gzip bytes of the output's scripts (all of them, lazily loaded chunks too) and of its wasm. */
function sizes(dir) {
  const gz = (f) => gzipSync(readFileSync(f), { level: 9 }).length;
  const files = readdirSync(dir, { recursive: true }).map((f) => path.join(dir, f));
  const js = files.filter((f) => f.endsWith('.js')).reduce((n, f) => n + gz(f), 0);
  const wasm = wasmFiles(dir).reduce((n, f) => n + gz(f), 0);
  return `JS ${js} B gzip + wasm ${wasm} B gzip = ${js + wasm} B`;
}

test('bundlers: the packed package builds and elects in Chromium', { timeout: 600_000 }, async (t) => {
  assert.ok(existsSync(path.join(root, 'js-glue', 'dist', 'baton-core.wasm')), 'build first: ./toolchain/build.sh');
  install();
  const browser = await launchBrowser();
  try {
    for (const [name, build] of Object.entries(BUILDS)) {
      await t.test(name, async () => {
        const dir = path.join(scratch, name.replace(/[^a-z0-9]+/gi, '-'));
        mkdirSync(dir, { recursive: true });
        for (const f of readdirSync(path.join(here, 'app'))) copyFileSync(path.join(here, 'app', f), path.join(dir, f));
        const { out, warnings } = await build(dir, pkg);
        for (const w of warnings) t.diagnostic(`${name} warning: ${String(w).split('\n')[0]}`);
        assert.equal(wasmFiles(out).length, 1, `${name}: the output has the wasm as a file of its own`);
        t.diagnostic(`${name} size: ${sizes(out)}`);

        const server = await serve(out);
        const tab = await browser.openTab(server.url);
        try {
          const handle = await tab.page.waitForFunction(() => window.__result, null, { timeout: 60_000, polling: 50 });
          const result = await handle.jsonValue();
          assert.equal(result.error, undefined, `${name}: ${result.error}`);
          assert.equal(result.state, 'leader');
          assert.deepEqual(result.core, { state: 'ready', error: null });
          assert.equal(result.answer, 'ping-pong', `${name}: a request answered (the package's lazily imported chunk loaded)`);
          if (name.includes('worker')) assert.equal(result.inWorker, true);
          assert.ok(server.requests.some((r) => r.endsWith('.wasm')), `${name}: the page fetched the wasm`);
        } finally {
          await tab.page.close().catch(() => {});
          await server.close();
        }
      });
    }
  } finally {
    await browser.close();
  }
});
