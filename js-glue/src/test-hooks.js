/**
 * Test hooks on `globalThis.__baton` (with the `testHooks: true` option), so end-to-end
 * tests can look inside a tab and drive it: presence, a resource's state, a forced
 * election, and a simulated freeze (lifecycle `frozen` and the tab's timer stopped, while
 * messages are still handled, as in a frozen Chromium tab) and restore.
 *
 * The last Baton created with hooks owns `__baton`; disposing it removes them. Apps call
 * `enableTestHooks()` once before `createBaton({ testHooks: true })`: the hooks are not part
 * of a bundle that never calls it.
 *
 * @module tab-baton/test-hooks
 */

import { setTestHooksInstaller } from './baton.js';
import { EVENT_KIND_FORCE_ELECTION } from './constants.js';

/** Makes `createBaton({ testHooks: true })` available. Idempotent. */
export function enableTestHooks() {
  setTestHooksInstaller(installTestHooks);
}

export function installTestHooks(baton) {
  const hooks = Object.freeze({
    id: baton.config.id,
    presenceSnapshot: () => baton.presence(),
    leadershipState(resource) {
      if (baton.disposed) return null;
      const view = baton.runtime_.view(resource);
      const entry = baton.entries.get(resource);
      if (!view) return null;
      return { ...view, state: entry ? entry.state() : view.role, token: entry ? entry.handle.token() : null };
    },
    forceElection(resource) {
      if (!baton.disposed && !baton.suspended_) baton.runtime_.resourceEvent(EVENT_KIND_FORCE_ELECTION, resource);
    },
    /** `{event: false}`: stop the timer only, as when a page is frozen or throttled without a `freeze` event. */
    simulateFreeze({ event = true } = {}) {
      if (baton.disposed || baton.suspended_) return;
      if (event) baton.onLifecycle('frozen');
      baton.runtime_.freezeTimers(true);
    },
    simulateRestore() {
      if (baton.disposed || baton.suspended_) return;
      baton.runtime_.freezeTimers(false);
      baton.onLifecycle('restored');
    },
  });
  globalThis.__baton = hooks;
  return {
    remove() {
      if (globalThis.__baton === hooks) delete globalThis.__baton;
    },
  };
}
