/**
 * SQLite snapshot files for the journal contract harnesses: the store the service opens, and raw
 * writes under its feet (a record as an older writer stored it, a damaged payload).
 */
import Database from 'better-sqlite3';
import type { StoredSnapshot } from '../../src/store/record-format.ts';
import { SqliteSnapshotStore } from '../../src/store/sqlite/sqlite-snapshots.ts';

/** A harness's `openSnapshots`: a store on `path` keeping `keep` (3), closed with the others in `open`. */
export function sqliteSnapshotOpener(path: string, open: Array<{ close(): Promise<void> }>) {
  return async (keep?: number) => {
    const store = new SqliteSnapshotStore({ path, keep: keep ?? 3 });
    open.push(store);
    return store;
  };
}

export function insertRawSqliteSnapshot(path: string, snapshot: StoredSnapshot): void {
  const db = new Database(path);
  try {
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
  } finally {
    db.close();
  }
}

/** Flips the first payload byte of the snapshot at `seq`, so its checksum fails. */
export function flipSqliteSnapshotByte(path: string, seq: number): void {
  const db = new Database(path);
  try {
    const row = db.prepare('SELECT payload FROM snapshots WHERE seq = ?').get(seq) as { payload: Buffer };
    const payload = Buffer.from(row.payload);
    payload[0] = payload[0]! ^ 0xff;
    db.prepare('UPDATE snapshots SET payload = ? WHERE seq = ?').run(payload, seq);
  } finally {
    db.close();
  }
}
