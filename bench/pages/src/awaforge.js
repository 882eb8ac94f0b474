// Bench page entry: Baton's awaforge `leaderElection` API (tab-baton/awaforge), as an app that
// migrated from awaforge uses it. Query: ns, heartbeatMs, takeoverMs (its documented bound:
// takeover within takeoverMs + heartbeatMs). Without Web Locks (?locks=off) it runs on the
// fallback authority that `auto` picks. Baton releases in pagehide by itself.
import { leaderElection } from 'tab-baton/awaforge';
import { __internal } from 'tab-baton';

const bench = window.__bench;
bench.entryAt = performance.now();
const q = new URLSearchParams(location.search);
const options = { channel: `bench-awaforge/${q.get('ns') || 'default'}` };
for (const key of ['heartbeatMs', 'takeoverMs']) if (q.has(key)) options[key] = Number(q.get(key));

const requestedAt = bench.now();
const election = leaderElection.create(options);
election.onLeader(() => bench.elected());
election.onFollower(() => bench.deposed());
bench.setup({
  lib: 'awaforge',
  mode: leaderElection.support().webLocks ? 'web-locks' : 'fallback',
  requestedAt,
  isLeader: () => election.isLeader(),
  release: null,
  diag: () => ({ leader: election.leader()?.id ?? null, metrics: __internal.metricsOf(election) }),
});
