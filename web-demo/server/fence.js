// POST /fenced: a guarded side effect, fenced by epoch (DESIGN.md invariant 1) with the
// package's own server fence (tab-baton/server, ServerFence).
//
// Body: JSON {resource, epoch, owner, effect}. Per resource the highest accepted epoch is kept;
// an attempt is accepted (200 {ok: true, highest}) if its epoch >= highest, else rejected with
// 409 {ok: false, error: 'STALE_OWNER', highest}. Malformed bodies get 400 {ok: false,
// error: 'BAD_REQUEST'} and are not counted as fenced attempts. Every fenced attempt,
// accepted or rejected, is appended to the log (the last LOG_LIMIT are kept).
// The body is parsed as JSON whatever its content type, so navigator.sendBeacon (text/plain)
// works too.
// Effectively once: an accepted effect {ops: [id, ...]} (the offline queue's batch) applies
// each operation id once per resource; the answer says how many were applied and which ids
// it had applied already (a batch sent again by the next leader after a crash).

import { ServerFence } from 'tab-baton/server';

export const LOG_LIMIT = 5000;
const MAX_BODY = 64 * 1024;

export function createFence() {
  let fence = new ServerFence();
  const resources = new Set();
  let log = [];
  let accepted = 0;
  let rejected = 0;
  let seq = 0;
  let appliedOps = new Map(); // resource -> Set of operation ids applied
  let repeatedOps = 0;

  /** Applies the operations of an accepted effect once each: {applied, repeated: [ids]}. */
  function applyOps(resource, ops) {
    if (!appliedOps.has(resource)) appliedOps.set(resource, new Set());
    const applied = appliedOps.get(resource);
    const repeated = ops.filter((id) => applied.has(id));
    for (const id of ops) applied.add(id);
    for (const id of applied) { // bounded like the log: the oldest ids are forgotten first
      if (applied.size <= LOG_LIMIT) break;
      applied.delete(id);
    }
    repeatedOps += repeated.length;
    return { applied: ops.length - repeated.length, repeated };
  }

  /** Decides one attempt; pure apart from the fence state. Returns {status, body}. */
  function attempt({ resource, epoch, owner = null, effect = null }) {
    let ok;
    try {
      ok = fence.admit({ resource, epoch });
    } catch {
      return { status: 400, body: { ok: false, error: 'BAD_REQUEST' } };
    }
    resources.add(resource);
    if (ok) accepted++; else rejected++;
    const now = fence.highest(resource);
    log.push({ seq: ++seq, at: Date.now(), resource, epoch, owner, effect, ok, highest: now });
    if (log.length > LOG_LIMIT) log = log.slice(-LOG_LIMIT);
    const ops = Array.isArray(effect?.ops) && effect.ops.every((id) => typeof id === 'string') ? effect.ops : null;
    return ok
      ? { status: 200, body: { ok: true, highest: now, ...(ops ? applyOps(resource, ops) : {}) } }
      : { status: 409, body: { ok: false, error: 'STALE_OWNER', highest: now } };
  }

  function handle(req, res) {
    const send = (status, body) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
      res.end(JSON.stringify(body));
    };
    let size = 0;
    const chunks = [];
    let tooLarge = false;
    req.on('data', (c) => {
      size += c.length;
      if (size > MAX_BODY) { tooLarge = true; return; }
      chunks.push(c);
    });
    req.on('end', () => {
      if (tooLarge) return send(413, { ok: false, error: 'TOO_LARGE' });
      let msg;
      try {
        msg = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return send(400, { ok: false, error: 'BAD_REQUEST' });
      }
      if (!msg || typeof msg !== 'object') return send(400, { ok: false, error: 'BAD_REQUEST' });
      const { status, body } = attempt(msg);
      send(status, body);
    });
  }

  return {
    handle,
    attempt,
    stats: () => ({
      fenced: { accepted, rejected, highest: Object.fromEntries([...resources].map((r) => [r, fence.highest(r)])) },
      ops: { applied: Object.fromEntries([...appliedOps].map(([r, ids]) => [r, [...ids]])), repeated: repeatedOps },
      log: log.slice(),
    }),
    reset() { fence = new ServerFence(); resources.clear(); log = []; accepted = 0; rejected = 0; appliedOps = new Map(); repeatedOps = 0; },
  };
}
