// The error classes users catch keep their documented `name` after a user's bundler minifies
// them (the class's own name is then mangled: `name` must be set explicitly, never taken from
// the constructor), and are one class wherever the README says so. Checked on the packed
// package, bundled with esbuild's and terser's minifiers, as ES modules and as CommonJS.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { minify } from 'terser';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Each class with arguments its constructor takes, and the `name` the README documents. */
const CLASSES = {
  StaleOwnerError: { args: "['r', 1, 2]", name: 'StaleOwnerError' },
  EpochNotDurableError: { args: "['r', 1, 'storage-timeout']", name: 'EpochNotDurableError' },
  DeposedError: { args: "['r', 1, 'lock-lost']", name: 'AbortError' },
  RequestError: { args: "['TIMEOUT', 'no answer', {}]", name: 'RequestError' },
  NoLeaderError: { args: "['no leader', {}]", name: 'NoLeaderError' },
};

/** An app that makes one error of each class and reports what a catch block would see. */
function appSource(format) {
  const names = Object.keys(CLASSES).join(', ');
  const load =
    format === 'esm'
      ? `import { ${names} } from 'tab-baton';\nimport { StaleOwnerError as ServerStaleOwnerError } from 'tab-baton/server';\nimport { StaleOwnerError as IdbStaleOwnerError } from 'tab-baton/fenced-idb';`
      : `const { ${names} } = require('tab-baton');\nconst { StaleOwnerError: ServerStaleOwnerError } = require('tab-baton/server');\nconst { StaleOwnerError: IdbStaleOwnerError } = require('tab-baton/fenced-idb');`;
  const made = Object.entries(CLASSES)
    .map(([cls, { args }]) => `${cls}: (() => { const e = new ${cls}(...${args}); return { name: e.name, string: String(e), isClass: e instanceof ${cls}, isError: e instanceof Error, classNameKept: ${cls}.name === '${cls}' }; })()`)
    .join(',\n  ');
  const report = `globalThis.__errors = {\n  ${made},\n  shared: ServerStaleOwnerError === StaleOwnerError && IdbStaleOwnerError === StaleOwnerError,\n  noLeaderIsRequestError: new NoLeaderError('x', {}) instanceof RequestError,\n};`;
  return `${load}\n${report}\n`;
}

let scratch;
let packageDir;

before(() => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'baton-error-names-'));
  packageDir = path.join(scratch, 'node_modules', 'tab-baton');
  mkdirSync(packageDir, { recursive: true });
  const [packed] = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', scratch], { cwd: path.join(ROOT, 'js-glue'), encoding: 'utf8' }));
  execFileSync('tar', ['xzf', path.join(scratch, packed.filename), '-C', packageDir, '--strip-components=1']);
});

after(() => rmSync(scratch, { recursive: true, force: true }));

/** Bundles the app from the packed package, minified by `minifier`, and runs it. */
async function run(format, minifier) {
  const entry = path.join(scratch, `app-${format}.${format === 'esm' ? 'mjs' : 'cjs'}`);
  writeFileSync(entry, appSource(format));
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format,
    minify: minifier === 'esbuild',
    write: false,
    logLevel: 'error',
  });
  let code = result.outputFiles[0].text;
  if (minifier === 'terser') code = (await minify(code, { module: format === 'esm', toplevel: true, mangle: true, compress: true })).code;
  const out = path.join(scratch, `bundle-${format}-${minifier}.${format === 'esm' ? 'mjs' : 'cjs'}`);
  writeFileSync(out, code);
  delete globalThis.__errors;
  if (format === 'esm') await import(pathToFileURL(out).href);
  else createRequire(out)(out);
  return globalThis.__errors;
}

for (const format of ['esm', 'cjs']) {
  for (const minifier of ['esbuild', 'terser']) {
    test(`error names survive ${minifier}'s minifier (${format === 'esm' ? 'ES modules' : 'CommonJS'})`, async () => {
      const seen = await run(format, minifier);
      // The check means something only if the minifier renamed the classes themselves.
      assert.ok(Object.keys(CLASSES).some((cls) => !seen[cls].classNameKept), 'the minifier renamed no class: this test would prove nothing');
      for (const [cls, { name }] of Object.entries(CLASSES)) {
        assert.equal(seen[cls].name, name, `${cls}'s name`);
        assert.ok(seen[cls].string.startsWith(`${name}: `), `${cls} prints as ${seen[cls].string}`);
        assert.ok(seen[cls].isClass && seen[cls].isError, `${cls} is an Error and its own class`);
      }
      assert.equal(seen.shared, true, 'one StaleOwnerError for tab-baton, tab-baton/server and tab-baton/fenced-idb');
      assert.equal(seen.noLeaderIsRequestError, true);
    });
  }
}
