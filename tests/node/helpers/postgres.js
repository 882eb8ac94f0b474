// A throwaway PostgreSQL server for one test file: initdb in a temporary directory, listening
// on a Unix socket only (no TCP), stopped and removed by stop(). Debian's `postgresql` package
// (toolchain/setup.sh installs it); as root the server runs as the `postgres` user.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The directory of initdb and pg_ctl (the newest installed major version), or null. */
export function postgresBin() {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return null;
  const versions = readdirSync(base).filter((v) => existsSync(path.join(base, v, 'bin', 'pg_ctl'))).sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? path.join(base, versions[0], 'bin') : null;
}

/** Starts a server; resolves to {host, port, user, stop()} (host: the socket directory). */
export function startPostgres() {
  const bin = postgresBin();
  if (!bin) throw new Error('PostgreSQL is not installed: run toolchain/setup.sh');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'baton-pg-'));
  const asRoot = process.getuid?.() === 0;
  const run = (tool, args) => {
    const command = asRoot ? 'runuser' : path.join(bin, tool);
    const argv = asRoot ? ['-u', 'postgres', '--', path.join(bin, tool), ...args] : args;
    execFileSync(command, argv, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 60_000 });
  };
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
    chownSync(dir, uid, gid);
  }
  const data = path.join(dir, 'data');
  const port = 40000 + (process.pid % 20000);
  try {
    run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    run('pg_ctl', ['-D', data, '-o', `-k ${dir} -p ${port} -c listen_addresses='' -c fsync=off -c max_connections=50`, '-l', path.join(dir, 'log'), '-w', 'start']);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    host: dir,
    port,
    user: 'postgres',
    stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
