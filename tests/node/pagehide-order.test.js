// pagehide under Web Locks: the held lock goes back in the first microtask after the
// handler (when the promise its grant returned settles), whatever the handler does after
// resolving it. So Baton's handler does only the closing step and the release; the goodbye,
// the leadership notices and the app's callbacks come after the release, and the next tab
// in the queue leads on the next epoch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton } from 'tab-baton';
import { isMarker, leaderIndexes, openTabs, waitFor } from './helpers/tabs.js';

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
      log.push('post');
      super.postMessage(data);
    }
  };
}

test('pagehide: the lock goes back before the goodbye, the notices and the callbacks', async (t) => {
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

  const next = await waitFor(() => {
    const leaders = leaderIndexes(handles);
    return leaders.length === 1 && leaders[0] !== leader && leaders[0];
  }, { what: 'the next tab leads' });
  assert.equal(handles[next].token().epoch, epoch + 1);
  const released = log.indexOf('released');
  assert.ok(released >= 0, `the lock went back: ${log.join(', ')}`);
  assert.equal(log.indexOf('marker released'), released - 1, `the marker went back just before the lock: ${log.join(', ')}`);
  assert.equal(log[released + 1], 'post', `the goodbye follows the release: ${log.join(', ')}`);
  assert.ok(log.indexOf('onChange deposed') > released + 1, `the callbacks come after the goodbye: ${log.join(', ')}`);
});
