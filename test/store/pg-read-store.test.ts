/** The read-store contract on a real throwaway PostgreSQL (a fresh database per test). */
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
}
