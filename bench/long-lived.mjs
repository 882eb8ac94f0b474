// A long-lived page: a million frames through one tab (valid frames that make the core
// answer, garbage, foreign versions, non-binary messages). Prints the wasm heap size as it
// goes: it must stay flat. (The boundary passes integers only: no embind value handles.)
//   node bench/long-lived.mjs [frames]   (default 1000000; the Node suite runs 100000)
import { createBaton, __internal } from 'tab-baton';
import { createBrowser } from 'tab-baton/testing';

const total = Number(process.argv[2] ?? 1_000_000);
const browser = createBrowser({ schedule: queueMicrotask });
const channel = 'baton/long/v1';
const until = async (predicate) => {
  while (!predicate()) await new Promise((resolve) => setTimeout(resolve, 5));
};

// Real frames of a leader, recorded off the channel.
const frames = [];
const sniffer = new browser.BroadcastChannel(channel);
sniffer.onmessage = (event) => frames.push(event.data);
const peer = createBaton({ namespace: 'long', id: 'peer', env: browser.tab('peer'), heartbeatMs: 10 });
const peerHandle = peer.lead('ws');
await until(() => peerHandle.state() === 'leader' && frames.length >= 4);
peer.dispose();
sniffer.close();

const baton = createBaton({ namespace: 'long', id: 'receiver', env: browser.tab('receiver'), heartbeatMs: 1000 });
baton.lead('ws');
const sender = new browser.BroadcastChannel(channel);
const garbage = new Uint8Array([0xba, 2, 9, 9, 9]); // this protocol version (2), a bad kind
const foreign = new Uint8Array([0xba, 99, 1]);
const started = Date.now();
console.log('frames      heap bytes');
for (let i = 0; i < total; i += 1) {
  const kind = i % 8;
  sender.postMessage(kind === 0 ? garbage : kind === 1 ? foreign : kind === 2 ? { not: 'bytes' } : frames[i % frames.length]);
  if (i % 10_000 === 9_999) await new Promise((resolve) => setImmediate(resolve));
  if (i % (total / 10) === total / 10 - 1) {
    console.log(`${String(i + 1).padStart(8)}  ${String(__internal.heapBytes()).padStart(11)}`);
  }
}
await until(() => baton.metrics().framesReceived + baton.metrics().glue.droppedNotBinary >= total);
const seconds = (Date.now() - started) / 1000;
const m = baton.metrics();
console.log(`long-lived: ${total} messages in ${seconds.toFixed(1)} s; received ${m.framesReceived}, malformed ${m.droppedMalformed}, foreign ${m.droppedForeignVersion}, not binary ${m.glue.droppedNotBinary}`);
baton.dispose();
sender.close();
await until(() => __internal.liveCores() === 0);
console.log(`after dispose: live cores ${__internal.liveCores()}, core sessions ${__internal.coreSessions()}, heap ${__internal.heapBytes()} bytes`);
