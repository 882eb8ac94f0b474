// The reducer that decides which talk messages of a term to believe (talk-confirm.js), on
// its own: taken from the confirmed leader, dropped when forged or of an older term, held
// while its term is newer than the confirmed one, and bounded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfirmGate, MAX_HELD } from '../../js-glue/src/talk-confirm.js';

const leader = { id: 'L', epoch: 5 };
const msg = (k, from, epoch) => ({ v: 1, k, from, epoch });

test('verdicts against the confirmed leader', () => {
  const gate = new ConfirmGate(2000);
  assert.equal(gate.verdict(msg('res', 'L', 5), leader), 'take');
  assert.equal(gate.verdict(msg('res', 'evil', 5), leader), 'drop');
  assert.equal(gate.verdict(msg('state', 'L', 4), leader), 'drop');
  assert.equal(gate.verdict(msg('bye', 'anyone', 4), leader), 'take', 'an older term ended: true whoever says it');
  assert.equal(gate.verdict(msg('bye', 'evil', 5), leader), 'drop');
  assert.equal(gate.verdict(msg('lead', 'N', 6), leader), 'wait');
  assert.equal(gate.verdict(msg('lead', 'evil', 2 ** 40), leader), 'wait');
  assert.equal(gate.verdict(msg('lead', 'N', 1), { id: '', epoch: 0 }), 'wait', 'no leader known yet');
  assert.equal(gate.verdict(msg('res', 'evil', 2 ** 40), null), 'take', 'a tab outside the election takes what comes');
  assert.deepEqual(gate.counters, { droppedUnconfirmed: 2, droppedStaleTerm: 1 });
});

test('held messages: taken once confirmed, dropped when their time is up, at most MAX_HELD', () => {
  const gate = new ConfirmGate(2000);
  gate.hold(msg('lead', 'N', 6), 0);
  gate.hold(msg('lead', 'evil', 2 ** 40), 0);
  let out = gate.release(leader, 100);
  assert.deepEqual([out.take.length, out.expired.length, gate.held.length], [0, 0, 2]);
  out = gate.release({ id: 'N', epoch: 6 }, 200);
  assert.deepEqual(out.take.map((m) => m.from), ['N']);
  assert.equal(gate.held.length, 1);
  out = gate.release({ id: 'N', epoch: 6 }, 2000);
  assert.deepEqual(out.expired.map((m) => m.from), ['evil']);
  assert.equal(gate.held.length, 0);
  assert.equal(gate.counters.droppedUnconfirmed, 1);

  for (let i = 0; i < MAX_HELD + 10; i += 1) gate.hold(msg('state', 'evil', 2 ** 40), 3000);
  assert.equal(gate.held.length, MAX_HELD);
  assert.equal(gate.counters.droppedUnconfirmed, 11);
});
