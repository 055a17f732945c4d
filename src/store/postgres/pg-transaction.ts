/**
 * One PostgreSQL transaction on a pooled connection: BEGIN, the work, COMMIT; ROLLBACK when the
 * work (or the commit) fails, and the connection goes back to the pool either way, unless it can
 * no longer be trusted: a statement that timed out still waits for its answer on it (and a
 * rollback would only queue behind it), and a rollback that failed leaves it in an unknown state.
 * Such a connection is dropped instead.
 */
import type pg from 'pg';

/** node-postgres' error when a query's `query_timeout` passed without an answer (client.js). */
export function isQueryTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === 'Query read timeout';
}

/**
 * A query that fails after `timeoutMs` without an answer: node-postgres reads a per-query
 * `query_timeout` (client.js) that its typings leave out.
 */
export function timedQuery(text: string, values: readonly unknown[], timeoutMs: number): pg.QueryConfig {
  return { text, values: values as unknown[], query_timeout: timeoutMs } as pg.QueryConfig;
}

export interface TransactionOptions {
  /** Each of BEGIN, COMMIT and ROLLBACK fails after this long without an answer (default: none). */
  readonly queryTimeoutMs?: number;
}

export async function inTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const client = await pool.connect();
  const timeout = options.queryTimeoutMs;
  const run = (text: string) =>
    timeout === undefined ? client.query(text) : client.query(timedQuery(text, [], timeout));
  let drop = false;
  try {
    await run('BEGIN');
    const result = await work(client);
    await run('COMMIT');
    return result;
  } catch (error) {
    if (isQueryTimeout(error)) drop = true;
    else {
      await run('ROLLBACK').catch(() => {
        drop = true;
      });
    }
    throw error;
  } finally {
    client.release(drop);
  }
}
