/** Writes a stored snapshot record straight into a SQLite snapshot file (an older writer's, say). */
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
