/** The read-store contract on SQLite (a fresh database file per test). */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import { SqliteReadDb } from '../../src/store/read/read-db.ts';
import { ReadStore } from '../../src/store/read/read-store.ts';
import { readStoreContract } from './read-store-contract.ts';

const root = mkdtempSync(join(tmpdir(), 'read-store-test-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
readStoreContract('sqlite', async () => {
  const path = join(root, `read-${++n}.sqlite`);
  return { open: async () => new SqliteReadDb(path) };
});

test('SQLite: the quote_currency arm of a currency filter reads the partial index', async () => {
  const path = join(root, 'plan.sqlite');
  await (await ReadStore.open({ db: new SqliteReadDb(path) })).close();
  const db = new Database(path, { readonly: true });
  try {
    for (const [table, index] of [
      ['orders', 'orders_account_id_quote_currency_updated_seq_present_idx'],
      ['trades', 'trades_account_id_quote_currency_seq_present_idx'],
    ] as const) {
      const plan = db
        .prepare(`EXPLAIN QUERY PLAN SELECT view FROM ${table} WHERE account_id = ? AND quote_currency = ?`)
        .all(1, 'USDC') as { detail: string }[];
      assert.match(plan.map((p) => p.detail).join('\n'), new RegExp(`USING INDEX ${index} `));
    }
  } finally {
    db.close();
  }
});
