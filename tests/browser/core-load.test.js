// A failed load of the WebAssembly core, in real Chromium: under a strict CSP (no
// 'wasm-unsafe-eval') and with baton-core.wasm not served (404). Importing must not throw;
// `ready` rejects with a message naming the fix, support() and metrics() report it, and the
// app's handles stay followers. The control case (the CSP with 'wasm-unsafe-eval') elects,
// so the CSP case fails for the CSP and nothing else.
// Run: node --test --test-concurrency=1 tests/browser/core-load.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchBrowser } from './harness.js';
import { serve } from '../bundlers/serve.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.resolve(here, '..', '..', 'js-glue', 'dist');
const site = path.join(here, 'artifacts', 'core-load');

const PAGE = `import { createBaton, ready } from './index.js';
window.__imported = true;
const baton = createBaton({ namespace: 'core-load-' + Math.random() });
const handle = baton.lead('job');
const report = (extra) => {
  window.__result = { ...extra, state: handle.state(), support: baton.support().core, metrics: baton.metrics().core };
};
ready.then(() => {
  const poll = () => (handle.state() === 'leader' ? report({ ok: true }) : setTimeout(poll, 20));
  poll();
}, (error) => report({ error: error.message, code: error.code }));
`;

/** The built package plus a page that uses it; `withWasm: false` leaves the wasm out (a 404). */
function makeSite({ withWasm }) {
  rmSync(site, { recursive: true, force: true });
  mkdirSync(site, { recursive: true });
  for (const f of readdirSync(dist)) {
    if (f.endsWith('.js') || (withWasm && f.endsWith('.wasm'))) copyFileSync(path.join(dist, f), path.join(site, f));
  }
  writeFileSync(path.join(site, 'index.html'), '<!doctype html><meta charset="utf-8"><title>core load</title><script type="module" src="page.js"></script>\n');
  writeFileSync(path.join(site, 'page.js'), PAGE);
}

async function open(browser, options) {
  const server = await serve(site, options);
  const tab = await browser.openTab(server.url);
  try {
    const result = await tab.page.waitForFunction(() => window.__result, null, { timeout: 60_000, polling: 50 });
    return { ...(await result.jsonValue()), imported: await tab.page.evaluate(() => window.__imported === true) };
  } finally {
    await tab.page.close().catch(() => {});
    await server.close();
  }
}

test('a failed core load rejects ready, names the fix, and never throws at import', { timeout: 240_000 }, async (t) => {
  assert.ok(existsSync(path.join(dist, 'baton-core.wasm')), 'build first: ./toolchain/build.sh');
  const browser = await launchBrowser();
  try {
    await t.test("CSP with 'wasm-unsafe-eval': loads and elects (the control)", async () => {
      makeSite({ withWasm: true });
      const r = await open(browser, { csp: "script-src 'self' 'wasm-unsafe-eval'" });
      assert.equal(r.error, undefined, r.error);
      assert.equal(r.state, 'leader');
      assert.deepEqual(r.support, { state: 'ready', error: null });
    });

    await t.test("strict CSP (script-src 'self'): ready rejects naming 'wasm-unsafe-eval'", async () => {
      makeSite({ withWasm: true });
      const r = await open(browser, { csp: "script-src 'self'" });
      assert.equal(r.imported, true, 'the import did not throw');
      assert.equal(r.code, 'CORE_LOAD_FAILED');
      assert.match(r.error, /add 'wasm-unsafe-eval' to script-src/);
      assert.equal(r.support.state, 'failed');
      assert.equal(r.support.error, r.error);
      assert.deepEqual(r.metrics, r.support);
      assert.equal(r.state, 'follower');
    });

    await t.test('wasm not served (404): ready rejects naming where to serve it', async () => {
      makeSite({ withWasm: false });
      const r = await open(browser, {});
      assert.equal(r.imported, true, 'the import did not throw');
      assert.equal(r.code, 'CORE_LOAD_FAILED');
      assert.match(r.error, /baton-core\.wasm/);
      assert.match(r.error, /HTTP 404/);
      assert.match(r.error, /serve node_modules\/tab-baton\/dist\/baton-core\.wasm/);
      assert.equal(r.support.state, 'failed');
      assert.equal(r.state, 'follower');
    });
  } finally {
    await browser.close();
    rmSync(site, { recursive: true, force: true });
  }
});
