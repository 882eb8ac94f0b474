// GET /stream: a Server-Sent Events feed of numbered events.
//
// The feed is one deterministic, infinite sequence per interval: event n (n = 1, 2, 3, ...)
// becomes due at `startedAt + n * interval` and carries `data: {"n": n, "at": <that time, ms
// since the epoch>}` and `id: n`. The "global counter" is therefore just
// floor((now - startedAt) / interval): every client sees the same ids at the same times, and a
// client that resumes (Last-Event-ID header, or ?after=<id>) first receives every event after
// that id that is already due, in order, at once, then the live ones. Last-Event-ID wins over
// ?after because the browser sends it on reconnect while the URL still has the original ?after.
// Without either, the stream starts at the head: only events that become due from now on.
//
// Query: interval (ms, 10..60000, default from the server options, 200), after (id),
// retry (ms, reconnection delay announced with `retry:`, default 1000).
// A comment line (`: hb <time>`) is sent as a heartbeat every `heartbeatMs` (default 15000).

const clampInt = (value, min, max, fallback) => {
  const n = Number(value);
  if (value === null || value === undefined || value === '' || !Number.isFinite(n)) return fallback;
  return Math.min(max, Math.max(min, Math.floor(n)));
};

export function createSse({ startedAt = Date.now(), interval = 200, heartbeatMs = 15000, retryMs = 1000 } = {}) {
  const open = new Set();
  let total = 0;

  /** Highest id that is due now for this interval. */
  const head = (iv, now = Date.now()) => Math.max(0, Math.floor((now - startedAt) / iv));
  const frame = (n, iv) => `id: ${n}\ndata: ${JSON.stringify({ n, at: startedAt + n * iv })}\n\n`;

  function handle(req, res, url) {
    const iv = clampInt(url.searchParams.get('interval'), 10, 60000, interval);
    const retry = clampInt(url.searchParams.get('retry'), 0, 3600000, retryMs);
    const lastId = req.headers['last-event-id'];
    const resumeFrom = lastId !== undefined && lastId !== '' ? lastId : url.searchParams.get('after');
    let sent = clampInt(resumeFrom, 0, Number.MAX_SAFE_INTEGER, -1);
    if (sent < 0) sent = head(iv);

    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.socket?.setNoDelay(true);
    res.write(`retry: ${retry}\n: baton feed interval=${iv} after=${sent}\n\n`);

    const stream = { res, timer: null, heartbeat: null, closed: false };
    open.add(stream);
    total++;

    const flush = () => {
      if (stream.closed) return;
      const now = Date.now();
      const due = head(iv, now);
      if (due > sent) {
        let chunk = '';
        for (let n = sent + 1; n <= due; n++) {
          chunk += frame(n, iv);
          if (chunk.length > 65536) { res.write(chunk); chunk = ''; }
        }
        if (chunk) res.write(chunk);
        sent = due;
      }
      // Wake exactly when the next event is due (robust to timer drift).
      const nextAt = startedAt + (Math.max(sent, due) + 1) * iv;
      stream.timer = setTimeout(flush, Math.max(0, nextAt - now));
    };
    stream.heartbeat = setInterval(() => res.write(`: hb ${Date.now()}\n\n`), heartbeatMs);

    const cleanup = () => {
      if (stream.closed) return;
      stream.closed = true;
      clearTimeout(stream.timer);
      clearInterval(stream.heartbeat);
      open.delete(stream);
    };
    stream.close = () => { cleanup(); res.end(); };
    res.on('close', cleanup);
    req.on('close', cleanup);
    flush();
  }

  return {
    handle,
    head,
    stats: () => ({ openStreams: open.size, totalStreams: total }),
    resetCounters() { total = 0; },
    closeAll() { for (const s of [...open]) s.close(); },
  };
}
