// Bench page entry: tab-election's Tab (npm tab-election, bundled as is). Web Locks only:
// it has no fallback (without navigator.locks its constructor's lock request throws).
import { Tab } from 'tab-election';

const bench = window.__bench;
bench.entryAt = performance.now();
const q = new URLSearchParams(location.search);
const requestedAt = bench.now();
const tab = new Tab(`bench/${q.get('ns') || 'default'}`);
tab.waitForLeadership(() => { bench.elected(); });
bench.setup({
  lib: 'tab-election',
  mode: 'web-locks',
  requestedAt,
  isLeader: () => tab.isLeader,
  release: () => tab.close(),
});
