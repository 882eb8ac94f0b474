#!/usr/bin/env node
// Core throughput in WebAssembly, in Node: the workload of bench/core_throughput.cc (a
// realistic 121-byte heartbeat from a leader holding two terms, fed to a follower that joined
// both resources), stepped
//   1. raw: the one call per event (`step`, the module's wasm export) over a record written
//      into the shared buffer beforehand: boundary + decode + step;
//   2. glue: through the glue's Core wrapper (js-glue/src/core.js `message()`), which also
//      copies the step's effects out into plain objects: what the runtime does per frame;
//   3. baton: through a whole Baton (createBaton with the tab-baton/testing fakes): channel
//      message event (structured clone), Channel, Runtime queue, Core, effects, timer re-arm;
//   4. the step call alone, to a handle that has no session (the module answers -1 at once);
//   5. the glue alone: 2 and 3 again with the core's step replaced by its canned answer;
//   6. the answers a caller waits for, through the glue's Core: a fence check (as fenced()
//      steps it) and a lease read (as the lease transaction steps it), on the same follower.
// Each figure is per second of wall time and, as `cpu...`, per second of this process's CPU
// time (user + system), which a loaded machine disturbs less.
// The frames are encoded here exactly as wire::encode does (checked: same size, decoded OK).
//   node bench/wasm-throughput.mjs [frames] [--json]
import { performance } from 'node:perf_hooks';
import { load, Core, internals } from '../js-glue/src/core.js';
import { createBaton } from '../js-glue/src/index.js';
import { createBrowser } from '../js-glue/src/testing/index.js';
import { EVENT_KIND_MESSAGE } from '../js-glue/src/constants.js';
import { RECORD_MAGIC, RECORD_VERSION } from '../js-glue/src/boundary-constants.js';

const args = process.argv.slice(2);
const json = args.includes('--json');
const frames = Number(args.find((a) => /^\d+$/.test(a))) || 1000000;

// ----------------------------------------------------------------- the wire format (wire.cc)
const enc = new TextEncoder();
function varint(out, n) {
  let v = BigInt(n);
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    out.push(byte);
  } while (v > 0n);
}
function string(out, s) {
  const b = enc.encode(s);
  varint(out, b.length);
  out.push(...b);
}
/** wire::encode of a Frame (fields as in wire.h). */
export function encodeFrame(f) {
  const out = [0xba, 2, f.kind];  // wire::kMagic, wire::kProtocolVersion
  string(out, f.sender);
  varint(out, f.generation);
  out.push(f.lifecycle);
  string(out, f.appVersion);
  varint(out, f.startMs);
  varint(out, f.tickSeq);
  varint(out, f.refreshMs);
  out.push(0);  // flags: none (the sender runs for its resources)
  varint(out, f.capabilities.length);
  for (const c of f.capabilities) string(out, c);
  varint(out, f.claims.length);
  for (const [resource, epoch] of f.claims) {
    string(out, resource);
    varint(out, epoch);
  }
  string(out, f.subject || '');
  string(out, f.target || '');
  return Uint8Array.from(out);
}

/** The 1024 heartbeats of core_throughput.cc. */
export function heartbeats() {
  const list = [];
  for (let i = 0; i < 1024; i += 1) {
    list.push(encodeFrame({
      kind: 3, // heartbeat
      sender: '3f1c2a9e-5b7d-4c1e-9a2b-7d8e6f5a4b3c',
      generation: 1,
      lifecycle: 0,
      appVersion: '1.4.2',
      startMs: 1760000000000,
      tickSeq: i + 2,
      refreshMs: 1000,
      capabilities: ['ws.owner.v1', 'auth.refresh.v1'],
      claims: [['websocket-owner', 41], ['token-refresh', 7]],
    }));
  }
  return list;
}

const POLICY = { requiredCapability: '', allowHidden: true, preferVisible: false, requiresNetwork: false, newestAppOnly: true };

function follower() {
  const core = new Core({ id: 'follower', generation: 1, appVersion: '0', capabilities: ['ws.owner.v1'], authority: 0, startMs: 0, seed: 1 });
  core.join(0, 'websocket-owner', POLICY);
  core.join(0, 'token-refresh', POLICY);
  return core;
}

function timeIt(n, fn) {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const result = fn(n);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, result };
}

export async function measure(n = frames) {
  // From the sources, the wasm is in the build tree (the package has it next to its scripts).
  await load({ wasm: new URL('../build/wasm/baton-core.wasm', import.meta.url) });
  const hb = heartbeats();
  const mask = hb.length - 1;
  const out = { frames: n, frameBytes: hb[0].length };

  // Warm-up (JIT, wasm tier-up), then the measured runs.
  { const c = follower(); let now = 1; for (let i = 0; i < 20000; i += 1) { c.message(now, hb[i & mask]); now += 0.01; } c.dispose(); }

  // The boundary call alone: event records (wasm/boundary.h) encoded beforehand, copied into
  // the shared buffer and stepped; the answer is not read.
  const M = internals.module();
  const io = M.buffer();
  // Header, kind, monotonic and wall clocks (f64 each), frame length (u16), frame.
  const WALL_AT = 11;
  const FRAME_AT = 21;
  const wall = Date.now();
  const records = hb.map((frame) => {
    const r = new Uint8Array(FRAME_AT + frame.length);
    r.set([RECORD_MAGIC, RECORD_VERSION, EVENT_KIND_MESSAGE]);
    new DataView(r.buffer).setFloat64(WALL_AT, wall, true);
    r[FRAME_AT - 2] = frame.length & 0xff;
    r[FRAME_AT - 1] = frame.length >> 8;
    r.set(frame, FRAME_AT);
    return r;
  });
  const rawRun = () => {
    const c = follower();
    const heap = M.heap();
    const data = new DataView(heap.buffer);
    let now = 1;
    const { seconds, cpuSeconds, result } = timeIt(n, (count) => {
      let bytes = 0;
      for (let i = 0; i < count; i += 1) {
        const r = records[i & mask];
        heap.set(r, io);
        data.setFloat64(io + 3, now, true);
        bytes += M.step(c.handle, r.length);
        now += 0.01;
      }
      return bytes;
    });
    const m = c.metrics();
    c.dispose();
    if (m.framesReceived < n) throw new Error(`wasm-throughput: the core took ${m.framesReceived} of ${n} event records; update their layout to wasm/boundary.h`);
    return { framesPerSecond: n / seconds, cpuFramesPerSecond: n / cpuSeconds, answerBytes: result, received: m.framesReceived, malformed: m.droppedMalformed };
  };
  const glueRun = () => {
    const c = follower();
    let now = 1;
    const { seconds, cpuSeconds, result } = timeIt(n, (count) => {
      let effects = 0;
      for (let i = 0; i < count; i += 1) { effects += c.message(now, hb[i & mask]).length; now += 0.01; }
      return effects;
    });
    c.dispose();
    return { framesPerSecond: n / seconds, cpuFramesPerSecond: n / cpuSeconds, effects: result };
  };
  const answersRun = () => {
    const c = follower();
    let now = 1;
    const fence = timeIt(n, (count) => {
      let admitted = 0;
      for (let i = 0; i < count; i += 1) { admitted += c.fenceCheck(now, 'websocket-owner', 41)[0].admitted ? 1 : 0; now += 0.01; }
      return admitted;
    });
    const lease = timeIt(n, (count) => {
      let writes = 0;
      for (let i = 0; i < count; i += 1) { writes += c.leaseRead(now, 'websocket-owner', null, 0).length; now += 0.01; }
      return writes;
    });
    c.dispose();
    return {
      fenceChecksPerSecond: n / fence.seconds, cpuFenceChecksPerSecond: n / fence.cpuSeconds, admitted: fence.result,
      leaseReadsPerSecond: n / lease.seconds, cpuLeaseReadsPerSecond: n / lease.cpuSeconds, writes: lease.result,
    };
  };
  const best = (a, b) => (b.framesPerSecond > a.framesPerSecond ? b : a);
  let raw = rawRun();
  let glue = glueRun();
  raw = best(raw, rawRun());
  glue = best(glue, glueRun());
  out.raw = raw;
  out.glue = glue;
  out.answers = answersRun();
  out.baton = await throughBaton(Math.min(n, 300000), hb);

  // The glue's own cost: the same paths with the module's step replaced by a copy of the
  // answer the core gives a heartbeat (no effects, no changed views), so that only
  // JavaScript runs: what the glue allows however fast the core becomes.
  const canned = (() => {
    const c = follower();
    let length = 0;
    for (let i = 0; i < 100; i += 1) { // past the first frames, which change the leader
      const heap = M.heap();
      heap.set(records[i], io);
      new DataView(heap.buffer).setFloat64(io + 3, 1 + i * 0.01, true);
      length = M.step(c.handle, records[i].length);
    }
    // A refused record (-1) means this file's record layout no longer matches boundary.cc.
    if (length < 0) throw new Error('wasm-throughput: the core refused the event record; update its layout to wasm/boundary.h');
    const answer = M.heap().slice(io, io + length);
    c.dispose();
    return answer;
  })();
  // The call alone: no session has handle 0, so the module answers -1 at once.
  out.callAlone = (() => {
    const { seconds } = timeIt(n, (count) => {
      let sum = 0;
      for (let i = 0; i < count; i += 1) sum += M.step(0, 0);
      return sum;
    });
    return { callsPerSecond: n / seconds };
  })();
  const step = M.step;
  M.step = () => {
    M.heap().set(canned, io);
    return canned.length;
  };
  try {
    out.glueAlone = best(glueRun(), glueRun());
    out.batonAlone = await throughBaton(Math.min(n, 300000), hb);
  } finally {
    M.step = step;
  }
  return out;
}

/** Frames through a whole Baton: a fake tab's channel delivers them, one task each. */
async function throughBaton(n, hb) {
  const queue = [];
  const browser = createBrowser({ schedule: (task) => queue.push(task) });
  const leaderTab = browser.tab('leader');
  const tab = browser.tab('follower');
  // The leader's terms: hold both locks, so the Baton under test stays a follower (as in the
  // native benchmark, whose follower's lock requests are never granted).
  for (const r of ['websocket-owner', 'token-refresh']) leaderTab.locks.request(`baton/bench/v1/${r}`, () => new Promise(() => {}));
  const baton = createBaton({ namespace: 'bench', id: 'follower', capabilities: ['ws.owner.v1'], env: tab, seed: 1 });
  baton.lead('websocket-owner');
  baton.lead('token-refresh');
  const sender = new leaderTab.BroadcastChannel('baton/bench/v1');
  const drain = () => { while (queue.length) queue.shift()(); };
  await new Promise((r) => setTimeout(r, 20));
  drain();
  const mask = hb.length - 1;
  for (let i = 0; i < 20000; i += 1) { sender.postMessage(hb[i & mask]); drain(); }
  const before = baton.metrics().framesReceived;
  const t0 = performance.now();
  for (let i = 0; i < n; i += 1) {
    sender.postMessage(hb[i & mask]);
    drain();
  }
  const seconds = (performance.now() - t0) / 1000;
  const m = baton.metrics();
  const result = { frames: n, framesPerSecond: n / seconds, received: m.framesReceived - before, malformed: m.droppedMalformed, role: baton.lead ? undefined : undefined };
  baton.dispose();
  sender.close();
  drain();
  return result;
}

const isMain = process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop());
if (isMain) {
  const r = await measure(frames);
  if (json) console.log(JSON.stringify(r));
  else {
    console.log(`core (wasm): heartbeat frame ${r.frameBytes} bytes`);
    console.log(`core (wasm): one step call per frame    ${r.raw.framesPerSecond.toFixed(0).padStart(12)} frames/s (${r.raw.received} received, ${r.raw.malformed} malformed)`);
    console.log(`core (wasm): glue Core decode + step    ${r.glue.framesPerSecond.toFixed(0).padStart(12)} frames/s (${r.glue.effects} effects)`);
    console.log(`core (wasm): whole Baton (fakes)        ${r.baton.framesPerSecond.toFixed(0).padStart(12)} frames/s (${r.baton.received} received)`);
    console.log(`core (wasm): glue Core fence check      ${r.answers.fenceChecksPerSecond.toFixed(0).padStart(12)} checks/s (${r.answers.cpuFenceChecksPerSecond.toFixed(0)} per CPU second)`);
    console.log(`core (wasm): glue Core lease read       ${r.answers.leaseReadsPerSecond.toFixed(0).padStart(12)} reads/s (${r.answers.cpuLeaseReadsPerSecond.toFixed(0)} per CPU second)`);
    console.log(`the step call alone (no core)           ${r.callAlone.callsPerSecond.toFixed(0).padStart(12)} calls/s`);
    console.log(`glue alone (core's answer canned):`);
    console.log(`             glue Core decode + step    ${r.glueAlone.framesPerSecond.toFixed(0).padStart(12)} frames/s`);
    console.log(`             whole Baton (fakes)        ${r.batonAlone.framesPerSecond.toFixed(0).padStart(12)} frames/s`);
  }
}
