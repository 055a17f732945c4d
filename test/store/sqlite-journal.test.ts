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
import type { SqliteWriterThread } from '../../src/store/sqlite/writer-thread.ts';
import { journalContract, rawSnapshotV2, type StoreHarness, type TestCommand } from './journal-contract.ts';
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

describe('SQLite journal durability settings', () => {
  /** The `synchronous` setting of the writer thread's own connection, read inside its transaction. */
  async function writerThreadSynchronous(journal: SqliteJournal<TestCommand>): Promise<number | null> {
    const thread = (journal as unknown as { writerThread: SqliteWriterThread | null }).writerThread;
    if (thread === null) return null;
    // One row per value the thread's connection could report: the one it holds is inserted (and
    // removed again in the same transaction); the counts say which.
    const statements = [0, 1, 2, 3].flatMap((level) => [
      {
        sql: 'INSERT INTO hash_checkpoints (seq, state_hash) SELECT ?, ? FROM pragma_synchronous WHERE synchronous = ?',
        params: [-1 - level, 'probe', level],
      },
      { sql: 'DELETE FROM hash_checkpoints WHERE seq = ?', params: [-1 - level] },
    ]);
    const { changes } = await thread.runCounted(statements);
    const held = [0, 1, 2, 3].filter((level) => changes[2 * level] === 1);
    assert.equal(held.length, 1, `changes ${changes}`);
    return held[0]!;
  }

  for (const writerThread of [true, false]) {
    test(`every connection writing the journal runs synchronous=FULL (writerThread ${writerThread})`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'journal-sync-'));
      const journal = SqliteJournal.open<TestCommand>({ path: join(dir, 'journal.sqlite'), writerThread });
      try {
        // FULL (2) fsyncs the WAL at every commit; NORMAL (1) loses acknowledged appends on power loss.
        const db = (journal as unknown as { db: Database.Database }).db;
        assert.equal(db.pragma('synchronous', { simple: true }), 2);
        assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
        assert.equal(await writerThreadSynchronous(journal), writerThread ? 2 : null);
        await journal.append({ seq: 1, ts: 1, command: { type: 'noop' } });
        assert.deepEqual(await journal.checkpoints(-10, 10), [], 'the probe rows are gone');
      } finally {
        await journal.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
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

describe('SQLite snapshot store skips a damaged record', () => {
  test('a snapshot whose state_hash no longer matches its checksum is skipped, and onSkipped told its seq', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'snapshots-hash-'));
    try {
      const path = join(dir, 'snapshots.sqlite');
      const skipped: number[] = [];
      const store = new SqliteSnapshotStore({ path, keep: 5, onSkipped: (seq) => skipped.push(seq) });
      insertRawSqliteSnapshot(path, rawSnapshotV2(10, 100, 'aaaa', { x: 1 }));
      insertRawSqliteSnapshot(path, rawSnapshotV2(20, 200, 'bbbb', { x: 2 }));
      assert.deepEqual(await store.latestSnapshot(), {
        seq: 20,
        ts: 200,
        stateHash: 'bbbb',
        state: { x: 2 },
      });
      assert.deepEqual(skipped, []);
      // Bit rot in the state_hash column only: payload and checksum intact.
      const db = new Database(path);
      db.prepare("UPDATE snapshots SET state_hash = 'bbbc' WHERE seq = 20").run();
      db.close();
      assert.deepEqual(await store.latestSnapshot(), {
        seq: 10,
        ts: 100,
        stateHash: 'aaaa',
        state: { x: 1 },
      });
      assert.deepEqual(skipped, [20]);
      await store.close();
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

describe('SQLite journal close', () => {
  for (const writerThread of [true, false]) {
    test(`close makes the appends issued before it durable and acknowledges them (writerThread ${writerThread})`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'sqlite-close-'));
      try {
        const path = join(dir, 'journal.db');
        const journal = SqliteJournal.open<{ n: number }>({ path, writerThread });
        const acks = [1, 2, 3].map((seq) =>
          journal.append({ seq, ts: 1000 + seq, command: { n: seq } }).then(
            () => 'ack',
            (error: unknown) => String(error),
          ),
        );
        await journal.close();
        assert.deepEqual(await Promise.all(acks), ['ack', 'ack', 'ack']);
        const reopened = SqliteJournal.open<{ n: number }>({ path });
        const seqs: number[] = [];
        for await (const e of reopened.readFrom(1)) seqs.push(e.seq);
        await reopened.close();
        assert.deepEqual(seqs, [1, 2, 3]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});

describe('SQLite journal trims on a poisoned or closed journal', () => {
  test('a trim on a poisoned journal is refused with the poisoning error and deletes nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sqlite-poisoned-trim-'));
    try {
      const path = join(dir, 'journal.db');
      const journal = SqliteJournal.open<{ n: number }>({ path, limits: { maxEntries: 1 } });
      await Promise.all([1, 2, 3].map((seq) => journal.append({ seq, ts: 1000 + seq, command: { n: seq } })));
      // Out of order: poisons the journal.
      await assert.rejects(journal.append({ seq: 9, ts: 1009, command: { n: 9 } }), /out of order/);
      await assert.rejects(journal.trimThrough(2, 10), /out of order/);
      assert.equal(await journal.firstSeq(), 1, 'the poisoned journal deleted records');
      await journal.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a trim after close is refused as closed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sqlite-closed-trim-'));
    try {
      const journal = SqliteJournal.open<{ n: number }>({ path: join(dir, 'journal.db') });
      await journal.append({ seq: 1, ts: 1001, command: { n: 1 } });
      await journal.close();
      await assert.rejects(journal.trimThrough(1, 1), /the journal is closed/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
