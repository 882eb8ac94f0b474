// Two tab-baton builds whose wire protocols differ share a lock name but cannot hear each
// other (each drops the other's frames as foreign-version). A follower that hears no leader
// must not steal from a holder of another wire version: it would be stolen back after the
// suspect timeout, forever, aborting every term's run(). The holder's marker lock names its
// wire version, and a steal goes ahead only from a holder of our own.
//
// Tab B plays a build of wire version PROTOCOL_VERSION + 1: its channel rewrites the
// version byte of every frame both ways, and its locks rename the marker it holds and the
// markers it looks for. On a virtual clock, so that the figures are exact.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, load } from 'tab-baton';
import { createBrowser } from 'tab-baton/testing';
import { PROTOCOL_VERSION } from '../../js-glue/src/constants.js';
import { virtualClock } from './helpers/virtual-clock.js';

const OURS = PROTOCOL_VERSION;
const THEIRS = PROTOCOL_VERSION + 1;
const TIMING = { heartbeatMs: 100, suspectMs: 300 };

/** Swaps our wire version and theirs in a frame's version byte (byte 1). */
function swapVersion(data) {
  if (!(data instanceof Uint8Array) || data.length < 2 || (data[1] !== OURS && data[1] !== THEIRS)) return data;
  const copy = data.slice();
  copy[1] = data[1] === OURS ? THEIRS : OURS;
  return copy;
}

/** Swaps the markers of our wire version and theirs in a lock name. */
function swapMarker(name) {
  const mine = `/w${OURS}`;
  const theirs = `/w${THEIRS}`;
  if (name.endsWith(mine)) return name.slice(0, -mine.length) + theirs;
  if (name.endsWith(theirs)) return name.slice(0, -theirs.length) + mine;
  return name;
}

/** The env of a tab that runs a build of the other wire version. */
function otherBuild(tab) {
  class OtherWireChannel extends tab.BroadcastChannel {
    postMessage(data) {
      super.postMessage(swapVersion(data));
    }

    addEventListener(type, listener, options) {
      if (type !== 'message') return super.addEventListener(type, listener, options);
      const rewritten = (event) => listener.call(this, { data: swapVersion(event.data), origin: event.origin, target: this });
      this.rewritten ??= new Map();
      this.rewritten.set(listener, rewritten);
      return super.addEventListener(type, rewritten, options);
    }

    removeEventListener(type, listener, options) {
      return super.removeEventListener(type, this.rewritten?.get(listener) ?? listener, options);
    }
  }
  const locks = {
    request: (name, ...rest) => tab.locks.request(swapMarker(name), ...rest),
    query: async () => {
      const { held, pending } = await tab.locks.query();
      const back = (l) => ({ ...l, name: swapMarker(l.name) });
      return { held: held.map(back), pending: pending.map(back) };
    },
  };
  return { ...tab, BroadcastChannel: OtherWireChannel, locks };
}

test('tabs of two wire versions on one lock: no steal loop, the follower waits as for foreign code', async (t) => {
  await load();
  const clock = virtualClock();
  const browser = createBrowser();
  const envs = [browser.tab('ours'), otherBuild(browser.tab('theirs'))].map((tab) => ({ ...tab, indexedDB: null, ...clock.env() }));
  const batons = ['ours', 'theirs'].map((id, i) => createBaton({ namespace: 'app', id, env: envs[i], ...TIMING }));
  t.after(() => batons.forEach((b) => b.dispose()));
  const aborted = [0, 0];
  const handles = batons.map((b, i) =>
    b.lead('ws', {
      run: (_token, signal) => {
        signal.addEventListener('abort', () => {
          aborted[i] += 1;
        });
      },
    }),
  );
  await clock.run(500);
  const leaders = handles.map((h) => h.state() === 'leader');
  assert.equal(leaders.filter(Boolean).length, 1, 'one leader');
  const first = leaders.indexOf(true);
  const epoch = handles[first].token().epoch;
  // Sanity: the two really cannot hear each other.
  for (const b of batons) assert.ok(b.metrics().droppedForeignVersion > 0, `${b.id} dropped the other's frames`);

  await clock.run(5_000);
  assert.equal(handles[first].state(), 'leader', 'the first holder keeps the lock');
  assert.equal(handles[first].token().epoch, epoch, 'no later term');
  assert.notEqual(handles[1 - first].state(), 'leader');
  assert.deepEqual(aborted, [0, 0], 'no run() aborted');
  for (const b of batons) assert.equal(b.metrics().glue.locksLost, 0, `${b.id} lost no lock`);
  const follower = batons[1 - first].metrics();
  assert.ok(follower.glue.foreignHolderWaits > 0, 'the follower refused to steal from the other wire version');
  assert.equal(follower.glue.foreignHolderWaits, follower.steals, 'each steal the core wanted was refused');
});
