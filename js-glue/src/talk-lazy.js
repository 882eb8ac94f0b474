/**
 * The entry to requests and leader state that every app carries: a loader and a facade
 * only. The implementation, option checks included (talk.js and its reducers), is imported
 * on first use, so an app that never calls `request`, `leaderState` or `setState` and
 * passes no `serve` or `accept` never loads it (it is a chunk of its own in dist/).
 *
 * @module tab-baton/talk-lazy
 */
import { reportError } from './errors.js';

let loading = null;
/** @returns {Promise<typeof import('./talk.js')>} */
export function loadTalk() {
  loading ??= import('./talk.js');
  return loading;
}

/** `baton.leaderState(resource)`: a view that follows the resource's state once loaded. */
export function leaderState(baton, resource) {
  let snapshot = null;
  let closed = false;
  let detach = null;
  const listeners = new Set();
  loadTalk().then((talk) => {
    if (closed) return;
    detach = talk.watch(baton, resource, (next) => {
      snapshot = next;
      for (const fn of [...listeners]) {
        try {
          fn(next);
        } catch (error) {
          reportError(error);
        }
      }
    });
  }, reportError);
  return Object.freeze({
    resource,
    get: () => snapshot,
    onChange(fn) {
      if (typeof fn !== 'function') throw new TypeError('leaderState.onChange: "fn" must be a function');
      if (!closed) listeners.add(fn);
      return () => listeners.delete(fn);
    },
    close() {
      closed = true;
      listeners.clear();
      detach?.();
    },
  });
}
