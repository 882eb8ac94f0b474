// Nothing the glue does leaks: after 100 000 messages through the channel (valid frames
// that make the core answer, garbage, non-binary) and the queries, the wasm heap has not
// grown since warm-up, and after dispose no core and no core session is left. The boundary
// is a few functions over integers and one shared buffer (wasm/bindings.cc): no embind
// value handle is ever created, so their count proves nothing and is not checked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, load, __internal } from 'tab-baton';
import { createBrowser } from 'tab-baton/testing';
import { openTab, waitFor } from './helpers/tabs.js';
import { PROTOCOL_VERSION } from '../../js-glue/src/constants.js';

const MESSAGES = 100_000;

test(`no leaks after ${MESSAGES} messages`, { timeout: 60_000 }, async (t) => {
  // Microtask delivery keeps 100 000 messages fast; the order is the same as with tasks.
  const browser = createBrowser({ schedule: queueMicrotask });
  const channelName = 'baton/leak/v1';
  // Whatever happens below, nothing may stay open: a live baton keeps the process running.
  const cleanup = [];
  t.after(() => {
    for (const close of cleanup.reverse()) close();
  });

  // Record real frames of a peer: its hello, presence and leader heartbeats.
  const frames = [];
  const sniffer = new browser.BroadcastChannel(channelName);
  cleanup.push(() => sniffer.close());
  sniffer.onmessage = (event) => frames.push(event.data);
  const peerTab = openTab(browser, 'peer');
  const peer = createBaton({ namespace: 'leak', id: 'peer', env: peerTab.env, heartbeatMs: 20 });
  cleanup.push(() => peer.dispose());
  const peerHandle = peer.lead('ws');
  await waitFor(() => peerHandle.state() === 'leader' && frames.length >= 4);
  peer.dispose();
  sniffer.close();
  assert.ok(frames.length >= 4 && frames.every((f) => f instanceof Uint8Array));

  const tab = openTab(browser, 'receiver');
  const baton = createBaton({ namespace: 'leak', id: 'receiver', env: tab.env, heartbeatMs: 20 });
  cleanup.push(() => baton.dispose());
  const handle = baton.lead('ws');
  handle.onChange(() => {});
  await waitFor(() => handle.state() === 'leader');
  const sentBefore = baton.metrics().framesSent;

  const sender = new browser.BroadcastChannel(channelName);
  cleanup.push(() => sender.close());
  const garbage = new Uint8Array([0xba, PROTOCOL_VERSION, 9, 9, 9]); // this protocol version, a bad kind
  const foreign = new Uint8Array([0xba, 99, 1]);
  let binary = 0;
  let notBinary = 0;
  let heapAfterWarmup = 0;
  for (let i = 0; i < MESSAGES; i += 1) {
    if (i === MESSAGES / 10) heapAfterWarmup = __internal.heapBytes();
    switch (i % 8) {
      case 0: sender.postMessage(garbage); binary += 1; break;
      case 1: sender.postMessage(foreign); binary += 1; break;
      case 2: sender.postMessage({ not: 'bytes' }); notBinary += 1; break;
      default: sender.postMessage(frames[i % frames.length]); binary += 1; break;
    }
    if (i % 5000 === 4999) await new Promise((resolve) => setImmediate(resolve)); // let timers run
  }
  await waitFor(() => baton.metrics().framesReceived >= binary, { timeoutMs: 30_000, what: 'every frame handled' });
  sender.close();

  const metrics = baton.metrics();
  assert.equal(metrics.framesReceived, binary);
  assert.equal(metrics.glue.droppedNotBinary, notBinary);
  assert.ok(metrics.droppedMalformed >= MESSAGES / 8);
  assert.ok(metrics.droppedForeignVersion >= MESSAGES / 8);
  // Answers to replayed frames are rate-limited per sender, so their number is not known.
  // The leader's own heartbeats are: after the flood, with every other channel closed,
  // what arrives here crossed the boundary as effects with bytes.
  const heard = [];
  const observer = new browser.BroadcastChannel(channelName);
  cleanup.push(() => observer.close());
  observer.onmessage = (event) => heard.push(event.data);
  await waitFor(() => heard.length >= 5, { what: "the leader's heartbeats on the channel" });
  observer.close();
  assert.ok(heard.every((f) => f instanceof Uint8Array && f.length > 0));
  assert.ok(baton.metrics().framesSent >= sentBefore + heard.length);

  // Queries return fresh JS values and must not grow the heap either.
  for (let i = 0; i < 1000; i += 1) {
    baton.presence();
    baton.metrics();
    baton.log();
    handle.leader();
    handle.state();
  }
  assert.equal(__internal.heapBytes(), heapAfterWarmup, 'the wasm heap stayed flat after warm-up');

  baton.dispose();
  await waitFor(() => __internal.liveCores() === 0, { what: 'every core deleted' });
  assert.equal(__internal.coreSessions(), 0, 'every core session closed');
});

// Each core session holds its tables (256 tabs) in the wasm heap, so a few dozen open cores
// outgrow the initial memory: the memory grows (wasm/heap-growth.js), the glue reads the new
// views, and every core keeps working.
test('the wasm memory grows for many open cores, and every core keeps working', { timeout: 60_000 }, async (t) => {
  await load();
  const heapBefore = __internal.heapBytes();
  const browser = createBrowser({ schedule: queueMicrotask });
  const batons = [];
  t.after(() => {
    for (const b of batons) b.dispose();
  });
  // Cores are opened until the memory grows (about 40 from the initial memory; more if
  // earlier tests in this process left freed room), and 8 more after it.
  const handles = [];
  let grewAt = null;
  for (let i = 0; grewAt === null || i < grewAt + 8; i += 1) {
    assert.ok(i < 400, `the heap did not grow from ${heapBefore} B with 400 cores open`);
    const baton = createBaton({ namespace: 'grow', id: `tab-${i}`, env: openTab(browser, `tab-${i}`).env, heartbeatMs: 20 });
    batons.push(baton);
    handles.push(baton.lead('ws'));
    await waitFor(() => __internal.coreSessions() === i + 1, { what: `core ${i + 1} open` });
    if (grewAt === null && __internal.heapBytes() > heapBefore) grewAt = i;
  }
  await waitFor(() => handles.filter((h) => h.state() === 'leader').length === 1
    && handles.every((h) => h.leader() !== null), { timeoutMs: 30_000, what: 'one leader that every tab knows' });
  const leader = handles.find((h) => h.state() === 'leader').leader().id;
  for (const h of handles) assert.equal(h.leader().id, leader);
  for (const b of batons.splice(0)) b.dispose();
  await waitFor(() => __internal.liveCores() === 0, { what: 'every core deleted' });
  assert.equal(__internal.coreSessions(), 0);
});
