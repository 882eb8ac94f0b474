// Size budget of the built package: fails when js-glue/dist/index.js (the glue with the wasm
// core embedded; everything an app ships for leader election) grows past its gzip budget.
// gzip output is deterministic for the same bytes, so this is a fair test.
//
// The budget is the size measured when this test was written plus about 3%. The target of
// issue 5 is 20 KB gzip for JS + wasm together (the peers ship 2 to 6 KB); we are far above
// it, and this test only stops further growth: lower BUDGET_GZIP whenever the package shrinks.
//
// Where the bytes go (bench/run.sh measures it, see bench/RESULTS.md "Size"), at 57853 B gzip:
//   - the wasm core embedded as base64: ~32.8 KB gzip (the binary alone is 55 KB raw, 25.2 KB
//     gzip: base64 costs ~7.5 KB of gzip on top). Of its 51 KB of code: the core's step
//     inlined into the bindings' Core::run ~15 KB, libc++ (std::string, map, vector, ...)
//     ~9 KB, dlmalloc ~7.5 KB, the core's Node/wire/presence ~8.5 KB, embind ~5 KB, printf ~3.5 KB;
//   - the Emscripten + embind JS runtime: ~9.8 KB gzip;
//   - the glue (js-glue/src): ~14.1 KB gzip, of which the relay ~4.8 KB (relay.js and
//     relay-sources.js, minified alone) and the compatibility layers ~2.9 KB.
// Run: node --test tests/node/size-budget.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = path.join(root, 'js-glue', 'dist', 'index.js');

/** Bytes of gzip (zlib level 9, as js-glue/build.mjs reports): measured 57853, plus ~3%. */
const BUDGET_GZIP = 62700; // +100 B: names encoded and checked for lone surrogates;
// +100 B: app callbacks queued out of browser handlers (after +800 B: the relay as a reducer);
// +600 B: requests and leader state as every app carries them (the error classes, the facade;
// the implementation is dist/talk.js, loaded on first use only);
// +1.5 KB: exact lock names of the compatibility APIs (foreign-holder check), onduplicate in
// both leaders, error classes, Node unref, support().reason
/** The target of issue 5: JS + wasm at most 20 KB gzip. Reported, not enforced. */
const TARGET_GZIP = 20 * 1024;

test('js-glue/dist/index.js stays within its gzip budget', () => {
  assert.ok(existsSync(dist), 'js-glue/dist/index.js is missing: build it first (cmake --preset wasm && cmake --build --preset wasm && node js-glue/build.mjs)');
  const bytes = readFileSync(dist);
  const gzip = gzipSync(bytes, { level: 9 }).length;
  const wasmBase64 = /data:application\/octet-stream;base64,([A-Za-z0-9+/=]+)/.exec(bytes.toString('latin1'))?.[1] ?? '';
  const wasm = Buffer.from(wasmBase64, 'base64');
  console.log(`dist/index.js: ${bytes.length} B raw, ${gzip} B gzip (budget ${BUDGET_GZIP}, target ${TARGET_GZIP}); `
    + `embedded wasm ${wasm.length} B raw, ${gzipSync(wasm, { level: 9 }).length} B gzip`);
  assert.ok(gzip <= BUDGET_GZIP, `dist/index.js is ${gzip} B gzip, over its budget of ${BUDGET_GZIP} B (+${gzip - BUDGET_GZIP} B). `
    + 'Find what grew (bench/run.sh --quick --only size prints the breakdown) and shrink it; raise the budget only on purpose.');
});
