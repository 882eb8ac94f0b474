// tab-baton/server: the fence where effects land. In memory (ServerFence), and as SQL in a
// real PostgreSQL (a throwaway server on a Unix socket): stale and fresh leaders race 1 000
// concurrent writes, and no stale write commits after a newer term's. The same check run on
// a naive upsert (no WHERE) must catch the stale writes, so the check is known to fire.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { StaleOwnerError } from 'tab-baton';
import { ServerFence, StaleOwnerError as ServerStaleOwnerError, admitInPostgres, checkToken, fenceSql } from 'tab-baton/server';
import { StaleOwnerError as IdbStaleOwnerError } from 'tab-baton/fenced-idb';
import { postgresBin, startPostgres } from './helpers/postgres.js';

describe('ServerFence (in memory)', () => {
  test('admits the newest term any number of times and refuses an older one with STALE_OWNER', () => {
    const fence = new ServerFence();
    assert.equal(fence.admit({ resource: 'q', epoch: 3 }), true);
    assert.equal(fence.admit({ resource: 'q', epoch: 3 }), true, 'a term may act many times');
    assert.equal(fence.admit({ resource: 'q', epoch: 2 }), false);
    assert.equal(fence.admit({ resource: 'other', epoch: 1 }), true, 'per resource');
    assert.equal(fence.admit({ resource: 'q', epoch: 7 }), true);
    assert.equal(fence.highest('q'), 7);
    assert.throws(() => fence.check({ resource: 'q', epoch: 6 }), (e) => e instanceof StaleOwnerError && e.code === 'STALE_OWNER' && e.highest === 7 && e.epoch === 6);
    assert.equal(fence.highest('q'), 7, 'a refused token changes nothing');
  });

  test('one StaleOwnerError class for tab-baton, tab-baton/server and tab-baton/fenced-idb (ES modules)', () => {
    assert.equal(ServerStaleOwnerError, StaleOwnerError);
    assert.equal(IdbStaleOwnerError, StaleOwnerError);
  });

  test('malformed tokens and table names throw a TypeError naming the field', () => {
    const fence = new ServerFence();
    assert.throws(() => fence.admit(null), /token/);
    assert.throws(() => fence.admit({ resource: '', epoch: 1 }), /token\.resource/);
    assert.throws(() => fence.admit({ resource: 'q', epoch: 1.5 }), /token\.epoch/);
    assert.throws(() => checkToken({ resource: 'q', epoch: 0 }), /token\.epoch/);
    assert.throws(() => fenceSql('x; DROP TABLE users'), /table/);
    assert.match(fenceSql('app.fence').admit, /INSERT INTO app\.fence/);
  });

  test('admitInPostgres: a wrong or unknown option rejects with a TypeError naming it, before any query', async () => {
    const queries = [];
    const client = { query: async (text) => { queries.push(text); return { rowCount: 1 }; } };
    const token = { resource: 'q', epoch: 1 };
    await assert.rejects(admitInPostgres(client, token, { tabel: 'app_fence' }), (e) => e instanceof TypeError && e.message.includes('"tabel"'));
    await assert.rejects(admitInPostgres(client, token, null), (e) => e instanceof TypeError && e.message.includes('"options"'));
    await assert.rejects(admitInPostgres(client, token, { table: 'x; DROP TABLE users' }), (e) => e instanceof TypeError && e.message.includes('"table"'));
    assert.deepEqual(queries, []);
    assert.equal(await admitInPostgres(client, token, { table: 'app_fence' }), true);
    assert.match(queries[0], /INSERT INTO app_fence/);
  });
});

/** Commit order of accepted writes -> the stale ones that committed after a newer term's. */
function staleAfterNewer(rows) {
  let newest = 0;
  const stale = [];
  for (const row of rows) {
    if (row.epoch < newest) stale.push(row);
    newest = Math.max(newest, row.epoch);
  }
  return stale;
}

const skip = postgresBin() ? false : 'PostgreSQL is not installed (toolchain/setup.sh installs Debian\'s postgresql)';

describe('fenceSql in PostgreSQL', { skip }, () => {
  let server;
  let pool;
  before(async () => {
    server = startPostgres();
    pool = new pg.Pool({ host: server.host, port: server.port, user: server.user, database: 'postgres', max: 16 });
  });
  after(async () => {
    if (pool) {
      // pool.end() resolves once it has asked its clients to end, not once their connections
      // have closed; a server stopped in between tells the still-open ones that it is shutting
      // down, an error with no listener left. Each client's 'remove' comes once it is closed.
      const open = pool.totalCount;
      let closed = 0;
      const allClosed = new Promise((resolve) => {
        if (open === 0) resolve();
        pool.on('remove', () => ++closed === open && resolve());
      });
      await pool.end();
      await allClosed;
    }
    server?.stop();
  });

  /** Sets up a fence table and an effects table; `seq` numbers accepted writes in commit order. */
  async function fresh(table) {
    await pool.query(`DROP TABLE IF EXISTS ${table}, ${table}_effects, ${table}_seq`);
    await pool.query(fenceSql(table).create);
    await pool.query(`CREATE TABLE ${table}_effects (n bigint PRIMARY KEY, epoch bigint NOT NULL, op int NOT NULL)`);
    await pool.query(`CREATE TABLE ${table}_seq (n bigint NOT NULL)`);
    await pool.query(`INSERT INTO ${table}_seq VALUES (0)`);
  }

  /** One guarded write: the fence and the effect in one transaction, committed only if admitted. */
  async function write(table, admitSql, token, op) {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const admitted = admitSql === null ? await admitInPostgres(client, token, { table }) : (await client.query(admitSql, [token.resource, token.epoch])).rowCount === 1;
      if (!admitted) {
        await client.query('ROLLBACK');
        return false;
      }
      // The fence's row lock is held until COMMIT, so this counter is the commit order.
      const { rows } = await client.query(`UPDATE ${table}_seq SET n = n + 1 RETURNING n`);
      await client.query(`INSERT INTO ${table}_effects VALUES ($1, $2, $3)`, [rows[0].n, token.epoch, op]);
      await client.query('COMMIT');
      return true;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  const accepted = async (table) =>
    (await pool.query(`SELECT n::int, epoch::int, op FROM ${table}_effects ORDER BY n`)).rows;

  test('stale and fresh leaders race 1 000 concurrent writes: no stale write commits after a newer one', async () => {
    await fresh('race_fence');
    const stale = { resource: 'queue', epoch: 5, owner: 'thawed-tab' };
    const newer = { resource: 'queue', epoch: 6, owner: 'new-leader' };
    assert.equal(await write('race_fence', null, stale, -1), true, 'the stale leader was the newest once');
    const results = await Promise.all(Array.from({ length: 1000 }, (_, op) => write('race_fence', null, op % 2 ? newer : stale, op)));
    const rows = await accepted('race_fence');
    const staleAccepted = rows.filter((r) => r.epoch === 5 && r.op >= 0).length;
    const freshAccepted = rows.filter((r) => r.epoch === 6).length;
    console.log(`race: ${freshAccepted} fresh writes accepted of 500; stale accepted before the first fresh commit: ${staleAccepted}, refused: ${500 - staleAccepted}`);
    assert.deepEqual(staleAfterNewer(rows), [], 'a stale write committed after a newer term\'s');
    assert.equal(freshAccepted, 500, 'the newest term is never refused');
    assert.equal(results.filter(Boolean).length, rows.length - 1);
    const { rows: [fence] } = await pool.query('SELECT epoch::int FROM race_fence WHERE resource = $1', ['queue']);
    assert.equal(fence.epoch, 6);
    // Once the newer term has written, every stale write is refused.
    assert.equal(await write('race_fence', null, stale, 2000), false);
  });

  test('a newer term that claims the fence when it begins: of 1 000 concurrent writes of both leaders, no stale one is accepted', async () => {
    await fresh('claim_fence');
    const stale = { resource: 'queue', epoch: 5 };
    const newer = { resource: 'queue', epoch: 6 };
    assert.equal(await write('claim_fence', null, stale, -1), true);
    assert.equal(await admitInPostgres(pool, newer, { table: 'claim_fence' }), true, 'the claim: the fence alone, in its own transaction');
    const results = await Promise.all(Array.from({ length: 1000 }, (_, op) => write('claim_fence', null, op % 2 ? newer : stale, op)));
    const rows = await accepted('claim_fence');
    assert.equal(rows.filter((r) => r.epoch === 5 && r.op >= 0).length, 0, 'a stale write was accepted after the claim');
    assert.equal(rows.filter((r) => r.epoch === 6).length, 500);
    assert.equal(results.filter(Boolean).length, 500);
  });

  test('the check fires: a naive upsert without the WHERE lets a stale write in after a newer one', async () => {
    await fresh('naive_fence');
    const naive = 'INSERT INTO naive_fence (resource, epoch) VALUES ($1, $2) ON CONFLICT (resource) DO UPDATE SET epoch = EXCLUDED.epoch RETURNING epoch';
    await write('naive_fence', naive, { resource: 'queue', epoch: 6 }, 0);
    await write('naive_fence', naive, { resource: 'queue', epoch: 5 }, 1);
    assert.equal(staleAfterNewer(await accepted('naive_fence')).length, 1);
  });
});
