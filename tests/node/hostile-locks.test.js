// Same-origin code with no Baton code takes the Web Locks Baton uses. Taking the lock itself
// is a denial of service the README's security model grants it; taking the holder's marker
// lock (`<lock>/w<wire version>`, see names.js) for a moment must not have a lasting effect:
// without the marker, the other tabs take the holder for code they cannot hear, and would
// never replace it once it freezes.
//
// On a virtual clock, so that the takeover bound is exact.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, load } from 'tab-baton';
import { isMarker, leaderIndexes, openTabs } from './helpers/tabs.js';
import { virtualClock } from './helpers/virtual-clock.js';

const TIMING = { heartbeatMs: 100, suspectMs: 300 };

await load(); // the core loads in real time: have it before time is virtual

test('the holder\'s marker lock taken for a moment: the holder asks for it again, and a later freeze is still taken over', async (t) => {
  const clock = virtualClock();
  const { browser, tabs } = openTabs(2, { clock });
  const batons = tabs.map((tab) => createBaton({ namespace: 'app', id: tab.id, env: tab.env, ...TIMING }));
  t.after(() => batons.forEach((b) => b.dispose()));
  const handles = batons.map((b) => b.lead('ws'));
  await clock.until(() => leaderIndexes(handles).length === 1, { what: 'one leader' });
  const [first] = leaderIndexes(handles);
  const epoch = handles[first].token().epoch;
  const { held } = await browser.locks.query();
  const marker = held.find((lock) => isMarker(lock.name)).name;

  // Mallory steals the marker and gives it back at once.
  const mallory = browser.tab('mallory').locks;
  await mallory.request(marker, { steal: true }, () => {});
  await clock.run(TIMING.heartbeatMs);
  assert.equal(handles[first].state(), 'leader', 'the holder still leads');
  assert.equal(batons[first].metrics().glue.markersLost, 1, 'the loss is counted');
  const markers = (await browser.locks.query()).held.filter((lock) => lock.name === marker);
  assert.deepEqual(markers.map((lock) => lock.clientId), [tabs[first].id], 'the holder holds its marker again');

  // The holder freezes: the other tab replaces it within the suspect timeouts, by steal.
  tabs[first].freeze({ deaf: true });
  const other = 1 - first;
  await clock.until(() => handles[other].state() === 'leader', { what: 'the frozen holder replaced', limitMs: 10 * TIMING.suspectMs });
  assert.equal(batons[other].metrics().steals, 1);
  assert.equal(batons[other].metrics().glue.foreignHolderWaits, 0, 'the holder was not taken for foreign code');
  assert.equal(handles[other].token().epoch, epoch + 1);
  tabs[first].thaw();
});
