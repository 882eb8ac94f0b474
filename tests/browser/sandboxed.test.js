// A sandboxed iframe (`<iframe sandbox="allow-scripts" srcdoc>`, an opaque origin) running the
// packed package, in real Chromium. There navigator.locks exists but refuses every request
// with SecurityError, indexedDB.open throws SecurityError, localStorage throws, and
// BroadcastChannel works but reaches only that opaque origin. 'auto' must find this at first
// use, fall back to broadcast only, lead alone and say so in support() and metrics(); an
// explicit 'web-locks' is kept and says why it cannot lead. And a page whose lock manager
// never answers gives Web Locks up after the probe's deadline.
//
// An opaque origin loads modules with CORS: the package is served from a server of this
// test's own that answers with `access-control-allow-origin: *`.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { contentType } from '../../web-demo/server/static.js';
import { launchBrowser } from './harness.js';
import { waitFor } from './demo-helpers.js';
import { unpackPackage } from './packed.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const APP = path.join(HERE, 'artifacts', 'sandboxed');

/** Serves `dir` on 127.0.0.1 to any origin (an opaque one included); '/' is an empty page. */
async function corsServer(dir) {
  const server = http.createServer(async (req, res) => {
    const pathname = decodeURIComponent(new URL(req.url, 'http://127.0.0.1').pathname);
    const headers = { 'access-control-allow-origin': '*', 'cache-control': 'no-store' };
    if (pathname === '/') {
      res.writeHead(200, { ...headers, 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><meta charset="utf-8"><title>sandbox host</title>');
      return;
    }
    const file = path.join(dir, pathname);
    try {
      if (!file.startsWith(dir + path.sep)) throw new Error('outside');
      const body = await readFile(file);
      res.writeHead(200, { ...headers, 'content-type': contentType(file) });
      res.end(body);
    } catch {
      res.writeHead(404, headers);
      res.end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/`, close: () => new Promise((resolve) => server.close(resolve)) };
}

/**
 * The sandboxed frame's script: one Baton leading 'job' with `authority`, posting a
 * snapshot to the parent on every change and every 100 ms.
 */
function frameScript(packageUrl, name, authority) {
  return `
    const post = (data) => parent.postMessage({ name: ${JSON.stringify(name)}, ...data }, '*');
    try {
      const { createBaton, leaderElection } = await import(${JSON.stringify(packageUrl)});
      const baton = createBaton({ namespace: 'sandboxed', authority: ${JSON.stringify(authority)} });
      const handle = baton.lead('job');
      let fenced = null;
      const snapshot = () => {
        if (fenced === null && handle.state() === 'leader') {
          fenced = 'pending';
          handle.fenced(() => 'ran').then((value) => { fenced = value; }, (error) => { fenced = error.code; });
        }
        const metrics = baton.metrics();
        post({
          origin: self.origin,
          state: handle.state(),
          support: baton.support(),
          awaforgeSupport: leaderElection.support(),
          metrics: { mode: metrics.mode, degraded: metrics.degraded, degradedReason: metrics.degradedReason, generation: metrics.generation, glue: metrics.glue },
          fenced,
        });
      };
      handle.onChange(snapshot);
      setInterval(snapshot, 100);
    } catch (error) {
      post({ error: String(error && error.stack || error) });
    }
  `;
}

let server;
let browser;
let host;

before(async () => {
  unpackPackage(APP);
  server = await corsServer(APP);
  browser = await launchBrowser();
  host = await browser.openTab(server.url);
  await host.page.evaluate(() => {
    window.__frames = {};
    addEventListener('message', (event) => {
      window.__frames[event.data.name] = event.data;
    });
  });
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** Adds a sandboxed frame running `frameScript`; returns a function reading its latest snapshot. */
async function openFrame(name, authority) {
  const script = frameScript(`${server.url}tab-baton/dist/index.js`, name, authority);
  await host.page.evaluate(({ script }) => {
    const frame = document.createElement('iframe');
    frame.sandbox = 'allow-scripts';
    frame.srcdoc = `<script type="module">${script}<\/script>`;
    document.body.append(frame);
  }, { script });
  const read = () => host.page.evaluate((n) => window.__frames[n] ?? null, name);
  await waitFor(async () => (await read()) !== null, { timeoutMs: 30000, what: `${name} frame reports` });
  const first = await read();
  assert.equal(first.error, undefined, first.error);
  return read;
}

describe('a sandboxed srcdoc iframe with the packed package', { timeout: 120000 }, () => {
  it("'auto': Web Locks and IndexedDB refused at first use, each frame leads alone, broadcast only, degraded", async () => {
    const frames = [await openFrame('auto-1', 'auto'), await openFrame('auto-2', 'auto')];
    for (const read of frames) {
      await waitFor(async () => (await read()).state === 'leader' && (await read()).fenced !== 'pending', { timeoutMs: 20000, what: 'the frame leads' });
      const snap = await read();
      assert.equal(snap.origin, 'null', 'an opaque origin');
      const { support, metrics } = snap;
      assert.deepEqual(
        [support.webLocks, support.indexedDB, support.localStorage, support.broadcastChannel],
        [false, false, false, true],
        'refused APIs are not usable; the channel is',
      );
      assert.deepEqual([support.authority, support.mode, metrics.mode], ['broadcast', 'broadcast', 'broadcast']);
      assert.deepEqual([support.degraded, support.degradedReason], [true, 'web-locks-refused:SecurityError']);
      assert.deepEqual([metrics.degraded, metrics.degradedReason], [true, 'web-locks-refused:SecurityError']);
      assert.equal(
        support.reason,
        'navigator.locks refused (SecurityError); indexedDB refused (SecurityError): broadcast only; alone: an opaque origin shares its BroadcastChannel with no other tab',
      );
      assert.equal(metrics.glue.authorityFallbacks, 1);
      assert.deepEqual(snap.awaforgeSupport, { webLocks: false, broadcastChannel: true }, "awaforge's static support(): the locks refuse an opaque origin");
      assert.equal(snap.fenced, 'EPOCH_NOT_DURABLE', 'no store vouches for the epoch: the effect does not run');
    }
  });

  // The deadline itself is checked on a virtual clock in tests/node/hostile-env.test.js.
  it("a page whose navigator.locks never answers: 'auto' gives Web Locks up after the probe's deadline and leads broadcast only", async () => {
    const tab = await browser.openTab(server.url);
    const snap = await tab.page.evaluate(async (packageUrl) => {
      // The lock manager of this page never grants and never rejects.
      navigator.locks.request = () => new Promise(() => {});
      navigator.locks.query = () => new Promise(() => {});
      const { createBaton } = await import(packageUrl);
      const baton = createBaton({ namespace: 'hung-locks' });
      const handle = baton.lead('job');
      await new Promise((resolve) => handle.onChange((change) => change.type === 'elected' && resolve()));
      return { support: baton.support(), fenced: await handle.fenced(() => 'ran').catch((error) => error.code) };
    }, `${server.url}tab-baton/dist/index.js`);
    assert.deepEqual([snap.support.authority, snap.support.mode, snap.support.webLocks], ['broadcast', 'broadcast', false]);
    assert.equal(snap.support.degradedReason, 'web-locks-timeout');
    assert.equal(snap.support.reason, 'navigator.locks did not answer: broadcast only');
    assert.equal(snap.fenced, 'ran', 'the epoch is committed in IndexedDB');
    await tab.page.close();
  });

  // Chromium runs a timer that came due during a long task before a lock answer that arrived
  // during it: the probe's deadline passes first, yet the lock manager works.
  it("a long task right after the probe (a debugger pause, heavy start-up work): 'auto' keeps Web Locks", async () => {
    const tab = await browser.openTab(server.url);
    const snap = await tab.page.evaluate(async (packageUrl) => {
      const request = navigator.locks.request.bind(navigator.locks);
      navigator.locks.request = (name, options, callback) => {
        const pending = request(name, options, callback);
        if (options.ifAvailable) for (const end = performance.now() + 5500; performance.now() < end;);
        return pending;
      };
      const { createBaton } = await import(packageUrl);
      const baton = createBaton({ namespace: 'long-task' });
      const handle = baton.lead('job');
      // Elected by its lock, the probe's deadline can no longer give Web Locks up (a grant proves them).
      await new Promise((resolve) => handle.onChange((change) => change.type === 'elected' && resolve()));
      return baton.support();
    }, `${server.url}tab-baton/dist/index.js`);
    assert.deepEqual([snap.mode, snap.webLocks, snap.degradedReason], ['web-locks', true, null]);
    await tab.page.close();
  });

  it("an explicit 'web-locks' is kept: the frame does not lead and says why", async () => {
    const read = await openFrame('explicit', 'web-locks');
    await waitFor(async () => (await read()).support.webLocks === false, { timeoutMs: 20000, what: 'the refusal is reported' });
    const { support, metrics, state } = await read();
    assert.deepEqual([support.authority, support.mode, support.webLocks], ['web-locks', 'web-locks', false]);
    assert.equal(support.degradedReason, 'web-locks-refused:SecurityError');
    assert.match(support.reason, /navigator\.locks refused \(SecurityError\); indexedDB refused \(SecurityError\): kept/);
    assert.equal(metrics.glue.authorityFallbacks, 0);
    assert.ok(metrics.glue.lockErrors >= 1);
    assert.notEqual(state, 'leader');
  });
});
