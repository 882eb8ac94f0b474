/**
 * The entry to requests and leader state that every app carries: option checks and
 * facades only. The implementation (talk.js and its reducers) is imported on first use,
 * so an app that never calls `request`, `leaderState`, `setState` nor passes `serve` or
 * `accept` does not load it (in a bundle split into chunks, it never downloads it).
 *
 * @module tab-baton/talk-lazy
 */
import { disposedError, reportError } from './errors.js';
import { functionOption, numberOption, optionsObject, stringOption } from './options.js';

const REQUEST_OPTIONS = ['timeoutMs', 'signal', 'id', 'full'];
/** Default time a request waits for its answer (queued while no leader exists). */
const DEFAULT_TIMEOUT_MS = 10000;

let loading = null;
/** @returns {Promise<typeof import('./talk.js')>} */
function load() {
  loading ??= import('./talk.js');
  return loading;
}

/** `baton.request(resource, message, options)`: options are checked now, the rest when loaded. */
export function request(baton, resource, message, options) {
  const where = 'baton.request';
  if (baton.disposed) throw disposedError(`${where}()`);
  const o = optionsObject(where, 'options', options, REQUEST_OPTIONS, { optional: true });
  const timeoutMs = numberOption(where, o, 'timeoutMs', { fallback: DEFAULT_TIMEOUT_MS, above: 0 });
  const id = stringOption(where, o, 'id', { maxBytes: 128 });
  const signal = o.signal;
  if (signal !== undefined && !(signal && typeof signal.aborted === 'boolean' && typeof signal.addEventListener === 'function')) {
    throw new TypeError(`${where}: option "signal" must be an AbortSignal`);
  }
  if (o.full !== undefined && typeof o.full !== 'boolean') throw new TypeError(`${where}: option "full" must be a boolean`);
  return load().then((talk) => talk.talkOf(baton, resource).request(message, { timeoutMs, signal, id, full: o.full === true }));
}

/** The `serve` and `accept` options of `baton.lead`, checked; null when neither is given. */
export function talkOptions(where, o) {
  const serve = functionOption(where, o, 'serve');
  const accept = functionOption(where, o, 'accept');
  return serve || accept ? { serve, accept } : null;
}

/** Makes a lead entry serve requests (and announce its terms) once talk.js is loaded. */
export function attach(baton, entry) {
  entry.talkOptions ??= {};
  load().then((talk) => {
    if (!entry.released && !baton.disposed) talk.talkOf(baton, entry.resource).attach(entry);
  }, reportError);
}

/**
 * `handle.setState(value)`: publishes `value` as the state of this tab's current term.
 * Resolves once posted; rejects with STALE_OWNER when this tab does not lead (any more).
 */
export function setState(baton, entry, value) {
  entry.talkOptions ??= {};
  return load().then((talk) => {
    if (entry.released || baton.disposed) throw disposedError('handle.setState()');
    talk.talkOf(baton, entry.resource).attach(entry).publish(value);
  });
}

/** `baton.leaderState(resource)`: the latest state of the resource's leader, and its changes. */
export function leaderState(baton, resource) {
  if (baton.disposed) throw disposedError('baton.leaderState()');
  let snapshot = null;
  let closed = false;
  let detach = null;
  const listeners = new Set();
  const update = (next) => {
    snapshot = next;
    for (const fn of [...listeners]) {
      try {
        fn(next);
      } catch (error) {
        reportError(error);
      }
    }
  };
  load().then((talk) => {
    if (!closed && !baton.disposed) detach = talk.talkOf(baton, resource).watch(update);
  }, reportError);
  return Object.freeze({
    resource,
    get: () => snapshot,
    onChange(fn) {
      if (typeof fn !== 'function') throw new TypeError('leaderState.onChange: "fn" must be a function');
      if (closed) return () => {};
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    close() {
      closed = true;
      listeners.clear();
      detach?.();
    },
  });
}

/** The talk counters of a Baton, per resource (empty when it never talked). */
export function talkMetrics(baton) {
  const out = {};
  for (const [resource, talk] of baton.talks ?? []) out[resource] = talk.metrics();
  return out;
}

/** Closes every Talk of a disposed Baton: waiting requests reject with 'DISPOSED'. */
export function closeTalks(baton) {
  for (const talk of baton.talks?.values() ?? []) talk.close();
  baton.talks?.clear();
}
