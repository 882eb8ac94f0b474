// How each bundler builds the scratch app (tests/bundlers/app) with its default
// configuration: what a user gets after installing tab-baton and running the bundler.
// Each build takes the project folder (app sources and an index.html already there) and
// returns the folder to serve and the bundler's warnings.
// Rollup and esbuild do not copy assets referenced with new URL(..., import.meta.url): as
// the package's README says, the app serves baton-core.wasm next to its bundle, which is
// what these builds do after bundling.
import { copyFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const copyWasm = (pkg, out) => copyFileSync(path.join(pkg, 'dist', 'baton-core.wasm'), path.join(out, 'baton-core.wasm'));
const page = (script, module = true) => `<!doctype html><meta charset="utf-8"><title>scratch</title><script ${module ? 'type="module" ' : ''}src="${script}"></script>\n`;

export const BUILDS = {
  async 'vite (page)'(dir) {
    return vite(dir, 'main.js');
  },
  async 'vite (worker)'(dir) {
    return vite(dir, 'worker-main.js');
  },
  async 'webpack 5'(dir) {
    const { default: webpack } = await import('webpack');
    const out = path.join(dir, 'dist');
    const stats = await new Promise((resolve, reject) => {
      webpack({ mode: 'production', context: dir, entry: './main.js', output: { path: out } }, (error, result) => (error ? reject(error) : resolve(result)));
    });
    const info = stats.toJson({ all: false, errors: true, warnings: true });
    if (stats.hasErrors()) throw new Error(info.errors.map((e) => e.message).join('\n'));
    writeFileSync(path.join(out, 'index.html'), page('main.js', false));
    return { out, warnings: info.warnings.map((w) => w.message) };
  },
  async rollup(dir, pkg) {
    const { rollup: bundle } = await import('rollup');
    const { nodeResolve } = await import('@rollup/plugin-node-resolve');
    const warnings = [];
    const out = path.join(dir, 'dist');
    const build = await bundle({ input: path.join(dir, 'main.js'), plugins: [nodeResolve()], onwarn: (w) => warnings.push(w.message) });
    await build.write({ dir: out, format: 'es' });
    await build.close();
    copyWasm(pkg, out);
    writeFileSync(path.join(out, 'index.html'), page('main.js'));
    return { out, warnings };
  },
  async 'esbuild --format=esm'(dir, pkg) {
    return esbuild(dir, pkg, 'esm');
  },
  async 'esbuild (default format: iife)'(dir, pkg) {
    return esbuild(dir, pkg, undefined);
  },
};

async function vite(dir, script) {
  const { build } = await import('vite');
  writeFileSync(path.join(dir, 'index.html'), page(`./${script}`));
  const warnings = [];
  const logger = { info() {}, warn: (m) => warnings.push(m), warnOnce: (m) => warnings.push(m), error: (m) => warnings.push(m), clearScreen() {}, hasErrorLogged: () => false, hasWarned: false };
  await build({ root: dir, configFile: false, logLevel: 'warn', customLogger: logger });
  return { out: path.join(dir, 'dist'), warnings };
}

async function esbuild(dir, pkg, format) {
  const { build } = await import('esbuild');
  const out = path.join(dir, 'dist');
  const result = await build({ entryPoints: [path.join(dir, 'main.js')], bundle: true, outdir: out, logLevel: 'silent', ...(format ? { format } : {}) });
  copyWasm(pkg, out);
  writeFileSync(path.join(out, 'index.html'), page('main.js', format === 'esm'));
  return { out, warnings: result.warnings.map((w) => w.text) };
}
