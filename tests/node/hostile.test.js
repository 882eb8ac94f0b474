// A healthy Web Locks leader keeps leading through hostile frames of every kind (forged
// claims, presence with real ids, abdicate requests, replays, malformed bytes), sent by a
// same-origin "tab" with no Baton code; no frame moves the durable epoch floor, hides the
// real tabs or vetoes the next leader. Then a burst of 20 000 frames: the leader's CPU per
// frame is printed, the drops are counted. (The same in Chromium: tests/browser/hostile.test.js.)
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton } from 'tab-baton';
import { openTabs, sleep, waitFor } from './helpers/tabs.js';
import { encodeFrame, hostileFrames } from '../browser/pages/forge.js';

const RESOURCE = 'ws';
// Long enough that a loaded machine's late timers do not read as a stalled leader.
const HEARTBEAT_MS = 200;
const SUSPECT_MS = 3 * HEARTBEAT_MS;

/** Three real tabs leading RESOURCE, a hostile channel, and the frames the real tabs sent. */
async function group(t, namespace, heartbeatMs = HEARTBEAT_MS) {
  const { browser, tabs } = openTabs(3);
  const batons = tabs.map((tab) => createBaton({ namespace, id: tab.id, env: tab.env, heartbeatMs }));
  const handles = batons.map((baton) => baton.lead(RESOURCE));
  const evil = new browser.BroadcastChannel(`baton/${namespace}/v1`);
  const captured = [];
  evil.onmessage = (event) => captured.push(event.data);
  t.after(() => {
    evil.close();
    for (const baton of batons) baton.dispose();
  });
  await waitFor(() => handles.filter((h) => h.state() === 'leader').length === 1 && handles.every((h) => h.leader()), { what: 'one leader everyone knows' });
  const li = handles.findIndex((h) => h.state() === 'leader');
  const leader = { index: li, id: batons[li].id, epoch: handles[li].token().epoch };
  await waitFor(() => handles.every((h) => h.leader()?.id === leader.id), { what: 'every tab agrees' });
  return { tabs, batons, handles, evil, captured, leader, ids: batons.map((b) => b.id) };
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
  const next = await waitFor(() => rest.find((h) => h.state() === 'leader'), { what: `${label}: a next leader`, timeoutMs: 20 * SUSPECT_MS });
  assert.equal(next.token().epoch, leader.epoch + 1, `${label}: the epoch floor did not move (next term ${next.token().epoch})`);
}

/** Real tabs are seen as themselves (generation 1, their app version) by every other tab. */
async function assertPresenceHonest(g, label) {
  const { batons, ids } = g;
  await waitFor(() => batons.every((b) => ids.filter((id) => id !== b.id).every((id) => {
    const seen = b.presence().find((p) => p.id === id);
    return seen && seen.generation === 1 && seen.appVersion === '0' && seen.liveness === 'alive';
  })), { what: `${label}: every tab sees the real tabs as they are, within one suspect timeout`, timeoutMs: SUSPECT_MS + 4 * HEARTBEAT_MS });
}

const metricsOf = (g) => g.batons.map((b) => b.metrics());

/**
 * Kinds the core does not withstand yet (issue 9): run and reported as todo, not hidden.
 * A forged presence with appVersion '999' makes the leader step down ('app-version') and
 * no real tab may lead while it is seen; presence frames with the real ids at generation
 * 2^32-1 make every later frame of the real tabs stale, so followers lose the leader.
 */
const PENDING = {
  'appVersion 999': 'the core trusts any live candidate\'s app version (newestAppOnly): bound per sender pending in the core',
  'presence of <tab> at generation 2^32-1': 'the core keeps the highest generation a frame claims: bound per sender pending in the core',
};
const kindOf = (label) => label.replace(/presence of \S+/, 'presence of <tab>');

describe('hostile frames against a healthy Web Locks leader', () => {
  const labels = hostileFrames({ resource: RESOURCE, leader: 'x', epoch: 1, ids: ['x', 'y', 'z'] }).map(([label]) => label);
  const kinds = [...new Set(labels.map(kindOf)), 'replayed frame'];

  for (const kind of kinds) {
    test(`${kind}: 4 per heartbeat for 3 suspect timeouts, the leader keeps leading`, { todo: PENDING[kind] }, async (t) => {
      const g = await group(t, `hostile-${kind.replace(/\W+/g, '-')}`);
      await sleep(2 * HEARTBEAT_MS); // capture some real frames to replay
      const replays = g.captured.slice(0, 8);
      const frames = hostileFrames({ resource: RESOURCE, leader: g.leader.id, epoch: g.leader.epoch, ids: g.ids, replays })
        .filter(([label]) => kindOf(label) === kind);
      assert.ok(frames.length > 0, `frames of kind ${kind}`);
      const before = metricsOf(g);
      const end = Date.now() + 3 * SUSPECT_MS;
      let sent = 0;
      while (Date.now() < end) {
        for (const [, bytes] of frames) g.evil.postMessage(bytes);
        sent += frames.length;
        await sleep(HEARTBEAT_MS / 4);
      }
      await sleep(HEARTBEAT_MS);
      assertUndisturbed(g, before, kind);
      const after = metricsOf(g);
      if (kind.startsWith('malformed')) {
        for (let i = 0; i < after.length; i += 1) assert.ok(after[i].droppedMalformed - before[i].droppedMalformed >= sent, `tab ${i} counted every malformed frame`);
      }
      if (kind === 'claim of 2^40') {
        for (let i = 0; i < after.length; i += 1) assert.ok(after[i].droppedForgedEpoch - before[i].droppedForgedEpoch >= sent, `tab ${i} dropped every claim of 2^40 as forged`);
      }
      if (kind.startsWith('claim of epoch+1')) {
        assert.ok(after[g.leader.index].epochConflicts > before[g.leader.index].epochConflicts, 'the leader counted the conflicting claims');
      }
      if (kind.startsWith('presence of')) await assertPresenceHonest(g, kind);
      await assertNextTerm(g, kind);
    });
  }

  // Three tabs share one process here, so a heartbeat long enough for the whole burst to be
  // handled before a tick is overdue; the pending kinds are left out (see PENDING).
  test('a burst of 20 000 frames of every kind but the pending ones: the leader keeps leading; CPU per frame', async (t) => {
    const g = await group(t, 'hostile-burst', 5000);
    const frames = hostileFrames({ resource: RESOURCE, leader: g.leader.id, epoch: g.leader.epoch, ids: g.ids, replays: g.captured.slice(0, 8) })
      .filter(([label]) => !PENDING[kindOf(label)]);
    const before = metricsOf(g);
    const BURST = 20000;
    const cpu = process.cpuUsage();
    const received = () => g.batons[g.leader.index].metrics().framesReceived;
    const start = received();
    for (let i = 0; i < BURST; i += 1) g.evil.postMessage(frames[i % frames.length][1]);
    await waitFor(() => received() - start >= BURST, { what: 'the leader handled the burst', timeoutMs: 60000 });
    const used = process.cpuUsage(cpu);
    // Three tabs share this process and each handles every frame.
    const perFrameUs = (used.user + used.system) / (BURST * g.batons.length);
    console.log(`# burst: ${BURST} hostile frames to 3 tabs in one process: ${perFrameUs.toFixed(1)} µs CPU per frame per tab (includes the in-memory channel)`);
    assertUndisturbed(g, before, 'burst');
    const leaderAfter = g.batons[g.leader.index].metrics();
    const malformedSent = Math.floor(BURST / frames.length) * frames.filter(([l]) => l.startsWith('malformed')).length;
    console.log(`# burst counters at the leader: droppedMalformed +${leaderAfter.droppedMalformed - before[g.leader.index].droppedMalformed}, droppedForgedEpoch +${leaderAfter.droppedForgedEpoch - before[g.leader.index].droppedForgedEpoch}, epochConflicts +${leaderAfter.epochConflicts - before[g.leader.index].epochConflicts}, droppedStaleGeneration +${leaderAfter.droppedStaleGeneration - before[g.leader.index].droppedStaleGeneration}`);
    assert.ok(leaderAfter.droppedMalformed - before[g.leader.index].droppedMalformed >= malformedSent, 'every malformed frame counted');
    await assertPresenceHonest(g, 'burst');
    await assertNextTerm(g, 'burst');
  });
});

// The encoder must match the core: a frame made here is accepted like a real one.
test('forge.js speaks the wire format: a made-up tab shows up in presence', async (t) => {
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
