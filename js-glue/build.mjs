// Builds the tab-baton package: dist/index.js (the glue with the WebAssembly core inlined:
// build/wasm/baton-core.js embeds the wasm, so the one file loads in browsers and in Node)
// and dist/testing.js (the in-memory fakes). Run after the wasm build:
//   cmake --preset wasm && cmake --build --preset wasm && node js-glue/build.mjs
import { build } from 'esbuild';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const core = path.join(here, '..', 'build', 'wasm', 'baton-core.js');
const dist = path.join(here, 'dist');

if (!existsSync(core)) {
  console.error(`missing ${path.relative(process.cwd(), core)}: build the core first (cmake --preset wasm && cmake --build --preset wasm)`);
  process.exit(1);
}

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });

const common = {
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2020',
  // The entry loads the core with top-level await (ES2022); every browser with Web Locks
  // and every Node >= 14.8 has it, so it is allowed while the rest is lowered to ES2020.
  supported: { 'top-level-await': true },
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
};

// Requests and leader state (talk.js) are their own file, imported by index.js on first use
// only, so an app that never talks to its leader never loads them. The error classes it
// throws are index.js's own (one class for `instanceof`); the small helpers it shares with
// index.js are copied into it.
const talkFile = { name: 'talk-file', setup: (b) => b.onResolve({ filter: /^\.\/talk\.js$/ }, () => ({ path: './talk.js', external: true })) };
const fromIndex = { name: 'from-index', setup: (b) => b.onResolve({ filter: /^\.\/requests-errors\.js$/ }, () => ({ path: './index.js', external: true })) };
await build({ ...common, entryPoints: [path.join(here, 'src', 'index.js')], outfile: path.join(dist, 'index.js'), plugins: [talkFile] });
await build({ ...common, entryPoints: [path.join(here, 'src', 'talk.js')], outfile: path.join(dist, 'talk.js'), plugins: [fromIndex] });
await build({ ...common, entryPoints: [path.join(here, 'src', 'testing', 'index.js')], outfile: path.join(dist, 'testing.js') });

const size = (file) => {
  const bytes = readFileSync(file);
  return `${(bytes.length / 1024).toFixed(1)} KiB raw, ${(gzipSync(bytes, { level: 9 }).length / 1024).toFixed(1)} KiB gzip`;
};
for (const name of ['index.js', 'talk.js', 'testing.js']) console.log(`dist/${name}: ${size(path.join(dist, name))}`);
