/**
 * The PostgreSQL snapshot store: one row per snapshot, newest `keep` retained.
 *
 * Invariants:
 * - Saving is one transaction (insert + prune); durable when it resolves (synchronous_commit on).
 * - `latestSnapshot` skips rows whose checksum fails (recovery then starts from an older one),
 *   telling `onSkipped` each one's seq.
 * - The newest `keep` are retained, and every pinned one besides; `discardAfter` deletes pinned
 *   ones too. A table made before pinning existed gets its `pinned` column when opened (its
 *   snapshots unpinned), tolerating another connection adding it at the same moment.
 */
import pg from 'pg';
import type { Snapshot, SnapshotInfo, SnapshotStore } from '../journal.ts';
import {
  decodeSnapshotState,
  encodeSnapshot,
  type StoredSnapshot,
  savedSnapshotInfo,
  snapshotChecksumValid,
} from '../record-format.ts';
import { inTransaction } from './pg-transaction.ts';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS snapshots (
  seq BIGINT PRIMARY KEY,
  ts BIGINT NOT NULL,
  state_hash TEXT NOT NULL,
  version INTEGER NOT NULL,
  payload BYTEA NOT NULL,
  checksum INTEGER NOT NULL,
  pinned BOOLEAN NOT NULL DEFAULT false
);
ALTER TABLE snapshots ALTER COLUMN payload SET STORAGE EXTERNAL;
`;

const ADD_PINNED = 'ALTER TABLE snapshots ADD COLUMN IF NOT EXISTS pinned BOOLEAN NOT NULL DEFAULT false';
/** PostgreSQL's duplicate_column: a concurrent ALTER won between our check and our add. */
const DUPLICATE_COLUMN = '42701';

/** Deletes what is neither pinned nor among the newest $1 (keep). */
const PRUNE =
  'DELETE FROM snapshots WHERE NOT pinned AND seq NOT IN (SELECT seq FROM snapshots ORDER BY seq DESC LIMIT $1)';

interface SnapshotRow {
  seq: number;
  ts: number;
  state_hash: string;
  version: number;
  payload: Buffer;
  checksum: number;
}

export interface PgSnapshotStoreOptions {
  readonly connectionString: string;
  readonly keep?: number;
  /** Told the seq of each snapshot `latestSnapshot` passes over because its checksum fails. */
  readonly onSkipped?: (seq: number) => void;
}

export class PgSnapshotStore<S = unknown> implements SnapshotStore<S> {
  static async open<S = unknown>(options: PgSnapshotStoreOptions): Promise<PgSnapshotStore<S>> {
    const pool = new pg.Pool({ connectionString: options.connectionString, max: 2 });
    // An idle connection dropped by the server must not crash the process; the next query fails.
    pool.on('error', () => undefined);
    try {
      await pool.query(SCHEMA);
      await pool.query(ADD_PINNED).catch((error: unknown) => {
        if ((error as { code?: string }).code !== DUPLICATE_COLUMN) throw error;
      });
    } catch (error) {
      await pool.end();
      throw error;
    }
    return new PgSnapshotStore<S>(
      pool,
      Math.max(1, options.keep ?? 3),
      options.onSkipped ?? (() => undefined),
    );
  }

  private constructor(
    private readonly pool: pg.Pool,
    private readonly keep: number,
    private readonly onSkipped: (seq: number) => void,
  ) {}

  async saveSnapshot(snapshot: Snapshot<S>): Promise<SnapshotInfo> {
    const stored = encodeSnapshot(snapshot.seq, snapshot.ts, snapshot.stateHash, snapshot.state);
    // Saved again at the same seq (the same state): a pin stays.
    const pinned = await inTransaction(this.pool, async (client) => {
      const saved = await client.query(
        `INSERT INTO snapshots (seq, ts, state_hash, version, payload, checksum) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (seq) DO UPDATE SET ts = EXCLUDED.ts, state_hash = EXCLUDED.state_hash,
           version = EXCLUDED.version, payload = EXCLUDED.payload, checksum = EXCLUDED.checksum
         RETURNING pinned`,
        [stored.seq, stored.ts, stored.stateHash, stored.version, stored.payload, stored.checksum],
      );
      await client.query(PRUNE, [this.keep]);
      return (saved.rows[0] as { pinned: boolean }).pinned;
    });
    return savedSnapshotInfo(stored, pinned);
  }

  async latestSnapshot(maxSeq = Number.MAX_SAFE_INTEGER): Promise<Snapshot<S> | null> {
    // Newest first, one at a time: a snapshot may be large.
    let below = maxSeq + 1;
    for (;;) {
      const result = await this.pool.query(
        `SELECT seq::float8 AS seq, ts::float8 AS ts, state_hash, version, payload, checksum
         FROM snapshots WHERE seq < $1 ORDER BY seq DESC LIMIT 1`,
        [below],
      );
      const row = result.rows[0] as SnapshotRow | undefined;
      if (row === undefined) return null;
      const stored: StoredSnapshot = {
        seq: row.seq,
        ts: row.ts,
        stateHash: row.state_hash,
        version: row.version,
        payload: row.payload,
        checksum: row.checksum,
      };
      if (snapshotChecksumValid(stored)) {
        return {
          seq: stored.seq,
          ts: stored.ts,
          stateHash: stored.stateHash,
          state: decodeSnapshotState<S>(stored),
        };
      }
      this.onSkipped(stored.seq);
      below = row.seq;
    }
  }

  async listSnapshots(): Promise<readonly SnapshotInfo[]> {
    const result = await this.pool.query(
      `SELECT seq::float8 AS seq, ts::float8 AS ts, state_hash, length(payload) AS bytes, pinned
       FROM snapshots ORDER BY seq DESC`,
    );
    const rows = result.rows as Array<{
      seq: number;
      ts: number;
      state_hash: string;
      bytes: number;
      pinned: boolean;
    }>;
    return rows.map((r) => ({
      seq: r.seq,
      ts: r.ts,
      stateHash: r.state_hash,
      bytes: r.bytes,
      pinned: r.pinned,
    }));
  }

  async pin(seq: number): Promise<boolean> {
    const result = await this.pool.query('UPDATE snapshots SET pinned = true WHERE seq = $1', [seq]);
    return (result.rowCount ?? 0) > 0;
  }

  async unpinBefore(seq: number): Promise<number> {
    // Unpinned, they are pruned as a save prunes.
    return inTransaction(this.pool, async (client) => {
      await client.query('UPDATE snapshots SET pinned = false WHERE pinned AND seq < $1', [seq]);
      return (await client.query(PRUNE, [this.keep])).rowCount ?? 0;
    });
  }

  async discardAfter(seq: number): Promise<number> {
    return (await this.pool.query('DELETE FROM snapshots WHERE seq > $1', [seq])).rowCount ?? 0;
  }

  private closed = false;

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }
}
