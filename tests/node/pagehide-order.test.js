// pagehide under Web Locks: the held lock goes back in the first microtask after the
// handler (when the promise its grant returned settles), whatever the handler does after
// resolving it. So Baton's handler does only the closing step and the release; the goodbye
// follows in the microtask after the release, and nothing else: the leadership notices and
// the app's callbacks wait for a later task, which a page being torn down never runs. The
// next tab in the queue leads on the next epoch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton } from 'tab-baton';
import { isMarker, leaderIndexes, openTabs, waitFor } from './helpers/tabs.js';

/** Frame kinds by their byte (wasm/core/wire.h). */
const FRAME_KINDS = { 1: 'hello', 2: 'presence', 3: 'heartbeat', 4: 'goodbye', 5: 'abdicate' };

/** Logs, for one tab, when its held lock (and its marker) goes back and when it posts a frame. */
function recordOrder(tab, log) {
  const { env } = tab;
  const request = env.locks.request.bind(env.locks);
  env.locks = {
    request(name, options, callback) {
      return request(name, options, (lock) => {
        const held = callback(lock);
        // Attached before the lock manager's own reaction: runs in the same microtask round.
        const what = isMarker(name) ? 'marker released' : 'released';
        Promise.resolve(held).then(() => log.push(what), () => log.push(what));
        return held;
      });
    },
    query: () => env.locks.query(),
  };
  const Base = env.BroadcastChannel;
  env.BroadcastChannel = class extends Base {
    postMessage(data) {
      log.push(`post ${FRAME_KINDS[data[2]] ?? data[2]}`); // magic, protocol version, kind
      super.postMessage(data);
    }
  };
}

test('pagehide: the lock goes back, then the goodbye; the notices and the callbacks wait for a later task', async (t) => {
  const { tabs } = openTabs(3);
  const logs = tabs.map(() => []);
  tabs.forEach((tab, i) => recordOrder(tab, logs[i]));
  const batons = tabs.map((tab) => createBaton({ namespace: 'pagehide-order', id: tab.id, env: tab.env }));
  t.after(() => batons.forEach((baton) => baton.dispose()));
  const handles = batons.map((baton) => baton.lead('job'));
  const [leader] = await waitFor(() => {
    const leaders = leaderIndexes(handles);
    return leaders.length === 1 && leaders;
  });
  const epoch = handles[leader].token().epoch;
  const log = logs[leader];
  handles[leader].onChange((change) => log.push(`onChange ${change.type}`));

  log.length = 0;
  tabs[leader].fire('window', 'pagehide', { persisted: false });
  // Nothing but the step and the release in the handler: no frame posted yet.
  assert.deepEqual(log, [], 'the handler posts nothing');
  assert.equal(handles[leader].state(), 'follower', 'the state changed at once');
  assert.equal(handles[leader].token(), null);
  // Torn down from here on: none of its timers fire, no frame reaches it.
  tabs[leader].freeze({ deaf: true });
  await new Promise((resolve) => setImmediate(resolve)); // every microtask of the handler has run
  // The marker goes back first (it never outlives the lock); the presence frame (this tab no
  // longer runs) follows the goodbye that names the successor.
  const frames = ['marker released', 'released', 'post goodbye', 'post presence'];
  assert.deepEqual(log, frames, 'after the handler: the release, then the goodbye, and nothing else');

  const next = await waitFor(() => {
    const leaders = leaderIndexes(handles);
    return leaders.length === 1 && leaders[0] !== leader && leaders[0];
  }, { what: 'the next tab leads' });
  assert.equal(handles[next].token().epoch, epoch + 1);
  assert.deepEqual(log, frames, 'no callback ran in the page being torn down');

  // A page that lives on (the bfcache) hears of its term's end in that later task.
  tabs[leader].thaw();
  await waitFor(() => log.includes('onChange deposed'), { what: 'the deposed notice after thawing' });
  assert.deepEqual(log.slice(0, frames.length), frames);
});
