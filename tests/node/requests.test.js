// Requests to the leader and leader state (baton.request, lead({serve, accept}),
// handle.setState, baton.leaderState) against the BUILT package, many "tabs" in one
// process over the tab-baton/testing fakes: answers, queueing while no leader exists,
// NO_LEADER, forwarded errors, the accept filter, bounds, and hand-over on close, crash and
// freeze (at least once, duplicates visible by request id, stale answers never delivered).
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, NoLeaderError, RemoteError, RequestError } from 'tab-baton';
import { leaderIndexes, openTab, openTabs, waitFor } from './helpers/tabs.js';

// Short, but long enough that a loaded machine does not steal from a live leader.
const FAST = { heartbeatMs: 50, suspectMs: 600 };
let open = [];

function batonsFor(tabs, options = {}) {
  const batons = tabs.map((tab) => createBaton({ namespace: 'app', id: tab.id, env: tab.env, ...FAST, ...options }));
  open.push(...batons);
  return batons;
}

afterEach(() => {
  for (const baton of open) baton.dispose();
  open = [];
});

/** A promise with its resolve, for serve functions the test releases. */
function deferred() {
  let resolve;
  const promise = new Promise((r) => { resolve = r; });
  return { promise, resolve };
}

describe('requests', () => {
  test('a follower and a tab that never leads ask; the leader serves and the answer carries its term', async () => {
    const { tabs } = openTabs(3);
    const batons = batonsFor(tabs);
    const seen = [];
    const handles = batons.slice(0, 2).map((b, tab) => b.lead('ws', {
      serve: (message, from, token) => {
        seen.push({ message, from, epoch: token.epoch, tab });
        return { echo: message.n * 2 };
      },
    }));
    await waitFor(() => leaderIndexes(handles).length === 1);
    const [leader] = leaderIndexes(handles);
    const follower = 1 - leader;

    assert.deepEqual(await batons[follower].request('ws', { n: 2 }), { echo: 4 });
    const full = await batons[2].request('ws', { n: 5 }, { full: true });
    assert.deepEqual(full.value, { echo: 10 });
    assert.equal(full.epoch, seen[1].epoch, 'the term that served it');
    assert.equal(full.leader, tabs[seen[1].tab].id);
    assert.equal(full.requestId, seen[1].from.requestId);
    assert.equal(seen[1].from.tab, tabs[2].id);
    // The leader asks itself through the same path.
    assert.deepEqual(await batons[leader].request('ws', { n: 1 }), { echo: 2 });
    assert.equal(seen.length, 3);
    const servedByBoth = batons.slice(0, 2).reduce((n, b) => n + (b.metrics().talk.ws.serve?.served ?? 0), 0);
    assert.equal(servedByBoth, 3);
  });

  test('a leader asking itself in a loop leaves room for the page: a task queued before the loop runs during it', async () => {
    const { tabs } = openTabs(1);
    const [baton] = batonsFor(tabs);
    const handle = baton.lead('ws', { serve: (message) => message.n });
    await waitFor(() => leaderIndexes([handle]).length === 1);
    let answered = 0;
    let answeredWhenTaskRan = -1;
    setTimeout(() => { answeredWhenTaskRan = answered; }, 0);
    for (let n = 0; n < 50; n += 1) {
      assert.equal(await baton.request('ws', { n }), n);
      answered += 1;
    }
    // Answers delivered as microtasks would run all 50 before any task (the page hangs).
    assert.ok(answeredWhenTaskRan >= 0 && answeredWhenTaskRan < 50, `the task ran after ${answeredWhenTaskRan} answers`);
  });

  test('a request waits while no leader exists and is answered once one does', async () => {
    const { tabs } = openTabs(2);
    const batons = batonsFor(tabs);
    const answer = batons[0].request('jobs', 'ping', { timeoutMs: 5000 });
    // Waits for the state: a fixed sleep can end before a late backoff timer under load.
    await waitFor(() => batons[0].metrics().talk.jobs?.resends >= 1, { what: 'unacknowledged requests are re-sent' });
    batons[1].lead('jobs', { serve: (m) => `${m}-pong` });
    assert.equal(await answer, 'ping-pong');
  });

  test('a leader without serve acknowledges nothing: the request waits for the next leader, which serves it', async () => {
    const { tabs } = openTabs(3);
    const batons = batonsFor(tabs);
    const silent = batons[0].lead('jobs');
    await waitFor(() => silent.state() === 'leader');
    batons[1].lead('jobs', { serve: (m) => `${m}-pong` });
    const answer = batons[2].request('jobs', 'ping', { timeoutMs: 5000 });
    await waitFor(() => batons[2].metrics().talk.jobs?.resends >= 1, { what: 're-sent: the leader without serve did not acknowledge it' });
    batons[0].dispose();
    assert.equal(await answer, 'ping-pong');
  });

  test('NO_LEADER after timeoutMs when no leader exists; TIMEOUT when a leader acknowledged and never answered', async () => {
    const { tabs } = openTabs(2);
    const batons = batonsFor(tabs);
    const error = await batons[0].request('nobody', 1, { timeoutMs: 120 }).then(() => null, (e) => e);
    assert.ok(error instanceof NoLeaderError);
    assert.ok(error instanceof RequestError);
    assert.equal(error.code, 'NO_LEADER');
    assert.equal(error.resource, 'nobody');

    const handle = batons[1].lead('slow', { serve: () => new Promise(() => {}) });
    await waitFor(() => handle.state() === 'leader');
    const late = await batons[0].request('slow', 1, { timeoutMs: 150 }).then(() => null, (e) => e);
    assert.ok(late instanceof RequestError && !(late instanceof NoLeaderError));
    assert.equal(late.code, 'TIMEOUT');
  });

  test('an answer ready at once is its own acknowledgement; a slower one is acknowledged before it is answered', async () => {
    const { browser, tabs } = openTabs(2);
    const batons = batonsFor(tabs);
    let release = null;
    const handle = batons[0].lead('ack', {
      serve: (message) => (message === 'slow' ? new Promise((resolve) => { release = resolve; }) : message),
    });
    await waitFor(() => handle.state() === 'leader');
    // A tab with no Baton code listens to the talk channel: it sees what the leader posts.
    const seen = [];
    const observer = new (browser.tab('observer').BroadcastChannel)('baton/app/v1/talk/ack');
    observer.onmessage = (event) => seen.push(`${event.data.k} ${event.data.id}`);
    const count = (what) => seen.filter((x) => x === what).length;

    assert.equal(await batons[1].request('ack', 'now', { id: 'now-1' }), 'now');
    await waitFor(() => count('res now-1') >= 1, { what: 'the answer seen by the observer' });
    assert.equal(count('ack now-1'), 0, 'a synchronous serve: the answer alone, no acknowledgement');

    const slow = batons[1].request('ack', 'slow', { id: 'slow-1' });
    await waitFor(() => count('ack slow-1') >= 1 && release !== null, { what: 'the slow request acknowledged while serve runs' });
    assert.equal(count('res slow-1'), 0, 'not answered yet');
    release('done');
    assert.equal(await slow, 'done');
    observer.close();
  });

  test('errors thrown by serve reach the caller; the accept filter refuses commands it does not allow', async () => {
    const { tabs } = openTabs(2);
    const batons = batonsFor(tabs);
    let served = 0;
    const handle = batons[0].lead('cmd', {
      accept: (message, from) => message.kind === 'read' || from.tab === tabs[0].id,
      serve: (message) => {
        served += 1;
        if (message.fail) throw Object.assign(new TypeError('bad input'), { code: 'E_INPUT' });
        return 'done';
      },
    });
    await waitFor(() => handle.state() === 'leader');
    const thrown = await batons[1].request('cmd', { kind: 'read', fail: true }).then(() => null, (e) => e);
    assert.ok(thrown instanceof RemoteError);
    assert.equal(thrown.name, 'TypeError');
    assert.equal(thrown.message, 'bad input');
    assert.equal(thrown.code, 'E_INPUT');
    assert.equal(thrown.epoch, handle.token().epoch);

    const refused = await batons[1].request('cmd', { kind: 'drop-tables' }).then(() => null, (e) => e);
    assert.ok(refused instanceof RequestError);
    assert.equal(refused.code, 'REFUSED');
    assert.equal(served, 1, 'a refused command never reaches serve');
    assert.equal(await batons[0].request('cmd', { kind: 'drop-tables' }), 'done', 'the filter sees who asks');
  });

  test('bounded: pending requests per tab, bytes per message; wrong options throw a TypeError naming them', async () => {
    const { tabs } = openTabs(1);
    const [baton] = batonsFor(tabs);
    const waiting = Array.from({ length: 64 }, (_, i) => baton.request(`none-${i % 4}`, 1, { timeoutMs: 60_000 }).catch((e) => e));
    const tooMany = await baton.request('none-5', 1).then(() => null, (e) => e);
    assert.equal(tooMany.code, 'TOO_MANY');
    const tooLarge = await baton.request('big', 'x'.repeat(40_000)).then(() => null, (e) => e);
    assert.equal(tooLarge.code, 'TOO_LARGE');
    await assert.rejects(baton.request('none', 1, { timeoutMs: -1 }), (e) => e instanceof TypeError && /timeoutMs/.test(e.message));
    await assert.rejects(baton.request('none', 1, { signal: {} }), (e) => e instanceof TypeError && /signal/.test(e.message));
    await assert.rejects(baton.request('none', 1, { retries: 3 }), (e) => e instanceof TypeError && /retries/.test(e.message));
    // A promise-returning call never throws: a wrong resource rejects like a wrong option.
    await assert.rejects(baton.request('', 1), (e) => e instanceof TypeError && /resource/.test(e.message));
    assert.throws(() => baton.lead('x', { serve: 'no' }), (e) => e instanceof TypeError && /serve/.test(e.message));
    await assert.rejects(baton.request('none', () => {}), (e) => e.name === 'DataCloneError');
    baton.dispose();
    const settled = await Promise.all(waiting);
    assert.ok(settled.every((e) => e.code === 'DISPOSED'), 'dispose rejects what waits');
  });

  test('bounded on the leader\'s side too: an answer or a state over 64 KiB is refused with TOO_LARGE, and nothing is sent', async () => {
    const { tabs } = openTabs(2);
    const batons = batonsFor(tabs);
    const handle = batons[0].lead('big', { serve: (size) => 'x'.repeat(size) });
    await waitFor(() => handle.state() === 'leader');
    assert.equal((await batons[1].request('big', 100)).length, 100);
    const tooLarge = await batons[1].request('big', 40_000).then(() => null, (e) => e);
    assert.ok(tooLarge instanceof RequestError && tooLarge.code === 'TOO_LARGE', `TOO_LARGE expected, got ${tooLarge}`);
    assert.equal(tooLarge.epoch, handle.token().epoch, 'refused by the leader, in its term');
    const view = batons[1].leaderState('big');
    await handle.setState({ small: true });
    await waitFor(() => view.get()?.value.small === true);
    await assert.rejects(handle.setState({ huge: 'x'.repeat(40_000) }), (e) => e instanceof RequestError && e.code === 'TOO_LARGE');
    await handle.setState({ small: 'again' });
    await waitFor(() => view.get()?.value.small === 'again');
    assert.equal(batons[1].metrics().talk.big.droppedOversized, 0, 'the oversized state was never posted');
    view.close();
  });

  test('one request id from several tabs (an app\'s operation id, sent again after a reload): served once, every tab answered', async () => {
    const { tabs } = openTabs(4);
    const batons = batonsFor(tabs);
    const release = deferred();
    let served = 0;
    const handle = batons[0].lead('ops', {
      serve: async (message) => {
        served += 1;
        await release.promise;
        return `applied ${message}`;
      },
    });
    await waitFor(() => handle.state() === 'leader');
    // The tab that sent op-1 first, and the one that replaced it and sends it again while
    // it is being served: both wait for the one answer.
    const first = batons[1].request('ops', 'op-1', { id: 'op-1' });
    await waitFor(() => served === 1);
    const again = batons[2].request('ops', 'op-1', { id: 'op-1' });
    await waitFor(() => batons[0].metrics().talk.ops.serve.reacked >= 1, { what: 'the second tab acknowledged' });
    release.resolve();
    assert.deepEqual(await Promise.all([first, again]), ['applied op-1', 'applied op-1']);
    // Sent once more after it was answered: the cached answer, to the tab that asks now.
    assert.equal(await batons[3].request('ops', 'op-1', { id: 'op-1', timeoutMs: 5000 }), 'applied op-1');
    assert.equal(served, 1, 'served once in the term');
    assert.ok(batons[0].metrics().talk.ops.serve.replayed >= 1, 'answered from the cache (once per re-send)');
  });

  test('a timeout longer than setTimeout allows: the timer is armed within its limit (it would fire at once, in a loop)', async () => {
    const { tabs } = openTabs(2);
    const delays = [];
    const { setTimeout: set } = tabs[1].env;
    tabs[1].env.setTimeout = (fn, ms) => {
      delays.push(ms);
      return set(fn, ms);
    };
    const batons = batonsFor(tabs);
    const handle = batons[0].lead('slow', { serve: () => new Promise(() => {}) }); // acknowledged, never answered
    await waitFor(() => handle.state() === 'leader');
    const pending = batons[1].request('slow', 1, { timeoutMs: 30 * 24 * 3600 * 1000 }).catch((e) => e);
    await waitFor(() => batons[0].metrics().talk.slow.serve.serving === 1);
    // Acknowledged: the asking tab's one timer is now for the request's deadline, 30 days away.
    await waitFor(() => delays.some((ms) => ms > 1e9), { what: 'the deadline timer armed' });
    // setTimeout runs a delay over 2^31 - 1 ms at once: the request would spin on its timer.
    assert.ok(delays.every((ms) => ms <= 2 ** 31 - 1), `delays armed: ${delays.filter((ms) => ms > 2 ** 31 - 1)}`);
    batons[1].dispose();
    assert.equal((await pending).code, 'DISPOSED');
  });

  test('an abort signal rejects the request with its reason', async () => {
    const { tabs } = openTabs(1);
    const [baton] = batonsFor(tabs);
    const controller = new AbortController();
    const pending = baton.request('none', 1, { signal: controller.signal }).catch((e) => e);
    controller.abort(new Error('user left'));
    assert.equal((await pending).message, 'user left');
    assert.equal(baton.metrics().talk.none.pending, 0);
  });

  for (const how of ['close', 'crash']) {
    test(`a request in flight when the leader ${how}s is served again by the next leader, with the same id`, async () => {
      const { tabs } = openTabs(3);
      const batons = batonsFor(tabs);
      const served = [];
      const hold = deferred();
      const handles = batons.map((b, i) => b.lead('q', {
        serve: async (message, from, token) => {
          served.push({ tab: i, requestId: from.requestId, epoch: token.epoch });
          if (served.length === 1) await hold.promise; // the first leader never answers
          return `ok from ${i}`;
        },
      }));
      await waitFor(() => leaderIndexes(handles).length === 1);
      const [first] = leaderIndexes(handles);
      const asker = (first + 1) % 3;
      const answer = batons[asker].request('q', 'job', { full: true });
      await waitFor(() => served.length === 1);
      if (how === 'close') batons[first].dispose();
      else tabs[first].crash();
      const result = await answer;
      assert.equal(served.length, 2, 'served at least once, here exactly twice');
      assert.equal(served[0].requestId, served[1].requestId, 'the duplicate is visible by its request id');
      assert.ok(served[1].epoch > served[0].epoch);
      assert.notEqual(result.leader, tabs[first].id);
      assert.equal(result.epoch, served[1].epoch);
      hold.resolve();
    });
  }

  test('a frozen leader\'s request is served by the next leader; the frozen one\'s late answer is never delivered', async () => {
    const { tabs } = openTabs(3);
    const batons = batonsFor(tabs);
    const holds = [deferred(), deferred(), deferred()];
    const served = [];
    const handles = batons.map((b, i) => b.lead('f', {
      serve: async (message, from, token) => {
        served.push({ tab: i, requestId: from.requestId, epoch: token.epoch });
        await holds[i].promise;
        return { tab: i, epoch: token.epoch };
      },
    }));
    await waitFor(() => leaderIndexes(handles).length === 1);
    const [first] = leaderIndexes(handles);
    const asker = (first + 1) % 3;
    const answer = batons[asker].request('f', 'job', { timeoutMs: 10_000 });
    await waitFor(() => served.length === 1);
    tabs[first].freeze(); // timers stop; messages are still handled
    await waitFor(() => served.length === 2, { what: 'the next leader serves the re-sent request' });
    const second = served[1].tab;
    holds[first].resolve(); // the frozen leader's serve finishes now, in its old term
    // Dropped where it was made (the old leader learnt it was deposed) or where it arrives.
    const late = () => batons[first].metrics().talk.f.serve.lateAnswers + batons[asker].metrics().talk.f.staleAnswers;
    await waitFor(() => late() === 1);
    holds[second].resolve();
    assert.deepEqual(await answer, { tab: second, epoch: served[1].epoch });
    assert.equal(served[0].requestId, served[1].requestId);
    tabs[first].thaw();
  });

  test('an answer from a term older than the newest seen is dropped, and the request still waits', async () => {
    const { browser, tabs } = openTabs(3);
    const batons = batonsFor(tabs);
    const hold = deferred();
    const handles = batons.slice(0, 2).map((b) => b.lead('s', { serve: async () => { await hold.promise; return 'current'; } }));
    await waitFor(() => leaderIndexes(handles).length === 1);
    const [first] = leaderIndexes(handles);
    const oldEpoch = handles[first].token().epoch;
    batons[first].dispose();
    const next = handles[1 - first];
    await waitFor(() => next.state() === 'leader');
    const answer = batons[2].request('s', 'q', { id: 'job-1' });
    await waitFor(() => batons[1 - first].metrics().talk.s.serve.serving === 1);
    const forger = new (browser.tab('forger').BroadcastChannel)('baton/app/v1/talk/s');
    forger.postMessage({ v: 1, k: 'res', from: tabs[first].id, to: tabs[2].id, id: 'job-1', epoch: oldEpoch, ok: true, value: 'old' });
    await waitFor(() => batons[2].metrics().talk.s.staleAnswers === 1);
    assert.equal(batons[2].metrics().talk.s.pending, 1, 'still waiting for the current term');
    hold.resolve();
    assert.equal(await answer, 'current');
    forger.close();
  });
});

describe('leader state', () => {
  test('every tab reads the latest state; a new tab gets it at once; a new term marks it stale, then replaces it', async () => {
    const { browser, tabs } = openTabs(3);
    const batons = batonsFor(tabs);
    const handles = batons.slice(0, 2).map((b) => b.lead('ws'));
    await waitFor(() => leaderIndexes(handles).length === 1);
    const [leader] = leaderIndexes(handles);
    const view = batons[2].leaderState('ws');
    const changes = [];
    view.onChange((s) => changes.push(s));
    await handles[leader].setState({ connected: false });
    await handles[leader].setState({ connected: true });
    await waitFor(() => view.get()?.value.connected === true);
    assert.equal(view.get().epoch, handles[leader].token().epoch);
    assert.equal(view.get().leader, tabs[leader].id);
    assert.equal(view.get().stale, false);
    assert.ok(changes.length >= 1);

    // A tab opened later gets the current state without waiting for a change.
    const late = createBaton({ namespace: 'app', id: 'late', env: openTab(browser, 'late').env, ...FAST });
    open.push(late);
    const lateView = late.leaderState('ws');
    await waitFor(() => lateView.get()?.value.connected === true);

    await assert.rejects(handles[1 - leader].setState({ connected: 'x' }), (e) => e.code === 'STALE_OWNER');
    const oldEpoch = handles[leader].token().epoch;
    batons[leader].dispose();
    await waitFor(() => view.get().stale === true, { what: 'stale after the term ends' });
    assert.equal(view.get().epoch, oldEpoch);
    const next = 1 - leader;
    await waitFor(() => handles[next].state() === 'leader');
    await handles[next].setState({ connected: 'reconnecting' });
    await waitFor(() => view.get().value.connected === 'reconnecting');
    assert.ok(view.get().epoch > oldEpoch);
    assert.equal(view.get().stale, false);
    view.close();
  });
  test('a crashed leader\'s state turns stale as soon as the election confirms a newer term, before the new leader publishes', async () => {
    const { tabs } = openTabs(3);
    const batons = batonsFor(tabs);
    const handles = batons.slice(0, 2).map((b) => b.lead('ws'));
    // The watching tab takes part in the election but can never lead (no tab has the capability).
    const watcher = batons[2].leaderState('ws');
    batons[2].lead('ws', { eligible: { capability: 'nobody-has-it' } });
    await waitFor(() => leaderIndexes(handles).length === 1);
    const [first] = leaderIndexes(handles);
    const next = 1 - first;
    const nextView = batons[next].leaderState('ws');
    await handles[first].setState({ connected: true });
    await waitFor(() => watcher.get()?.value.connected === true && nextView.get()?.value.connected === true);
    const oldEpoch = handles[first].token().epoch;
    tabs[first].crash(); // no goodbye
    await waitFor(() => handles[next].state() === 'leader');
    // The new leader has not published (nor announced itself: it does not serve).
    await waitFor(() => watcher.get().stale === true && nextView.get().stale === true, { what: 'stale in the tabs of the election' });
    assert.equal(watcher.get().epoch, oldEpoch, 'still the crashed term\'s state, marked stale');
    await handles[next].setState({ connected: 'again' });
    await waitFor(() => watcher.get().stale === false && watcher.get().value.connected === 'again');
    assert.ok(watcher.get().epoch > oldEpoch);
  });
});

describe('hostile messages on the talk channel', () => {
  test('malformed, foreign-version and oversized messages are dropped and counted', async () => {
    const { browser, tabs } = openTabs(1);
    const [baton] = batonsFor(tabs);
    const handle = baton.lead('h', { serve: () => 'fine' });
    await waitFor(() => handle.state() === 'leader');
    await baton.request('h', 1);
    const evil = new (browser.tab('evil').BroadcastChannel)('baton/app/v1/talk/h');
    evil.postMessage('junk');
    evil.postMessage({ v: 9, k: 'req', from: 'e', id: 'x', body: 1 });
    evil.postMessage({ v: 1, k: 'res', from: 'e', to: tabs[0].id, id: 'x', epoch: 2 ** 50, ok: true });
    evil.postMessage({ v: 1, k: 'req', from: 'e', id: 'y', body: 'x'.repeat(100_000) });
    const counters = () => baton.metrics().talk.h;
    await waitFor(() => counters().droppedMalformed === 2 && counters().droppedForeignVersion === 1 && counters().droppedOversized === 1);
    assert.equal(await baton.request('h', 2), 'fine', 'still serving');
    evil.close();
  });
});

describe('what an app that does not talk to its leader pays', () => {
  test('the implementation is dist/talk.js, imported dynamically: the other modules keep only the facade', async () => {
    const { readFileSync, readdirSync } = await import('node:fs');
    const dist = new URL('../../js-glue/dist/', import.meta.url);
    // Every ES module of the package but talk.js (the entries and their shared chunks).
    const index = readdirSync(dist).filter((f) => f.endsWith('.js') && f !== 'talk.js' && f !== 'testing.js')
      .map((f) => readFileSync(new URL(f, dist), 'latin1')).join('\n');
    const talk = readFileSync(new URL('talk.js', dist), 'latin1');
    assert.equal(index.match(/import\("\.\/talk\.js"\)/g)?.length, 1, 'one dynamic import');
    assert.ok(!/from\s*"\.\/talk\.js"/.test(index), 'no static import of talk.js');
    for (const name of ['staleAnswers', 'lateAnswers', 'duplicateAnswers']) {
      assert.ok(talk.includes(name) && !index.includes(`${name}:`), `${name} lives in talk.js only`);
    }
  });
});
