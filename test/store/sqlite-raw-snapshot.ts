/**
 * Raw writes to a SQLite snapshot file, under the snapshot store's feet: a record as an older
 * writer stored it, a damaged payload.
 */
import Database from 'better-sqlite3';
import type { StoredSnapshot } from '../../src/store/record-format.ts';

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
