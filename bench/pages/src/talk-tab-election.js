// Bench page entry (phase requests): tab-election's `call`, as its README shows it. Every
// tab waits for leadership and returns an echo API that says which tab answered, except with
// ?candidate=0 (the tab that asks, never the leader: its README's "never the leader" tab);
// window.__talk.ask(message, timeoutMs) is `tab.call('echo', message)`, given the same
// timeout as Baton's request (tab-election's own is 30 s) so that a lost call is counted.
import { Tab } from 'tab-election';

const bench = window.__bench;
bench.entryAt = performance.now();
const q = new URLSearchParams(location.search);
const requestedAt = bench.now();
const tab = new Tab(`bench/${q.get('ns') || 'default'}`);
if (q.get('candidate') !== '0') tab.waitForLeadership(() => {
  bench.elected();
  return { echo: (message) => ({ echo: message, by: bench.id }) };
});
window.__talk = {
  ask: (message, timeoutMs) => new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    tab.call('echo', message).then(resolve, reject).finally(() => clearTimeout(timer));
  }),
};
bench.setup({
  lib: 'tab-election',
  mode: 'web-locks',
  requestedAt,
  isLeader: () => tab.isLeader,
  release: () => tab.close(),
});
