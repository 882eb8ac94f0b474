// Nothing the glue does leaks: after 100 000 messages through the channel (valid frames
// that make the core answer, garbage, non-binary) and the queries, the wasm heap has not
// grown since warm-up, and after dispose no core and no core session is left. The boundary
// is a few functions over integers and one shared buffer (wasm/bindings.cc): no embind
// value handle is ever created, so their count proves nothing and is not checked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBaton, __internal } from 'tab-baton';
import { createBrowser } from 'tab-baton/testing';
import { openTab, waitFor } from './helpers/tabs.js';

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
  const garbage = new Uint8Array([0xba, 1, 9, 9, 9]);
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
  // Answers to replayed frames are rate-limited per sender, so their number is not known;
  // the leader's own heartbeats are: effects with bytes keep crossing the boundary.
  await waitFor(() => baton.metrics().framesSent >= sentBefore + 20, { what: 'frames sent after the flood' });

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
