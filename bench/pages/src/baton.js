// Bench page entry: Baton (tab-baton, the built package: dist/index.js with the wasm inside).
// Query: ns, authority (auto | web-locks | lease | broadcast), heartbeatMs, suspectMs, leaseMs.
// Baton releases in pagehide by itself (its own listener); nothing to add here.
import { createBaton } from 'tab-baton';

const bench = window.__bench;
bench.entryAt = performance.now();
const q = new URLSearchParams(location.search);
const options = { namespace: `bench/${q.get('ns') || 'default'}`, authority: q.get('authority') || 'auto' };
for (const key of ['heartbeatMs', 'suspectMs', 'leaseMs']) if (q.has(key)) options[key] = Number(q.get(key));

const requestedAt = bench.now();
const baton = createBaton(options);
const handle = baton.lead('leader');
handle.onChange((change) => {
  if (change.type === 'elected') bench.elected();
  else if (change.type === 'deposed') bench.deposed(change.reason);
});
window.__batonHandle = handle;
window.__baton_ = baton;
bench.setup({
  lib: 'baton',
  mode: baton.support().mode,
  requestedAt,
  isLeader: () => handle.state() === 'leader',
  epoch: () => handle.token()?.epoch ?? null,
  release: null,
  diag: () => ({ state: handle.state(), leader: handle.leader()?.id ?? null, log: baton.log().slice(-8), metrics: baton.metrics() }),
});
