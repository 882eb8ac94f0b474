// Post-link step of the size-optimised wasm build (wasm.cmake), on baton-core.wasm:
// 1. removes the exports that embind's C++ marks EMSCRIPTEN_KEEPALIVE but that nothing calls
//    from JavaScript here: `__getTypeName` (type names for embind's own JavaScript, which
//    embind-functions.js replaces) and `_embind_register_native_and_builtin_types` (run
//    inside the wasm, by a static constructor). The linker keeps a KEEPALIVE export whatever
//    the flags; the module's JavaScript assigns them (to undefined now) and never calls them.
// 2. optimises the module again with wasm-opt -Oz, which drops the code of those exports, and
//    inlines every function of at most 7 bytes (-Oz alone: 2), mostly the core's one-line
//    accessors: smaller (the call costs about as much as the body) and faster.
// Together about 500 B gzip less than emcc's output (17 022 -> 16 489 B when added), and a
// heartbeat steps about 1.4 times as fast. Other limits measured (before bulk memory, from
// 16 643 B at 7): 4 -> 16 754 B, 8 -> 17 014 B, 12 -> 17 380 B.
//
//   node wasm/post-link.mjs baton-core.js baton-core.wasm path/to/wasm-opt FEATURE-FLAGS...
//
// It fails, rather than guess, if the JavaScript does not assign those exports or calls them.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const DROPPED = ['___getTypeName', '___embind_register_native_and_builtin_types'];

const [jsFile, wasmFile, wasmOpt, ...features] = process.argv.slice(2);
const js = readFileSync(jsFile, 'utf8');
const wasm = readFileSync(wasmFile);

// The minified export name of each: `___getTypeName=asm["i"]`.
const names = DROPPED.map((symbol) => {
  const found = js.match(new RegExp(`\\b${symbol}=asm\\["(\\w+)"\\]`));
  if (!found) throw new Error(`post-link: ${jsFile} does not assign ${symbol} from the wasm's exports`);
  if (new RegExp(`\\b${symbol}\\(`).test(js)) throw new Error(`post-link: ${jsFile} calls ${symbol}`);
  return found[1];
});

let at = 0;
function u32() {
  let value = 0;
  let shift = 0;
  let byte;
  do {
    byte = wasm[at++];
    value |= (byte & 0x7f) << shift;
    shift += 7;
  } while (byte & 0x80);
  return value >>> 0;
}
function leb(value) {
  const out = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value) byte |= 0x80;
    out.push(byte);
  } while (value);
  return Buffer.from(out);
}

const EXPORT_SECTION = 7;
const CUSTOM_SECTION = 0;
const parts = [wasm.subarray(0, 8)];
let dropped = 0;
let hasNames = false;
at = 8;
while (at < wasm.length) {
  const start = at;
  const id = wasm[at++];
  const size = u32();
  const end = at + size;
  // A custom section starts with its name (its length is one byte here).
  if (id === CUSTOM_SECTION && wasm.subarray(at + 1, at + 1 + wasm[at]).toString() === 'name') hasNames = true;
  if (id !== EXPORT_SECTION) {
    parts.push(wasm.subarray(start, end));
  } else {
    const kept = [];
    for (let count = u32(); count > 0; count -= 1) {
      const entry = at;
      const length = u32();
      const name = wasm.subarray(at, at + length).toString();
      at += length + 1; // the name, then the kind
      u32(); // the index
      if (names.includes(name)) dropped += 1;
      else kept.push(wasm.subarray(entry, at));
    }
    const body = Buffer.concat([leb(kept.length), ...kept]);
    parts.push(Buffer.from([EXPORT_SECTION]), leb(body.length), body);
  }
  at = end;
}
if (dropped !== names.length) throw new Error(`post-link: ${wasmFile} exports ${dropped} of ${names.join(', ')}`);
writeFileSync(wasmFile, Buffer.concat(parts));
// A build linked with --profiling-funcs (bench/run.sh's size breakdown) keeps its function names.
const ALWAYS_INLINE_MAX_BYTES = '7';
execFileSync(wasmOpt, [...features, '-Oz', '--always-inline-max-function-size', ALWAYS_INLINE_MAX_BYTES, '--converge',
  ...(hasNames ? ['-g'] : []), wasmFile, '-o', wasmFile], { stdio: 'inherit' });
