// Bench page entry: the WebAssembly core's load alone, i.e. what Baton's load() does (fetch
// and streaming compilation of baton-core.wasm, instantiation, embind registration), timed
// in the page. The package loads its core once, so there is one (cold) figure per page.
import { load } from 'tab-baton';

const bench = window.__bench;
bench.entryAt = performance.now();
const t0 = performance.now();
await load();
bench.init = { times: [performance.now() - t0], wasm: bench.wasm.map((w) => w.endMs - w.startMs) };
bench.setup({ lib: 'baton-init', mode: 'init', isLeader: () => false, release: null });
