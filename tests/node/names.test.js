// Names: distinct (namespace, resource) pairs never share a lock, a channel or an epoch
// counter; every string the API accepts comes back unchanged through the core; a string
// the core could not carry unchanged (a lone surrogate, over the length limit) is a
// TypeError naming the option, up front.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, leaderElection } from 'tab-baton';
import { createBrowser } from 'tab-baton/testing';
import { isMarker, openTabs, waitFor } from './helpers/tabs.js';

// The wire's limits as the core states them (generated from wasm/core/wire.h).
import { LIMITS } from '../../js-glue/src/constants.js';

/** A tab env that records the names of the channels it opens. */
function recordingTab(browser) {
  const tab = browser.tab();
  const channels = [];
  class Channel extends tab.BroadcastChannel {
    constructor(name) {
      super(name);
      channels.push(name);
    }
  }
  return { env: { ...tab, BroadcastChannel: Channel }, channels };
}

describe('names', () => {
  test('distinct (namespace, resource) pairs get distinct locks and channels; plain names keep their format', async (t) => {
    const pairs = [
      ['app', 'x/v1/y'],
      ['app/v1/x', 'y'],
      ['app', 'x%2Fv1%2Fy'],
      ['app%2Fv1%2Fx', 'y'],
      ['app/v1', 'x'],
      ['app', 'v1/x'],
      ['a%', 'b'],
      ['a', '%b'],
      ['my-app', 'websocket-owner'],
    ];
    const browser = createBrowser();
    const runs = pairs.map(([namespace, resource]) => {
      const { env, channels } = recordingTab(browser);
      const baton = createBaton({ namespace, env });
      t.after(() => baton.dispose());
      return { namespace, baton, handle: baton.lead(resource), channels };
    });
    // Every pair leads at once: none waits on another's lock.
    await waitFor(() => runs.every((r) => r.handle.state() === 'leader'), { what: 'every pair leads its own lock' });
    const held = (await browser.locks.query()).held.map((l) => l.name).filter((name) => !isMarker(name));
    assert.equal(new Set(held).size, pairs.length, `distinct lock names: ${held.join(', ')}`);
    const channels = runs.map((r) => r.channels[0]);
    assert.equal(new Set(channels).size, new Set(pairs.map(([ns]) => ns)).size, `distinct channel per namespace: ${channels.join(', ')}`);
    // And a tab hears the tabs of its own namespace only.
    for (const r of runs) {
      const same = runs.filter((o) => o !== r && o.namespace === r.namespace).map((o) => o.baton.id).sort();
      await waitFor(() => r.baton.presence().length === same.length, { what: `${r.namespace}: presence of its namespace` });
      assert.deepEqual(r.baton.presence().map((p) => p.id).sort(), same, `${r.namespace} hears only its own namespace`);
    }
    assert.ok(held.includes('baton/my-app/v1/websocket-owner'), 'a plain name reads as documented');
    assert.equal(channels.at(-1), 'baton/my-app/v1');
    assert.ok(held.includes('baton/app/v1/x%2Fv1%2Fy') && held.includes('baton/app%2Fv1%2Fx/v1/y'), 'separators are percent-encoded');
  });

  test('every accepted string comes back unchanged through the core', async (t) => {
    const strings = {
      emoji: { id: 'tab-🦊', resource: 'ws/🦊', appVersion: '2.0-β', capability: 'cap/ü' },
      nul: { id: 'a\u0000b', resource: 'r\u0000', appVersion: '1\u0000', capability: 'c\u0000' },
      // At the limit exactly, in multi-byte characters (3 bytes each, plus padding).
      longest: {
        id: `${'€'.repeat(Math.floor(LIMITS.idBytes / 3))}${'x'.repeat(LIMITS.idBytes % 3)}`,
        resource: `${'€'.repeat(Math.floor(LIMITS.resourceBytes / 3))}${'x'.repeat(LIMITS.resourceBytes % 3)}`,
        appVersion: 'v'.repeat(LIMITS.versionBytes),
        capability: '😀'.repeat(LIMITS.capabilityBytes / 4),
      },
    };
    for (const [label, s] of Object.entries(strings)) {
      const { tabs } = openTabs(2);
      const make = (i, id) => createBaton({ namespace: `rt-${label}`, env: tabs[i].env, id, appVersion: s.appVersion, capabilities: [s.capability], heartbeatMs: 40 });
      const a = make(0, s.id);
      const b = make(1, undefined);
      t.after(() => { a.dispose(); b.dispose(); });
      const handle = a.lead(s.resource, { eligible: { capability: s.capability } });
      const other = b.lead(s.resource, { eligible: { capability: s.capability } });
      await waitFor(() => handle.state() === 'leader' && other.leader()?.id === s.id, { what: `${label}: a leads and b knows it` });
      assert.equal(handle.token().resource, s.resource, `${label}: token.resource`);
      assert.equal(handle.token().owner, s.id, `${label}: token.owner`);
      assert.equal(handle.leader().id, s.id, `${label}: leader().id`);
      assert.equal(handle.leader().isMe, true, `${label}: isMe`);
      assert.equal(other.state(), 'follower', `${label}: b follows`);
      const seen = b.presence().find((p) => p.id === s.id);
      assert.ok(seen, `${label}: b sees a in presence`);
      assert.equal(seen.appVersion, s.appVersion, `${label}: appVersion`);
      assert.deepEqual(seen.capabilities, [s.capability], `${label}: capabilities`);
      assert.ok(a.log().some((tr) => tr.resource === s.resource && tr.to === 'leader'), `${label}: log resource`);
    }
  });

  test('lone surrogates and over-long names: a TypeError naming the option', () => {
    const env = createBrowser().tab();
    const lone = ['\uD800', 'a\uDC00', '\uDC00\uD800', 'x\uDBFFy'];
    const over = (bytes) => 'x'.repeat(bytes + 1);
    const rejects = (fn, name) => assert.throws(fn, (e) => e instanceof TypeError && e.message.includes(`"${name}"`), `${name}`);
    for (const bad of lone) {
      rejects(() => createBaton({ namespace: bad, env }), 'namespace');
      rejects(() => createBaton({ namespace: 'n', id: bad, env }), 'id');
      rejects(() => createBaton({ namespace: 'n', appVersion: bad, env }), 'appVersion');
      rejects(() => createBaton({ namespace: 'n', capabilities: ['ok', bad], env }), 'capabilities');
      rejects(() => leaderElection.create({ channel: 'c', id: bad, env }), 'id');
      const baton = createBaton({ namespace: 'n', env });
      rejects(() => baton.lead(bad), 'resource');
      rejects(() => baton.lead('r', { eligible: { capability: bad } }), 'capability');
      baton.dispose();
    }
    rejects(() => createBaton({ namespace: over(128), env }), 'namespace');
    rejects(() => createBaton({ namespace: 'n', id: over(LIMITS.idBytes), env }), 'id');
    rejects(() => createBaton({ namespace: 'n', appVersion: over(LIMITS.versionBytes), env }), 'appVersion');
    rejects(() => createBaton({ namespace: 'n', capabilities: [over(LIMITS.capabilityBytes)], env }), 'capabilities');
    rejects(() => createBaton({ namespace: 'n', capabilities: Array(LIMITS.capabilities + 1).fill('c'), env }), 'capabilities');
    const baton = createBaton({ namespace: 'n'.repeat(128), env });
    rejects(() => baton.lead(over(LIMITS.resourceBytes)), 'resource');
    rejects(() => baton.lead('€'.repeat(Math.ceil((LIMITS.resourceBytes + 1) / 3))), 'resource');
    baton.dispose();
  });
});
