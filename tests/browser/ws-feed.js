// A numbered event feed over WebSocket for the relay tests (the demo server's /ws is an echo):
// event n is due at startedAt + n * interval; a client connecting with ?after=<id> first gets
// every due event after it, then the live ones, as JSON {id, data: {n}}; {type: 'heartbeat'}
// every heartbeatMs. `stall()` makes every open connection silent (no events, no heartbeats)
// while keeping it open: a leader that is alive but whose source went quiet.
import http from 'node:http';
import { WebSocketServer } from 'ws';

export async function startWsFeed({ interval = 100, heartbeatMs = 300 } = {}) {
  const startedAt = Date.now();
  const head = () => Math.floor((Date.now() - startedAt) / interval);
  const server = http.createServer((req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server });
  const clients = new Set();
  const connections = [];

  wss.on('connection', (socket, req) => {
    const url = new URL(req.url, 'http://localhost');
    const raw = url.searchParams.get('after');
    const after = raw === null || raw === '' ? null : Number(raw);
    const client = { socket, sent: after ?? head(), stalled: false, timer: null, beat: null };
    connections.push({ after, at: Date.now() });
    clients.add(client);
    const flush = () => {
      if (client.stalled || socket.readyState !== 1) return;
      const due = head();
      while (client.sent < due) {
        client.sent += 1;
        socket.send(JSON.stringify({ id: client.sent, data: { n: client.sent } }));
      }
    };
    flush();
    client.timer = setInterval(flush, Math.max(10, interval / 2));
    client.beat = setInterval(() => {
      if (!client.stalled && socket.readyState === 1) socket.send(JSON.stringify({ type: 'heartbeat' }));
    }, heartbeatMs);
    const done = () => {
      clearInterval(client.timer);
      clearInterval(client.beat);
      clients.delete(client);
    };
    socket.on('close', done);
    socket.on('error', done);
  });

  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `ws://127.0.0.1:${port}/feed`,
    /** Open connections, and every connection made so far with its `after`. */
    stats: () => ({ open: clients.size, connections: connections.map((c) => ({ ...c })) }),
    /** Silences every connection open now (they stay open). */
    stall() {
      for (const c of clients) c.stalled = true;
    },
    async close() {
      for (const c of clients) c.socket.terminate();
      await new Promise((resolve) => wss.close(() => resolve()));
      await new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
