// Builds the tab-baton package into dist/:
//   baton-core.wasm        the core (build/wasm), loaded at run time next to the scripts
//   index.js + chunks      ES modules, split so that each subpath entry (relay, awaforge,
//   relay.js, ...          request-leadership, broadcast-channel) costs only what it uses;
//   talk.js                requests and leader state, imported on first use only
//   lease.js               the IndexedDB lease, imported only when leading by lease
//   testing.js             the in-memory fakes
//   fenced-idb.js          fenced IndexedDB transactions; server.js (+ .cjs): the server fence
//   index.cjs, testing.cjs CommonJS for require() in Node (one bundle each), with .d.cts types;
//   stale-owner-error.cjs  the one StaleOwnerError class the CommonJS entries share
// Run after the wasm build:
//   cmake --preset wasm && cmake --build --preset wasm && node js-glue/build.mjs
import { build } from 'esbuild';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const wasmDir = path.join(here, '..', 'build', 'wasm');
const src = path.join(here, 'src');
const dist = path.join(here, 'dist');

for (const file of ['baton-core.js', 'baton-core.wasm']) {
  if (!existsSync(path.join(wasmDir, file))) {
    console.error(`missing build/wasm/${file}: build the core first (cmake --preset wasm && cmake --build --preset wasm)`);
    process.exit(1);
  }
}

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
copyFileSync(path.join(wasmDir, 'baton-core.wasm'), path.join(dist, 'baton-core.wasm'));

/** Public entry points: dist name -> source. package.json `exports` lists the same. */
export const ENTRIES = {
  index: path.join(src, 'index.js'),
  relay: path.join(src, 'entry', 'relay.js'),
  awaforge: path.join(src, 'compat', 'awaforge.js'),
  'request-leadership': path.join(src, 'compat', 'request-leadership.js'),
  'broadcast-channel': path.join(src, 'compat', 'broadcast-channel.js'),
  testing: path.join(src, 'testing', 'index.js'),
  // Fenced effects where they land: an IndexedDB transaction, a server (Node, no wasm).
  'fenced-idb': path.join(src, 'fenced-idb.js'),
  server: path.join(src, 'server.js'),
  // Not public: requests and leader state, imported dynamically on first use (talk-lazy.js),
  // and the IndexedDB lease, imported by a runtime that leads by lease (runtime.js).
  talk: path.join(src, 'talk.js'),
  lease: path.join(src, 'lease.js'),
};

/**
 * Private properties end in `_` (`this.runtime_`): the build renames them to short names.
 * Only a field of a class instance that never leaves the package may: not an option, not a
 * field of a public object, of a record crossing tabs or of one kept in storage (those keep
 * their names across versions). tests/node/private-properties.test.js checks the rule.
 */
const PRIVATE_PROPERTY = /_$/;

const common = {
  bundle: true,
  // A dependency, imported on first use: the app's bundler (or Node) resolves it, so the app
  // and the broadcast-channel drop-in share one `unload` module.
  external: ['unload'],
  platform: 'neutral',
  target: 'es2020',
  minify: true,
  mangleProps: PRIVATE_PROPERTY,
  legalComments: 'none',
  logLevel: 'warning',
};

// Chunks stay beside the entries: the core's chunk finds baton-core.wasm next to itself.
const esm = await build({ ...common, entryPoints: ENTRIES, outdir: dist, format: 'esm', splitting: true, chunkNames: '[name]-[hash]', write: false });
// The one import of a name known only at run time (src/import-at-run-time.js: Node's fs):
// webpack and Vite warn about it unless told to leave it, and minifying drops comments.
const RUNTIME_IMPORT = /\bimport\(([A-Za-z_$][\w$]*)\)/g;
let marked = 0;
for (const file of esm.outputFiles) {
  const text = file.text.replace(RUNTIME_IMPORT, (_, name) => {
    marked += 1;
    return `import(/* webpackIgnore: true */ /* @vite-ignore */ ${name})`;
  });
  writeFileSync(file.path, text);
}
if (marked !== 1) throw new Error(`build.mjs: expected one import of a run-time name in the ES modules, found ${marked}`);

// CommonJS has no import.meta: the file's own URL stands in for it.
const cjs = {
  ...common,
  format: 'cjs',
  define: { 'import.meta.url': '__batonScriptUrl' },
  banner: { js: 'var __batonScriptUrl=require("url").pathToFileURL(__filename).href;' },
};
// StaleOwnerError is one class in CommonJS too: index.cjs, server.cjs and fenced-idb.cjs each
// require the one stale-owner-error.cjs instead of bundling a copy, so `instanceof` holds
// across the three entries (as it does in the ES build, where it is a shared chunk).
const STALE_OWNER_ERROR = path.join(src, 'stale-owner-error.js');
await build({ ...cjs, entryPoints: [STALE_OWNER_ERROR], outfile: path.join(dist, 'stale-owner-error.cjs') });
const sharedStaleOwnerError = {
  name: 'shared-stale-owner-error',
  setup(b) {
    b.onResolve({ filter: /\/stale-owner-error\.js$/ }, (args) => {
      if (path.resolve(args.resolveDir, args.path) !== STALE_OWNER_ERROR) return undefined;
      return { path: './stale-owner-error.cjs', external: true };
    });
  },
};
const cjsSharing = { ...cjs, plugins: [sharedStaleOwnerError] };
await build({ ...cjsSharing, entryPoints: [ENTRIES.index], outfile: path.join(dist, 'index.cjs') });
await build({ ...cjs, entryPoints: [ENTRIES.testing], outfile: path.join(dist, 'testing.cjs') });
for (const name of ['server', 'fenced-idb']) await build({ ...cjsSharing, entryPoints: [ENTRIES[name]], outfile: path.join(dist, `${name}.cjs`) });
// TypeScript reads a .d.ts next to a "type": "module" package as ESM; the CommonJS builds get
// the same declarations as .d.cts, whose imports of './index.js' (the shared StaleOwnerError)
// name the CommonJS declarations instead.
for (const name of ['index', 'testing', 'server', 'fenced-idb']) {
  const types = readFileSync(path.join(here, `${name}.d.ts`), 'utf8').replaceAll("from './index.js'", "from './index.cjs'");
  writeFileSync(path.join(dist, `${name}.d.cts`), types);
}

const gz = (file) => gzipSync(readFileSync(file), { level: 9 }).length;
for (const name of readdirSync(dist).sort()) {
  const file = path.join(dist, name);
  console.log(`dist/${name}: ${readFileSync(file).length} B raw, ${gz(file)} B gzip`);
}
