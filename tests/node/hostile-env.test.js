// Environments that refuse: an opaque origin (a sandboxed iframe, a data: or blob: document)
// has navigator.locks, indexedDB and localStorage, but refuses them with SecurityError; a
// lock manager may also never answer. Creating a Baton or an elector there must not throw;
// 'auto' finds the refusal at first use and falls back to what works, an explicit authority
// is kept and says why it cannot lead, and support() and metrics() name the cause.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { __internal, createBaton, createLeaderElection, leaderElection, load } from 'tab-baton';
import { createBrowser } from 'tab-baton/testing';
import { waitFor } from './helpers/tabs.js';
import { settle, virtualClock } from './helpers/virtual-clock.js';

const denied = () => new DOMException('denied in an opaque origin', 'SecurityError');

/** A tab of `browser` whose BroadcastChannel constructor and localStorage throw. */
function opaqueTab(browser, id) {
  const env = { ...browser.tab(id), BroadcastChannel: class { constructor() { throw denied(); } } };
  Object.defineProperty(env, 'localStorage', { get() { throw denied(); }, enumerable: true });
  return env;
}

/** navigator.locks as an opaque origin has it: every request and query rejects. */
const refusingLocks = {
  request: () => Promise.reject(denied()),
  query: () => Promise.reject(denied()),
};

/** indexedDB as an opaque origin has it: open() throws. */
const refusingIndexedDB = {
  open() {
    throw denied();
  },
};

/** indexedDB as an opaque origin has it, answering late: open()'s request fails in a later task. */
const lateRefusingIndexedDB = {
  open() {
    const req = {};
    setTimeout(() => {
      req.error = denied();
      req.onerror?.();
    }, 0);
    return req;
  },
};

/** A lock manager that never answers: requests and queries stay pending for ever. */
function hangingLocks() {
  const calls = [];
  return {
    calls,
    request: (name, options) => {
      calls.push({ name, options });
      return new Promise(() => {});
    },
    query: () => new Promise(() => {}),
  };
}

/** A sandboxed iframe's tab: Web Locks, IndexedDB and localStorage refuse; the channel works. */
function sandboxedTab(browser, id) {
  const env = { ...browser.tab(id), locks: refusingLocks, indexedDB: refusingIndexedDB, origin: 'null' };
  Object.defineProperty(env, 'localStorage', { get() { throw denied(); }, enumerable: true });
  return env;
}

test('a BroadcastChannel constructor and localStorage that throw: nothing throws, the tab leads alone', async (t) => {
  const reported = [];
  // Reported, not thrown (Node 20 has no reportError: the package logs with console.error).
  t.mock.method(console, 'error', (error) => reported.push(error));
  const browser = createBrowser();
  const baton = createBaton({ namespace: 'opaque', env: opaqueTab(browser, 'a') });
  const handle = baton.lead('job', { serve: (message) => message + 1 });
  const elector = createLeaderElection('opaque-bc', { env: opaqueTab(browser, 'b') });
  try {
    await waitFor(() => handle.state() === 'leader');
    assert.equal(baton.support().broadcastChannel, false);
    assert.equal(baton.support().localStorage, false);
    assert.equal(await handle.fenced((token) => token.epoch), 1);
    assert.equal(await baton.request('job', 41), 42, 'a leader still answers its own tab');
    await elector.awaitLeadership();
    assert.ok(reported.length >= 2 && reported.every((error) => error.name === 'SecurityError'));
  } finally {
    baton.dispose();
    await elector.die();
  }
});

test('a localStorage whose every call throws (blocked site data) is reported unsupported; the tab leads durably', async () => {
  const browser = createBrowser();
  browser.localStorage.fail(true); // SecurityError on every call; the property itself reads fine
  const baton = createBaton({ namespace: 'blocked-storage', env: browser.tab('a') });
  try {
    const handle = baton.lead('job');
    assert.equal(baton.support().localStorage, false, 'd.ts: "localStorage exists and reading it does not throw"');
    await waitFor(() => handle.state() === 'leader');
    assert.equal(await handle.fenced((token) => token.epoch), 1, 'IndexedDB still makes the epoch durable');
  } finally {
    baton.dispose();
  }
});

test("a sandboxed iframe: 'auto' finds Web Locks and IndexedDB refused at first use and leads alone, broadcast only, degraded", async (t) => {
  const browser = createBrowser();
  const baton = createBaton({ namespace: 'sandboxed', env: sandboxedTab(browser, 'a') });
  t.after(() => baton.dispose());
  const handle = baton.lead('job');
  assert.equal(baton.support().webLocks, true, 'present: nothing is refused before the first use');
  await waitFor(() => handle.state() === 'leader');

  const support = baton.support();
  assert.equal(support.webLocks, false, 'refused: not usable');
  assert.equal(support.indexedDB, false, 'refused: not usable');
  assert.equal(support.localStorage, false);
  assert.equal(support.authority, 'broadcast');
  assert.equal(support.mode, 'broadcast');
  assert.equal(support.degraded, true);
  assert.equal(support.degradedReason, 'web-locks-refused:SecurityError');
  assert.match(support.reason, /navigator\.locks refused \(SecurityError\)/);
  assert.match(support.reason, /indexedDB refused \(SecurityError\)/);
  assert.match(support.reason, /: broadcast only; alone: an opaque origin shares its BroadcastChannel with no other tab$/);

  const metrics = baton.metrics();
  assert.equal(metrics.mode, 'broadcast');
  assert.equal(metrics.degraded, true);
  assert.equal(metrics.degradedReason, 'web-locks-refused:SecurityError');
  assert.equal(metrics.glue.authorityFallbacks, 1, 'one fallback: straight to broadcast, IndexedDB having refused too');
  assert.equal(metrics.generation, 2, 'the fallback runs as a new generation');

  // No store vouches for the epoch: the effect is refused, not run.
  await assert.rejects(handle.fenced(() => 'ran'), { code: 'EPOCH_NOT_DURABLE' });
});

test("a sandboxed iframe whose IndexedDB refuses after navigator.locks: one fallback, straight to broadcast", async (t) => {
  const browser = createBrowser();
  const env = sandboxedTab(browser, 'a');
  env.indexedDB = lateRefusingIndexedDB;
  const baton = createBaton({ namespace: 'sandboxed-late', env });
  t.after(() => baton.dispose());
  const handle = baton.lead('job');
  await waitFor(() => handle.state() === 'leader' && baton.support().indexedDB === false);
  const metrics = baton.metrics();
  assert.deepEqual([metrics.mode, metrics.glue.authorityFallbacks], ['broadcast', 1], 'an opaque origin never tries the lease');
});

test("Web Locks refused, IndexedDB working: 'auto' falls back to the lease, which still excludes a second leader", async (t) => {
  const browser = createBrowser();
  const tabs = ['a', 'b'].map((id) => {
    const baton = createBaton({ namespace: 'no-locks', id, env: { ...browser.tab(id), locks: refusingLocks } });
    t.after(() => baton.dispose());
    return { baton, handle: baton.lead('job') };
  });
  await waitFor(() => tabs.some((tab) => tab.handle.state() === 'leader') && tabs.every((tab) => tab.handle.leader()));
  for (const { baton } of tabs) {
    const support = baton.support();
    assert.deepEqual([support.authority, support.mode, support.webLocks, support.indexedDB], ['lease', 'lease', false, true]);
    assert.equal(support.degradedReason, 'web-locks-refused:SecurityError');
    assert.match(support.reason, /^navigator\.locks refused \(SecurityError\): an IndexedDB lease$/);
    assert.equal(baton.metrics().glue.authorityFallbacks, 1);
  }
  assert.equal(tabs.filter((tab) => tab.handle.state() === 'leader').length, 1, 'one leader');
  const leader = tabs.find((tab) => tab.handle.state() === 'leader');
  // The lease's epochs are committed in IndexedDB: fenced effects run.
  assert.equal(await leader.handle.fenced((token) => token.epoch), leader.handle.token().epoch);
});

test("an explicit 'web-locks' that is refused is kept: the tab does not lead, and says why", async (t) => {
  const browser = createBrowser();
  const baton = createBaton({ namespace: 'explicit', authority: 'web-locks', env: { ...browser.tab('a'), locks: refusingLocks } });
  t.after(() => baton.dispose());
  const handle = baton.lead('job');
  await waitFor(() => baton.metrics().degraded);
  const support = baton.support();
  assert.deepEqual([support.authority, support.mode, support.webLocks], ['web-locks', 'web-locks', false]);
  assert.equal(support.degradedReason, 'web-locks-refused:SecurityError');
  assert.match(support.reason, /"authority" option; navigator\.locks refused \(SecurityError\): kept/);
  assert.equal(baton.metrics().glue.authorityFallbacks, 0);
  const errors = baton.metrics().glue.lockErrors;
  await waitFor(() => baton.metrics().glue.lockErrors > errors, { what: 'the core keeps asking, with backoff' });
  assert.notEqual(handle.state(), 'leader');
  await assert.rejects(handle.fenced(() => 'ran'), { code: 'STALE_OWNER' });
});

test("a lock manager that never answers: 'auto' gives Web Locks up after the probe's deadline for broadcast only and leads (virtual clock)", async (t) => {
  await load(); // the core loads in real time: have it before time is virtual
  const clock = virtualClock();
  const browser = createBrowser();
  const locks = hangingLocks();
  const baton = createBaton({ namespace: 'hung-locks', env: { ...browser.tab('a'), locks, ...clock.env() } });
  t.after(() => baton.dispose());
  const handle = baton.lead('job');
  const start = clock.now();
  for (let i = 0; i < 10_000 && handle.state() !== 'leader'; i += 1) {
    await settle();
    if (!clock.step(start + 60_000)) break;
  }
  assert.equal(handle.state(), 'leader');
  assert.ok(locks.calls.some(({ options }) => options.ifAvailable), 'the probe asked with ifAvailable');
  const support = baton.support();
  assert.deepEqual([support.authority, support.mode, support.webLocks, support.degradedReason], ['broadcast', 'broadcast', false, 'web-locks-timeout']);
  assert.equal(support.reason, 'navigator.locks did not answer: broadcast only');
  // IndexedDB works: the epoch was committed there.
  assert.equal(await handle.fenced((token) => token.epoch), handle.token().epoch);
  // Not before the probe's deadline (5 s), and soon after it.
  const elected = baton.log().find((entry) => entry.to === 'leader');
  assert.ok(elected.at - start >= 5000 && elected.at - start < 7000, `elected ${elected.at - start} ms after start`);
});

test('a lock manager that answers the probe late is not given up while its requests are granted', async (t) => {
  // The probe's deadline is only for a manager that never answers: a grant proves it works.
  await load();
  const clock = virtualClock();
  const browser = createBrowser();
  const tab = browser.tab('a');
  const locks = {
    request: (name, options, callback) => (options.ifAvailable ? new Promise(() => {}) : tab.locks.request(name, options, callback)),
    query: () => tab.locks.query(),
  };
  const baton = createBaton({ namespace: 'slow-probe', env: { ...tab, locks, ...clock.env() } });
  t.after(() => baton.dispose());
  const handle = baton.lead('job');
  const start = clock.now();
  for (let i = 0; i < 10_000 && clock.now() < start + 10_000; i += 1) {
    await settle();
    if (!clock.step(start + 10_000)) break;
  }
  assert.equal(handle.state(), 'leader');
  assert.deepEqual([baton.support().mode, baton.support().webLocks, baton.support().degraded], ['web-locks', true, false]);
});

test("no Web Locks, IndexedDB refused: 'auto' gives the lease up at the first refusal, not after three failures", async (t) => {
  const browser = createBrowser();
  const baton = createBaton({ namespace: 'no-idb', env: { ...browser.tab('a'), locks: null, indexedDB: refusingIndexedDB } });
  t.after(() => baton.dispose());
  assert.equal(baton.support().authority, 'lease', 'chosen by presence');
  const handle = baton.lead('job');
  await waitFor(() => handle.state() === 'leader');
  const support = baton.support();
  assert.deepEqual([support.authority, support.mode, support.indexedDB], ['broadcast', 'broadcast', false]);
  assert.equal(support.degradedReason, 'lease-refused:SecurityError');
  assert.equal(support.reason, 'indexedDB refused (SecurityError): broadcast only');
  assert.equal(baton.metrics().glue.authorityFallbacks, 1);
  // The core's own fallback comes after three failed lease transactions.
  assert.ok(baton.metrics().glue.leaseFailures <= 1, `at most the first lease try failed (${baton.metrics().glue.leaseFailures})`);
});

test("an explicit 'lease' whose IndexedDB refuses is kept, and like any failing lease runs broadcast only", async (t) => {
  const browser = createBrowser();
  const baton = createBaton({ namespace: 'explicit-lease', authority: 'lease', env: { ...browser.tab('a'), indexedDB: refusingIndexedDB } });
  t.after(() => baton.dispose());
  const handle = baton.lead('job');
  await waitFor(() => handle.state() === 'leader', { timeoutMs: 20000 });
  const support = baton.support();
  assert.deepEqual([support.authority, support.mode, support.indexedDB], ['lease', 'broadcast', false]);
  assert.equal(support.degradedReason, 'lease-refused:SecurityError');
  assert.equal(support.reason, 'asked for by the "authority" option; indexedDB refused (SecurityError): kept, running broadcast');
  assert.equal(baton.metrics().glue.authorityFallbacks, 0);
  await assert.rejects(handle.fenced(() => 'ran'), { code: 'EPOCH_NOT_DURABLE' });
});

test('IndexedDB refused where Web Locks work: the tab leads by lock, its epochs are not durable and it says so', async (t) => {
  const browser = createBrowser();
  const baton = createBaton({ namespace: 'locks-no-idb', env: { ...browser.tab('a'), indexedDB: refusingIndexedDB } });
  t.after(() => baton.dispose());
  const handle = baton.lead('job');
  await waitFor(() => handle.state() === 'leader');
  const support = baton.support();
  assert.deepEqual([support.authority, support.mode, support.webLocks, support.indexedDB], ['web-locks', 'web-locks', true, false]);
  assert.equal(support.degradedReason, 'storage-failed:SecurityError');
  assert.equal(support.reason, 'navigator.locks is available', 'the authority did not change');
  assert.equal(baton.metrics().glue.authorityFallbacks, 0);
  await assert.rejects(handle.fenced(() => 'ran'), { code: 'EPOCH_NOT_DURABLE' });
});

test('a prerendering page: the browser defers its lock requests on purpose, so the probe waits for activation (virtual clock)', async (t) => {
  await load();
  const clock = virtualClock();
  const browser = createBrowser();
  const document = Object.assign(new EventTarget(), { prerendering: true, visibilityState: 'hidden' });
  const baton = createBaton({ namespace: 'prerender', env: { ...browser.tab('a'), locks: hangingLocks(), document, ...clock.env() } });
  t.after(() => baton.dispose());
  baton.lead('job');
  const runFor = async (ms) => {
    const end = clock.now() + ms;
    for (let i = 0; i < 10_000; i += 1) {
      await settle();
      if (!clock.step(end)) return;
    }
  };
  await runFor(30_000);
  assert.deepEqual([baton.support().webLocks, baton.support().degraded], [true, false], 'not given up while prerendering');
  document.prerendering = false; // activated: the requests would now be sent
  await runFor(6_000);
  assert.deepEqual([baton.support().webLocks, baton.support().degradedReason], [false, 'web-locks-timeout']);
});

test('a tab whose lock manager never answers, beside tabs whose Web Locks work: it follows their leader, never leads beside it (virtual clock)', async (t) => {
  await load();
  const clock = virtualClock();
  const browser = createBrowser();
  const open = (id, locks) => {
    const baton = createBaton({ namespace: 'hung-beside', id, env: { ...browser.tab(id), ...(locks ? { locks } : {}), ...clock.env() } });
    t.after(() => baton.dispose());
    return { id, baton, handle: baton.lead('job') };
  };
  const tabs = [open('a'), open('hung', hangingLocks())];
  // Two leaders at once (virtual ms): a Web Locks tab that joins leads by its lock at once, and
  // the broadcast-only tab yields when that claim arrives.
  let overlapSince = null;
  let longestOverlapMs = 0;
  const runFor = async (ms, until = () => false) => {
    const end = clock.now() + ms;
    for (let i = 0; i < 20_000 && !until(); i += 1) {
      await settle();
      const two = tabs.filter((tab) => !tab.gone && tab.handle.state() === 'leader').length > 1;
      if (two) overlapSince ??= clock.now();
      else if (overlapSince !== null) {
        longestOverlapMs = Math.max(longestOverlapMs, clock.now() - overlapSince);
        overlapSince = null;
      }
      if (!clock.step(end)) return;
    }
  };
  await runFor(20_000);
  const [a, hung] = tabs;
  assert.equal(hung.baton.support().mode, 'broadcast', 'the hung tab gave Web Locks up');
  assert.deepEqual([a.handle.state(), hung.handle.state(), hung.handle.leader()?.id], ['leader', 'follower', 'a']);

  // The Web Locks leader leaves: the hung tab takes over; a new Web Locks tab then leads, and
  // the hung tab follows it.
  a.baton.dispose();
  a.gone = true;
  await runFor(20_000, () => hung.handle.state() === 'leader');
  assert.equal(hung.handle.state(), 'leader');
  const c = open('c');
  tabs.push(c);
  await runFor(20_000);
  assert.deepEqual([c.handle.state(), hung.handle.state(), hung.handle.leader()?.id], ['leader', 'follower', 'c']);
  await runFor(1000);
  assert.equal(overlapSince, null, 'no overlap left');
  // No timer of the election is shorter than 150 ms (the hello window, the rank stagger): an
  // overlap shorter than that ended by a claim's delivery.
  assert.ok(longestOverlapMs < 150, `two leaders only until a claim is delivered (${longestOverlapMs} ms)`);
});

test("awaforge's leaderElection where Web Locks refuse: its documented fallback, broadcast only, never the lease", async (t) => {
  const browser = createBrowser();
  const election = leaderElection.create({ channel: 'awa-refused', env: { ...browser.tab('a'), locks: refusingLocks } });
  t.after(() => election.dispose());
  await waitFor(() => election.isLeader());
  const metrics = __internal.metricsOf(election);
  assert.deepEqual([metrics.mode, metrics.degradedReason, metrics.glue.authorityFallbacks], ['broadcast', 'web-locks-refused:SecurityError', 1]);
});

test("an explicit 'web-locks' whose lock manager is late: degraded from the probe's deadline until a lock is granted after all (virtual clock)", async (t) => {
  await load();
  const clock = virtualClock();
  const browser = createBrowser();
  const tab = browser.tab('a');
  const held = [];
  let late = true;
  const locks = {
    // The probe is never answered; other requests wait until the manager comes back.
    request: (name, options, callback) => {
      if (options.ifAvailable) return new Promise(() => {});
      if (!late) return tab.locks.request(name, options, callback);
      return new Promise((resolve, reject) => held.push(() => tab.locks.request(name, options, callback).then(resolve, reject)));
    },
    query: () => tab.locks.query(),
  };
  const baton = createBaton({ namespace: 'late-locks', authority: 'web-locks', env: { ...tab, locks, ...clock.env() } });
  t.after(() => baton.dispose());
  const handle = baton.lead('job');
  const runFor = async (ms, until = () => false) => {
    const end = clock.now() + ms;
    for (let i = 0; i < 10_000 && !until(); i += 1) {
      await settle();
      if (!clock.step(end)) return;
    }
  };
  await runFor(6_000);
  assert.deepEqual([baton.support().webLocks, baton.support().degradedReason], [false, 'web-locks-timeout']);
  assert.notEqual(handle.state(), 'leader');
  late = false;
  for (const send of held.splice(0)) send();
  await runFor(10_000, () => handle.state() === 'leader');
  assert.equal(handle.state(), 'leader');
  assert.deepEqual([baton.support().webLocks, baton.support().degraded, baton.support().reason], [true, false, 'asked for by the "authority" option']);
});

test("a navigator.locks whose requests throw (a broken implementation): 'auto' gives it up after three failures in a row, for broadcast only", async (t) => {
  const browser = createBrowser();
  const locks = {
    request(name, options, callback) {
      if (options.ifAvailable) return browser.tab('probe-answers').locks.request(name, options, callback);
      throw new TypeError('locks.request is not implemented');
    },
  };
  const baton = createBaton({ namespace: 'throwing-locks', env: { ...browser.tab('a'), locks } });
  t.after(() => baton.dispose());
  const handle = baton.lead('job');
  await waitFor(() => handle.state() === 'leader');
  const { support, metrics } = { support: baton.support(), metrics: baton.metrics() };
  assert.deepEqual([support.authority, support.mode, support.webLocks], ['broadcast', 'broadcast', false]);
  assert.equal(support.degradedReason, 'web-locks-refused:TypeError');
  assert.equal(support.reason, 'navigator.locks refused (TypeError): broadcast only');
  assert.equal(metrics.glue.lockErrors, 3, 'given up at the third failure in a row');
});

test("a working lock manager whose answer is queued behind the probe's deadline (a long task, a debugger pause): 'auto' keeps Web Locks (virtual clock)", async (t) => {
  // In Chromium a timer that came due during a long task runs before a lock answer that
  // arrived during it: the deadline must not take that order for a lock manager that never answers.
  await load();
  const clock = virtualClock();
  const browser = createBrowser();
  const tab = browser.tab('a');
  const queued = [];
  const locks = {
    request: (name, options, callback) =>
      new Promise((resolve, reject) => queued.push(() => tab.locks.request(name, options, callback).then(resolve, reject))),
    query: () => tab.locks.query(),
  };
  const baton = createBaton({ namespace: 'long-task', env: { ...tab, locks, ...clock.env() } });
  t.after(() => baton.dispose());
  const handle = baton.lead('job');
  await waitFor(() => queued.length >= 2, { what: 'the probe and the lock request sent' });
  // The long task: only the timers that came due run, then the answers queued meanwhile.
  const start = clock.now();
  while (clock.step(start + 5000));
  for (const answer of queued.splice(0)) answer();
  for (let i = 0; i < 10_000 && clock.now() < start + 10_000; i += 1) {
    await settle();
    for (const answer of queued.splice(0)) answer();
    if (!clock.step(start + 10_000)) break;
  }
  assert.equal(handle.state(), 'leader');
  assert.deepEqual([baton.support().mode, baton.support().webLocks, baton.support().degradedReason], ['web-locks', true, null]);
});

test("broadcast-channel's hasLeader() where Web Locks refuse: it answers from what the tab knows, it does not reject", async (t) => {
  const browser = createBrowser();
  const electors = [
    createLeaderElection('bc-refused', { env: { ...browser.tab('auto'), locks: refusingLocks } }),
    createLeaderElection('bc-refused-explicit', { authority: 'web-locks', env: { ...browser.tab('explicit'), locks: refusingLocks } }),
  ];
  t.after(() => Promise.all(electors.map((elector) => elector.die())));
  // Asked at once, before the first lock request finds the refusal; and for an explicit 'web-locks', for good.
  assert.deepEqual(await Promise.all(electors.map((elector) => elector.hasLeader())), [false, false]);
  const [auto] = electors;
  await auto.awaitLeadership();
  assert.equal(await auto.hasLeader(), true);
});

test("an explicit 'web-locks' whose requests fail for a while: degraded after three failures in a row, no longer once a lock is granted", async (t) => {
  const browser = createBrowser();
  const tab = browser.tab('a');
  let failing = true;
  const locks = {
    request: (name, options, callback) => {
      if (failing && !options.ifAvailable) return Promise.reject(new TypeError('locks.request failed'));
      return tab.locks.request(name, options, callback);
    },
    query: () => tab.locks.query(),
  };
  const baton = createBaton({ namespace: 'failing-locks', authority: 'web-locks', env: { ...tab, locks } });
  t.after(() => baton.dispose());
  const handle = baton.lead('job');
  await waitFor(() => baton.support().degraded, { timeoutMs: 20000 });
  assert.deepEqual([baton.support().webLocks, baton.support().degradedReason], [false, 'web-locks-refused:TypeError']);
  failing = false;
  await waitFor(() => handle.state() === 'leader', { timeoutMs: 20000, what: 'the core asks again, with backoff, and is granted' });
  assert.deepEqual([baton.support().webLocks, baton.support().degraded, baton.support().reason], [true, false, 'asked for by the "authority" option']);
});

test('a Baton disposed while its page prerenders leaves no probe timer behind (virtual clock)', async () => {
  await load();
  const clock = virtualClock();
  const browser = createBrowser();
  const document = Object.assign(new EventTarget(), { prerendering: true, visibilityState: 'hidden' });
  const baton = createBaton({ namespace: 'prerender-dispose', env: { ...browser.tab('a'), locks: hangingLocks(), document, ...clock.env() } });
  const handle = baton.lead('job');
  const end = clock.now() + 10_000;
  for (let i = 0; i < 100; i += 1) {
    await settle();
    if (!clock.step(end)) break;
  }
  assert.notEqual(handle.state(), 'leader');
  baton.dispose();
  await settle();
  // Whatever was armed runs out: nothing waits for an activation that no one will use.
  for (let i = 0; i < 100 && clock.step(Infinity); i += 1) await settle();
  assert.equal(clock.step(Infinity), false, 'a timer is still armed after dispose');
});

test("broadcast-channel's hasLeader() where the lock manager never answers: after a heartbeat it answers from what the tab knows", async (t) => {
  const browser = createBrowser();
  // fallbackInterval 300 ms: a heartbeat of 100 ms.
  const elector = createLeaderElection('bc-hung', { authority: 'web-locks', fallbackInterval: 300, env: { ...browser.tab('a'), locks: hangingLocks() } });
  t.after(() => elector.die());
  assert.equal(await elector.hasLeader(), false);
});
