// Builds the tab-baton package: dist/index.js (the glue with the WebAssembly core inlined:
// build/wasm/baton-core.js embeds the wasm, so the one file loads in browsers and in Node)
// and dist/testing.js (the in-memory fakes). Run after the wasm build:
//   cmake --preset wasm && cmake --build --preset wasm && node js-glue/build.mjs
import { build } from 'esbuild';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
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

// Split: code reached only through a dynamic import (requests and leader state, talk.js)
// becomes a chunk that only the apps using it load; code it shares with the entry becomes a
// shared chunk that index.js imports.
await build({ ...common, entryPoints: [path.join(here, 'src', 'index.js')], outdir: dist, splitting: true, chunkNames: 'chunks/[name]-[hash]' });
await build({ ...common, entryPoints: [path.join(here, 'src', 'testing', 'index.js')], outfile: path.join(dist, 'testing.js') });

const size = (file) => {
  const bytes = readFileSync(file);
  return `${(bytes.length / 1024).toFixed(1)} KiB raw, ${(gzipSync(bytes, { level: 9 }).length / 1024).toFixed(1)} KiB gzip`;
};
const chunks = readdirSync(path.join(dist, 'chunks')).map((name) => `chunks/${name}`);
for (const name of ['index.js', ...chunks, 'testing.js']) console.log(`dist/${name}: ${size(path.join(dist, name))}`);
