// The relay's reducer (js-glue/src/relay-core.js) on its own: inputs in, decisions out as
// data (deliver, hold, drop, post, open/close the source, write the cursor, abdicate), with
// the time given in every input. No channel, no timer, no storage.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RelayCore, RELAY_PROTOCOL, HOLD_MS, GAP_MS } from '../../js-glue/src/relay-core.js';

const make = (options = {}) => {
  const core = new RelayCore({ selfId: 'me', session: '', compare: null, maxDataBytes: 1024, maxBufferBytes: 4096, silenceMs: 1000, ...options });
  core.setActive(true);
  return core;
};
const msg = (fields) => ({ v: RELAY_PROTOCOL, from: 'L', session: '', ...fields });
const event = (epoch, id, prev, data = id, from = 'L') => msg({ from, kind: 'event', epoch, id, prev, data });
const delivered = (effects) => effects.filter((e) => e.type === 'deliver').map((e) => e.event.id);
const posts = (effects) => effects.filter((e) => e.type === 'post').map((e) => e.message);

test('an event from the confirmed leader of its term is delivered; from anyone else it is dropped', () => {
  const core = make();
  core.confirm('L', 3, 0);
  assert.deepEqual(delivered(core.message(event(3, 1, null), 1)), [1]);
  assert.deepEqual(core.message(event(3, 99, 1, 'x', 'evil'), 2), [], 'another tab at the current epoch');
  assert.deepEqual(core.message(event(2, 99, 1, 'x', 'evil'), 3), [], 'another tab at an older epoch');
  assert.equal(core.last, 1, 'the cursor did not move');
  assert.equal(core.counters.droppedUnconfirmed, 1);
  assert.equal(core.counters.staleDropped, 1);
  assert.deepEqual(delivered(core.message(event(3, 2, 1), 4)), [2]);
});

test('a newer term waits for the core to confirm it, and expires if it never does', () => {
  const core = make();
  core.confirm('L', 3, 0);
  assert.deepEqual(core.message(event(4, 1, null, 1, 'M'), 10), []);
  assert.equal(core.stats().pending, 1);
  assert.deepEqual(delivered(core.confirm('M', 4, 20)), [1], 'delivered once the core confirms M for term 4');
  assert.deepEqual(core.message(event(9, 50, 1, 1, 'X'), 30), []);
  assert.equal(core.nextDeadline(), 30 + HOLD_MS + 1);
  assert.deepEqual(core.tick(31 + HOLD_MS), []);
  assert.equal(core.stats().pending, 0);
  assert.equal(core.counters.droppedUnconfirmed, 1);
  assert.equal(core.last, 1);
});

test('a gap is held and asked for; the replay fills it, then the held event follows', () => {
  const core = make();
  core.confirm('L', 3, 0);
  core.message(event(3, 1, null), 1);
  const effects = core.message(event(3, 4, 3), 2);
  assert.deepEqual(delivered(effects), []);
  assert.deepEqual(posts(effects).map((p) => [p.kind, p.epoch, p.after]), [['replay?', 3, 1]]);
  assert.deepEqual(delivered(core.message(event(3, 5, 4), 3)), [], 'held behind the gap, in order');
  const replay = msg({ kind: 'replay', epoch: 3, events: [{ id: 2, prev: 1, data: 2 }, { id: 3, prev: 2, data: 3 }] });
  assert.deepEqual(delivered(core.message(replay, 4)), [2, 3, 4, 5]);
  assert.equal(core.counters.gapsRepaired, 1);
});

test('a gap nobody can fill is passed after GAP_MS: the tab never stalls', () => {
  const core = make();
  core.confirm('L', 3, 0);
  core.message(event(3, 1, null), 0);
  core.message(event(3, 4, 3), 10);
  assert.equal(posts(core.tick(10 + 300)).length, 1, 'asked again');
  assert.deepEqual(delivered(core.tick(11 + GAP_MS)), [4]);
  assert.equal(core.counters.gapsSkipped, 1);
  assert.equal(core.counters.gapsSeen, 2);
});

test('the leader opens its source after its last id, relays with prev, writes the cursor, serves replays', () => {
  const core = make();
  const start = core.startTerm(5, 10, 0);
  assert.deepEqual(start.map((e) => e.type), ['post', 'open-source']);
  assert.deepEqual([start[0].message.kind, start[0].message.after, start[1].after], ['lead', 10, 10]);
  const open = start[1].open;
  const e11 = core.sourceEvent(open, { id: 11, data: 'a' }, 1);
  assert.deepEqual(e11.map((e) => e.type), ['deliver', 'write-cursor', 'post']);
  assert.deepEqual([e11[2].message.id, e11[2].message.prev, e11[2].message.epoch], [11, 10, 5], "the first event follows the stored cursor");
  const e12 = core.sourceEvent(open, { id: 12, data: 'b' }, 2);
  assert.equal(e12[2].message.prev, 11);
  assert.deepEqual(core.sourceEvent(open, { id: 12, data: 'b' }, 3), [], 'a duplicate from the source');
  assert.deepEqual(core.sourceEvent(open - 1, { id: 13 }, 3), [], 'a late event of a closed opening');
  const served = core.message(msg({ from: 'F', kind: 'replay?', epoch: 5, after: 11 }), 100);
  assert.deepEqual(posts(served).map((p) => [p.kind, p.events.map((e) => e.id)]), [['replay', [12]]]);
  // Older than the buffer: read again from the source, and what comes back goes out as a replay.
  const refetch = core.message(msg({ from: 'F', kind: 'replay?', epoch: 5, after: 7 }), 200);
  assert.deepEqual(refetch.map((e) => e.type), ['close-source', 'open-source']);
  assert.equal(refetch[1].after, 7);
  const again = core.sourceEvent(refetch[1].open, { id: 8, data: 'old' }, 201);
  assert.deepEqual(posts(again).map((p) => [p.kind, p.events[0].id, p.events[0].prev]), [['replay', 8, 7]]);
  assert.deepEqual(delivered(again), []);
});

test('a silent source makes the leader abdicate, unless the tab itself was stalled', () => {
  const core = make();
  core.startTerm(1, null, 0);
  core.tick(500);
  assert.deepEqual(core.tick(1200).map((e) => e.type), ['abdicate']);
  const stalled = make();
  stalled.startTerm(1, null, 0);
  stalled.tick(500);
  assert.deepEqual(stalled.tick(500 + 1000 + 1500), [], 'a tick 3 s late: the tab was frozen, not the source');
});

test('held messages stay within maxBufferBytes; oversized data, however nested, is dropped', () => {
  const core = make();
  core.confirm('L', 3, 0);
  for (let i = 0; i < 100; i += 1) core.message(event(7, i + 1, i || null, 'x'.repeat(900), 'M'), i);
  assert.ok(core.stats().pendingBytes <= 4096);
  assert.ok(core.counters.droppedBufferFull > 90);
  core.message(event(3, 1, null, { a: [{ b: 'y'.repeat(2000) }] }), 200);
  assert.equal(core.counters.droppedOversized, 1);
});

test('an event under the leader\'s own id that forks its chain: the tab steps back to the fork', () => {
  const core = make();
  core.confirm('L', 3, 0);
  core.message(event(3, 1, null), 0);
  core.message(event(3, 2, 1), 1);
  assert.deepEqual(delivered(core.message(event(3, 999999999999, 2, 'forged'), 2)), [999999999999]);
  assert.deepEqual(delivered(core.message(event(3, 3, 2), 3)), [3], 'the real next event is not taken for a duplicate');
  assert.equal(core.counters.forks, 1);
  assert.deepEqual(delivered(core.message(event(3, 4, 3), 4)), [4]);
});

test('messages of another session, version or malformed are counted, never applied', () => {
  const core = make();
  core.confirm('L', 3, 0);
  core.message({ ...event(3, 1, null), session: 'other' }, 0);
  core.message({ ...event(3, 1, null), v: 1 }, 0);
  core.message({ ...event(3, 1, null), prev: 'x' }, 0);
  core.message({ ...event(3, 1, null), epoch: 0 }, 0);
  core.message(msg({ kind: 'replay', epoch: 3, events: [] }), 0);
  assert.deepEqual([core.counters.droppedForeignSession, core.counters.droppedForeignVersion, core.counters.droppedMalformed], [1, 1, 3]);
  assert.equal(core.last, null);
});

test('a forger\'s held message never delays the leader\'s events', () => {
  const core = make();
  core.confirm('L', 3, 0);
  assert.deepEqual(core.message(event(4, 999, null, 'x', 'evil'), 1), []);
  assert.deepEqual(delivered(core.message(event(3, 1, null), 2)), [1], 'not held behind evil');
  assert.equal(core.stats().pending, 1);
});

test("the leader drops its source's oversized event as every tab would: not delivered, not relayed, skipped by the next prev", () => {
  const core = make({ maxDataBytes: 1000 });
  const open = core.startTerm(2, 3, 0)[1].open;
  assert.deepEqual(core.sourceEvent(open, { id: 4, data: 'x'.repeat(2000) }, 1), [], 'neither delivered here nor posted');
  assert.equal(core.counters.droppedOversized, 1);
  assert.equal(core.last, null, 'the cursor did not move');
  const next = core.sourceEvent(open, { id: 5, data: 'ok' }, 2);
  assert.deepEqual(delivered(next), [5]);
  assert.deepEqual(posts(next).map((p) => [p.id, p.prev]), [[5, 3]], 'followers at 3 see no gap');
});
