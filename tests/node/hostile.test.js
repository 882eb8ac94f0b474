// A healthy Web Locks leader, and a healthy IndexedDB lease holder, keep leading through
// hostile frames of every kind (forged claims, presence with real ids, abdicate requests,
// replays, malformed bytes), sent by a same-origin "tab" with no Baton code; no frame moves
// the durable epoch floor or the lease record, hides the real tabs or vetoes the next leader. (A burst of 20 000 frames/s needs each tab in its own
// process: three tabs in one Node process stall their own timers, and the core rightly
// reads that as a stalled leader.)
// The tabs run on a virtual clock: the streams, the suspect timeouts and the bounds are
// virtual time, so a loaded machine's late timers cannot read as a stalled leader.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, load } from 'tab-baton';
import { createIndexedDB } from 'tab-baton/testing';
import { openTabs, waitFor } from './helpers/tabs.js';
import { virtualClock } from './helpers/virtual-clock.js';
import { encodeFrame, hostileFrames, kindOf, VERSION } from '../browser/pages/forge.js';
import { PROTOCOL_VERSION } from '../../js-glue/src/constants.js';

const RESOURCE = 'ws';
const HEARTBEAT_MS = 500;
const SUSPECT_MS = 3 * HEARTBEAT_MS;
await load(); // the core loads in real time: have it before time is virtual

/**
 * Three real tabs leading RESOURCE, a hostile channel, and the frames the real tabs sent.
 * `lease`: no Web Locks; the IndexedDB lease (an in-memory store, `idb`) is the authority.
 * The tabs' time is `clock`'s.
 */
async function group(t, namespace, { lease = false } = {}) {
  const idb = lease ? createIndexedDB() : null;
  const clock = virtualClock();
  const { browser, tabs } = openTabs(3, { clock, ...(lease ? { indexedDB: idb.indexedDB } : {}) });
  if (lease) for (const tab of tabs) tab.env.locks = undefined;
  const authority = lease ? 'lease' : 'auto';
  const batons = tabs.map((tab) => createBaton({ namespace, id: tab.id, env: tab.env, heartbeatMs: HEARTBEAT_MS, authority }));
  const handles = batons.map((baton) => baton.lead(RESOURCE));
  const evil = new browser.BroadcastChannel(`baton/${namespace}/v1`);
  const captured = [];
  evil.onmessage = (event) => captured.push(event.data);
  t.after(() => {
    evil.close();
    for (const baton of batons) baton.dispose();
  });
  await clock.until(() => handles.filter((h) => h.state() === 'leader').length === 1 && handles.every((h) => h.leader()), { what: 'one leader everyone knows' });
  const li = handles.findIndex((h) => h.state() === 'leader');
  const leader = { index: li, id: batons[li].id, epoch: handles[li].token().epoch };
  await clock.until(() => handles.every((h) => h.leader()?.id === leader.id), { what: 'every tab agrees' });
  if (lease) assert.equal(batons[li].metrics().mode, 'lease');
  return { tabs, batons, handles, evil, captured, leader, ids: batons.map((b) => b.id), idb, namespace, clock };
}

/** Lease mode: the record names the leader with its term (no frame moved the stored epoch). */
function assertLeaseRecord(g, owner, epoch, label) {
  if (!g.idb) return;
  const record = g.idb.peek(`baton/${g.namespace}`, 'leases', `v1/${RESOURCE}`);
  assert.equal(record?.owner, owner, `${label}: the lease record names the leader`);
  assert.equal(record?.epoch, epoch, `${label}: the lease record keeps its epoch`);
}

/** The leader still leads with its term, no tab stepped down or saw another leader. */
function assertUndisturbed(g, before, label) {
  const { handles, batons, leader } = g;
  const why = batons[leader.index].log().filter((tr) => tr.from === 'leader').map((tr) => tr.reason);
  assert.equal(handles[leader.index].state(), 'leader', `${label}: the leader still leads (stepped down: ${why.join(', ')})`);
  assert.equal(handles[leader.index].token().epoch, leader.epoch, `${label}: with the same term`);
  assert.equal(batons[leader.index].metrics().stepDowns, before[leader.index].stepDowns, `${label}: it never stepped down`);
  handles.forEach((h, i) => {
    assert.equal(h.leader()?.id, leader.id, `${label}: tab ${i} names the real leader`);
    assert.equal(batons[i].metrics().termsWon, before[i].termsWon, `${label}: tab ${i} started no term`);
  });
}

/** After the leader leaves, the next term comes at once, numbered right after the leader's. */
async function assertNextTerm(g, label) {
  const { handles, batons, leader } = g;
  batons[leader.index].dispose();
  const rest = handles.filter((_, i) => i !== leader.index);
  await g.clock.until(() => rest.some((h) => h.state() === 'leader'), { what: `${label}: a next leader`, limitMs: 20 * SUSPECT_MS });
  const next = rest.find((h) => h.state() === 'leader');
  assert.equal(next.token().epoch, leader.epoch + 1, `${label}: the epoch floor did not move (next term ${next.token().epoch})`);
  assertLeaseRecord(g, batons[handles.indexOf(next)].id, leader.epoch + 1, `${label}, next term`);
}

/** Real tabs are seen as themselves (generation 1, their app version) by every other tab. */
async function assertPresenceHonest(g, label) {
  const { batons, ids } = g;
  await g.clock.until(() => batons.every((b) => ids.filter((id) => id !== b.id).every((id) => {
    const seen = b.presence().find((p) => p.id === id);
    return seen && seen.generation === 1 && seen.appVersion === '0' && seen.liveness === 'alive';
  })), { what: `${label}: every tab sees the real tabs as they are, within one suspect timeout`, limitMs: SUSPECT_MS + 4 * HEARTBEAT_MS });
}

const metricsOf = (g) => g.batons.map((b) => b.metrics());

const labels = hostileFrames({ resource: RESOURCE, leader: 'x', epoch: 1, ids: ['x', 'y', 'z'] }).map(([label]) => label);
const KINDS = [...new Set(labels.map(kindOf)), 'replayed frame'];
// The presence kinds: each forged sender touches the table (a made-up newer version, the
// real ids at generation 2^32-1), which the core bounds per sender.
const PRESENCE_KINDS = ['appVersion 999', 'presence of <tab> at generation 2^32-1'];

/** Streams the frames `pick` selects (4 per heartbeat each) for 3 suspect timeouts, then checks the leader. */
async function withstand(t, label, pick, options) {
  const g = await group(t, `${options.lease ? 'lease-' : ''}hostile-${label.replace(/\W+/g, '-')}`, options);
  await g.clock.run(2 * HEARTBEAT_MS); // capture some real frames to replay
  const frames = hostileFrames({ resource: RESOURCE, leader: g.leader.id, epoch: g.leader.epoch, ids: g.ids, replays: g.captured.slice(0, 8) })
    .filter(([frameLabel]) => pick(kindOf(frameLabel)));
  assert.ok(frames.length > 0, `frames for ${label}`);
  const before = metricsOf(g);
  const sent = {};
  const end = g.clock.now() + 3 * SUSPECT_MS;
  while (g.clock.now() < end) {
    for (const [frameLabel, bytes] of frames) {
      g.evil.postMessage(bytes);
      sent[kindOf(frameLabel)] = (sent[kindOf(frameLabel)] ?? 0) + 1;
    }
    await g.clock.run(HEARTBEAT_MS / 4);
  }
  await g.clock.run(HEARTBEAT_MS);
  assertUndisturbed(g, before, label);
  assertLeaseRecord(g, g.leader.id, g.leader.epoch, label);
  const after = metricsOf(g);
  const malformed = Object.entries(sent).filter(([k]) => k.startsWith('malformed')).reduce((n, [, v]) => n + v, 0);
  const li = g.leader.index;
  const d = (key) => after[li][key] - before[li][key];
  console.log(`# ${options.lease ? 'lease: ' : ''}${label}: sent ${JSON.stringify(sent)}; at the leader: droppedMalformed +${d('droppedMalformed')}, droppedForgedEpoch +${d('droppedForgedEpoch')}, epochConflicts +${d('epochConflicts')}, droppedStaleGeneration +${d('droppedStaleGeneration')}, droppedOldFrame +${d('droppedOldFrame')}`);
  for (let i = 0; i < after.length; i += 1) {
    assert.ok(after[i].droppedMalformed - before[i].droppedMalformed >= malformed, `tab ${i} counted every malformed frame`);
    if (sent['claim of 2^40']) assert.ok(after[i].droppedForgedEpoch - before[i].droppedForgedEpoch >= sent['claim of 2^40'], `tab ${i} dropped every claim of 2^40 as forged`);
  }
  if (Object.keys(sent).some((k) => k.startsWith('claim of epoch+1'))) {
    assert.ok(after[li].epochConflicts > before[li].epochConflicts, 'the leader counted the conflicting claims');
  }
  if (sent['presence of <tab> at generation 2^32-1']) {
    assert.ok(after.every((m, i) => m.droppedStaleGeneration > before[i].droppedStaleGeneration), 'every tab dropped the forged generation');
  }
  if (Object.keys(sent).some((k) => k.startsWith('presence of'))) await assertPresenceHonest(g, label);
  await assertNextTerm(g, label);
}

/**
 * A steady stream of one presence kind from the start of a term: whatever it does is over
 * within one suspect timeout, after which one real tab leads for good while it goes on.
 */
async function bounded(t, kind, options) {
  const g = await group(t, `${options.lease ? 'lease-' : ''}bounded-${kind.replace(/\W+/g, '-')}`, options);
  const frames = hostileFrames({ resource: RESOURCE, leader: g.leader.id, epoch: g.leader.epoch, ids: g.ids })
    .filter(([label]) => kindOf(label) === kind);
  // The stream: a virtual timer, so that it goes on while the clock runs.
  let streaming = true;
  const stream = () => {
    if (!streaming) return;
    for (const [, bytes] of frames) g.evil.postMessage(bytes);
    g.clock.setTimeout(stream, HEARTBEAT_MS / 4);
  };
  stream();
  try {
    // One suspect timeout for the forged sender's effect to end, and room for an election.
    await g.clock.run(SUSPECT_MS + 3 * HEARTBEAT_MS);
    const oneLeader = () => {
      const leaders = g.handles.filter((h) => h.state() === 'leader');
      return leaders.length === 1 && g.handles.every((h) => h.leader()?.id === leaders[0].leader().id) && leaders[0];
    };
    await g.clock.until(oneLeader, { what: `${kind}: one real leader everyone names, while the stream goes on`, limitMs: 2 * SUSPECT_MS });
    const settled = oneLeader();
    const term = settled.token().epoch;
    const before = metricsOf(g);
    await g.clock.run(2 * SUSPECT_MS); // the same frames keep coming
    const li = g.handles.indexOf(settled);
    const why = g.batons[li].log().filter((tr) => tr.from === 'leader').map((tr) => tr.reason);
    assert.equal(settled.state(), 'leader', `${kind}: the leader keeps leading once the bound passed (stepped down: ${why.join(', ')})`);
    assert.equal(settled.token().epoch, term, `${kind}: with the same term`);
    g.handles.forEach((h, i) => {
      assert.equal(g.batons[i].metrics().termsWon, before[i].termsWon, `${kind}: tab ${i} started no term once the bound passed`);
      assert.equal(h.leader()?.id, g.batons[li].id, `${kind}: tab ${i} names the leader`);
    });
    assert.ok(term <= g.leader.epoch + 2, `${kind}: at most two terms lost to the forged sender (epoch ${g.leader.epoch} -> ${term})`);
    assertLeaseRecord(g, g.batons[li].id, term, kind);
  } finally {
    streaming = false;
  }
}

describe('hostile frames against a healthy Web Locks leader', () => {
  const options = {};
  test(`every kind at once (${KINDS.join('; ')}): the leader keeps leading`, (t) => withstand(t, 'every kind', () => true, options));
  for (const kind of PRESENCE_KINDS) {
    test(`${kind} alone: the leader keeps leading`, (t) => withstand(t, kind, (k) => k === kind, options));
    test(`${kind}: what it does is bounded to one suspect timeout; then a real tab leads for good`, (t) => bounded(t, kind, options));
  }
});

// Under the lease, as under Web Locks, nothing a frame says deposes the holder of the
// authority (the lease record) or moves the stored epoch.
describe('hostile frames against a healthy lease holder (IndexedDB lease)', () => {
  const options = { lease: true };
  test('every kind at once: the holder keeps leading, the lease record keeps its owner and epoch', (t) => withstand(t, 'every kind', () => true, options));
  for (const kind of PRESENCE_KINDS) {
    test(`${kind}: bounded to one suspect timeout; then a real tab leads for good`, (t) => bounded(t, kind, options));
  }
});

// The encoder must match the core: a frame made here is accepted like a real one.
test('forge.js speaks the wire format: a made-up tab shows up in presence', async (t) => {
  assert.equal(VERSION, PROTOCOL_VERSION, 'forge.js writes the wire version the core speaks');
  const { browser, tabs } = openTabs(1);
  const baton = createBaton({ namespace: 'forge', env: tabs[0].env, heartbeatMs: HEARTBEAT_MS });
  const evil = new browser.BroadcastChannel('baton/forge/v1');
  t.after(() => { evil.close(); baton.dispose(); });
  evil.postMessage(encodeFrame({ kind: 'presence', sender: 'made-up', appVersion: '7', capabilities: ['c'] }));
  const seen = await waitFor(() => baton.presence().find((p) => p.id === 'made-up'));
  assert.equal(seen.appVersion, '7');
  assert.deepEqual(seen.capabilities, ['c']);
  assert.equal(baton.metrics().droppedMalformed, 0);
});
