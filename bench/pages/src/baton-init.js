// Bench page entry: the WebAssembly core's module init alone, i.e. what Baton's load() does
// (emscripten factory: base64 decode of the embedded wasm, WebAssembly.instantiate, embind
// registration), timed in the page. ?runs=N instantiates N fresh modules (the first is cold).
import createBatonCore from '../../../build/wasm/baton-core.js';

const bench = window.__bench;
bench.entryAt = performance.now();
const runs = Number(new URLSearchParams(location.search).get('runs')) || 1;
const times = [];
for (let i = 0; i < runs; i += 1) {
  const t0 = performance.now();
  await createBatonCore();
  times.push(performance.now() - t0);
}
bench.init = { times, wasm: bench.wasm.map((w) => w.endMs - w.startMs) };
bench.setup({ lib: 'baton-init', mode: 'init', isLeader: () => false, release: null });
