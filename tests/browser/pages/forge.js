// Hand-made Baton frames for hostile-frame tests (Node and the hostile page alike): the
// wire layout of wasm/core/wire.h, written without any Baton code, so a test can say
// anything a same-origin attacker could.
//
//   encodeFrame({kind: 'heartbeat', sender: 'evil', claims: [{resource: 'ws', epoch: 2 ** 40}]})
//   decodeFrame(bytes) -> the same fields (to replay or alter a captured frame)

//
// Written out here, not imported from js-glue/src/constants.js: the browser test server
// serves this file (tests/browser/pages) to a page with no Baton code, where that file is not
// served. tests/node/hostile.test.js checks VERSION against the generated PROTOCOL_VERSION.

export const MAGIC = 0xba;
/** wire::kProtocolVersion: frames of any other version are dropped as foreign, not judged. */
export const VERSION = 2;
/** The flags byte's bit: the sender only observes (wire::kObservesOnly; not generated). */
export const OBSERVES_ONLY = 1;
export const KINDS = ['', 'hello', 'presence', 'heartbeat', 'goodbye', 'abdicate_request'];
export const LIFECYCLES = ['active', 'hidden', 'frozen', 'restored', 'closing'];

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function varint(out, value) {
  let v = value;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
}

function string(out, value) {
  const bytes = encoder.encode(value);
  varint(out, bytes.length);
  out.push(...bytes);
}

/** Encodes a frame; every field has a plausible default. */
export function encodeFrame({
  version = VERSION,
  kind = 'presence',
  sender,
  generation = 1,
  lifecycle = 'active',
  appVersion = '0',
  startMs = 0,
  tickSeq = 0,
  refreshMs = 1000,
  observesOnly = false,
  capabilities = [],
  claims = [],
  subject = '',
  target = '',
}) {
  const out = [MAGIC, version, KINDS.indexOf(kind)];
  string(out, sender);
  varint(out, generation);
  out.push(LIFECYCLES.indexOf(lifecycle));
  string(out, appVersion);
  varint(out, startMs);
  varint(out, tickSeq);
  varint(out, refreshMs);
  out.push(observesOnly ? OBSERVES_ONLY : 0);
  varint(out, capabilities.length);
  for (const capability of capabilities) string(out, capability);
  varint(out, claims.length);
  for (const claim of claims) {
    string(out, claim.resource);
    varint(out, claim.epoch);
  }
  string(out, subject);
  string(out, target);
  return new Uint8Array(out);
}

/** Decodes a well-formed frame (no checks: for frames captured from real tabs). */
export function decodeFrame(bytes) {
  let i = 0;
  const byte = () => bytes[i++];
  const num = () => {
    let value = 0;
    let scale = 1;
    for (;;) {
      const b = byte();
      value += (b & 0x7f) * scale;
      scale *= 0x80;
      if ((b & 0x80) === 0) return value;
    }
  };
  const str = () => {
    const n = num();
    const s = decoder.decode(bytes.subarray(i, i + n));
    i += n;
    return s;
  };
  byte();
  const frame = { version: byte(), kind: KINDS[byte()] };
  frame.sender = str();
  frame.generation = num();
  frame.lifecycle = LIFECYCLES[byte()];
  frame.appVersion = str();
  frame.startMs = num();
  frame.tickSeq = num();
  frame.refreshMs = num();
  frame.observesOnly = (byte() & OBSERVES_ONLY) !== 0;
  frame.capabilities = Array.from({ length: num() }, str);
  frame.claims = Array.from({ length: num() }, () => ({ resource: str(), epoch: num() }));
  frame.subject = str();
  frame.target = str();
  return frame;
}

/**
 * Every kind of hostile frame the issue found, against one resource whose healthy leader
 * is `leader` (epoch `epoch`) among the real tabs `ids` (generation 1). Returns
 * [label, bytes] pairs, one of each kind; `replays` are frames captured earlier.
 */
export function hostileFrames({ resource, leader, epoch, ids, replays = [] }) {
  const followers = ids.filter((id) => id !== leader);
  const frames = [
    ['claim of 2^40', encodeFrame({ kind: 'heartbeat', sender: 'evil-1', claims: [{ resource, epoch: 2 ** 40 }] })],
    ['claim of epoch+1 (made-up sender)', encodeFrame({ kind: 'heartbeat', sender: 'evil-2', tickSeq: 1e6, claims: [{ resource, epoch: epoch + 1 }] })],
    ['claim of epoch+1 (a follower\'s id)', encodeFrame({ kind: 'heartbeat', sender: followers[0], tickSeq: 1e6, claims: [{ resource, epoch: epoch + 1 }] })],
    ['claim of an older epoch', encodeFrame({ kind: 'heartbeat', sender: 'evil-3', claims: [{ resource, epoch: Math.max(1, epoch - 1) }] })],
    ['abdicate request (made-up sender)', encodeFrame({ kind: 'abdicate_request', sender: 'evil-4', subject: resource, target: leader })],
    ['abdicate request (a follower\'s id)', encodeFrame({ kind: 'abdicate_request', sender: followers[0], subject: resource, target: leader })],
    ['appVersion 999', encodeFrame({ kind: 'presence', sender: 'evil-5', appVersion: '999' })],
    ['goodbye naming a follower (made-up sender)', encodeFrame({ kind: 'goodbye', sender: 'evil-6', subject: resource, target: followers[0] })],
    ['malformed (length past the end)', new Uint8Array([MAGIC, VERSION, 2, 250, 1, 2])],
    ['malformed (bad lifecycle)', (() => {
      const bytes = encodeFrame({ kind: 'presence', sender: 'evil-7' });
      bytes[3 + 1 + 'evil-7'.length + 1] = 99;
      return bytes;
    })()],
  ];
  // Under each real id: another generation, a tick below the tab's newest (an old tick
  // replayed) and a tick far above what its timer can have reached (a leap), each saying
  // the tab froze and runs newer code.
  const forged = { kind: 'presence', appVersion: '999', lifecycle: 'frozen' };
  for (const id of ids) {
    frames.push([`presence of ${id} at generation 2^32-1`, encodeFrame({ ...forged, sender: id, generation: 2 ** 32 - 1 })]);
    frames.push([`presence of ${id} with a tick below its newest`, encodeFrame({ ...forged, sender: id, tickSeq: 0 })]);
    frames.push([`presence of ${id} with a leaping tick`, encodeFrame({ ...forged, sender: id, tickSeq: 2 ** 40 })]);
  }
  for (const bytes of replays) frames.push(['replayed frame', bytes]);
  return frames;
}

/** The kind of a label from hostileFrames (the presence frames of each real id are one kind). */
export const kindOf = (label) => label.replace(/presence of \S+/, 'presence of <tab>');
