// The package as users get it: `npm pack` of js-glue, unpacked for a page to load.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const JS_GLUE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'js-glue');

/** Empties `dir`, packs js-glue into it and unpacks the tarball as `dir`/tab-baton/. */
export function unpackPackage(dir) {
  rmSync(dir, { recursive: true, force: true });
  const unpacked = path.join(dir, 'tab-baton');
  mkdirSync(unpacked, { recursive: true });
  const [packed] = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', dir], { cwd: JS_GLUE, encoding: 'utf8' }));
  execFileSync('tar', ['xzf', path.join(dir, packed.filename), '-C', unpacked, '--strip-components=1']);
}
