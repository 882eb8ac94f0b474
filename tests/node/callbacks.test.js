// App callbacks never run inside a browser handler Baton is serving: the lock grant
// callback, a channel message, a timer, or a lifecycle event (pagehide, pageshow,
// visibilitychange, freeze). The environment is instrumented to know when each handler
// runs, and every callback records whether one was on the stack.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton } from 'tab-baton';
import { openTabs, waitFor } from './helpers/tabs.js';

/** Wraps a tab's env so that `inside` names the browser handler running now, if any. */
function instrument(tab) {
  const running = [];
  const during = (what, fn) => (...args) => {
    running.push(what);
    try {
      return fn(...args);
    } finally {
      running.pop();
    }
  };
  const { env } = tab;
  const locks = {
    request(name, options, callback) {
      return env.locks.request(name, options, during('lock grant', callback));
    },
    query: () => env.locks.query(),
  };
  const wrapped = new WeakMap();
  class Channel extends env.BroadcastChannel {
    addEventListener(type, listener, options) {
      if (!wrapped.has(listener)) wrapped.set(listener, during(`channel ${type}`, listener));
      super.addEventListener(type, wrapped.get(listener), options);
    }
    removeEventListener(type, listener, options) {
      super.removeEventListener(type, wrapped.get(listener) ?? listener, options);
    }
  }
  const target = (object, name) => ({
    get visibilityState() {
      return object.visibilityState;
    },
    addEventListener(type, listener) {
      if (!wrapped.has(listener)) wrapped.set(listener, during(`${name} ${type}`, listener));
      object.addEventListener(type, wrapped.get(listener));
    },
    removeEventListener(type, listener) {
      object.removeEventListener(type, wrapped.get(listener) ?? listener);
    },
  });
  const window = target(tab.window, 'window');
  return {
    env: {
      ...env,
      locks,
      BroadcastChannel: Channel,
      document: target(tab.document, 'document'),
      addEventListener: window.addEventListener,
      removeEventListener: window.removeEventListener,
      setTimeout: (fn, ms) => env.setTimeout(during('timer', fn), ms),
    },
    inside: () => running.at(-1) ?? null,
  };
}

describe('callbacks run after the browser handler that caused them', () => {
  test('onChange, run and the abort signal: never inside a lock grant, message, timer or lifecycle handler', async (t) => {
    const { tabs } = openTabs(2);
    const seen = [];
    const sides = tabs.map((tab, i) => {
      const { env, inside } = instrument(tab);
      const baton = createBaton({ namespace: 'cb', id: `t${i}`, env, heartbeatMs: 40 });
      const record = (what) => seen.push({ tab: i, what, inside: inside() });
      const handle = baton.lead('ws', {
        run(_token, signal) {
          record('run');
          signal.addEventListener('abort', () => record('abort'));
        },
      });
      handle.onChange((change) => record(change.type));
      t.after(() => baton.dispose());
      return { tab, baton, handle };
    });
    const [a, b] = sides;
    const count = (tab, what) => seen.filter((s) => s.tab === tab && s.what === what).length;
    await waitFor(() => count(0, 'elected') + count(1, 'elected') === 1 && count(0, 'leader-changed') + count(1, 'leader-changed') > 0);
    const leader = sides.find((s) => s.handle.state() === 'leader');
    const follower = sides.find((s) => s !== leader);
    const li = sides.indexOf(leader);
    const fi = sides.indexOf(follower);

    // pagehide (into the bfcache): the leader steps down, the follower is granted the lock.
    leader.tab.fire('window', 'pagehide', { persisted: true });
    await waitFor(() => count(li, 'deposed') === 1 && count(li, 'abort') === 1 && count(fi, 'elected') === 1, { what: 'hand-over on pagehide' });
    // pageshow: back from the bfcache, following; hidden: the leader steps down for it
    // only if it must, so abdicate to hand back.
    leader.tab.fire('window', 'pageshow', { persisted: true });
    follower.handle.abdicate();
    await waitFor(() => count(fi, 'deposed') === 1 && count(li, 'elected') === 2, { what: 'hand-back after abdicate' });
    leader.tab.setVisibility('hidden');
    leader.tab.fire('document', 'freeze');
    await waitFor(() => count(li, 'deposed') === 2 && count(fi, 'elected') === 2, { what: 'hand-over on freeze' });

    assert.ok(seen.length >= 10, `${seen.length} callbacks recorded`);
    const inside = seen.filter((s) => s.inside !== null);
    assert.deepEqual(inside, [], 'no callback ran inside a browser handler');
    for (const side of sides) side.baton.dispose();
    assert.equal(a.handle.state(), 'released');
    assert.equal(b.handle.state(), 'released');
  });

  test("the new leader's callbacks run before the epoch's localStorage mirror is written", async () => {
    const { tabs } = openTabs(1);
    const { env } = tabs[0];
    const writes = [];
    const { localStorage } = env;
    env.localStorage = {
      getItem: (key) => localStorage.getItem(key),
      setItem(key, value) {
        writes.push(key);
        localStorage.setItem(key, value);
      },
      removeItem: (key) => localStorage.removeItem(key),
    };
    const baton = createBaton({ namespace: 'cb3', env });
    const seen = [];
    const mirrored = () => writes.includes('baton/cb3/epoch/ws');
    const handle = baton.lead('ws', { run: () => seen.push({ what: 'run', mirrored: mirrored() }) });
    handle.onChange((change) => {
      if (change.type === 'elected') seen.push({ what: 'elected', mirrored: mirrored() });
    });
    try {
      await waitFor(() => seen.length === 2 && mirrored(), { what: 'elected, run and the mirror write' });
      assert.equal(baton.metrics().glue.epochsNotDurable, 0, 'the epoch was committed in IndexedDB');
      assert.deepEqual(seen, [{ what: 'elected', mirrored: false }, { what: 'run', mirrored: false }]);
    } finally {
      baton.dispose();
    }
  });

  test("release() and dispose() call back before they return: queued changes first, 'released' last", async () => {
    const { tabs } = openTabs(1);
    const baton = createBaton({ namespace: 'cb2', env: tabs[0].env });
    const changes = [];
    let signal;
    const handle = baton.lead('ws', { run: (_token, s) => { signal = s; } });
    handle.onChange((change) => changes.push(change.type));
    try {
      await waitFor(() => handle.state() === 'leader' && changes.includes('elected'));
      const before = changes.length;
      handle.abdicate(); // the core steps down: its notice is queued for a microtask
      assert.equal(changes.length, before, 'abdicate() does not call back before it returns');
      handle.release();
      assert.equal(signal.aborted, true, 'the signal aborted before release() returned');
      const after = changes.slice(before);
      assert.equal(after[0], 'deposed', "the queued 'deposed' came first");
      assert.equal(after.at(-1), 'released', "'released' came last, before release() returned");
    } finally {
      baton.dispose();
    }
  });
});
