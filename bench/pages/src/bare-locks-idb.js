// Bench page entry: the floor of a fenced hand-over, a bare navigator.locks hand-over whose
// next holder commits one IndexedDB read-write transaction before it calls itself the leader:
// a read and a write sent together and committed at once (one trip to the store, relaxed
// durability), as Baton's one-trip epoch allocation. Every
// tab opens the database first and keeps it open (as Baton keeps it warm). The store is named
// `epochs`, as Baton's, so that a traced run (?trace=1) splits the transaction the same way.
// Beside `bare-locks` it shows what one trip to the store costs in the hand-over, Baton aside.
const bench = window.__bench;
bench.entryAt = performance.now();
const q = new URLSearchParams(location.search);
const ns = q.get('ns') || 'default';
const db = await new Promise((resolve, reject) => {
  const open = indexedDB.open(`bench-bare-idb/${ns}`, 1);
  open.onupgradeneeded = () => open.result.createObjectStore('epochs');
  open.onsuccess = () => resolve(open.result);
  open.onerror = () => reject(open.error);
});
let leader = false;
let release = null;
const requestedAt = bench.now();
navigator.locks.request(`bench-bare-idb/${ns}`, () => {
  const tx = db.transaction(['epochs'], 'readwrite', { durability: 'relaxed' });
  const epochs = tx.objectStore('epochs');
  epochs.get('top');
  epochs.put(Date.now(), 'top');
  tx.commit?.();
  tx.oncomplete = () => {
    leader = true;
    bench.elected();
  };
  return new Promise((resolve) => { release = resolve; });
});
bench.setup({
  lib: 'bare-locks-idb',
  mode: 'web-locks',
  requestedAt,
  isLeader: () => leader,
  release: () => { leader = false; release?.(); },
});
