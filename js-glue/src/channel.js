/**
 * The BroadcastChannel transport: carries the core's binary frames between the tabs of
 * one namespace and protocol version. Anything that is not a Uint8Array is dropped and
 * counted here; the core checks and counts everything else (size, version, shape).
 *
 * @module tab-baton/channel
 */

/**
 * Bytes handed to the core at most. The core drops frames over its own (much smaller)
 * limit and counts them as oversized; cutting a huge message here first keeps a hostile
 * sender from making this tab copy megabytes into wasm memory.
 */
const MAX_COPY_BYTES = 64 * 1024;

/**
 * True for a Uint8Array of any realm (a channel may deliver one from another realm). The
 * first test answers for every frame of this realm; the tag lookup costs about 2 µs.
 */
function isBytes(value) {
  return value instanceof Uint8Array || Object.prototype.toString.call(value) === '[object Uint8Array]';
}

export class Channel {
  /**
   * @param {any} BroadcastChannel the constructor from the environment
   * @param {string} name
   * @param {(bytes: Uint8Array) => void} onFrame
   * @param {Record<string, number>} counters glue counters (droppedNotBinary, postFailures)
   */
  constructor(BroadcastChannel, name, onFrame, counters) {
    this.counters = counters;
    this.channel = new BroadcastChannel(name);
    // Node: an open channel keeps the process alive; Baton's never should.
    if (typeof this.channel.unref === 'function') this.channel.unref();
    this.onMessage_ = (event) => {
      const data = event.data;
      if (!isBytes(data)) {
        counters.droppedNotBinary += 1;
        return;
      }
      onFrame(data.byteLength > MAX_COPY_BYTES ? data.subarray(0, MAX_COPY_BYTES) : data);
    };
    this.channel.addEventListener('message', this.onMessage_);
  }

  /** Posts one frame; a closed or broken channel is counted, never thrown. */
  post(bytes) {
    try {
      this.channel.postMessage(bytes);
    } catch {
      this.counters.postFailures += 1;
    }
  }

  /** Stops listening and closes the channel. Frames already posted are still delivered. */
  close() {
    if (!this.channel) return;
    this.channel.removeEventListener('message', this.onMessage_);
    try {
      this.channel.close();
    } catch {
      // A broken implementation must not stop the rest of the teardown.
    }
    this.channel = null;
  }
}
