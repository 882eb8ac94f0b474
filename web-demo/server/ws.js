// /ws: WebSocket echo (text stays text, binary stays binary), counting connections.
import { WebSocketServer } from 'ws';

export function createEcho() {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 1 << 20 });
  let total = 0;

  wss.on('connection', (socket) => {
    total++;
    socket.on('message', (data, isBinary) => socket.send(data, { binary: isBinary }));
    socket.on('error', () => {});
  });

  return {
    /** For the http server's 'upgrade' event on /ws. */
    upgrade(req, socket, head) {
      wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
    },
    stats: () => ({ openSockets: wss.clients.size, totalSockets: total }),
    resetCounters() { total = 0; },
    closeAll() {
      for (const ws of wss.clients) ws.terminate();
      return new Promise((resolve) => wss.close(() => resolve()));
    },
  };
}
