// Size: raw and gzip bytes of what an app ships for leader election, and where Baton's bytes
// go. gzip is zlib level 9 (as js-glue/build.mjs reports). Everything is measured from the
// built files; nothing is estimated. The size budget test (tests/node/size-budget.test.js)
// and the benchmark report share the app and the budget defined here.
import { build } from 'esbuild';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { parseWasm, groupCode } from './wasm-sections.mjs';

/** The target for an app that uses only createBaton: JS + wasm, gzip. */
export const TARGET_GZIP = 20 * 1024;
/**
 * The budget the test enforces for that app (JS + wasm, gzip bytes): the size measured when
 * it was set plus about 1%. Lower it whenever the package shrinks; raise it only on purpose.
 * Raised by 456 B for the epoch's one-trip path (epoch-store.js: the grant's allocation in
 * one trip to the store, and the followers' reads that keep it possible). Lowered to
 * 32 766 B measured plus a few bytes, after the wasm lost 1 052 B (embind's builtin types,
 * memchr and strlen, effects and frames made once, push_back without a shift) and the
 * runtime's JS 74 B. Raised by 125 B for a frozen page (idb.js: storage deadlines also
 * kept in message handlers; the core: a frame shows only the ticks the timer's own frames
 * showed). Raised by 185 B for what a hostile same-origin page must not break (33 106 B
 * measured): the counter's read reaching the core as a confirmed floor (epoch_read), a
 * holder asking again for a marker lock taken from it, and epochs that end at 2^40 - 1
 * under Web Locks and the lease (a store raised there makes degraded terms, not forged ones).
 * Raised by 40 B, to 33 147 B measured plus a few bytes, for the start-up order (createBaton
 * starts the core's load first; the lock manager's probe waits for lead()'s requests) and a
 * first visit's epoch in one trip. Raised by 80 B, to 33 223 B measured plus a few bytes,
 * for a frozen page: the read of the counter that a frame prompts begins in a timer task,
 * not in the message handler (epoch-store.js, `heard`). Raised by 55 B, to 33 278 B measured
 * plus a few bytes, for the lease: a term lapsed by a jump of the wall clock stays lapsed
 * when the clock jumps back (the core's lapse_jumped_lease_terms, on every step). Raised by
 * 49 B, to 33 327 B measured plus a few bytes, for the lease's named successor: the others
 * give it a heartbeat's head start after a goodbye (Lease::campaign). Raised by 10 B, to
 * 33 338 B measured plus a few bytes, for a frozen page under Web Locks: the core gives up
 * its place in the lock's queue in the `freeze` event's step, so the lock is not handed to
 * a frozen page (where a grant took an epoch and began its transaction).
 */
export const BUDGET_GZIP = 33345;

/** An app that uses only createBaton, as its author would write it. */
export const APP_SOURCE = `import { createBaton } from 'tab-baton';
const baton = createBaton({ namespace: 'app' });
baton.lead('job', { run() { console.log('leading'); } });
`;

/** Strings that only code an app using only createBaton must not ship would contain. */
export const NOT_IN_APP = {
  relay: '"createRelay"',
  'awaforge compat': 'leaderElection.create',
  'request-leadership compat': '"requestLeadership"',
  'broadcast-channel compat': '"responseTime"',
  'testing fakes': 'is already open',
  'test hooks': 'presenceSnapshot',
  'requests and leader state (talk.js, imported on first use)': 'is already waiting for an answer',
  'IndexedDB lease (lease.js, imported when leading by lease)': '["leases","epochs"]',
};

const gz = (buf) => gzipSync(buf, { level: 9 }).length;
const measure = (buf) => ({ raw: Buffer.byteLength(buf), gzip: gz(Buffer.from(buf)) });
/** The package's own settings (js-glue/build.mjs): ESM, minified, ES2020. */
const SETTINGS = { bundle: true, format: 'esm', platform: 'browser', target: 'es2020', minify: true, legalComments: 'none', logLevel: 'error', write: false };

/**
 * Bundles APP_SOURCE against the built package (resolved as `tab-baton` from `root`), split
 * as a bundler that supports it would, and measures what the app loads at start: its entry,
 * the chunks it imports statically, and the wasm. Code behind a dynamic import (requests,
 * loaded on first use) is not loaded by an app that does not use it.
 * @returns {Promise<{js: {raw: number, gzip: number}, wasm: {raw: number, gzip: number}, total: number, text: string, lazy: {raw: number, gzip: number}, lazyChunks: Record<string, {raw: number, gzip: number}>}>}
 */
export async function measureApp(root) {
  const result = await build({
    ...SETTINGS, splitting: true, outdir: path.join(root, 'build', 'size-app'), metafile: true,
    stdin: { contents: APP_SOURCE, resolveDir: root, loader: 'js' },
  });
  const files = new Map(result.outputFiles.map((f) => [path.relative(root, f.path), f.text]));
  const outputs = result.metafile.outputs;
  const entry = Object.keys(outputs).find((name) => outputs[name].entryPoint);
  const loaded = new Set();
  const visit = (name) => {
    if (loaded.has(name)) return;
    loaded.add(name);
    for (const imp of outputs[name].imports) if (imp.kind === 'import-statement') visit(imp.path);
  };
  visit(entry);
  const sum = (names) => names.map((n) => measure(files.get(n))).reduce((a, b) => ({ raw: a.raw + b.raw, gzip: a.gzip + b.gzip }), { raw: 0, gzip: 0 });
  const js = sum([...loaded]);
  const lazyNames = [...files.keys()].filter((n) => n.endsWith('.js') && !loaded.has(n));
  const lazy = sum(lazyNames);
  // Each chunk loaded on first use, by its module's name without esbuild's hash ('talk', 'lease').
  const lazyChunks = Object.fromEntries(lazyNames.map((n) => [path.basename(n).replace(/-[A-Z0-9]+\.js$/, ''), measure(files.get(n))]));
  const wasm = measure(readFileSync(path.join(root, 'js-glue', 'dist', 'baton-core.wasm')));
  return { js, wasm, lazy, lazyChunks, total: js.gzip + wasm.gzip, text: [...loaded].map((n) => files.get(n)).join('\n') };
}

/** Marks the emscripten module (build/wasm/baton-core.js) external: the glue alone. */
const coreExternal = {
  name: 'core-external',
  setup(b) {
    b.onResolve({ filter: /baton-core\.js$/ }, (args) => ({ path: args.path, external: true }));
  },
};

export async function measureSizes(root, { namesBuild } = {}) {
  const wasmBytes = readFileSync(path.join(root, 'js-glue', 'dist', 'baton-core.wasm'));
  const app = await measureApp(root);
  const coreJs = path.join(root, 'build', 'wasm', 'baton-core.js');
  const runtimeMin = (await build({ ...SETTINGS, entryPoints: [coreJs] })).outputFiles[0].text;
  const glue = (await build({ ...SETTINGS, entryPoints: [path.join(root, 'js-glue', 'src', 'index.js')], plugins: [coreExternal] })).outputFiles[0].text;

  // The glue by source file (each minified alone: a rough attribution, gzip of the parts > whole).
  const srcDir = path.join(root, 'js-glue', 'src');
  const files = [];
  for (const sub of ['', 'compat']) {
    for (const f of readdirSync(path.join(srcDir, sub))) {
      if (!f.endsWith('.js')) continue;
      const file = path.join(srcDir, sub, f);
      const min = (await build({ ...SETTINGS, bundle: false, entryPoints: [file] })).outputFiles[0].text;
      files.push({ file: path.join(sub, f), ...measure(min) });
    }
  }
  files.sort((a, b) => b.gzip - a.gzip);

  const parsed = parseWasm(wasmBytes);
  const sections = parsed.sections.map((s) => ({ name: s.name, bytes: s.size }));

  let code = null;
  const namedWasm = namesBuild && namesBuild.replace(/\.js$/, '.wasm');
  if (namedWasm && existsSync(namedWasm)) {
    const p = parseWasm(readFileSync(namedWasm));
    const g = groupCode(p);
    const codeBytes = p.sections.find((s) => s.name === 'code').size;
    code = { sameCode: codeBytes === parsed.sections.find((s) => s.name === 'code').size, functions: p.bodies.length, groups: g.totals, biggest: g.biggest };
  }

  const peersDir = path.join(root, 'bench', 'pages', 'dist', 'size');
  const peers = {};
  for (const lib of ['broadcast-channel', 'tab-election', 'bare-locks']) {
    peers[lib] = measure(readFileSync(path.join(peersDir, `${lib}.js`)));
  }

  return {
    // What an app using only createBaton loads: its bundle's JS plus the wasm file.
    shipped: { raw: app.js.raw + app.wasm.raw, gzip: app.total },
    app: { js: app.js, wasm: app.wasm },
    budget: BUDGET_GZIP,
    wasm: measure(wasmBytes),
    runtime: measure(runtimeMin),
    glue: measure(glue),
    glueFiles: files,
    sections,
    code,
    peers,
    testing: measure(readFileSync(path.join(root, 'js-glue', 'dist', 'testing.js'))),
  };
}
