// A static file server on 127.0.0.1 for the bundler matrix and the core-load tests: serves
// one folder, with the MIME types browsers need (application/wasm for streaming), an
// optional Content-Security-Policy header, and no caching.
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css' };

/**
 * @param {string} dir the folder to serve
 * @param {{csp?: string}} [options]
 * @returns {Promise<{url: string, requests: string[], close: () => Promise<void>}>}
 */
export async function serve(dir, { csp } = {}) {
  const root = path.resolve(dir);
  const requests = [];
  const server = createServer(async (req, res) => {
    const pathname = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    requests.push(pathname);
    const file = path.resolve(root, `.${pathname.endsWith('/') ? `${pathname}index.html` : pathname}`);
    const headers = { 'cache-control': 'no-store', ...(csp ? { 'content-security-policy': csp } : {}) };
    if (file !== root && !file.startsWith(root + path.sep)) {
      res.writeHead(404, headers).end();
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { ...headers, 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404, { ...headers, 'content-type': 'text/plain' }).end('not found');
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/`,
    requests,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
