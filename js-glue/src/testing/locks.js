/**
 * In-memory Web Locks (https://w3c.github.io/web-locks/) for running many
 * "tabs" in one Node process.
 *
 * `createLockManager()` returns a broker: the lock state of one origin. Each
 * tab gets its own `navigator.locks`-like object from `broker.client(id)`;
 * all clients of a broker compete for the same locks, and `broker.crash(id)`
 * makes one tab vanish the way a crashed renderer does.
 *
 * Differences from browsers, on purpose:
 * - Callbacks run in a microtask (browsers use a task), so a hand-over needs
 *   no timer tick and tests stay fast.
 * - The lock state is changed synchronously inside `request()` rather than on
 *   a separate "lock task queue"; as that queue is FIFO, the outcome is the same.
 *
 * @module tab-baton/testing/locks
 */

/**
 * @typedef {'exclusive' | 'shared'} LockMode
 * @typedef {{ name: string, mode: LockMode, clientId: string }} LockInfo
 * @typedef {{ held: LockInfo[], pending: LockInfo[] }} LockManagerSnapshot
 * @typedef {{ mode?: LockMode, ifAvailable?: boolean, steal?: boolean, signal?: AbortSignal }} LockOptions
 *
 * @typedef {object} FakeLockManager What `navigator.locks` is in a browser.
 * @property {(name: string, optionsOrCallback: LockOptions | Function, callback?: Function) => Promise<any>} request
 *   Requests the lock `name`; resolves or rejects with the callback's result once the lock is released.
 * @property {() => Promise<LockManagerSnapshot>} query
 *   Held locks and pending requests of every client of the broker.
 *
 * @typedef {object} LockBroker
 * @property {(clientId?: string) => FakeLockManager} client
 *   A `navigator.locks` for one tab; `clientId` defaults to a random UUID.
 * @property {(clientId: string) => void} crash
 *   Drops every lock and queued request of the tab without settling their
 *   promises and grants the next waiters, as when a renderer crashes. Its
 *   existing clients stay dead: later requests never settle.
 * @property {() => Promise<LockManagerSnapshot>} query
 *   Same as `client.query()`.
 */

const MODES = ['exclusive', 'shared'];

/**
 * Creates the lock state of one origin.
 * @returns {LockBroker}
 */
export function createLockManager() {
  /** Granted locks, in grant order. */
  const held = [];
  /** Resource name -> requests waiting for it, first in line first. */
  const queues = new Map();
  /** Live clients, so that `crash` can find them by id. */
  const clients = new Set();

  function isGrantable(request) {
    const queue = queues.get(request.name) ?? [];
    if (queue.length > 0 && queue[0] !== request) return false;
    return !held.some((lock) => lock.name === request.name &&
      (request.mode === 'exclusive' || lock.mode === 'exclusive'));
  }

  /** Grants the head of the queue while it is grantable (several shared locks at once). */
  function processQueue(name) {
    const queue = queues.get(name) ?? [];
    while (queue.length > 0 && isGrantable(queue[0])) grant(queue.shift());
    if (queue.length === 0) queues.delete(name);
  }

  function enqueue(request, { first = false } = {}) {
    if (!queues.has(request.name)) queues.set(request.name, []);
    if (first) queues.get(request.name).unshift(request);
    else queues.get(request.name).push(request);
  }

  function removeFromQueue(request) {
    const queue = queues.get(request.name) ?? [];
    const index = queue.indexOf(request);
    if (index >= 0) queue.splice(index, 1);
    return index >= 0;
  }

  function grant(request) {
    const lock = { name: request.name, mode: request.mode, client: request.client, request };
    held.push(lock);
    queueMicrotask(() => runCallback(lock));
  }

  function release(lock) {
    const index = held.indexOf(lock);
    if (index < 0) return false; // already stolen or crashed
    held.splice(index, 1);
    processQueue(lock.name);
    return true;
  }

  function runCallback(lock) {
    const { request } = lock;
    if (!request.client.alive) return;
    if (request.signal) {
      request.signal.removeEventListener('abort', request.onAbort);
      // Aborted between grant and callback: the promise is already rejected.
      if (request.signal.aborted) return void release(lock);
    }
    const waiting = invoke(request.callback, Object.freeze({ name: lock.name, mode: lock.mode }));
    const settle = () => {
      // A stolen lock's promise has already rejected; a crashed one never settles.
      if (release(lock)) request.resolve(waiting);
    };
    waiting.then(settle, settle);
  }

  /** `LockManager.request()` steps, in spec order; a throw becomes a rejected promise. */
  function requestLock(client, args) {
    // A crashed tab runs no more code: nothing it asks for is ever answered.
    if (!client.alive) return new Promise(() => {});

    // Web IDL argument conversion: TypeError.
    if (args.length < 2) throw new TypeError('request() needs a name and a callback');
    const name = `${args[0]}`;
    const options = args.length === 2 ? {} : args[1] ?? {};
    if (typeof options !== 'object' && typeof options !== 'function') {
      throw new TypeError('request() options must be an object');
    }
    const ifAvailable = Boolean(options.ifAvailable);
    const mode = options.mode === undefined ? 'exclusive' : `${options.mode}`;
    if (!MODES.includes(mode)) throw new TypeError(`'${mode}' is not a valid LockMode`);
    const { signal } = options;
    if (signal !== undefined && !(signal instanceof AbortSignal)) {
      throw new TypeError('request() options.signal must be an AbortSignal');
    }
    const steal = Boolean(options.steal);
    const callback = args.length === 2 ? args[1] : args[2];
    if (typeof callback !== 'function') throw new TypeError('request() callback must be a function');

    // Checks of the Web Locks spec: NotSupportedError, then the abort reason.
    if (name.startsWith('-')) throw notSupported('names starting with "-" are reserved');
    if (steal && ifAvailable) throw notSupported('steal and ifAvailable cannot be combined');
    if (steal && mode !== 'exclusive') throw notSupported('steal requires mode "exclusive"');
    if (signal && (steal || ifAvailable)) throw notSupported('signal cannot be combined with steal or ifAvailable');
    if (signal?.aborted) throw signal.reason;

    const { promise, resolve, reject } = withResolvers();
    const request = { name, mode, client, callback, signal, resolve, reject };

    if (signal) {
      request.onAbort = () => {
        if (removeFromQueue(request)) processQueue(name);
        reject(signal.reason);
      };
      signal.addEventListener('abort', request.onAbort, { once: true });
    }

    if (steal) {
      for (const lock of held.filter((lock) => lock.name === name)) {
        held.splice(held.indexOf(lock), 1);
        lock.request.reject(new DOMException(`Lock '${name}' was stolen`, 'AbortError'));
      }
      enqueue(request, { first: true });
    } else if (ifAvailable && !isGrantable(request)) {
      queueMicrotask(() => {
        if (client.alive) resolve(invoke(callback, null));
      });
      return promise;
    } else {
      enqueue(request);
    }
    processQueue(name);
    return promise;
  }

  function query() {
    const info = ({ name, mode, client }) => ({ name, mode, clientId: client.id });
    const pending = [...queues.values()].flat().map(info);
    return Promise.resolve({ held: held.map(info), pending });
  }

  function crash(clientId) {
    for (const client of clients) {
      if (client.id !== clientId) continue;
      client.alive = false;
      clients.delete(client);
    }
    const names = new Set();
    for (const queue of queues.values()) {
      for (const request of queue.filter((r) => r.client.id === clientId)) {
        request.signal?.removeEventListener('abort', request.onAbort);
        removeFromQueue(request);
        names.add(request.name);
      }
    }
    for (const lock of held.filter((l) => l.client.id === clientId)) {
      lock.request.signal?.removeEventListener('abort', lock.request.onAbort);
      held.splice(held.indexOf(lock), 1);
      names.add(lock.name);
    }
    for (const name of names) processQueue(name);
  }

  return {
    client(clientId = crypto.randomUUID()) {
      const client = { id: `${clientId}`, alive: true };
      clients.add(client);
      return {
        request(...args) {
          try {
            return requestLock(client, args);
          } catch (error) {
            return Promise.reject(error);
          }
        },
        query,
      };
    },
    crash(clientId) {
      crash(`${clientId}`);
    },
    query,
  };
}

/** Calls a lock callback the way Web IDL does: a throw becomes a rejected promise. */
function invoke(callback, lock) {
  return new Promise((resolve) => resolve(callback(lock)));
}

function notSupported(message) {
  return new DOMException(message, 'NotSupportedError');
}

/** `Promise.withResolvers()`, which Node 20 lacks. */
function withResolvers() {
  let resolve, reject;
  const promise = new Promise((res, rej) => { resolve = res; reject = rej; });
  return { promise, resolve, reject };
}
