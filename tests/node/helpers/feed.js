// A numbered event stream for the relay tests: `push(n)` appends events 1, 2, 3, ... and
// hands them to every open reader; `source` is a relay source that first replays what lies
// after the id it is given (null: nothing, it starts at the head), then follows live.
export function createFeed({ data = (id) => ({ n: id }) } = {}) {
  const events = [];
  const readers = new Set();
  const opens = [];
  return {
    opens,
    events,
    /** Readers open now. */
    open: () => readers.size,
    push(count = 1) {
      for (let i = 0; i < count; i += 1) {
        const event = { id: events.length + 1, data: data(events.length + 1) };
        events.push(event);
        for (const reader of readers) reader(event);
      }
    },
    source(after, emit, signal) {
      opens.push(after);
      const reader = (event) => emit(event);
      const from = after === null ? events.length : after;
      setTimeout(() => {
        if (signal.aborted) return;
        emit.heartbeat();
        for (const event of events.slice(from)) emit(event);
        readers.add(reader);
      }, 0);
      signal.addEventListener('abort', () => readers.delete(reader), { once: true });
    },
  };
}

/** True when `ids` is a run of consecutive integers. */
export function contiguous(ids) {
  return ids.every((id, i) => i === 0 || id === ids[i - 1] + 1);
}
