/** The read-store contract on SQLite (a fresh database file per test). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { SqliteReadDb } from '../../src/store/read/read-db.ts';
import { readStoreContract } from './read-store-contract.ts';

const root = mkdtempSync(join(tmpdir(), 'read-store-test-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
readStoreContract('sqlite', async () => {
  const path = join(root, `read-${++n}.sqlite`);
  return { open: async () => new SqliteReadDb(path) };
});
