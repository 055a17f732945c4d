/** The RFQ and portfolio projections' contract on SQLite (a fresh database file per store). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { SqliteReadDb } from '../../src/store/read/read-db.ts';
import { subProjectionsContract } from './sub-projections-contract.ts';

const root = mkdtempSync(join(tmpdir(), 'sub-projections-test-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
subProjectionsContract('sqlite', async () => {
  const path = join(root, `read-${++n}.sqlite`);
  return { open: async () => new SqliteReadDb(path) };
});
