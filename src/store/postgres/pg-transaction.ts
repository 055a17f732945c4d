/**
 * One PostgreSQL transaction on a pooled connection: BEGIN, the work, COMMIT; ROLLBACK when the
 * work (or the commit) fails, and the connection goes back to the pool either way.
 */
import type pg from 'pg';

export async function inTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
