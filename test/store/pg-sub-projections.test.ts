/** The RFQ and portfolio projections' contract on a real throwaway PostgreSQL. */
import { after, test } from 'node:test';
import { PgReadDb } from '../../src/store/read/read-db.ts';
import { startPostgres } from '../support/postgres.ts';
import { subProjectionsContract } from './sub-projections-contract.ts';

const server = await startPostgres();
after(() => server?.stop());

if (server === null) {
  test('PostgreSQL RFQ and portfolio projections contract', {
    skip: 'PostgreSQL is not installed (run scripts/ensure-system-deps.sh)',
  });
} else {
  let n = 0;
  subProjectionsContract('postgres', async () => {
    const url = await server.createDatabase(`subproj_${process.pid}_${++n}`);
    return { open: () => PgReadDb.open(url) };
  });
}
