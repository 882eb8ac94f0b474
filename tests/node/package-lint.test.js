// The published package fits its consumers' tools: publint (package.json against the
// packed files) and @arethetypeswrong/cli (the types each resolver finds for each entry),
// both on the tarball `npm pack` makes, as a user would install it. Offline: both are
// devDependencies from the lock file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const pkgDir = path.join(root, 'js-glue');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const pkg = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));

/** Whether an entry of `exports` has a `require` condition (a CommonJS build). */
const hasRequireCondition = Object.values(pkg.exports).some((entry) => typeof entry === 'object' && 'require' in entry);

test('publint: no errors, warnings or suggestions', { timeout: 120_000 }, () => {
  assert.ok(existsSync(path.join(pkgDir, 'dist', 'index.js')), 'build first: node js-glue/build.mjs');
  const out = execFileSync(bin('publint'), ['run', '--strict', '--level', 'suggestion'], { cwd: pkgDir, encoding: 'utf8' });
  assert.match(out, /All good!/, out);
});

test('arethetypeswrong: every entry resolves to its types under node10, node16 and bundlers', { timeout: 120_000 }, () => {
  let out;
  try {
    out = execFileSync(bin('attw'), ['--pack', '.', '--format', 'json'], { cwd: pkgDir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    out = error.stdout; // attw exits non-zero when it finds problems; the JSON says which
  }
  const { analysis } = JSON.parse(out);
  assert.deepEqual(Object.keys(analysis.entrypoints).sort(), Object.keys(pkg.exports).sort());
  // An ESM-only package is reported to CommonJS `require` as "ESM (dynamic import only)":
  // true as long as there is no CommonJS entry (the README says to use `import()` there).
  const accepted = hasRequireCondition ? [] : ['CJSResolvesToESM'];
  const problems = analysis.problems.filter((problem) => !accepted.includes(problem.kind));
  assert.deepEqual(problems, []);
});

test('package.json has what registries and resolvers look for, and the tarball its licence', () => {
  for (const field of ['keywords', 'author', 'engines', 'license', 'main', 'module', 'types']) {
    assert.ok(pkg[field], `package.json: "${field}"`);
  }
  // The project has no public repository or issue tracker yet: rather than a guessed URL
  // that leads nowhere, these fields stay out until one exists.
  for (const field of ['repository', 'homepage', 'bugs']) assert.equal(pkg[field], undefined, `package.json: "${field}" names no real place yet`);
  assert.equal(pkg.license, 'Apache-2.0');
  // For resolvers that ignore `exports` (Parcel without opt-in): files that `exports` also names.
  const targets = JSON.stringify(pkg.exports['.']);
  for (const field of ['main', 'module']) {
    assert.ok(targets.includes(`"${pkg[field]}"`), `${field} (${pkg[field]}) is an entry of exports["."]`);
    assert.ok(existsSync(path.join(pkgDir, pkg[field])), `${field} exists after the build`);
  }
  assert.ok(pkg.files.includes('LICENSE'));
  const license = readFileSync(path.join(pkgDir, 'LICENSE'), 'utf8');
  assert.match(license, /Apache License\s+Version 2\.0, January 2004/);
  assert.match(license, /END OF TERMS AND CONDITIONS/);
});

test('the public declarations use no `any`: every type a user sees is checked', () => {
  const dist = path.join(pkgDir, 'dist');
  const files = [
    ...readdirSync(pkgDir).filter((name) => name.endsWith('.d.ts')).map((name) => path.join(pkgDir, name)),
    ...readdirSync(dist).filter((name) => name.endsWith('.d.cts')).map((name) => path.join(dist, name)),
  ];
  assert.ok(files.length >= 10, `the declarations were found (${files.length})`);
  const found = [];
  for (const file of files) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node) => {
      if (node.kind === ts.SyntaxKind.AnyKeyword) {
        const { line } = source.getLineAndCharacterOfPosition(node.getStart());
        found.push(`${path.relative(pkgDir, file)}:${line + 1}`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  assert.deepEqual(found, []);
});
