/**
 * The SQLite snapshot store: one row per snapshot, newest kept, older ones pruned.
 *
 * Invariants:
 * - A saved snapshot is durable when `saveSnapshot` resolves (WAL, synchronous=FULL).
 * - `latestSnapshot` skips rows whose checksum fails (recovery then starts from an older one).
 * - At most `keep` snapshots are retained (the newest ones).
 */
import Database from 'better-sqlite3';
import type { Snapshot, SnapshotInfo, SnapshotStore } from '../journal.ts';
import {
  decodeSnapshotState,
  encodeSnapshot,
  type StoredSnapshot,
  snapshotChecksumValid,
} from '../record-format.ts';
import { walPragmas } from './wal.ts';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS snapshots (
  seq INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
  state_hash TEXT NOT NULL,
  version INTEGER NOT NULL,
  payload BLOB NOT NULL,
  checksum INTEGER NOT NULL
);
`;

interface SnapshotRow {
  seq: number;
  ts: number;
  state_hash: string;
  version: number;
  payload: Buffer;
  checksum: number;
}

function toStored(row: SnapshotRow): StoredSnapshot {
  return {
    seq: row.seq,
    ts: row.ts,
    stateHash: row.state_hash,
    version: row.version,
    payload: row.payload,
    checksum: row.checksum,
  };
}

export interface SqliteSnapshotStoreOptions {
  readonly path: string;
  /** Snapshots retained (newest first). Default 3. */
  readonly keep?: number;
}

export class SqliteSnapshotStore<S = unknown> implements SnapshotStore<S> {
  private readonly db: Database.Database;
  private readonly keep: number;

  constructor(options: SqliteSnapshotStoreOptions) {
    this.db = new Database(options.path);
    for (const pragma of walPragmas('FULL')) this.db.pragma(pragma);
    this.db.exec(SCHEMA);
    this.keep = Math.max(1, options.keep ?? 3);
  }

  async saveSnapshot(snapshot: Snapshot<S>): Promise<SnapshotInfo> {
    const stored = encodeSnapshot(snapshot.seq, snapshot.ts, snapshot.stateHash, snapshot.state);
    this.db.transaction(() => {
      this.db
        .prepare(
          'INSERT OR REPLACE INTO snapshots (seq, ts, state_hash, version, payload, checksum) VALUES (?, ?, ?, ?, ?, ?)',
        )
        .run(stored.seq, stored.ts, stored.stateHash, stored.version, stored.payload, stored.checksum);
      this.db
        .prepare(
          'DELETE FROM snapshots WHERE seq NOT IN (SELECT seq FROM snapshots ORDER BY seq DESC LIMIT ?)',
        )
        .run(this.keep);
    })();
    return { seq: stored.seq, ts: stored.ts, stateHash: stored.stateHash, bytes: stored.payload.length };
  }

  async latestSnapshot(maxSeq = Number.MAX_SAFE_INTEGER): Promise<Snapshot<S> | null> {
    const rows = this.db
      .prepare(
        'SELECT seq, ts, state_hash, version, payload, checksum FROM snapshots WHERE seq <= ? ORDER BY seq DESC',
      )
      .iterate(maxSeq) as IterableIterator<SnapshotRow>;
    for (const row of rows) {
      const stored = toStored(row);
      if (!snapshotChecksumValid(stored)) continue;
      const state = decodeSnapshotState<S>(stored);
      return { seq: stored.seq, ts: stored.ts, stateHash: stored.stateHash, state };
    }
    return null;
  }

  async listSnapshots(): Promise<readonly SnapshotInfo[]> {
    const rows = this.db
      .prepare('SELECT seq, ts, state_hash, length(payload) AS bytes FROM snapshots ORDER BY seq DESC')
      .all() as Array<{ seq: number; ts: number; state_hash: string; bytes: number }>;
    return rows.map((r) => ({ seq: r.seq, ts: r.ts, stateHash: r.state_hash, bytes: r.bytes }));
  }

  async discardAfter(seq: number): Promise<number> {
    return this.db.prepare('DELETE FROM snapshots WHERE seq > ?').run(seq).changes;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
