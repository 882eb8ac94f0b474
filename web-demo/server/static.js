// Static files for the demo server: a few mount points, correct content types,
// no caching, no path traversal, a readable 404.
import { promises as fs } from 'node:fs';
import path from 'node:path';

export const CONTENT_TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.cjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
};

export function contentType(file) {
  return CONTENT_TYPES[path.extname(file).toLowerCase()] || 'application/octet-stream';
}

const escapeHtml = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function sendNotFound(res, pathname, hint = '') {
  const body = `<!doctype html><meta charset="utf-8"><title>404 Not Found</title>
<h1>404 Not Found</h1>
<p><code>${escapeHtml(pathname)}</code> does not exist on this Baton demo server.</p>
${hint ? `<p>${hint}</p>` : ''}
<p>Served here: <code>/</code> and <code>/web-demo/*</code> (demo page),
<code>/tab-baton/*</code> (built package, js-glue/dist), <code>/bench/*</code> (benchmark pages),
<code>/test-pages/*</code> (browser test pages), <code>GET /stream</code> (SSE),
<code>/ws</code> (WebSocket echo), <code>POST /fenced</code>, <code>GET /stats</code>, <code>POST /reset</code>.</p>
`;
  res.writeHead(404, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(body);
}

/**
 * Creates a static handler over mounts: [{prefix: '/tab-baton/', dir, index?}].
 * Returns async (req, res, pathname) => boolean (true when the request was handled).
 */
export function createStatic(mounts) {
  // Longest prefix first, so '/web-demo/' wins over '/'.
  const sorted = [...mounts].sort((a, b) => b.prefix.length - a.prefix.length);

  return async function serveStatic(req, res, pathname) {
    const mount = sorted.find((m) => pathname === m.prefix.replace(/\/$/, '') || pathname.startsWith(m.prefix));
    if (!mount) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
      res.end('Method Not Allowed\n');
      return true;
    }
    if (pathname === mount.prefix.replace(/\/$/, '') && mount.prefix !== '/') {
      res.writeHead(301, { location: mount.prefix });
      res.end();
      return true;
    }
    let rel;
    try {
      rel = decodeURIComponent(pathname.slice(mount.prefix.length));
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('Bad Request\n');
      return true;
    }
    const root = path.resolve(mount.dir);
    let file = path.resolve(root, '.' + path.sep + rel);
    if (rel.includes('\0') || (file !== root && !file.startsWith(root + path.sep))) {
      sendNotFound(res, pathname);
      return true;
    }
    try {
      let st = await fs.stat(file);
      if (st.isDirectory()) {
        if (!pathname.endsWith('/')) {
          res.writeHead(301, { location: pathname + '/' });
          res.end();
          return true;
        }
        file = path.join(file, 'index.html');
        st = await fs.stat(file);
      }
      if (!st.isFile()) throw Object.assign(new Error('not a file'), { code: 'ENOENT' });
      const body = await fs.readFile(file);
      res.writeHead(200, {
        'content-type': contentType(file),
        'content-length': body.length,
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    } catch (err) {
      if (err.code !== 'ENOENT' && err.code !== 'ENOTDIR') throw err;
      sendNotFound(res, pathname, mount.missingHint ? mount.missingHint(file) : '');
    }
    return true;
  };
}
