#!/usr/bin/env node
// Baton demo server: static files, an SSE feed (for the relay), a WebSocket echo and a fenced
// endpoint, bound to 127.0.0.1 (a secure context, so navigator.locks exists there).
//
//   node web-demo/server.js [--port N]       (or PORT=N; default 8080; 0 picks a free port)
//
// In-process (tests):
//   const srv = await startServer({ port: 0 });  // -> { url, port, stats(), close() }
//
// Routes
//   GET  /                 web-demo/index.html (use absolute URLs in it: /web-demo/..., /tab-baton/...)
//   GET  /web-demo/*       web-demo/
//   GET  /tab-baton/*      js-glue/dist/ (the built package, wasm served as application/wasm)
//   GET  /bench/*          bench/pages/ (if it exists)
//   GET  /test-pages/*     tests/browser/pages/ (browser test pages)
//   GET  /stream           Server-Sent Events, see server/sse.js
//   WS   /ws               WebSocket echo
//   POST /fenced           fenced side effect, see server/fence.js
//   GET  /stats            counters as JSON; POST /reset resets counters, fence state and log
// Everything is served with `cache-control: no-store`.
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createStatic, sendNotFound } from './server/static.js';
import { createSse } from './server/sse.js';
import { createFence } from './server/fence.js';
import { createEcho } from './server/ws.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const HOST = '127.0.0.1';

/**
 * Starts the server. Options: port (0 = free port; default 8080), root (repository root;
 * default the parent of web-demo/), interval (default SSE interval ms, 200), heartbeatMs
 * (SSE comment heartbeat, 15000), mounts (extra static mounts: {'/prefix/': dir}).
 * Resolves to {url, port, stats(), reset(), close()}.
 */
export async function startServer({ port = 8080, root = path.resolve(HERE, '..'), interval = 200, heartbeatMs = 15000, mounts = {} } = {}) {
  const sse = createSse({ interval, heartbeatMs });
  const fence = createFence();
  const echo = createEcho();
  const demoDir = path.join(root, 'web-demo');
  const serveStatic = createStatic([
    {
      prefix: '/web-demo/', dir: demoDir,
      missingHint: (file) => (file === path.join(demoDir, 'index.html') ? 'The demo page (web-demo/index.html) is not written yet.' : ''),
    },
    {
      prefix: '/tab-baton/', dir: path.join(root, 'js-glue', 'dist'),
      missingHint: () => 'The package is not built yet (js-glue/dist/ is filled by the wasm build).',
    },
    { prefix: '/bench/', dir: path.join(root, 'bench', 'pages') },
    { prefix: '/test-pages/', dir: path.join(root, 'tests', 'browser', 'pages') },
    ...Object.entries(mounts).map(([prefix, dir]) => ({ prefix, dir })),
  ]);

  const stats = () => ({ ...sse.stats(), ...echo.stats(), ...fence.stats() });
  const reset = () => { sse.resetCounters(); echo.resetCounters(); fence.reset(); };

  const json = (res, status, body) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
    res.end(JSON.stringify(body));
  };
  const methodNotAllowed = (res, allow) => {
    res.writeHead(405, { allow, 'content-type': 'text/plain; charset=utf-8' });
    res.end('Method Not Allowed\n');
  };

  async function route(req, res) {
    const url = new URL(req.url, `http://${HOST}`);
    const p = url.pathname;
    if (p === '/stream') return req.method === 'GET' ? sse.handle(req, res, url) : methodNotAllowed(res, 'GET');
    if (p === '/fenced') return req.method === 'POST' ? fence.handle(req, res) : methodNotAllowed(res, 'POST');
    if (p === '/stats') return req.method === 'GET' ? json(res, 200, stats()) : methodNotAllowed(res, 'GET');
    if (p === '/reset') {
      if (req.method !== 'POST') return methodNotAllowed(res, 'POST');
      req.resume();
      reset();
      return json(res, 200, { ok: true });
    }
    if (p === '/ws') {
      res.writeHead(426, { 'content-type': 'text/plain; charset=utf-8', upgrade: 'websocket' });
      return res.end('Upgrade Required: /ws is a WebSocket endpoint\n');
    }
    if (p === '/') {
      if (await serveStatic(req, res, '/web-demo/')) return;
    }
    if (await serveStatic(req, res, p)) return;
    sendNotFound(res, p);
  }

  const server = http.createServer((req, res) => {
    route(req, res).catch((err) => {
      if (!res.headersSent) json(res, 500, { ok: false, error: 'INTERNAL', message: String(err?.message || err) });
      else res.destroy(err);
    });
  });
  server.on('upgrade', (req, socket, head) => {
    const { pathname } = new URL(req.url, `http://${HOST}`);
    if (pathname === '/ws') return echo.upgrade(req, socket, head);
    socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
  });

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, HOST, () => { server.off('error', reject); resolve(); });
  });
  const actualPort = server.address().port;

  let closing = null;
  return {
    url: `http://${HOST}:${actualPort}/`,
    port: actualPort,
    stats,
    reset,
    close() {
      closing ??= (async () => {
        sse.closeAll();
        await echo.closeAll();
        const done = new Promise((resolve) => server.close(() => resolve()));
        server.closeAllConnections?.();
        await done;
      })();
      return closing;
    },
  };
}

function parsePort(argv, env) {
  const i = argv.findIndex((a) => a === '--port' || a.startsWith('--port='));
  const raw = i < 0 ? env.PORT : argv[i].includes('=') ? argv[i].split('=')[1] : argv[i + 1];
  if (raw === undefined || raw === '') return 8080;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid port: ${raw}`);
  return port;
}

const isMain = process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href;
if (isMain) {
  const srv = await startServer({ port: parsePort(process.argv.slice(2), process.env) });
  console.log(`Baton demo: ${srv.url}`);
  const stop = () => srv.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
