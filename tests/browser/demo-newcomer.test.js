// The demo as a person who has never heard of leader election meets it, in headless
// Chromium: tabs opened without an id are named A, B, C in the order they open, in colours
// far apart; each resource goes to the tab whose home it is, so three tabs lead three
// resources at once; the page says in one line what an epoch is; and the timeline draws
// who led what in each tab's colour, with the reason of every change.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowserFixture } from './fixture.js';
import { FAST, closeGroup, snap, uniqueNs, waitFor } from './demo-helpers.js';

const HOMES = { A: 'websocket-owner', B: 'sse-relay', C: 'token-refresh' };
const RESOURCES = Object.values(HOMES);

/** The hue (0-360) of a CSS `rgb(r, g, b)` colour. */
function hueOf(css) {
  const [r, g, b] = css.match(/\d+(\.\d+)?/g).slice(0, 3).map((v) => Number(v) / 255);
  const max = Math.max(r, g, b);
  const d = max - Math.min(r, g, b);
  if (d === 0) return 0;
  const h = max === r ? ((g - b) / d) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
  return (h * 60 + 360) % 360;
}

const hueDistance = (a, b) => Math.min(Math.abs(a - b), 360 - Math.abs(a - b));

/** What a person sees in a tab: its name and colour, the epoch line, the timeline. */
const view = (tab) =>
  tab.page.evaluate(() => {
    window.__demo.render();
    const colourOf = (element) => getComputedStyle(element).backgroundColor;
    return {
      name: document.getElementById('me-id').textContent,
      colour: colourOf(document.getElementById('me-swatch')),
      epochLine: [...document.querySelectorAll('.hint')].map((p) => p.innerText).find((text) => /^Epoch\b/.test(text)) ?? null,
      rows: [...document.querySelectorAll('#timeline-rows .tl-row')].map((row) => ({
        resource: row.querySelector('.tl-name').textContent,
        segments: [...row.querySelectorAll('.seg')].map((seg) => ({ name: seg.textContent, colour: colourOf(seg), title: seg.title })),
      })),
      changes: [...document.querySelectorAll('#timeline-changes li')].map((li) => li.innerText.replace(/\s+/g, ' ')),
    };
  });

describe('the demo for a newcomer (headless Chromium)', { timeout: 120000 }, () => {
  const fixture = useBrowserFixture();
  const tabs = [];
  after(() => closeGroup(tabs, fixture.server));

  it('three tabs: named A, B, C, in distinct colours, each leading its home resource; epoch explained; a timeline of who led what and why', async () => {
    const ns = uniqueNs('newcomer');
    for (let i = 0; i < 3; i += 1) {
      // No id: the demo names the tab itself, as it does for a person opening it.
      const tab = await fixture.browser.openTab(`${fixture.server.url}?ns=${encodeURIComponent(ns)}&${FAST}`);
      tab.errors = [];
      tab.page.on('pageerror', (error) => tab.errors.push(error.message));
      await waitFor(() => tab.page.evaluate(() => Boolean(window.__demo && window.__demo.ready)), { timeoutMs: 30000, what: `demo tab ${i + 1} ready` });
      tab.id = (await snap(tab)).id;
      tabs.push(tab);
    }
    const ids = tabs.map((tab) => tab.id);
    assert.deepEqual(ids.map((id) => id.split('-')[0]), ['A', 'B', 'C'], `named in the order they opened (${ids})`);

    // Every tab sees the home tab of each resource lead it, and leads exactly its own.
    const idOf = Object.fromEntries(ids.map((id) => [id.split('-')[0], id]));
    await waitFor(async () => {
      for (const tab of tabs) {
        const s = await snap(tab);
        for (const [name, resource] of Object.entries(HOMES)) {
          if (s.resources[resource].leader !== idOf[name]) return false;
          if ((s.resources[resource].state === 'leader') !== (s.id === idOf[name])) return false;
        }
      }
      return true;
    }, { timeoutMs: 30000, what: 'A, B and C each lead their home resource, as every tab sees it' });

    // The page draws a change up to 150 ms after it (demo.js scheduleRender): wait until each
    // tab has drawn every resource's bar up to its home tab before reading the drawing.
    const homeOf = (resource) => Object.keys(HOMES).find((name) => HOMES[name] === resource);
    let views = [];
    await waitFor(async () => {
      views = await Promise.all(tabs.map(view));
      return views.every((v) => v.rows.length > 0 && v.rows.every((row) => row.segments.at(-1)?.name === homeOf(row.resource)));
    }, { timeoutMs: 30000, what: "every tab's timeline drawn up to each resource's home tab" });
    assert.deepEqual(views.map((v) => v.name), ['A', 'B', 'C'], 'each tab shows its short name');
    const hues = views.map((v) => hueOf(v.colour));
    for (let i = 0; i < hues.length; i += 1) {
      for (let j = i + 1; j < hues.length; j += 1) {
        assert.ok(hueDistance(hues[i], hues[j]) >= 60, `${views[i].name} and ${views[j].name} are far apart on the colour wheel (${hues.map(Math.round)})`);
      }
    }
    for (const v of views) {
      assert.match(v.epochLine ?? '', /^Epoch: .*new leader/, `${v.name} explains the epoch in one line`);
      assert.deepEqual(v.rows.map((row) => row.resource), RESOURCES, `${v.name}: a timeline row per resource`);
      for (const row of v.rows) {
        const home = Object.keys(HOMES).find((name) => HOMES[name] === row.resource);
        const last = row.segments.at(-1);
        assert.equal(last?.name, home, `${v.name}: the ${row.resource} bar ends with ${home}`);
        const homeColour = views.find((other) => other.name === home).colour;
        assert.equal(last.colour, homeColour, `${v.name}: the ${row.resource} bar is in ${home}'s colour`);
        assert.match(last.title, /led from .* \(epoch \d+\)/, `${v.name}: the bar says when and in which epoch`);
      }
      // A led everything first, then handed B's and C's resources over: drawn, and A says why.
      for (const resource of [HOMES.B, HOMES.C]) {
        const names = v.rows.find((row) => row.resource === resource).segments.map((seg) => seg.name);
        if (v.name === 'A') assert.ok(names.length >= 2, `A's timeline shows ${resource} change hands (${names})`);
      }
      assert.ok(v.changes.length >= 3, `${v.name} lists the last changes (${v.changes.join(' | ')})`);
      for (const line of v.changes) assert.match(line, /→ .+: \S+/, `${v.name}: every change says why`);
      if (v.name === 'A') assert.ok(v.changes.some((line) => /handed it over: it is [BC]'s home resource/.test(line)), `A says why it handed over (${v.changes.join(' | ')})`);
    }
  });
});
