// Post-link step of the size-optimised wasm build (wasm.cmake), on baton-core.wasm:
// 1. removes the exports that embind's C++ marks EMSCRIPTEN_KEEPALIVE but that nothing calls
//    from JavaScript here: `__getTypeName` (type names for embind's own JavaScript, which
//    embind-functions.js replaces) and `_embind_register_native_and_builtin_types` (run
//    inside the wasm, by a static constructor). The linker keeps a KEEPALIVE export whatever
//    the flags; the module's JavaScript assigns them and never calls them.
// 2. optimises the module again with wasm-opt -Oz, which drops the code of those exports, and
//    inlines every function of at most 7 bytes (-Oz alone: 2), mostly the core's one-line
//    accessors: smaller (the call costs about as much as the body) and faster; then once
//    more after rebuilding the control flow (see below).
// Together about 500 B gzip less than emcc's output (17 022 -> 16 489 B when added), and a
// heartbeat steps about 1.4 times as fast. Other limits measured (before bulk memory, from
// 16 643 B at 7): 4 -> 16 754 B, 8 -> 17 014 B, 12 -> 17 380 B.
//
// 3. drops, from the module's JavaScript, the views of the heap that nothing reads: the runtime
//    makes all eight typed arrays over the memory (again each time it grows), and only embind's
//    registration (HEAP32) and the glue (HEAPU8, module-post.js) read any (45 B gzip of JS);
//    and the assignments of exports that nothing reads (UNREAD_EXPORTS, 29 B).
//
//   node wasm/post-link.mjs baton-core.js baton-core.wasm path/to/wasm-opt FEATURE-FLAGS...
//
// It fails, rather than guess, if the JavaScript does not assign those exports or calls them,
// or does not declare and make the views as below.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const DROPPED = ['___getTypeName', '___embind_register_native_and_builtin_types'];
// What the module's JavaScript assigns from the exports and never reads: those two, and
// malloc and free, which the wasm does not export (emcc's JavaScript takes them for C strings
// and arrays, which embind-functions.js never makes).
const UNREAD_EXPORTS = [...DROPPED, '_malloc', '_free'];

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
const keepNames = hasNames ? ['-g'] : [];
execFileSync(wasmOpt, [...features, '-Oz', '--always-inline-max-function-size', ALWAYS_INLINE_MAX_BYTES, '--converge',
  ...keepNames, wasmFile, '-o', wasmFile], { stdio: 'inherit' });
// Then the control flow rebuilt from scratch (flatten, rereloop) and shrunk again: about
// 110 B gzip less, as fast.
execFileSync(wasmOpt, [...features, '--flatten', '--rereloop', '-Oz', '-Oz', ...keepNames, wasmFile, '-o', wasmFile], { stdio: 'inherit' });

// The views: declared together (`var HEAP8,HEAP16,...;`), each made once in
// updateGlobalBufferAndViews (`HEAP8=new Int8Array(b);`). A view named nowhere else is unread.
const declared = js.match(/\bvar (HEAP\w+(?:,HEAP\w+)*);/);
if (!declared) throw new Error(`post-link: ${jsFile} does not declare the heap's views`);
const views = declared[1].split(',');
const unread = views.filter((view) => js.match(new RegExp(`\\b${view}\\b`, 'g')).length === 2);
let lean = js.replace(declared[0], `var ${views.filter((view) => !unread.includes(view)).join(',')};`);
for (const view of unread) {
  const made = new RegExp(`\\b${view}=new \\w+Array\\(\\w+\\);?`);
  if (!made.test(lean)) throw new Error(`post-link: ${jsFile} does not make ${view} as expected`);
  lean = lean.replace(made, '');
}

// The exports never read: declared with the others (`var _baton_step,_free,...;`), each
// assigned once (`_free=asm["free"];`).
for (const symbol of UNREAD_EXPORTS) {
  const declaration = new RegExp(`(\\bvar [\\w$,]*?)\\b${symbol},|,${symbol}\\b(?=[\\w$,]*;)`);
  const assignment = new RegExp(`\\b${symbol}=asm\\["\\w+"\\];?`);
  if (!declaration.test(lean) || !assignment.test(lean)) throw new Error(`post-link: ${jsFile} does not declare and assign ${symbol} as expected`);
  lean = lean.replace(declaration, '$1').replace(assignment, '');
  if (new RegExp(`\\b${symbol}\\b`).test(lean)) throw new Error(`post-link: ${jsFile} reads ${symbol}`);
}
writeFileSync(jsFile, lean);
