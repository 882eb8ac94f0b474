/**
 * Source adapters for the relay: `source(afterId, emit, signal) -> close` over an
 * EventSource (Server-Sent Events) or a WebSocket. The relay calls the source only in the
 * leader tab, with the id to resume after (null: from the head of the stream).
 *
 * `emit(event)` hands over one event `{id, data, type?}`; `emit.heartbeat()` says the
 * source is alive without an event; `emit.fail(error)` says it is gone (the relay reopens
 * it from the current cursor after a backoff).
 *
 * @module tab-baton/relay-sources
 */

import { booleanOption, functionOption, optionsObject } from './options.js';

/**
 * `url` with `after=<id>` appended to its query (nothing when `after` is null), or
 * `urlForAfter(after)`. A fragment stays last: in it, the parameter would never reach the server.
 */
function resolveUrl(where, urlForAfter, after) {
  if (typeof urlForAfter === 'function') return String(urlForAfter(after));
  if (typeof urlForAfter !== 'string') throw new TypeError(`${where}: "urlForAfter" must be a string or a function (afterId) => url`);
  if (after === null || after === undefined) return urlForAfter;
  const hash = urlForAfter.indexOf('#');
  const [url, fragment] = hash < 0 ? [urlForAfter, ''] : [urlForAfter.slice(0, hash), urlForAfter.slice(hash)];
  return `${url}${url.includes('?') ? '&' : '?'}after=${encodeURIComponent(String(after))}${fragment}`;
}

/** An array of event types (non-empty strings); `fallback` when not given. */
function typesOption(where, opts, key, fallback) {
  const value = opts[key];
  if (value === undefined) return fallback;
  if (!Array.isArray(value) || !value.every((type) => typeof type === 'string' && type !== '')) {
    throw new TypeError(`${where}: option "${key}" must be an array of event type names`);
  }
  return [...value];
}

/** A constructor option (`EventSource`, `WebSocket`), else the global one. */
function constructorOption(where, opts, key) {
  const value = functionOption(where, opts, key) ?? globalThis[key];
  if (typeof value !== 'function') throw new TypeError(`${where}: no ${key} in this environment (pass option "${key}")`);
  return value;
}

function checkUrl(where, urlForAfter) {
  if (typeof urlForAfter !== 'function' && typeof urlForAfter !== 'string') {
    throw new TypeError(`${where}: "urlForAfter" must be a string or a function (afterId) => url`);
  }
}

/**
 * An EventSource source. The browser's own reconnection (with `Last-Event-ID`) is kept;
 * only a stream the browser gave up on (readyState CLOSED) is reported as failed.
 * @param {string | ((afterId: any) => string)} urlForAfter
 * @param {object} [options]
 * @param {string[]} [options.types] event types to relay (default ['message'])
 * @param {string[]} [options.heartbeatTypes] event types that only prove the stream alive
 * @param {(event: MessageEvent) => any} [options.parse] the relayed data (default: `event.data`)
 * @param {boolean} [options.withCredentials]
 * @param {any} [options.EventSource] the constructor (default `globalThis.EventSource`)
 */
export function eventSourceSource(urlForAfter, options) {
  const where = 'eventSourceSource';
  checkUrl(where, urlForAfter);
  const o = optionsObject(where, 'options', options, ['types', 'heartbeatTypes', 'parse', 'withCredentials', 'EventSource'], { optional: true });
  const types = typesOption(where, o, 'types', ['message']);
  const heartbeatTypes = typesOption(where, o, 'heartbeatTypes', []);
  const parse = functionOption(where, o, 'parse') ?? ((event) => event.data);
  const withCredentials = booleanOption(where, o, 'withCredentials', false);
  const ES = constructorOption(where, o, 'EventSource');
  return (after, emit, signal) => {
    const es = new ES(resolveUrl(where, urlForAfter, after), { withCredentials });
    const listeners = [];
    const on = (type, fn) => {
      es.addEventListener(type, fn);
      listeners.push([type, fn]);
    };
    on('open', () => emit.heartbeat());
    on('error', () => {
      if (es.readyState === 2) emit.fail(new Error('EventSource closed'));
    });
    for (const type of types) {
      on(type, (event) => {
        let data;
        try {
          data = parse(event);
        } catch {
          emit({ id: undefined }); // counted as malformed by the relay
          return;
        }
        emit({ id: event.lastEventId, data, type });
      });
    }
    for (const type of heartbeatTypes) on(type, () => emit.heartbeat());
    const close = () => {
      for (const [type, fn] of listeners) es.removeEventListener(type, fn);
      es.close();
    };
    signal.addEventListener('abort', close, { once: true });
    return close;
  };
}

/** The default WebSocket message format: JSON `{id, data, type}`, or `{type: 'heartbeat'}`. */
function parseJson(data) {
  const message = JSON.parse(data);
  if (message && message.type === 'heartbeat') return { heartbeat: true };
  return { id: message.id, data: message.data, type: message.type };
}

/**
 * A WebSocket source.
 * @param {string | ((afterId: any) => string)} urlForAfter
 * @param {object} [options]
 * @param {(data: any) => ({id: any, data?: any, type?: string} | {heartbeat: true} | null)} [options.parse]
 *   one message -> an event, a heartbeat, or null to ignore it (default: JSON, see above)
 * @param {(socket: WebSocket, afterId: any) => void} [options.subscribe] called on open,
 *   for servers that take the resume point in a message rather than in the URL
 * @param {string | string[]} [options.protocols]
 * @param {any} [options.WebSocket] the constructor (default `globalThis.WebSocket`)
 */
export function webSocketSource(urlForAfter, options) {
  const where = 'webSocketSource';
  checkUrl(where, urlForAfter);
  const o = optionsObject(where, 'options', options, ['parse', 'subscribe', 'protocols', 'WebSocket'], { optional: true });
  const parse = functionOption(where, o, 'parse') ?? parseJson;
  const subscribe = functionOption(where, o, 'subscribe');
  const { protocols } = o;
  if (protocols !== undefined && typeof protocols !== 'string' && !(Array.isArray(protocols) && protocols.every((p) => typeof p === 'string'))) {
    throw new TypeError(`${where}: option "protocols" must be a string or an array of strings`);
  }
  const WS = constructorOption(where, o, 'WebSocket');
  return (after, emit, signal) => {
    const socket = protocols === undefined ? new WS(resolveUrl(where, urlForAfter, after)) : new WS(resolveUrl(where, urlForAfter, after), protocols);
    let closed = false;
    socket.onopen = () => {
      emit.heartbeat();
      if (subscribe) subscribe(socket, after);
    };
    socket.onmessage = (event) => {
      let message;
      try {
        message = parse(event.data);
      } catch {
        emit({ id: undefined }); // counted as malformed by the relay
        return;
      }
      if (message === null || message === undefined) return;
      if (message.heartbeat) emit.heartbeat();
      else emit(message);
    };
    socket.onclose = (event) => {
      if (!closed) emit.fail(new Error(`WebSocket closed (${event.code})`));
    };
    const close = () => {
      if (closed) return;
      closed = true;
      socket.onopen = socket.onmessage = socket.onclose = null;
      try {
        socket.close();
      } catch {
        // Already closing.
      }
    };
    signal.addEventListener('abort', close, { once: true });
    return close;
  };
}
