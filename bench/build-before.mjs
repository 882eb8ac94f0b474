#!/usr/bin/env node
// Builds Baton's bench page from the JS glue of an earlier commit, to measure it beside the
// current build in the same run (subjects `baton-before`, `baton-broadcast-before` and
// `baton-lease-before` of bench/run.mjs, measured only when named in --subjects). The wasm is
// this checkout's (build/wasm): for a change of the glue.
// Output: bench/pages/dist/before/ (gitignored; node bench/build-pages.mjs clears it).
//
//   node bench/build-before.mjs REF [NAME]   REF e.g. main, or a commit; into dist/NAME/
//                                            (default before; bench/startup-trace.mjs
//                                            --page dist/NAME/baton)
//   node bench/run.mjs --only startup --subjects baton,baton-before,bare-locks --no-write
//   node bench/run.mjs --only fallback-close --subjects baton-lease,baton-lease-before --no-write
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { SETTINGS } from './build-pages.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const [ref, name = 'before'] = process.argv.slice(2);
if (!ref || !/^[\w-]+$/.test(name)) {
  console.error('usage: node bench/build-before.mjs REF [NAME]');
  process.exit(2);
}

// The ref's js-glue/, with this checkout's wasm build and node_modules beside it.
const tree = mkdtempSync(path.join(os.tmpdir(), 'baton-before-'));
try {
  const archive = execFileSync('git', ['-C', root, 'archive', ref, 'js-glue'], { maxBuffer: 1 << 28 });
  execFileSync('tar', ['-x', '-C', tree], { input: archive });
  symlinkSync(path.join(root, 'build'), path.join(tree, 'build'));
  symlinkSync(path.join(root, 'node_modules'), path.join(tree, 'node_modules'));
  execFileSync(process.execPath, [path.join(tree, 'js-glue', 'build.mjs')], { stdio: 'ignore' });

  const out = path.join(here, 'pages', 'dist', name);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  await build({
    ...SETTINGS,
    logLevel: 'error', // the package's chunks are marked side-effect free, as in bench/build-pages.mjs
    entryPoints: [path.join(here, 'pages', 'src', 'baton.js')],
    outdir: out,
    alias: { 'tab-baton': path.join(tree, 'js-glue', 'dist', 'index.js') },
  });
  copyFileSync(path.join(tree, 'js-glue', 'dist', 'baton-core.wasm'), path.join(out, 'baton-core.wasm'));
  writeFileSync(path.join(out, 'baton.html'), [
    '<!doctype html>',
    '<meta charset="utf-8">',
    '<link rel="icon" href="data:,">',
    `<title>bench: baton before (${ref})</title>`,
    '<script src="../../instrument.js"></script>',
    '<script type="module" src="baton.js"></script>',
    '',
  ].join('\n'));
  console.log(`Baton's bench page of ${ref} built into ${path.relative(process.cwd(), out) || '.'}`);
} finally {
  rmSync(tree, { recursive: true, force: true });
}
