/**
 * tab-baton/server: the fence where a guarded effect lands on a server (Node, or any
 * JavaScript runtime; no WebAssembly, no browser API).
 *
 * The rule (seed 000, section 13): accept an effect only if its token's epoch is at least
 * the highest epoch accepted so far for its resource, and remember the new highest. A term
 * may act many times; a stale leader (a lower epoch) is refused with STALE_OWNER.
 *
 * - `ServerFence`: the rule in memory, for one server process.
 * - `fenceSql(table)`: the same rule as one conditional upsert, for a server whose state is
 *   in PostgreSQL (or any database with `INSERT ... ON CONFLICT ... DO UPDATE ... WHERE`):
 *   run it in the transaction of the write, and commit the write only if it returned a row.
 *   The row lock it takes serialises the transactions of one resource, and the `WHERE` is
 *   evaluated against the newest committed epoch, so a stale write can never commit after
 *   a newer term's.
 * - `admitInPostgres(client, token, options)`: runs that statement with a `pg` client.
 *
 * A token is `{resource, epoch}` as `handle.token()` gives it (owner is not checked: it is
 * not a credential; authenticate the request by its session first).
 *
 * @module tab-baton/server
 */

import { StaleOwnerError } from './stale-owner-error.js';

// The class `tab-baton` exports, the same object (in CommonJS too: the entries share one
// module), so `instanceof` holds for a refusal of either.
export { StaleOwnerError };

const MAX_RESOURCE_CHARS = 256;
const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$/;

/**
 * Checks a token's shape; returns it.
 * @param {unknown} token
 * @returns {{resource: string, epoch: number}}
 */
export function checkToken(token, where = 'fence') {
  if (token === null || typeof token !== 'object') throw new TypeError(`${where}: "token" must be an object {resource, epoch}`);
  const { resource, epoch } = /** @type {any} */ (token);
  if (typeof resource !== 'string' || resource === '' || resource.length > MAX_RESOURCE_CHARS) {
    throw new TypeError(`${where}: "token.resource" must be a non-empty string of at most ${MAX_RESOURCE_CHARS} characters`);
  }
  if (!Number.isSafeInteger(epoch) || epoch < 1) throw new TypeError(`${where}: "token.epoch" must be a positive safe integer`);
  return /** @type {{resource: string, epoch: number}} */ (token);
}

/** The error of a refused effect: `code` 'STALE_OWNER', the stale epoch and the highest. */
export function staleOwnerError(resource, epoch, highest) {
  return new StaleOwnerError(resource, epoch, highest);
}

/** The fence in memory: the highest accepted epoch per resource, in this process. */
export class ServerFence {
  constructor() {
    /** @private @type {Map<string, number>} */
    this.highestByResource = new Map();
  }

  /**
   * Accepts `token` if its epoch is at least the highest accepted for its resource (it then
   * becomes the highest). Never throws for a stale token: returns false.
   * @param {{resource: string, epoch: number}} token
   */
  admit(token) {
    const { resource, epoch } = checkToken(token, 'ServerFence.admit');
    if (epoch < this.highest(resource)) return false;
    this.highestByResource.set(resource, epoch);
    return true;
  }

  /** Like `admit`, but throws the STALE_OWNER error for a stale token. */
  check(token) {
    if (!this.admit(token)) throw staleOwnerError(token.resource, token.epoch, this.highest(token.resource));
  }

  /** The highest epoch accepted for `resource`, 0 when none. */
  highest(resource) {
    return this.highestByResource.get(resource) ?? 0;
  }
}

/**
 * The SQL of the fence on table `table` (default `baton_fence`): `create` makes the table,
 * `admit` (parameters: $1 resource, $2 epoch) returns one row with the epoch when the
 * token is admitted, none when it is stale.
 * @param {string} [table]
 */
export function fenceSql(table = 'baton_fence') {
  if (typeof table !== 'string' || !TABLE_NAME.test(table)) throw new TypeError('fenceSql: "table" must be a plain SQL identifier (schema.name allowed)');
  return Object.freeze({
    create: `CREATE TABLE IF NOT EXISTS ${table} (resource text PRIMARY KEY, epoch bigint NOT NULL CHECK (epoch > 0))`,
    admit:
      `INSERT INTO ${table} AS f (resource, epoch) VALUES ($1, $2) ` +
      'ON CONFLICT (resource) DO UPDATE SET epoch = EXCLUDED.epoch WHERE f.epoch <= EXCLUDED.epoch ' +
      'RETURNING f.epoch',
  });
}

/**
 * Runs the fence's `admit` statement with a `pg` client (or anything with
 * `query(text, values) -> {rowCount}`), inside the caller's transaction: commit the write
 * only when this resolves true, roll back otherwise.
 * @param {{query(text: string, values: unknown[]): Promise<{rowCount: number | null}>}} client
 * @param {{resource: string, epoch: number}} token
 * @param {{table?: string}} [options]
 * @returns {Promise<boolean>}
 */
export async function admitInPostgres(client, token, options) {
  const { resource, epoch } = checkToken(token, 'admitInPostgres');
  if (!client || typeof client.query !== 'function') throw new TypeError('admitInPostgres: "client" must have query(text, values)');
  if (options !== undefined && (options === null || typeof options !== 'object')) throw new TypeError('admitInPostgres: "options" must be an object {table}');
  // A misspelt `table` must not send the epoch to the default table's fence.
  const unknown = Object.keys(options ?? {}).find((key) => key !== 'table');
  if (unknown !== undefined) throw new TypeError(`admitInPostgres: unknown option "${unknown}" (known: table)`);
  const result = await client.query(fenceSql(options?.table).admit, [resource, epoch]);
  return result.rowCount === 1;
}
