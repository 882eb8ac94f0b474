// Size: raw and gzip bytes of what an app ships for leader election, and where Baton's bytes
// go. gzip is zlib level 9 (as js-glue/build.mjs reports). Everything is measured from the
// built files; nothing is estimated.
import { build } from 'esbuild';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { SETTINGS } from '../build-pages.mjs';
import { parseWasm, groupCode } from './wasm-sections.mjs';

const gz = (buf) => gzipSync(buf, { level: 9 }).length;
const measure = (buf) => ({ raw: Buffer.byteLength(buf), gzip: gz(Buffer.from(buf)) });
const DATA_URI = /data:application\/octet-stream;base64,([A-Za-z0-9+/=]+)/;

/** Bundles `entry` (or `contents`) with the bench's esbuild settings; returns the output text. */
async function bundle({ entry, contents, resolveDir, external = [], plugins = [] }) {
  const result = await build({
    ...SETTINGS,
    ...(entry ? { entryPoints: [entry] } : { stdin: { contents, resolveDir, loader: 'js' } }),
    write: false,
    external,
    plugins,
  });
  return result.outputFiles[0].text;
}

/** Marks the emscripten module (build/wasm/baton-core.js) external: the glue alone. */
const coreExternal = {
  name: 'core-external',
  setup(b) {
    b.onResolve({ filter: /baton-core\.js$/ }, (args) => ({ path: args.path, external: true }));
  },
};

export async function measureSizes(root, { namesBuild } = {}) {
  const dist = path.join(root, 'js-glue', 'dist', 'index.js');
  const shipped = readFileSync(dist, 'utf8');
  const b64 = DATA_URI.exec(shipped)?.[1];
  if (!b64) throw new Error('no embedded wasm found in js-glue/dist/index.js');
  const wasm = Buffer.from(b64, 'base64');
  const jsOnly = shipped.replace(b64, '');

  const coreJs = readFileSync(path.join(root, 'build', 'wasm', 'baton-core.js'), 'utf8');
  const runtimeMin = await bundle({ contents: coreJs.replace(b64, ''), resolveDir: path.join(root, 'build', 'wasm') });
  const glue = await bundle({ entry: path.join(root, 'js-glue', 'src', 'index.js'), external: [], plugins: [coreExternal] });

  // The glue by source file (each minified alone: a rough attribution, gzip of the parts > whole).
  const srcDir = path.join(root, 'js-glue', 'src');
  const files = [];
  for (const sub of ['', 'compat']) {
    for (const f of readdirSync(path.join(srcDir, sub))) {
      if (!f.endsWith('.js')) continue;
      const file = path.join(srcDir, sub, f);
      const min = (await build({ ...SETTINGS, bundle: false, entryPoints: [file], write: false })).outputFiles[0].text;
      files.push({ file: path.join(sub, f), ...measure(min) });
    }
  }
  files.sort((a, b) => b.gzip - a.gzip);

  const parsed = parseWasm(wasm);
  const sections = parsed.sections.map((s) => ({ name: s.name, bytes: s.size }));

  let code = null;
  if (namesBuild && existsSync(namesBuild)) {
    const named = Buffer.from(DATA_URI.exec(readFileSync(namesBuild, 'utf8'))[1], 'base64');
    const p = parseWasm(named);
    const g = groupCode(p);
    const codeBytes = p.sections.find((s) => s.name === 'code').size;
    code = { sameCode: codeBytes === parsed.sections.find((s) => s.name === 'code').size, functions: p.bodies.length, groups: g.totals, biggest: g.biggest };
  }

  const peersDir = path.join(root, 'bench', 'pages', 'dist', 'size');
  const app = {};
  for (const lib of ['baton', 'broadcast-channel', 'tab-election', 'bare-locks']) {
    app[lib] = measure(readFileSync(path.join(peersDir, `${lib}.js`)));
  }

  return {
    shipped: measure(shipped),
    wasm: measure(wasm),
    wasmBase64: measure(b64),
    jsOnly: measure(jsOnly),
    runtime: measure(runtimeMin),
    glue: measure(glue),
    glueFiles: files,
    sections,
    code,
    app,
    testing: measure(readFileSync(path.join(root, 'js-glue', 'dist', 'testing.js'))),
  };
}
