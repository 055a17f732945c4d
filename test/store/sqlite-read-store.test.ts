/** The read-store contract on SQLite (a fresh database file per test). */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { ORDERS_TABLE, TRADES_TABLE } from '../../src/store/read/core-projections.ts';
import { SqliteReadDb } from '../../src/store/read/read-db.ts';
import { ReadStore } from '../../src/store/read/read-store.ts';
import { retentionDeletes } from '../../src/store/read/retention.ts';
import { readStoreContract } from './read-store-contract.ts';

const root = mkdtempSync(join(tmpdir(), 'read-store-test-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
readStoreContract('sqlite', async () => {
  const path = join(root, `read-${++n}.sqlite`);
  return { open: async () => new SqliteReadDb(path) };
});

test('SQLite: the quote_currency arm of a currency filter and the retention sweep read the partial indexes', async () => {
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
    // The retention sweep finds closed orders through their own index, never walking open ones.
    const tables = new Map([ORDERS_TABLE, TRADES_TABLE].map((t) => [t.name, t]));
    const retention = { closedOrdersMs: 1, tradesMs: 1 };
    for (const { table, statement } of retentionDeletes(tables, retention, 1_000, 100)) {
      const plan = db.prepare(`EXPLAIN QUERY PLAN ${statement.sql}`).all(...statement.params) as {
        detail: string;
      }[];
      const index = table === 'orders' ? 'orders_last_updated_at_closed_idx' : 'trades_timestamp_idx';
      assert.match(plan.map((p) => p.detail).join('\n'), new RegExp(`USING INDEX ${index} `), table);
    }
  } finally {
    db.close();
  }
});

test('SQLite: a writer thread that died is replaced at the next commit, which then succeeds', async () => {
  const db = new SqliteReadDb(join(root, 'dead-writer.sqlite'));
  try {
    await db.init(['CREATE TABLE t (n INTEGER PRIMARY KEY)']);
    await db.commit([{ sql: 'INSERT INTO t (n) VALUES (?)', params: [1] }], 1);
    const writer = (db as unknown as { writer: { worker: Worker } }).writer;
    await writer.worker.terminate();
    await db.commit([{ sql: 'INSERT INTO t (n) VALUES (?)', params: [2] }], 2);
    assert.deepEqual(await db.query('SELECT n FROM t ORDER BY n', []), [{ n: 1 }, { n: 2 }]);
    assert.equal(await db.lastAppliedSeq(), 2);
  } finally {
    await db.close();
  }
});
