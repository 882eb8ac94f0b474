// Commands through the leader's WebSocket: any tab asks the leader of websocket-owner
// (baton.request); the leader sends the command over its one socket and answers once the
// server acknowledged it (the echo of the command comes back on the socket). A request in
// flight when the leader closes, crashes or freezes is re-sent to the next leader with the
// same id, so the id is what a server would deduplicate on.
//
//   const commands = createCommands({ baton, myId, changed });
//   baton.lead('websocket-owner', { accept: commands.accept, serve: commands.serve, run(...) {
//     ... commands.useSocket(socket) once open, commands.onSocketMessage(data) for each message
//   } });
//   commands.send('hello')   // from any tab

const MAX_TEXT = 200;

export function createCommands({ baton, myId, changed }) {
  let socket = null; // this tab's open socket while it leads websocket-owner
  const socketWaiters = new Set(); // serve() calls waiting for the socket to open
  const acks = new Map(); // command id -> resolve, until the server echoes the command
  const sent = []; // this tab's commands, newest last: {id, text, state, by, epoch, ms, error}
  let served = 0; // commands this tab sent over its socket as the leader

  /** Resolves with the open socket, or rejects when the term ends first. */
  function openSocket(signal) {
    if (socket) return Promise.resolve(socket);
    return new Promise((resolve, reject) => {
      const waiter = { resolve, reject };
      socketWaiters.add(waiter);
      signal.addEventListener('abort', () => {
        socketWaiters.delete(waiter);
        reject(signal.reason);
      });
    });
  }

  return {
    /** The leader refuses anything but a short text command (a follower cannot send arbitrary frames). */
    accept: (message) => message !== null && typeof message === 'object' && message.kind === 'command'
      && typeof message.text === 'string' && message.text.length <= MAX_TEXT,

    /** Runs in the leader: sends the command over the socket, answers with the server's ack. */
    async serve(message, from, token, signal) {
      const open = await openSocket(signal);
      const acked = new Promise((resolve) => acks.set(from.requestId, resolve));
      open.send(JSON.stringify({ kind: 'command', id: from.requestId, text: message.text, from: from.tab, epoch: token.epoch }));
      served += 1;
      changed();
      await acked;
      return { ackedBy: myId, epoch: token.epoch };
    },

    /** The leader's socket opened (null: closed). */
    useSocket(open) {
      socket = open;
      if (!open) return;
      for (const waiter of socketWaiters) waiter.resolve(open);
      socketWaiters.clear();
    },

    /** A message on the leader's socket; true when it was a command's ack. */
    onSocketMessage(data) {
      if (data?.kind !== 'command') return false;
      acks.get(data.id)?.();
      acks.delete(data.id);
      return true;
    },

    /** Sends a command from this tab (any tab) to the leader; records what came back. */
    async send(text) {
      const started = performance.now();
      const entry = { id: null, text, state: 'waiting', by: null, epoch: null, ms: null, error: null };
      sent.push(entry);
      if (sent.length > 20) sent.shift();
      const id = `${myId}-${Date.now().toString(36)}-${sent.length}`;
      entry.id = id;
      changed();
      try {
        const answer = await baton.request('websocket-owner', { kind: 'command', text }, { id, timeoutMs: 10000, full: true });
        Object.assign(entry, { state: 'acked', by: answer.value.ackedBy, epoch: answer.epoch });
      } catch (error) {
        Object.assign(entry, { state: 'failed', error: error.code || error.message });
      }
      entry.ms = Math.round(performance.now() - started);
      changed();
      return entry;
    },

    stats: () => ({ sent: sent.map((e) => ({ ...e })), served }),
  };
}
