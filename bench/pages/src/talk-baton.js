// Bench page entry (phase requests): Baton's requests to the leader. Every tab leads 'api'
// with an echo `serve` that says which tab answered, except with ?candidate=0 (the tab that
// asks, never the leader); window.__talk.ask(message, timeoutMs) is `baton.request`. Bundled as the package is published (talk.js, which the package
// imports on first use, lands in the same bundle here).
import { createBaton } from 'tab-baton';

const bench = window.__bench;
bench.entryAt = performance.now();
const q = new URLSearchParams(location.search);
const requestedAt = bench.now();
const baton = createBaton({ namespace: `bench/${q.get('ns') || 'default'}` });
const handle = q.get('candidate') === '0' ? null : baton.lead('api', { serve: (message) => ({ echo: message, by: bench.id }) });
handle?.onChange((change) => {
  if (change.type === 'elected') bench.elected();
  else if (change.type === 'deposed') bench.deposed(change.reason);
});
window.__talk = {
  ask: (message, timeoutMs) => baton.request('api', message, { timeoutMs }),
};
bench.setup({
  lib: 'baton',
  mode: baton.support().mode,
  requestedAt,
  isLeader: () => handle?.state() === 'leader',
  epoch: () => handle?.token()?.epoch ?? null,
  release: null,
});
