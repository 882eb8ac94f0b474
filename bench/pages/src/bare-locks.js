// Bench page entry: the physical limit, a bare navigator.locks hand-over. Every tab queues on
// one exclusive lock and holds it until pagehide.
const bench = window.__bench;
bench.entryAt = performance.now();
const q = new URLSearchParams(location.search);
let leader = false;
let release = null;
const requestedAt = bench.now();
navigator.locks.request(`bench-bare/${q.get('ns') || 'default'}`, () => {
  leader = true;
  bench.elected();
  return new Promise((resolve) => { release = resolve; });
});
bench.setup({
  lib: 'bare-locks',
  mode: 'web-locks',
  requestedAt,
  isLeader: () => leader,
  release: () => { leader = false; release?.(); },
});
