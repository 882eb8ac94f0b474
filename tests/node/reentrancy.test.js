// Re-entrancy: every public method of a Baton and of a lead handle, called from inside
// every callback Baton makes (each onChange type, run, the term's AbortSignal), leaves the
// election working: no recursion, no dead handle, no error except the documented ones
// (lead() of a resource this Baton already leads; lead() once dispose() has begun).
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton } from 'tab-baton';
import { openTabs, waitFor } from './helpers/tabs.js';

const RESOURCE = 'ws';

/** Each public method, called on the tab whose callback runs. */
const METHODS = {
  'baton.lead(other resource)': (s) => s.baton.lead('other'),
  'baton.lead(same resource)': (s) => s.baton.lead(RESOURCE),
  'baton.presence()': (s) => s.baton.presence(),
  'baton.metrics()': (s) => s.baton.metrics(),
  'baton.log()': (s) => s.baton.log(),
  'baton.support()': (s) => s.baton.support(),
  'baton.dispose()': (s) => s.baton.dispose(),
  'handle.state()': (s) => s.handle.state(),
  'handle.token()': (s) => s.handle.token(),
  'handle.leader()': (s) => s.handle.leader(),
  'handle.abdicate()': (s) => s.handle.abdicate(),
  'handle.onChange()': (s) => s.handle.onChange(() => {}),
  'handle.fenced()': (s) => s.handle.fenced(() => 'ran').catch((error) => error),
  'handle.release()': (s) => s.handle.release(),
};

/**
 * Each callback: `subject` is the tab (0 leads first, 1 follows) whose callback makes the
 * call; `arm` hooks `call` into it; `provoke` makes it fire once both tabs run.
 */
const TRIGGERS = {
  "onChange('elected')": { subject: 0, arm: (s, call) => s.handle.onChange((c) => c.type === 'elected' && call()) },
  'run(token, signal)': { subject: 0, run: (call) => () => call() },
  "onChange('leader-changed')": { subject: 1, arm: (s, call) => s.handle.onChange((c) => c.type === 'leader-changed' && call()) },
  "onChange('deposed') after abdicate()": {
    subject: 0,
    arm: (s, call) => s.handle.onChange((c) => c.type === 'deposed' && call()),
    provoke: (a) => a.handle.abdicate(),
  },
  "signal 'abort' after abdicate()": {
    subject: 0,
    run: (call) => (_token, signal) => signal.addEventListener('abort', call, { once: true }),
    provoke: (a) => a.handle.abdicate(),
  },
  "onChange('released') from release()": {
    subject: 0,
    arm: (s, call) => s.handle.onChange((c) => c.type === 'released' && call()),
    provoke: (a) => a.handle.release(),
  },
  "onChange('released') from dispose()": {
    subject: 0,
    arm: (s, call) => s.handle.onChange((c) => c.type === 'released' && call()),
    provoke: (a) => a.baton.dispose(),
  },
  "signal 'abort' from dispose()": {
    subject: 0,
    run: (call) => (_token, signal) => signal.addEventListener('abort', call, { once: true }),
    provoke: (a) => a.baton.dispose(),
  },
};

let reported;
let previousReportError;
beforeEach(() => {
  reported = [];
  previousReportError = globalThis.reportError;
  globalThis.reportError = (error) => reported.push(error);
});
afterEach(() => {
  globalThis.reportError = previousReportError;
});

async function runCase(triggerName, methodName) {
  const trigger = TRIGGERS[triggerName];
  const method = METHODS[methodName];
  const { tabs } = openTabs(2);
  const sides = [];
  const outcome = { calls: 0, nested: 0, depth: 0 };
  const call = () => {
    if (outcome.depth > 0) outcome.nested += 1;
    outcome.calls += 1;
    if (outcome.calls > 1) return;
    const s = sides[trigger.subject];
    outcome.stateBefore = s.handle.state();
    outcome.depth += 1;
    try {
      outcome.result = method(s);
    } catch (error) {
      outcome.error = error;
    } finally {
      outcome.depth -= 1;
    }
    outcome.disposedAtCall = s.disposed;
  };
  const open = (i) => {
    const baton = createBaton({ namespace: 'reentry', id: `t${i}`, env: tabs[i].env, heartbeatMs: 40 });
    const side = { baton, disposed: false, changes: [] };
    const dispose = baton.dispose;
    side.baton = { ...baton, dispose: () => { side.disposed = true; dispose(); } };
    side.handle = baton.lead(RESOURCE, trigger.run && trigger.subject === i ? { run: trigger.run(call) } : undefined);
    side.handle.onChange((c) => side.changes.push(c.type));
    if (trigger.arm && trigger.subject === i) trigger.arm(side, call);
    sides[i] = side;
    return side;
  };
  try {
    const a = open(0);
    await waitFor(() => a.changes.includes('elected'), { what: 't0 elected' });
    const b = open(1);
    await waitFor(() => b.changes.includes('leader-changed'), { what: 't1 heard of a leader' });
    if (a.handle.state() === 'leader') trigger.provoke?.(a);
    await waitFor(() => outcome.calls > 0, { what: `${triggerName} ran` });

    const s = sides[trigger.subject];
    const { error, result } = outcome;
    if (error) {
      const allowed =
        (error.code === 'DISPOSED' && methodName.startsWith('baton.lead') && outcome.disposedAtCall) ||
        (/already leads/.test(error.message) && methodName === 'baton.lead(same resource)' && outcome.stateBefore !== 'released');
      assert.ok(allowed, `unexpected ${error.name}: ${error.message}`);
    }
    assert.equal(outcome.nested, 0, 'no callback ran inside the call it made');
    // A handle lead() returned is alive: it never comes back already released.
    const extra = methodName.startsWith('baton.lead') && result ? result : null;
    if (extra) {
      assert.equal(s.disposed, false, 'lead() returned a handle from a disposed Baton');
      assert.notEqual(extra.state(), 'released', 'lead() returned a dead handle');
    }
    // The election goes on: exactly one leader among the live handles of the resource.
    const live = () => [a.handle, b.handle, extra?.resource === RESOURCE ? extra : null].filter((h) => h && h.state() !== 'released');
    await waitFor(() => live().filter((h) => h.state() === 'leader').length === 1, { what: 'one leader among the live handles' });
    if (extra) await waitFor(() => extra.state() !== 'candidate', { what: 'the new handle settles' });
    assert.equal(outcome.nested, 0);
    assert.deepEqual(reported, [], 'nothing was reported as an error');
    for (const side of sides) assert.equal(side.baton.metrics().glue.listenerErrors, 0);
  } finally {
    for (const side of sides) side?.baton.dispose();
  }
}

describe('every public method from every callback', () => {
  for (const triggerName of Object.keys(TRIGGERS)) {
    for (const methodName of Object.keys(METHODS)) {
      test(`${methodName} inside ${triggerName}`, () => runCase(triggerName, methodName));
    }
  }
});

describe('dispose() and lead() during dispose', () => {
  test("dispose() from onChange('released') returns once; lead() there throws DISPOSED", async () => {
    const { tabs } = openTabs(1);
    const baton = createBaton({ namespace: 'reentry2', env: tabs[0].env });
    const handles = [baton.lead('a'), baton.lead('b')];
    const seen = [];
    for (const handle of handles) {
      handle.onChange((change) => {
        if (change.type !== 'released') return;
        seen.push(change.resource);
        baton.dispose();
        assert.throws(() => baton.lead('c'), (e) => e.code === 'DISPOSED' && /dispose/.test(e.message));
      });
    }
    await waitFor(() => handles[0].state() === 'leader' && handles[1].state() === 'leader');
    baton.dispose();
    assert.deepEqual(seen, ['a', 'b'], "each handle heard 'released' once, before dispose() returned");
    assert.deepEqual(reported, []);
  });
});
