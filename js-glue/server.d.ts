/**
 * `tab-baton/server`: the fence where a guarded effect lands on a server (Node or any
 * JavaScript runtime; no WebAssembly, no browser API). Accept an effect only if its
 * token's epoch is at least the highest accepted so far for its resource.
 */

/** What the fence reads of a token (`handle.token()` of tab-baton). */
export interface FenceToken {
  readonly resource: string;
  readonly epoch: number;
}

/** A refused effect: `code` 'STALE_OWNER'. The class of `tab-baton`. */
export { StaleOwnerError } from './index.js';
import type { StaleOwnerError } from './index.js';

/** Checks a token's shape (throws a TypeError naming the field); returns it. */
export function checkToken<T extends FenceToken>(token: T, where?: string): T;

export function staleOwnerError(resource: string, epoch: number, highest: number): StaleOwnerError;

/** The fence in memory: the highest accepted epoch per resource, in this process. */
export class ServerFence {
  constructor();
  /** Accepts `token` if its epoch is at least the highest accepted (then the highest); false when stale. */
  admit(token: FenceToken): boolean;
  /** Like `admit`, but throws a {@link StaleOwnerError} for a stale token. */
  check(token: FenceToken): void;
  /** The highest epoch accepted for `resource`, 0 when none. */
  highest(resource: string): number;
}

/**
 * The fence as SQL on `table` (default `baton_fence`; a plain identifier, `schema.name`
 * allowed). `admit` takes $1 resource, $2 epoch and returns one row when the token is
 * admitted, none when it is stale: run it in the write's transaction and commit only then.
 */
export function fenceSql(table?: string): { readonly create: string; readonly admit: string };

/** A `pg` client, pool client or anything with the same `query`. */
export interface SqlClient {
  query(text: string, values: unknown[]): Promise<{ rowCount: number | null }>;
}

/** Runs the `admit` statement inside the caller's transaction; true: commit the write. */
export function admitInPostgres(client: SqlClient, token: FenceToken, options?: { table?: string }): Promise<boolean>;
