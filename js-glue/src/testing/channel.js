/**
 * In-memory BroadcastChannel (https://html.spec.whatwg.org/multipage/web-messaging.html#broadcasting-to-other-browsing-contexts)
 * for running many "tabs" in one Node process.
 *
 * `createChannelHub()` returns a hub: the channels of one origin. Every
 * `new hub.BroadcastChannel(name)` talks to the other open channels of that
 * name in the same hub, and to nothing else (not to Node's own global
 * `BroadcastChannel`, nor to other hubs).
 *
 * As in browsers, `postMessage` clones the message at once (throwing a
 * "DataCloneError" for what cannot be cloned) and each receiver gets its own
 * copy in a later task, in posting order. The hub adds fault injection:
 * `pause`/`resume` hold a channel's incoming messages, `disconnect` cuts a
 * channel off for good (a crashed tab), and `stats` counts the traffic.
 *
 * @module tab-baton/testing/channel
 */

import { functionOption, optionsObject } from '../options.js';

/**
 * @typedef {object} ChannelStats
 * @property {number} posted Messages accepted by `postMessage`.
 * @property {number} delivered `message` events dispatched (one per receiver).
 * @property {number} dropped Messages lost: posted by a disconnected channel,
 *   or pending for a receiver that closed or was disconnected.
 *
 * @typedef {object} ChannelHubOptions
 * @property {(task: () => void) => void} [schedule] Runs a task later; each
 *   delivery is one task. Default: `setTimeout(task, 0)`, looked up at call time,
 *   so fake timers of a test framework also drive the channels.
 */

/**
 * A structured clone of `message`. Frames are plain Uint8Arrays, which are cloned by copying
 * their buffer (what structuredClone does for them, keeping the offset) at a fraction of
 * its cost in Node.
 */
function clone(message) {
  if (message instanceof Uint8Array && Object.getPrototypeOf(message) === Uint8Array.prototype && Object.getPrototypeOf(message.buffer) === ArrayBuffer.prototype && !message.buffer.resizable) {
    return new Uint8Array(message.buffer.slice(0), message.byteOffset, message.length);
  }
  return structuredClone(message);
}

/**
 * Creates the channels of one origin.
 * @param {ChannelHubOptions} [options]
 */
export function createChannelHub(options) {
  const o = optionsObject('createChannelHub', 'options', options, ['schedule'], { optional: true });
  const schedule = functionOption('createChannelHub', o, 'schedule') ?? ((task) => setTimeout(task, 0));
  /** Channel -> its hub-side state. */
  const links = new WeakMap();
  /** Channels that can receive, in creation order (the delivery order). */
  const open = [];
  const stats = { posted: 0, delivered: 0, dropped: 0 };

  function linkOf(channel) {
    const link = links.get(channel);
    if (!link) throw new TypeError('not a BroadcastChannel of this hub');
    return link;
  }

  /** Delivers the oldest pending message of `channel`, unless it is paused. */
  function deliverNext(channel) {
    const link = links.get(channel);
    if (link.paused || link.inbox.length === 0) return;
    const data = clone(link.inbox.shift());
    stats.delivered += 1;
    channel.dispatchEvent(new MessageEvent('message', { data }));
  }

  /** Stops `channel` from receiving; what it had not received yet is lost. */
  function detach(channel) {
    const link = links.get(channel);
    if (open.includes(channel)) open.splice(open.indexOf(channel), 1);
    stats.dropped += link.inbox.length;
    link.inbox = [];
  }

  /** A web `BroadcastChannel` that reaches the other channels of this hub. */
  class BroadcastChannel extends EventTarget {
    #name;
    #handlers = { message: null, messageerror: null };

    /** @param {string} name */
    constructor(name) {
      if (arguments.length === 0) throw new TypeError('BroadcastChannel needs a name');
      super();
      this.#name = `${name}`;
      links.set(this, { closed: false, disconnected: false, paused: false, inbox: [] });
      open.push(this);
    }

    /** The channel name given to the constructor. */
    get name() {
      return this.#name;
    }

    /**
     * Sends a structured clone of `message` to every other open channel of
     * the same name in the hub. Throws "InvalidStateError" once closed and
     * "DataCloneError" for a message that cannot be cloned.
     * @param {any} message
     */
    postMessage(message) {
      if (arguments.length === 0) throw new TypeError('postMessage needs a message');
      const link = links.get(this);
      if (link.closed) throw new DOMException('BroadcastChannel is closed', 'InvalidStateError');
      const serialized = clone(message);
      stats.posted += 1;
      if (link.disconnected) {
        stats.dropped += 1;
        return;
      }
      for (const other of open) {
        if (other === this || other.name !== this.#name) continue;
        links.get(other).inbox.push(serialized);
        schedule(() => deliverNext(other));
      }
    }

    /** Stops sending and receiving; messages not yet received are dropped. Idempotent. */
    close() {
      const link = links.get(this);
      if (link.closed) return;
      link.closed = true;
      detach(this);
    }

    /** @type {((event: MessageEvent) => any) | null} */
    get onmessage() {
      return this.#handlers.message;
    }

    set onmessage(handler) {
      this.#setHandler('message', handler);
    }

    /**
     * Part of the interface; never fires here, because a message that could be
     * cloned on posting can always be cloned again on delivery.
     * @type {((event: MessageEvent) => any) | null}
     */
    get onmessageerror() {
      return this.#handlers.messageerror;
    }

    set onmessageerror(handler) {
      this.#setHandler('messageerror', handler);
    }

    /** Event handler attributes listen from the first non-null assignment until set to null. */
    #setHandler(type, handler) {
      const wasSet = this.#handlers[type] !== null;
      this.#handlers[type] = typeof handler === 'function' ? handler : null;
      const isSet = this.#handlers[type] !== null;
      if (isSet && !wasSet) this.addEventListener(type, this.#callHandler);
      if (!isSet && wasSet) this.removeEventListener(type, this.#callHandler);
    }

    #callHandler = (event) => this.#handlers[event.type]?.call(this, event);
  }

  return {
    BroadcastChannel,

    /**
     * Holds the messages addressed to `channel` until `resume`.
     * @param {BroadcastChannel} channel
     */
    pause(channel) {
      linkOf(channel).paused = true;
    },

    /**
     * Delivers the held messages of `channel`, in order, and lets later ones through.
     * @param {BroadcastChannel} channel
     */
    resume(channel) {
      const link = linkOf(channel);
      link.paused = false;
      for (let i = 0; i < link.inbox.length; i += 1) schedule(() => deliverNext(channel));
    },

    /**
     * Cuts `channel` off for good, as if its tab crashed: it receives nothing
     * more (pending messages are dropped), and what it posts goes nowhere,
     * without an error. It does not count as closed.
     * @param {BroadcastChannel} channel
     */
    disconnect(channel) {
      linkOf(channel).disconnected = true;
      detach(channel);
    },

    /** @returns {ChannelStats} A copy of the traffic counters. */
    stats() {
      return { ...stats };
    },
  };
}
