// Nothing survives dispose(): every lifecycle listener the glue added to the document and
// the window is removed again, and no timer of the tab fires afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton } from 'tab-baton';
import { createBrowser } from 'tab-baton/testing';
import { waitFor } from './helpers/tabs.js';

/** An EventTarget that counts the listeners currently attached to it. */
class CountingTarget extends EventTarget {
  attached = 0;
  addEventListener(type, listener, options) {
    this.attached += 1;
    super.addEventListener(type, listener, options);
  }
  removeEventListener(type, listener, options) {
    this.attached -= 1;
    super.removeEventListener(type, listener, options);
  }
}

test('dispose removes every listener and stops every timer', async () => {
  const browser = createBrowser();
  const tab = browser.tab('a');
  const timers = new Set();
  const env = Object.assign(new CountingTarget(), {
    locks: tab.locks,
    BroadcastChannel: tab.BroadcastChannel,
    localStorage: tab.localStorage,
    document: Object.assign(new CountingTarget(), { visibilityState: 'visible' }),
    navigator: { onLine: true },
    setTimeout(fn, ms) {
      const id = setTimeout(() => {
        timers.delete(id);
        fn();
      }, ms);
      timers.add(id);
      return id;
    },
    clearTimeout(id) {
      timers.delete(id);
      clearTimeout(id);
    },
  });

  const baton = createBaton({ namespace: 'listeners', id: 'a', env, heartbeatMs: 20 });
  const handle = baton.lead('ws');
  await waitFor(() => handle.state() === 'leader');
  assert.ok(env.attached > 0 && env.document.attached > 0, 'lifecycle listeners were attached');
  assert.ok(timers.size > 0, 'the heartbeat timer is armed');

  baton.dispose();
  assert.equal(env.attached, 0, 'no window listener survives dispose');
  assert.equal(env.document.attached, 0, 'no document listener survives dispose');
  assert.equal(timers.size, 0, 'no timer is pending after dispose');
  const fired = baton.metrics().glue.timerFires;
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(baton.metrics().glue.timerFires, fired);
  // Events after dispose are harmless.
  env.document.dispatchEvent(new Event('visibilitychange'));
  env.dispatchEvent(new Event('pagehide'));
});
