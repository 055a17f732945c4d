/** The journal contract on the SQLite backend (a fresh temp directory per test). */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import type { BatchLimits } from '../../src/store/journal.ts';
import { SqliteJournal } from '../../src/store/sqlite/sqlite-journal.ts';
import { SqliteSnapshotStore } from '../../src/store/sqlite/sqlite-snapshots.ts';
import { journalContract, type StoreHarness, type TestCommand } from './journal-contract.ts';

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
    async openSnapshots(keep) {
      const store = new SqliteSnapshotStore({ path: snapshotPath, keep: keep ?? 3 });
      open.push(store);
      return store;
    },
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
      flipFirstByte(snapshotPath, 'SELECT $COLS FROM snapshots WHERE seq = ?', seq);
    },
    async insertRawSnapshot(snapshot) {
      const db = new Database(snapshotPath);
      db.prepare(
        'INSERT INTO snapshots (seq, ts, state_hash, version, payload, checksum) VALUES (?, ?, ?, ?, ?, ?)',
      ).run(
        snapshot.seq,
        snapshot.ts,
        snapshot.stateHash,
        snapshot.version,
        snapshot.payload,
        snapshot.checksum,
      );
      db.close();
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
