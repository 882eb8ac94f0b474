// The offline queue (seed 000, section 21): every tab adds operations to one queue in
// IndexedDB; the leader of offline-queue flushes it to the server in batches. Each step is
// fenced where it lands, so a leader that froze mid-flush and wakes up after a newer leader
// took over can change nothing:
//   1. mark a batch in flight with its epoch   fencedTransaction (tab-baton/fenced-idb)
//   2. send it to POST /fenced                  the server's fence (tab-baton/server)
//   3. delete the sent operations               fencedTransaction
// If the server refuses (409 STALE_OWNER: a newer leader wrote), the tab tries to put the
// batch back (fencedTransaction), which IndexedDB refuses too. A batch left in flight by a
// leader that closed or crashed is taken over by the next leader (a newer epoch) and sent
// again with the same operation ids: the server applies each id once.
//
// Query: stepMs, the pause after steps 1 and 2 (default 1500 ms, long enough to watch).
// Tests hold the flusher after a step with hold('marked' | 'sent'), and let it go on with
// hold(null), so that they freeze, close or crash it at a known point.
import { createFenceStore, fencedTransaction } from '/tab-baton/fenced-idb.js';

export const QUEUE_RESOURCE = 'offline-queue';
const BATCH = 5;
const STORE = 'ops';

function openDb(name) {
  return new Promise((resolve, reject) => {
    const open = indexedDB.open(name, 1);
    open.onupgradeneeded = () => {
      open.result.createObjectStore(STORE, { keyPath: 'id' });
      createFenceStore(open.result);
    };
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error);
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export async function createOfflineQueue({ baton, ns, myId, stepMs, note, changed }) {
  const db = await openDb(`baton-demo-queue/${ns}`);
  let seq = 0;
  const stats = {
    stage: 'idle', // this tab as the flusher: idle | marked (batch in flight) | sent (server applied it)
    epoch: null, // the term of the batch under way
    batch: [], // its operation ids
    batches: 0, // batches this tab flushed to the end
    applied: 0, // operations the server applied from this tab's batches
    repeated: 0, // operations it had applied already (the same id sent again)
    refusedByServer: 0,
    refusedByIdb: 0,
    queued: 0, // operations in the queue, as last read
    inFlight: 0,
  };
  // Adding operations wakes the flusher (in whichever tab it is); it also looks every few
  // seconds, and at the start of its term, for a batch a previous flusher left in flight.
  const wakeups = new BroadcastChannel(`baton-demo-queue/${ns}`);
  let wake = () => {};
  wakeups.onmessage = () => wake();
  const nap = () => new Promise((resolve) => {
    wake = resolve;
    setTimeout(resolve, 3000);
  });
  let holdAt = null;
  let release = () => {};
  /** The pause after a step: stepMs, and as long as a test holds the flusher there. */
  async function pause(stage) {
    await sleep(stepMs);
    while (holdAt === stage) await new Promise((resolve) => { release = resolve; });
  }
  const set = (fields) => {
    Object.assign(stats, fields);
    changed();
  };

  /** Reads the queue's size (any tab). */
  function count() {
    const read = db.transaction(STORE).objectStore(STORE).getAll();
    read.onsuccess = () => {
      const ops = read.result;
      set({ queued: ops.length, inFlight: ops.filter((op) => op.state === 'in-flight').length });
    };
  }

  /** Adds `n` operations (any tab; no fence: adding is not the leader's effect). */
  function enqueue(n) {
    const tx = db.transaction(STORE, 'readwrite');
    for (let i = 0; i < n; i += 1) {
      seq += 1;
      tx.objectStore(STORE).put({ id: `${myId}/${Date.now().toString(36)}/${seq}`, state: 'queued', epoch: 0 });
    }
    tx.oncomplete = () => {
      count();
      wakeups.postMessage('queued');
      wake();
    };
  }

  /** One batch: mark, send, delete. Keeps going with `token` even if the term ended meanwhile. */
  async function flushBatch(token) {
    const batch = await fencedTransaction(db, token, [STORE], (tx) => {
      const ids = [];
      const store = tx.objectStore(STORE);
      store.getAll().onsuccess = (event) => {
        // Queued operations, and those a closed, crashed or frozen leader left in flight.
        for (const op of event.target.result.filter((o) => o.epoch < token.epoch).slice(0, BATCH)) {
          store.put({ ...op, state: 'in-flight', epoch: token.epoch });
          ids.push(op.id);
        }
      };
      return ids;
    });
    if (batch.length === 0) return false;
    set({ stage: 'marked', epoch: token.epoch, batch });
    note(`offline-queue: ${batch.length} operations in flight (epoch ${token.epoch})`, 'io');
    await pause('marked');

    const res = await fetch('/fenced', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ resource: `${ns}/${QUEUE_RESOURCE}`, epoch: token.epoch, owner: myId, effect: { kind: 'flush', ops: batch } }),
    });
    const body = await res.json();
    if (!body.ok) {
      set({ refusedByServer: stats.refusedByServer + 1 });
      note(`offline-queue: the server REFUSED the batch (${body.error}: epoch ${token.epoch} < ${body.highest})`, 'bad');
      // Put the batch back for the next flush: a stale leader cannot, the newer term owns it.
      await fencedTransaction(db, token, [STORE], (tx) => {
        for (const id of batch) tx.objectStore(STORE).put({ id, state: 'queued', epoch: 0 });
      });
      return false;
    }
    set({ stage: 'sent', applied: stats.applied + body.applied, repeated: stats.repeated + body.repeated.length });
    note(`offline-queue: the server applied ${body.applied}${body.repeated.length ? `, and had ${body.repeated.length} already (same ids)` : ''} (epoch ${token.epoch})`, 'io');
    await pause('sent');

    await fencedTransaction(db, token, [STORE], (tx) => {
      for (const id of batch) tx.objectStore(STORE).delete(id);
    });
    set({ batches: stats.batches + 1 });
    return true;
  }

  async function flush(token, signal) {
    while (!signal.aborted) {
      try {
        if (!(await flushBatch(token))) await nap();
      } catch (error) {
        if (error.code !== 'STALE_OWNER') throw error;
        set({ refusedByIdb: stats.refusedByIdb + 1 });
        note(`offline-queue: IndexedDB REFUSED the stale epoch ${error.epoch} (newest ${error.highest})`, 'bad');
        return;
      } finally {
        set({ stage: 'idle', batch: [] });
        count();
      }
    }
  }

  const handle = baton.lead(QUEUE_RESOURCE, {
    run(token, signal) {
      flush(token, signal).catch((error) => note(`offline-queue: ${error.message}`, 'bad'));
    },
  });
  setInterval(count, 2000);
  count();

  return {
    handle,
    enqueue,
    hold(stage) {
      holdAt = stage;
      release();
    },
    stats: () => ({ ...stats, batch: [...stats.batch] }),
  };
}
