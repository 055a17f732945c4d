/** The read-store contract on a real throwaway PostgreSQL (a fresh database per test). */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { PgReadDb } from '../../src/store/read/read-db.ts';
import { startPostgres } from '../support/postgres.ts';
import { readStoreContract } from './read-store-contract.ts';

const server = await startPostgres();
after(() => server?.stop());

if (server === null) {
  test('PostgreSQL read store contract', {
    skip: 'PostgreSQL is not installed (run scripts/ensure-system-deps.sh)',
  });
} else {
  let n = 0;
  readStoreContract('postgres', async () => {
    const url = await server.createDatabase(`read_${process.pid}_${++n}`);
    return { open: () => PgReadDb.open(url) };
  });

  test('a commit that fails changes nothing, its seq included, and the pool it ran on keeps working', async () => {
    const url = await server.createDatabase(`read_${process.pid}_failed_commit`);
    const db = await PgReadDb.open(url);
    try {
      await db.init(['CREATE TABLE IF NOT EXISTS t (id BIGINT PRIMARY KEY, v TEXT NOT NULL)']);
      await db.commit([{ sql: 'INSERT INTO t (id, v) VALUES (?, ?)', params: [1, 'a'] }], 1);
      await assert.rejects(
        db.commit(
          [
            { sql: 'INSERT INTO t (id, v) VALUES (?, ?)', params: [2, 'b'] },
            // A plain insert of an id already there: the second statement fails.
            { sql: 'INSERT INTO t (id, v) VALUES (?, ?)', params: [1, 'again'] },
          ],
          2,
        ),
        /duplicate key/,
      );
      assert.equal(await db.lastAppliedSeq(), 1, 'the failed batch did not move the applied seq');
      assert.deepEqual(await db.query('SELECT id, v FROM t ORDER BY id', []), [{ id: 1, v: 'a' }]);
      for (let seq = 3; seq <= 6; seq++) {
        await db.commit([{ sql: 'INSERT INTO t (id, v) VALUES (?, ?)', params: [seq, 'c'] }], seq);
      }
      assert.equal(await db.lastAppliedSeq(), 6);
    } finally {
      await db.close();
    }
  });
}
