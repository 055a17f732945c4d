import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { SqliteWriterThread } from './writer-thread.ts';

const dir = mkdtempSync(join(tmpdir(), 'writer-thread-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A WAL database with one table `t` (n, blob), for a writer thread to write. */
function database(name: string): string {
  const path = join(dir, name);
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (n INTEGER PRIMARY KEY, blob BLOB)');
  db.close();
  return path;
}

describe('SqliteWriterThread', () => {
  test('writes issued together commit in order, each promise settled by its own answer', async () => {
    const path = database('order.db');
    const writer = new SqliteWriterThread(path, ['journal_mode = WAL']);
    const insert = (n: number) =>
      writer.run([{ sql: 'INSERT INTO t (n, blob) VALUES (?, ?)', params: [n, new Uint8Array([n])] }]);
    const outcomes = await Promise.allSettled([
      insert(1),
      insert(2),
      // A duplicate key: this transaction fails; the ones around it are unaffected.
      insert(1),
      insert(3),
    ]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'fulfilled', 'rejected', 'fulfilled'],
    );
    const failed = outcomes[2] as PromiseRejectedResult;
    assert.match(String(failed.reason), /UNIQUE/);
    await writer.close();
    const db = new Database(path, { readonly: true });
    const rows = db.prepare('SELECT n, blob FROM t ORDER BY n').all() as { n: number; blob: Buffer }[];
    db.close();
    assert.deepEqual(
      rows.map((r) => [r.n, [...r.blob]]),
      [
        [1, [1]],
        [2, [2]],
        [3, [3]],
      ],
    );
  });

  test('a counted write resolves with the rows each statement changed, in order', async () => {
    const writer = new SqliteWriterThread(database('counted.db'), ['journal_mode = WAL']);
    await writer.run([{ sql: 'INSERT INTO t (n) VALUES (1), (2), (3)', params: [] }]);
    const counted = await writer.runCounted([
      { sql: 'DELETE FROM t WHERE n < ?', params: [3] },
      { sql: 'DELETE FROM t WHERE n = ?', params: [99] },
      { sql: 'INSERT INTO t (n) VALUES (?)', params: [4] },
    ]);
    assert.deepEqual(counted.changes, [2, 0, 1]);
    assert.ok(counted.ms >= 0);
    // Uncounted writes after it still resolve with the time alone.
    assert.equal(typeof (await writer.run([{ sql: 'DELETE FROM t', params: [] }])), 'number');
    await writer.close();
  });

  test('a write after close is rejected, not lost silently', async () => {
    const writer = new SqliteWriterThread(database('closed.db'), []);
    await writer.close();
    await assert.rejects(writer.run([{ sql: 'INSERT INTO t (n) VALUES (1)', params: [] }]), /exited/);
  });

  test('a worker that stops answering in order is stopped and reports why writes are refused', async () => {
    const writer = new SqliteWriterThread(database('misbehaving.db'), []);
    assert.equal(writer.failed, null);
    const worker = (writer as unknown as { worker: Worker }).worker;
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.emit('message', { id: 99, error: null });
    assert.match(String(writer.failed), /out of order/);
    await exited;
    await assert.rejects(writer.run([{ sql: 'INSERT INTO t (n) VALUES (1)', params: [] }]), /out of order/);
    await writer.close();
  });
});

describe('SqliteWriterThread: what a write is told', () => {
  /** What became of a write within `ms`: 'resolved', 'rejected: <reason>' or 'still pending'. */
  async function settledWithin(write: Promise<unknown>, ms: number): Promise<string> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve('still pending'), ms);
    });
    try {
      return await Promise.race([
        write.then(
          () => 'resolved',
          (error: unknown) => `rejected: ${String(error)}`,
        ),
        timeout,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  test('an answer out of order while a write is pending rejects that write; it is never acknowledged', async () => {
    const writer = new SqliteWriterThread(database('pending-out-of-order.db'), ['journal_mode = WAL']);
    const worker = (writer as unknown as { worker: Worker }).worker;
    const pending = writer.run([{ sql: 'INSERT INTO t (n) VALUES (?)', params: [7] }]);
    // An answer that is not the pending write's: it must not acknowledge that write.
    worker.emit('message', { id: 99, error: null });
    assert.match(await settledWithin(pending, 2000), /^rejected: .*out of order/);
    await writer.close();
  });

  test('a transaction whose later statement fails leaves nothing of itself behind', async () => {
    const path = database('atomic.db');
    const writer = new SqliteWriterThread(path, ['journal_mode = WAL']);
    await writer.run([{ sql: 'INSERT INTO t (n) VALUES (?)', params: [1] }]);
    await assert.rejects(
      writer.run([
        { sql: 'INSERT INTO t (n) VALUES (?)', params: [2] },
        { sql: 'INSERT INTO t (n) VALUES (?)', params: [1] },
      ]),
      /UNIQUE/,
    );
    await writer.close();
    const db = new Database(path, { readonly: true });
    const rows = db.prepare('SELECT n FROM t ORDER BY n').all() as { n: number }[];
    db.close();
    assert.deepEqual(
      rows.map((r) => r.n),
      [1],
      'the failed transaction committed part of itself',
    );
  });
});
