/**
 * `tab-baton/testing`: in-memory fakes of the browser primitives Baton uses
 * (Web Locks, BroadcastChannel, localStorage, IndexedDB), so that many "tabs" can
 * run in one Node process.
 *
 * ```js
 * import { createBrowser } from 'tab-baton/testing';
 *
 * const browser = createBrowser();
 * const a = browser.tab('a');
 * const b = browser.tab('b');
 * // Pass a tab wherever tab-baton takes an environment, e.g. { env: a }.
 * a.crash(); // b's queued lock request is granted, a's promises never settle
 * ```
 *
 * @module tab-baton/testing
 */

import { createLockManager } from './locks.js';
import { createChannelHub } from './channel.js';
import { createStorage } from './storage.js';
import { createIndexedDB } from './indexeddb.js';
import { booleanOption, optionsObject } from '../options.js';

export { createLockManager, createChannelHub, createStorage, createIndexedDB };

/**
 * One simulated tab: the browser primitives as this tab sees them. The
 * `locks`, `BroadcastChannel`, `localStorage` and `indexedDB` members have the
 * shape of tab-baton's `env` option.
 * @typedef {object} FakeTab
 * @property {string} id The tab's client id (`clientId` in `locks.query()`).
 * @property {import('./locks.js').FakeLockManager} locks This tab's `navigator.locks`.
 * @property {ReturnType<typeof createChannelHub>["BroadcastChannel"]} BroadcastChannel This tab's `BroadcastChannel` class
 *   (a subclass of `hub.BroadcastChannel`).
 * @property {ReturnType<typeof createStorage>} localStorage The origin's storage, shared by all tabs.
 * @property {ReturnType<typeof createIndexedDB>["indexedDB"] | null} indexedDB The origin's
 *   IndexedDB (this tab's view of the databases all tabs share); null when the browser was
 *   made with `{indexedDB: false}`.
 * @property {() => void} crash Kills the tab as a renderer crash would: its locks
 *   and queued requests vanish without settling, its channels are disconnected
 *   (now and when created later), its IndexedDB transaction in progress is rolled back
 *   and its requests are never answered. Code already running in the tab is not
 *   stopped; it just can no longer reach the other tabs, except through
 *   `localStorage`. The id can then be used for a new tab.
 * @property {() => void} freezeStorage Holds this tab's IndexedDB answers and `complete`
 *   events until `thawStorage()`, as for a frozen page (see `createIndexedDB`); its channel
 *   messages are still delivered, as in Chromium.
 * @property {() => void} thawStorage Delivers what `freezeStorage()` held.
 */

/**
 * Creates one simulated origin in one browser: a lock broker, a channel hub,
 * a localStorage and an IndexedDB (its failures can be injected with
 * `browser.indexedDB.fail()`), shared by the tabs made with `tab()`.
 * @param {import('./channel.js').ChannelHubOptions & {indexedDB?: boolean}} [options]
 *   `indexedDB: false`: no IndexedDB, as in a browser that blocks it (then no epoch is
 *   durable: every term runs degraded); `schedule` is passed to `createChannelHub`. A wrong
 *   or unknown option throws a TypeError naming it.
 */
export function createBrowser(options) {
  const o = optionsObject('createBrowser', 'options', options, ['indexedDB', 'schedule'], { optional: true });
  const withIndexedDB = booleanOption('createBrowser', o, 'indexedDB', true);
  const locks = createLockManager();
  const hub = createChannelHub({ schedule: o.schedule });
  const localStorage = createStorage();
  const database = withIndexedDB ? createIndexedDB() : null;
  const liveIds = new Set();

  /**
   * Opens a tab.
   * @param {string} [id] Unique among live tabs; defaults to a random UUID.
   * @returns {FakeTab}
   */
  function tab(id = crypto.randomUUID()) {
    id = `${id}`;
    if (liveIds.has(id)) throw new Error(`tab '${id}' is already open`);
    liveIds.add(id);
    const channels = [];
    const idb = database ? database.client() : null;
    let crashed = false;

    class BroadcastChannel extends hub.BroadcastChannel {
      constructor(...args) {
        super(...args);
        if (crashed) hub.disconnect(this);
        else channels.push(this);
      }
    }

    return {
      id,
      locks: locks.client(id),
      BroadcastChannel,
      localStorage,
      indexedDB: idb ? idb.indexedDB : null,
      freezeStorage() {
        idb?.freeze();
      },
      thawStorage() {
        idb?.thaw();
      },
      crash() {
        if (crashed) return;
        crashed = true;
        liveIds.delete(id);
        locks.crash(id);
        idb?.crash();
        for (const channel of channels) hub.disconnect(channel);
      },
    };
  }

  return { locks, BroadcastChannel: hub.BroadcastChannel, hub, localStorage, indexedDB: database, tab };
}
