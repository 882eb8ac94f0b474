// Bundles the bench pages' entries (bench/pages/src/*.js) and the size entries
// (bench/pages/src/size/*.js) with esbuild into bench/pages/dist/ (gitignored). The peers'
// code is used from node_modules as published (broadcast-channel, tab-election); Baton from
// the built package (js-glue/dist, through the tab-baton workspace link); its wasm file is
// copied next to the bundles, where the package looks for it.
// Same settings as js-glue/build.mjs: ESM, minified, ES2020.
//   node bench/build-pages.mjs
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const src = path.join(here, 'pages', 'src');
const dist = path.join(here, 'pages', 'dist');

export const SETTINGS = {
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022', // top-level await in the pages (baton-init awaits load())
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
};

export async function buildPages() {
  rmSync(dist, { recursive: true, force: true });
  mkdirSync(path.join(dist, 'size'), { recursive: true });
  const entries = (dir) => readdirSync(dir).filter((f) => f.endsWith('.js')).map((f) => path.join(dir, f));
  await build({ ...SETTINGS, entryPoints: entries(src), outdir: dist });
  await build({ ...SETTINGS, entryPoints: entries(path.join(src, 'size')), outdir: path.join(dist, 'size') });
  copyFileSync(path.join(here, '..', 'js-glue', 'dist', 'baton-core.wasm'), path.join(dist, 'baton-core.wasm'));
  return dist;
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  await buildPages();
  console.log(`bench pages bundled into ${path.relative(process.cwd(), dist) || '.'}`);
}
