// Bench page entry: broadcast-channel's LeaderElection (npm broadcast-channel, bundled as is).
// With navigator.locks it uses LeaderElectionWebLock; with ?locks=off, its fallback elector
// (apply/tell messages, fallbackInterval 3000 ms, responseTime 150 ms for the native method).
// The library releases in beforeunload by itself (the `unload` package); die() in pagehide as well.
import { BroadcastChannel, createLeaderElection } from 'broadcast-channel';

const bench = window.__bench;
bench.entryAt = performance.now();
const q = new URLSearchParams(location.search);
const requestedAt = bench.now();
const channel = new BroadcastChannel(`bench/${q.get('ns') || 'default'}`);
const elector = createLeaderElection(channel);
elector.awaitLeadership().then(() => bench.elected());
bench.setup({
  lib: 'broadcast-channel',
  mode: navigator.locks ? 'web-locks' : 'fallback',
  requestedAt,
  isLeader: () => elector.isLeader,
  release: () => { elector.die(); },
});
