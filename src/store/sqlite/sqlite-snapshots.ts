/**
 * The SQLite snapshot store: one row per snapshot, newest kept, older ones pruned.
 *
 * Invariants:
 * - A saved snapshot is durable when `saveSnapshot` resolves (WAL, synchronous=FULL).
 * - `latestSnapshot` skips rows whose checksum fails (recovery then starts from an older one),
 *   telling `onSkipped` each one's seq.
 * - The newest `keep` snapshots are retained, and every pinned one besides; `discardAfter`
 *   deletes pinned ones too.
 * - Databases written before pinning existed (no `pinned` column) get the column when opened,
 *   their snapshots unpinned; two connections opening at once (the service and its snapshot
 *   replica) may both try: the second finds the column there.
 */
import Database from 'better-sqlite3';
import type { Snapshot, SnapshotInfo, SnapshotStore } from '../journal.ts';
import {
  decodeSnapshotState,
  encodeSnapshot,
  type StoredSnapshot,
  savedSnapshotInfo,
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
  checksum INTEGER NOT NULL,
  pinned INTEGER NOT NULL DEFAULT 0
);
`;

const ADD_PINNED = 'ALTER TABLE snapshots ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0';

/** Adds the `pinned` column to a table made by an older build; a no-op when it is there. */
function addPinnedColumn(db: Database.Database): void {
  const hasPinned = () =>
    (db.pragma('table_info(snapshots)') as Array<{ name: string }>).some((c) => c.name === 'pinned');
  if (hasPinned()) return;
  try {
    db.exec(ADD_PINNED);
  } catch (error) {
    // Another connection added it between our look and our ALTER.
    if (!/duplicate column/i.test(String((error as Error).message)) || !hasPinned()) throw error;
  }
}

/** Deletes what is neither pinned nor among the newest ? (keep). */
const PRUNE =
  'DELETE FROM snapshots WHERE pinned = 0 AND seq NOT IN (SELECT seq FROM snapshots ORDER BY seq DESC LIMIT ?)';

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
  /** Told the seq of each snapshot `latestSnapshot` passes over because its checksum fails. */
  readonly onSkipped?: (seq: number) => void;
  /**
   * Open an existing file to read only (checking a backup): no journal-mode switch, no schema,
   * so the file is left byte for byte as it was. Saving or discarding then fails.
   */
  readonly readonly?: boolean;
}

export class SqliteSnapshotStore<S = unknown> implements SnapshotStore<S> {
  private readonly db: Database.Database;
  private readonly keep: number;
  private readonly onSkipped: (seq: number) => void;

  constructor(options: SqliteSnapshotStoreOptions) {
    this.db = new Database(
      options.path,
      options.readonly === true ? { readonly: true, fileMustExist: true } : {},
    );
    try {
      if (options.readonly !== true) {
        for (const pragma of walPragmas('FULL')) this.db.pragma(pragma);
        this.db.exec(SCHEMA);
        addPinnedColumn(this.db);
      }
    } catch (error) {
      // A damaged file: nothing is left open.
      this.db.close();
      throw error;
    }
    this.keep = Math.max(1, options.keep ?? 3);
    this.onSkipped = options.onSkipped ?? (() => undefined);
  }

  async saveSnapshot(snapshot: Snapshot<S>): Promise<SnapshotInfo> {
    const stored = encodeSnapshot(snapshot.seq, snapshot.ts, snapshot.stateHash, snapshot.state);
    // Saved again at the same seq (the same state): a pin stays.
    const pinned = this.db.transaction(() => {
      const row = this.db
        .prepare(
          `INSERT INTO snapshots (seq, ts, state_hash, version, payload, checksum) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (seq) DO UPDATE SET ts = excluded.ts, state_hash = excluded.state_hash,
             version = excluded.version, payload = excluded.payload, checksum = excluded.checksum
           RETURNING pinned`,
        )
        .get(stored.seq, stored.ts, stored.stateHash, stored.version, stored.payload, stored.checksum) as {
        pinned: number;
      };
      this.db.prepare(PRUNE).run(this.keep);
      return row.pinned !== 0;
    })();
    return savedSnapshotInfo(stored, pinned);
  }

  async latestSnapshot(maxSeq = Number.MAX_SAFE_INTEGER): Promise<Snapshot<S> | null> {
    const rows = this.db
      .prepare(
        'SELECT seq, ts, state_hash, version, payload, checksum FROM snapshots WHERE seq <= ? ORDER BY seq DESC',
      )
      .iterate(maxSeq) as IterableIterator<SnapshotRow>;
    for (const row of rows) {
      const stored = toStored(row);
      if (!snapshotChecksumValid(stored)) {
        this.onSkipped(stored.seq);
        continue;
      }
      const state = decodeSnapshotState<S>(stored);
      return { seq: stored.seq, ts: stored.ts, stateHash: stored.stateHash, state };
    }
    return null;
  }

  async listSnapshots(): Promise<readonly SnapshotInfo[]> {
    const rows = this.db
      .prepare(
        'SELECT seq, ts, state_hash, length(payload) AS bytes, pinned FROM snapshots ORDER BY seq DESC',
      )
      .all() as Array<{ seq: number; ts: number; state_hash: string; bytes: number; pinned: number }>;
    return rows.map((r) => ({
      seq: r.seq,
      ts: r.ts,
      stateHash: r.state_hash,
      bytes: r.bytes,
      pinned: r.pinned !== 0,
    }));
  }

  async pin(seq: number): Promise<boolean> {
    return this.db.prepare('UPDATE snapshots SET pinned = 1 WHERE seq = ?').run(seq).changes > 0;
  }

  async unpinBefore(seq: number): Promise<number> {
    // Unpinned, they are pruned as a save prunes.
    return this.db.transaction(() => {
      this.db.prepare('UPDATE snapshots SET pinned = 0 WHERE pinned = 1 AND seq < ?').run(seq);
      return this.db.prepare(PRUNE).run(this.keep).changes;
    })();
  }

  async discardAfter(seq: number): Promise<number> {
    return this.db.prepare('DELETE FROM snapshots WHERE seq > ?').run(seq).changes;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
