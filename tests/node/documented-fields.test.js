// What index.d.ts says each object has, against what the built package returns: the fields
// of metrics(), support(), presence(), log(), leader(), a change, the talk counters, the
// relay's stats and the test hooks' snapshot, none missing and none unsaid.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createBaton, createLeaderElection, createRelay, enableTestHooks, leaderElection } from 'tab-baton';
import { createBrowser } from 'tab-baton/testing';
import { waitFor } from './helpers/tabs.js';

const types = readFileSync(new URL('../../js-glue/index.d.ts', import.meta.url), 'utf8');

/** The member names of `export interface name`, with those of the interface it extends. */
function fieldsOf(name) {
  const found = new RegExp(`export interface ${name}(?:<[^>]*>)?(?: extends (\\w+))? \\{([\\s\\S]*?)\\n\\}`).exec(types);
  assert.ok(found, `interface ${name} in index.d.ts`);
  const own = [...found[2].matchAll(/^ {2}(?:readonly )?(\w+)\??[:(<]/gm)].map((m) => m[1]);
  return [...new Set(found[1] ? [...own, ...fieldsOf(found[1])] : own)];
}

const sameFields = (object, name) => assert.deepEqual(Object.keys(object).sort(), fieldsOf(name).sort(), `${name}: the fields index.d.ts declares`);

test('the objects the API returns have exactly the fields index.d.ts declares', async (t) => {
  enableTestHooks();
  const browser = createBrowser();
  const a = createBaton({ namespace: 'fields', id: 'a', env: browser.tab('a'), heartbeatMs: 50, testHooks: true });
  const b = createBaton({ namespace: 'fields', id: 'b', env: browser.tab('b'), heartbeatMs: 50 });
  t.after(() => [a, b].forEach((baton) => baton.dispose()));
  const changes = [];
  const handle = a.lead('job', { serve: (message) => message });
  handle.onChange((change) => changes.push(change));
  b.lead('job');
  const relay = createRelay(a, { resource: 'feed', source: () => {}, onEvent: () => {} });
  await waitFor(() => handle.state() === 'leader' && a.presence().length === 1);
  await b.request('job', 1);

  const metrics = a.metrics();
  sameFields(metrics, 'BatonMetrics');
  sameFields(metrics.glue, 'GlueCounters');
  sameFields(metrics.core, 'CoreStatus');
  sameFields(metrics.talk.job, 'TalkMetrics'); // the serving tab's: with its optional `serve`
  sameFields(metrics.talk.job.serve, 'ServeMetrics');
  sameFields(a.support(), 'BatonSupport');
  sameFields(a.presence()[0], 'PresenceEntry');
  sameFields(a.log()[0], 'Transition');
  sameFields(handle.leader(), 'LeaderInfo');
  sameFields(handle.token(), 'Token');
  sameFields(changes[0], 'LeadershipChange');
  sameFields(relay.stats(), 'RelayStats');
  sameFields(globalThis.__baton.leadershipState('job'), 'LeadershipSnapshot');
});

test('the API objects have exactly the members index.d.ts declares', async (t) => {
  const browser = createBrowser();
  const baton = createBaton({ namespace: 'members', env: browser.tab('a') });
  const election = leaderElection.create({ channel: 'members-awaforge', env: browser.tab('b') });
  const elector = createLeaderElection('members-bc', { env: browser.tab('c') });
  t.after(async () => {
    baton.dispose();
    election.dispose();
    await elector.die();
  });
  sameFields(baton, 'Baton');
  sameFields(baton.lead('job'), 'LeadHandle');
  sameFields(baton.leaderState('job'), 'LeaderStateView');
  sameFields(createRelay(baton, { resource: 'feed', source: () => {}, onEvent: () => {} }), 'Relay');
  sameFields(election, 'Election');
  sameFields(elector, 'LeaderElector');
  sameFields(leaderElection.support(), 'SupportInfo');
});
