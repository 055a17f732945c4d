/** The journal contract on the SQLite backend (a fresh temp directory per test). */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import type { BatchLimits } from '../../src/store/journal.ts';
import { encodeSnapshot } from '../../src/store/record-format.ts';
import { SqliteJournal } from '../../src/store/sqlite/sqlite-journal.ts';
import { SqliteSnapshotStore } from '../../src/store/sqlite/sqlite-snapshots.ts';
import { journalContract, type StoreHarness, type TestCommand } from './journal-contract.ts';
import {
  flipSqliteSnapshotByte,
  insertRawSqliteSnapshot,
  sqliteSnapshotOpener,
} from './sqlite-raw-snapshot.ts';

function flipFirstByte(path: string, sql: string, key: number): void {
  const db = new Database(path);
  const row = db.prepare(sql.replace('$COLS', 'payload')).get(key) as { payload: Buffer };
  const payload = Buffer.from(row.payload);
  payload[0] = payload[0]! ^ 0xff;
  db.prepare(sql.replace('SELECT $COLS FROM', 'UPDATE').replace(/ WHERE/, ' SET payload = ? WHERE')).run(
    payload,
    key,
  );
  db.close();
}

journalContract('sqlite', async (): Promise<StoreHarness> => {
  const dir = mkdtempSync(join(tmpdir(), 'journal-test-'));
  const journalPath = join(dir, 'journal.sqlite');
  const snapshotPath = join(dir, 'snapshots.sqlite');
  const open: Array<{ close(): Promise<void> }> = [];
  const openJournal = async (limits?: BatchLimits) => {
    const journal = SqliteJournal.open<TestCommand>(
      limits ? { path: journalPath, limits } : { path: journalPath },
    );
    open.push(journal);
    return journal;
  };
  return {
    openJournal,
    openSnapshots: sqliteSnapshotOpener(snapshotPath, open),
    async insertRawFrame(frame) {
      // Opening through the journal creates the schema exactly as a real writer did.
      await (await openJournal()).close();
      const db = new Database(journalPath);
      db.prepare(
        'INSERT INTO journal (first_seq, count, version, payload, checksum) VALUES (?, ?, ?, ?, ?)',
      ).run(frame.firstSeq, frame.count, frame.version, frame.payload, frame.checksum);
      db.close();
    },
    async corruptFrame(firstSeq) {
      flipFirstByte(journalPath, 'SELECT $COLS FROM journal WHERE first_seq = ?', firstSeq);
    },
    async corruptSnapshot(seq) {
      flipSqliteSnapshotByte(snapshotPath, seq);
    },
    async insertRawSnapshot(snapshot) {
      insertRawSqliteSnapshot(snapshotPath, snapshot);
    },
    async frameCount() {
      const db = new Database(journalPath);
      const row = db.prepare('SELECT COUNT(*) AS n FROM journal').get() as { n: number };
      db.close();
      return row.n;
    },
    async dispose() {
      for (const store of open) await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('SQLite journal on its writer thread', () => {
  test('each batch reports the time its transaction took on the writer thread', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-storage-'));
    const journal = SqliteJournal.open<TestCommand>({ path: join(dir, 'journal.sqlite') });
    const reported: Array<{ ms: number; storageMs: number | null }> = [];
    journal.observeBatches((_entries, ms, _frame, storageMs) => reported.push({ ms, storageMs }));
    for (let seq = 1; seq <= 3; seq++)
      await journal.append({ seq, ts: seq, command: { type: 'noop', n: seq } });
    await journal.close();
    rmSync(dir, { recursive: true, force: true });
    assert.equal(reported.length, 3);
    for (const { ms, storageMs } of reported) {
      assert.ok(storageMs !== null && storageMs > 0 && storageMs <= ms, `storage ${storageMs} ms of ${ms}`);
    }
  });
});

describe('SQLite journal trims without a writer thread', () => {
  test('the trim runs on the main connection with the same result', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-trim-'));
    try {
      const path = join(dir, 'journal.sqlite');
      const journal = SqliteJournal.open<TestCommand>({
        path,
        writerThread: false,
        limits: { maxEntries: 10 },
      });
      const pending: Promise<void>[] = [];
      for (let seq = 1; seq <= 35; seq++)
        pending.push(journal.append({ seq, ts: seq, command: { type: 'x' } }));
      journal.recordCheckpoint({ seq: 10, stateHash: 'h10' });
      journal.recordCheckpoint({ seq: 35, stateHash: 'h35' });
      await Promise.all(pending);
      await journal.flush();
      assert.deepEqual(await journal.trimThrough(100, 2), { records: 2, entries: 20, done: false });
      assert.deepEqual(await journal.trimThrough(100, 2), { records: 1, entries: 10, done: true });
      assert.equal(await journal.firstSeq(), 31);
      assert.deepEqual(await journal.checkpoints(1, 100), [{ seq: 35, stateHash: 'h35' }]);
      await journal.close();
      const reopened = SqliteJournal.open<TestCommand>({ path, writerThread: false });
      assert.deepEqual(await reopened.last(), { seq: 35, ts: 35 });
      assert.equal(await reopened.firstSeq(), 31);
      await reopened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('SQLite snapshot store made by an older build', () => {
  const OLD_SCHEMA = `CREATE TABLE snapshots (
    seq INTEGER PRIMARY KEY,
    ts INTEGER NOT NULL,
    state_hash TEXT NOT NULL,
    version INTEGER NOT NULL,
    payload BLOB NOT NULL,
    checksum INTEGER NOT NULL
  )`;

  test('opens with its rows kept and unpinned, and pins from then on', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'snapshots-old-'));
    try {
      const path = join(dir, 'snapshots.sqlite');
      const old = new Database(path);
      old.pragma('journal_mode = WAL');
      old.exec(OLD_SCHEMA);
      const insert = old.prepare(
        'INSERT INTO snapshots (seq, ts, state_hash, version, payload, checksum) VALUES (?, ?, ?, ?, ?, ?)',
      );
      for (const seq of [10, 20, 30]) {
        const s = encodeSnapshot(seq, seq * 10, `h${seq}`, { seq });
        insert.run(s.seq, s.ts, s.stateHash, s.version, s.payload, s.checksum);
      }
      old.close();
      // The service and its snapshot replica each open the store: both at once.
      const store = new SqliteSnapshotStore({ path, keep: 2 });
      const replica = new SqliteSnapshotStore({ path, keep: 2 });
      assert.deepEqual(
        (await store.listSnapshots()).map((s) => [s.seq, s.pinned]),
        [
          [30, false],
          [20, false],
          [10, false],
        ],
      );
      assert.deepEqual(await replica.latestSnapshot(15), {
        seq: 10,
        ts: 100,
        stateHash: 'h10',
        state: { seq: 10 },
      });
      assert.equal(await store.pin(10), true);
      const saved = await store.saveSnapshot({ seq: 40, ts: 400, stateHash: 'h40', state: { seq: 40 } });
      assert.equal(saved.pinned, false);
      assert.deepEqual(
        (await replica.listSnapshots()).map((s) => [s.seq, s.pinned]),
        [
          [40, false],
          [30, false],
          [10, true],
        ],
      );
      await store.close();
      await replica.close();
      const reopened = new SqliteSnapshotStore({ path, keep: 2 });
      assert.equal(await reopened.unpinBefore(40), 1);
      assert.deepEqual(
        (await reopened.listSnapshots()).map((s) => s.seq),
        [40, 30],
      );
      await reopened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
