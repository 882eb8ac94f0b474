// The long chaos run in real Chromium (the short one is tests/browser/chaos.test.js):
// several seeds, many random actions each, over 8 demo tabs. Prints the figures of each
// seed and their totals: stale effects accepted, epochs with two owners, events missed
// or duplicated (all must be 0), the longest leaderless time and the hand-overs.
//   node bench/chaos.mjs [seeds] [actions per seed]   (default 3 seeds x 60 actions)
import { startServer } from '../web-demo/server.js';
import { runChaos } from '../tests/browser/chaos.js';

const seeds = Number(process.argv[2] ?? 3);
const actions = Number(process.argv[3] ?? 60);
const server = await startServer({ port: 0 });
const totals = { actions: 0, handovers: 0, longestLeaderlessMs: 0, missed: 0, duplicates: 0, staleAccepted: 0, sameEpochOwners: 0, staleRejected: 0, accepted: 0, openFailures: 0 };
try {
  for (let seed = 1; seed <= seeds; seed += 1) {
    const f = await runChaos({ server, seed, actions });
    console.log(`seed ${seed}: ${JSON.stringify(f)}`);
    for (const key of Object.keys(totals)) {
      totals[key] = key === 'longestLeaderlessMs' ? Math.max(totals[key], f[key]) : totals[key] + f[key];
    }
  }
} finally {
  server.close();
}
console.log(`chaos totals (${seeds} seeds x ${actions} actions): ${JSON.stringify(totals)}`);
const bad = totals.staleAccepted + totals.sameEpochOwners + totals.missed + totals.duplicates;
process.exitCode = bad === 0 ? 0 : 1;
