// Chromium ignores the abort of a request its lock manager has not received yet (a page's
// first request, aborted in the task that made it): WebLocks aborts only once the lock
// manager has answered the probe it sends after its first request (in a microtask).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WebLocks } from '../../js-glue/src/web-locks.js';

/** A lock manager that records requests and never grants; a probe answered by hand. */
function setup() {
  const requests = [];
  const locks = {
    request(name, options, callback) {
      requests.push({ name, options, callback });
      return new Promise(() => {});
    },
  };
  let answer;
  const probes = [];
  const probe = {
    refused: () => assert.fail('refused'),
    answered: () => {},
    run: () => {
      probes.push(requests.length);
      return new Promise((resolve) => { answer = resolve; });
    },
  };
  const counters = { staleGrants: 0, locksLost: 0, lockErrors: 0, foreignHolderWaits: 0, markersLost: 0 };
  const web = new WebLocks(locks, (r) => `lock/${r}`, () => {}, counters, (r) => `lock/${r}/w2`, probe);
  return { web, requests, probes, answerProbe: () => answer(null), counters };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

test('the first request goes out at once; its abort waits for the probe, a later one does not', async () => {
  const { web, requests, probes, answerProbe, counters } = setup();
  web.request('a', 'queue');
  assert.equal(requests.length, 1, 'the request goes out in the calling task');
  assert.equal(requests[0].name, 'lock/a');
  assert.deepEqual(probes, [], 'the probe waits for what the calling task asks for next');
  const first = requests[0].options.signal;

  web.release('a'); // given up in the same task, as a StrictMode unmount does
  await flush();
  assert.equal(first.aborted, false, 'not aborted before the lock manager answered');
  // Granted meanwhile (the abort had not reached it): given back at once.
  assert.equal(requests[0].callback({ name: 'lock/a' }), undefined);
  assert.equal(counters.staleGrants, 1);

  assert.deepEqual(probes, [1], 'one probe, sent after the first request');
  answerProbe();
  await flush();
  assert.equal(first.aborted, true, 'aborted once the probe was answered');

  web.request('b', 'queue');
  const second = requests.at(-1).options.signal;
  web.release('b');
  assert.equal(second.aborted, true, 'after the answer, an abort goes at once');
});

test('dispose before the answer: every queued request is aborted once it comes', async () => {
  const { web, requests, answerProbe } = setup();
  web.request('a', 'queue');
  web.request('b', 'queue');
  web.dispose();
  const signals = requests.filter((r) => r.options.signal).map((r) => r.options.signal);
  assert.equal(signals.length, 2);
  await flush(); // the probe goes out in a microtask
  assert.deepEqual(signals.map((s) => s.aborted), [false, false]);
  answerProbe();
  await flush();
  assert.deepEqual(signals.map((s) => s.aborted), [true, true]);
});
