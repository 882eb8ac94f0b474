// Private properties: js-glue/build.mjs renames every property whose name ends in `_` to a
// short one (esbuild's mangleProps). That is safe only for fields of the package's own class
// instances, which nothing outside the package reads and which never cross tabs or go to
// storage, where a renamed field would differ between two versions of the package. This
// checks the rule on the sources and that the build applied it:
// - a name ending in `_` appears in the sources only as a property read or written
//   (`this.runtime_`, `baton.runtime_`): never as an object literal's key, a destructured
//   name or a string, which is how records, options and public objects are made;
// - no such name is declared by the public types, or read by the tests, the benchmarks, the
//   demo, the compatibility layers or the testing fakes;
// - the built package contains none of them: they were renamed.
// Run: node --test tests/node/private-properties.test.js (after ./toolchain/build.sh)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const src = path.join(root, 'js-glue', 'src');
const PRIVATE_NAME = /\b[A-Za-z$][\w$]*[A-Za-z0-9$]_\b/g;

function filesUnder(dir, pattern) {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (['node_modules', 'dist', 'artifacts', 'out'].includes(name)) return [];
    if (statSync(file).isDirectory()) return filesUnder(file, pattern);
    return pattern.test(name) ? [file] : [];
  });
}
const read = (file) => readFileSync(file, 'utf8');
const rel = (file) => path.relative(root, file);
/** The code of a JS file without its comments (they may name a field). */
const code = (file) => read(file).replace(/\/\*[\s\S]*?\*\/|(?<![:'"`\\])\/\/.*$/gm, '');

const glue = filesUnder(src, /\.js$/).filter((f) => !f.includes(`${path.sep}compat${path.sep}`) && !f.includes(`${path.sep}testing${path.sep}`));
const privateNames = new Set(glue.flatMap((f) => code(f).match(PRIVATE_NAME) ?? []));

test('private properties are fields read and written as properties, nothing else', () => {
  assert.ok(privateNames.size >= 10, `only ${privateNames.size} private properties found: is the convention still used?`);
  for (const file of glue) {
    const text = code(file);
    for (const match of text.matchAll(PRIVATE_NAME)) {
      const before = text[match.index - 1];
      assert.equal(before, '.', `${rel(file)}: "${match[0]}" is used other than as a property (after ${JSON.stringify(text.slice(match.index - 20, match.index))})`);
    }
  }
});

test('no private property is public or read outside the package', () => {
  const outside = [
    ...filesUnder(path.join(root, 'js-glue'), /\.d\.ts$/),
    ...filesUnder(path.join(src, 'compat'), /\.js$/),
    ...filesUnder(path.join(src, 'testing'), /\.js$/),
    ...filesUnder(path.join(root, 'tests'), /\.(m?js|ts)$/).filter((f) => f !== fileURLToPath(import.meta.url)),
    ...filesUnder(path.join(root, 'bench'), /\.(m?js|ts)$/),
    ...filesUnder(path.join(root, 'web-demo'), /\.(m?js|html)$/),
  ];
  for (const file of outside) {
    const text = read(file);
    for (const name of privateNames) {
      assert.ok(!new RegExp(`\\b${name.replace('$', '\\$')}(?![\\w$])`).test(text), `${rel(file)} names the private property "${name}"`);
    }
    if (file.endsWith('.d.ts')) {
      const declared = text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '').match(/\b[A-Za-z$][\w$]*_\s*[?]?[:(]/);
      assert.equal(declared, null, `${rel(file)} declares a public name ending in "_", which the build would rename`);
    }
  }
});

test('the built package renamed every private property', () => {
  const dist = path.join(root, 'js-glue', 'dist');
  assert.ok(existsSync(path.join(dist, 'index.js')), 'build first: ./toolchain/build.sh');
  for (const file of filesUnder(dist, /\.c?js$/)) {
    const text = read(file);
    for (const name of privateNames) assert.ok(!text.includes(name), `${rel(file)} still has "${name}": the build did not rename it`);
  }
});
