// Helpers for the Node tests: simulated tabs over the tab-baton/testing fakes, with timers
// that a simulated crash or freeze stops (a crashed tab runs no more code), a document and
// a window to fire lifecycle events at, and polling.
import assert from 'node:assert/strict';
import { createBrowser } from 'tab-baton/testing';

/** A holder's marker lock (`<lock>/w<wire version>`, see names.js), beside the lock it marks. */
export const isMarker = (name) => /\/w\d+$/.test(name);

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `predicate` every few ms until it is truthy; fails the test after `timeoutMs`. */
export async function waitFor(predicate, { timeoutMs = 10000, what = String(predicate) } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value) return value;
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(3);
  }
}

/**
 * One simulated tab: `env` is what tab-baton's `env` option takes.
 * - `crash()`: locks vanish, the channel goes silent, timers stop (no more code runs).
 * - `freeze()` / `thaw()`: timers stop / resume (late ones fire at thaw); with
 *   `{deaf: true}` incoming messages are held too, with `{storage: true}` the tab's own
 *   IndexedDB answers (as in a frozen page; messages are still handled).
 * - `fire(target, type, props)`: dispatches a lifecycle event at 'document' or 'window'.
 * With `clock` (helpers/virtual-clock.js), the tab's time and timers are that clock's.
 */
export function openTab(browser, id, { indexedDB, hidden = false, clock } = {}) {
  const tab = browser.tab(id);
  const timers = clock ?? globalThis;
  const channels = [];
  const pending = new Map(); // timer -> callback, for thaw
  const paused = new Map(); // timers that came due while frozen -> callback
  let state = 'running';

  class CapturingChannel extends tab.BroadcastChannel {
    constructor(name) {
      super(name);
      channels.push(this);
      this.closedByPage = false;
    }

    close() {
      this.closedByPage = true;
      super.close();
    }
  }

  const document = new EventTarget();
  document.visibilityState = hidden ? 'hidden' : 'visible';
  const window = new EventTarget();

  const env = {
    locks: tab.locks,
    BroadcastChannel: CapturingChannel,
    localStorage: tab.localStorage,
    indexedDB: indexedDB === undefined ? tab.indexedDB : indexedDB,
    document,
    addEventListener: (...args) => window.addEventListener(...args),
    removeEventListener: (...args) => window.removeEventListener(...args),
    ...(clock ? { now: clock.now } : {}),
    setTimeout(fn, ms) {
      const timer = timers.setTimeout(() => {
        pending.delete(timer);
        if (state === 'running') fn();
        else if (state === 'frozen') paused.set(timer, fn);
      }, ms);
      pending.set(timer, fn);
      return timer;
    },
    clearTimeout(timer) {
      timers.clearTimeout(timer);
      pending.delete(timer);
      paused.delete(timer);
    },
  };

  return {
    id,
    env,
    tab,
    channels,
    document,
    window,
    crash() {
      state = 'crashed';
      for (const timer of pending.keys()) timers.clearTimeout(timer);
      pending.clear();
      tab.crash();
    },
    freeze({ deaf = false, storage = false } = {}) {
      state = 'frozen';
      if (deaf) for (const channel of channels) browser.hub.pause(channel);
      // The browser's own IndexedDB client is the one that freezes: a tab given another
      // IndexedDB would keep answering, and the test would check nothing.
      if (storage && indexedDB !== undefined) throw new Error('freeze({storage: true}): this tab was opened with its own indexedDB');
      if (storage) tab.freezeStorage();
    },
    thaw() {
      state = 'running';
      tab.thawStorage();
      for (const channel of channels) browser.hub.resume(channel);
      const due = [...paused.values()];
      paused.clear();
      for (const fn of due) fn();
    },
    fire(target, type, props = {}) {
      const event = new Event(type);
      Object.assign(event, props);
      (target === 'document' ? document : window).dispatchEvent(event);
    },
    setVisibility(visibility) {
      document.visibilityState = visibility;
      this.fire('document', 'visibilitychange');
    },
  };
}

/** A browser and `n` tabs named t0, t1, ... */
export function openTabs(n, options = {}) {
  const browser = createBrowser();
  const tabs = Array.from({ length: n }, (_, i) => openTab(browser, `t${i}`, options));
  return { browser, tabs };
}

/**
 * Records leadership over handles: fails the test if two handles ever lead at once
 * (both past `elected` and before `deposed`/`released`) while both are connected.
 */
export function watchLeaders(handles, { ignore = () => false } = {}) {
  const leading = new Set();
  const events = [];
  let overlaps = 0;
  handles.forEach((handle, index) => {
    handle.onChange((change) => {
      events.push({ index, type: change.type, reason: change.reason, epoch: change.token?.epoch, at: Date.now() });
      if (change.type === 'elected') {
        for (const other of leading) if (!ignore(other) && !ignore(index)) overlaps += 1;
        leading.add(index);
      } else if (change.type === 'deposed' || change.type === 'released') {
        leading.delete(index);
      }
    });
  });
  return { events, leading, overlaps: () => overlaps };
}

export const leaderIndexes = (handles) => handles.flatMap((h, i) => (h.state() === 'leader' ? [i] : []));
