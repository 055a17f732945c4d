/**
 * The PostgreSQL journal (`pg`), selected by DATABASE_URL.
 *
 * Durability: every group-commit batch is ONE statement in autocommit, so it is atomic and, with
 * the server defaults `fsync=on` and `synchronous_commit=on`, durable (WAL flushed) when the
 * server answers. The journal refuses to open when the server has synchronous_commit off.
 *
 * Invariants (beyond ./journal.ts):
 * - One dedicated connection writes, so batches commit in order; reads use other connections.
 * - One writer per database: that connection holds the database's session advisory lock
 *   (./pg-fence.ts), and a second `open` (another service on the same DATABASE_URL, whatever its
 *   journal) is refused with `StoreOpenError` before it reads. `onLocked` runs on it next, before
 *   the journal is read or written (openStores checks the database's journal identity there).
 * - While a batch is in flight, appends accumulate for the next one (pipelined group commit).
 * - Seqs and timestamps are BIGINT, read back as float8 (exact below 2^53).
 * - A trim is ONE statement on the writer connection: the connection runs its queries in the
 *   order they were issued, so the trim commits between two batches (the committer issues a
 *   batch only after the previous one answered), and the records it deletes are chosen in that
 *   statement, so the newest record at that moment is never among them. It never runs before
 *   opening (and its torn-tail drop) finished.
 */
import pg from 'pg';
import { CommittedJournal } from '../committed-journal.ts';
import { GroupCommitter } from '../group-commit.ts';
import {
  type BatchLimits,
  DEFAULT_BATCH_LIMITS,
  type HashCheckpoint,
  type JournalEntry,
  type OpenReport,
  type TrimResult,
} from '../journal.ts';
import { type FrameRow, readFramePages, readVerifiedFrames, toFrame } from '../read-frames.ts';
import { frameChecksumValid, type StoredFrame } from '../record-format.ts';
import { lockDatabase, unlockDatabase } from './pg-fence.ts';
import { timedQuery } from './pg-transaction.ts';

export const PG_JOURNAL_SCHEMA = `
CREATE TABLE IF NOT EXISTS journal (
  first_seq BIGINT PRIMARY KEY,
  count INTEGER NOT NULL,
  version INTEGER NOT NULL,
  payload BYTEA NOT NULL,
  checksum INTEGER NOT NULL
);
-- Payloads are already compact: store them out of line without (slow) pglz compression.
ALTER TABLE journal ALTER COLUMN payload SET STORAGE EXTERNAL;
CREATE TABLE IF NOT EXISTS hash_checkpoints (
  seq BIGINT PRIMARY KEY,
  state_hash TEXT NOT NULL
);
`;

const FRAME_COLUMNS = 'first_seq::float8 AS first_seq, count, version, payload, checksum';

/**
 * The trim ($1 = seq, $2 = maxRecords): the oldest records whose entries all have seq ≤ $1, the
 * newest excluded, and the checkpoints up to the last entry deleted, in one statement. Its
 * snapshot predates its own deletes, so `done` looks past the records it deleted.
 */
const ELIGIBLE = `first_seq <= $1 AND first_seq + count - 1 <= $1
  AND first_seq < (SELECT MAX(first_seq) FROM journal)`;
const TRIM = `
WITH deleted AS (
  DELETE FROM journal WHERE first_seq IN (
    SELECT first_seq FROM journal WHERE ${ELIGIBLE} ORDER BY first_seq LIMIT $2
  ) RETURNING first_seq, count
), checkpoints AS (
  DELETE FROM hash_checkpoints WHERE seq <= (SELECT MAX(first_seq + count - 1) FROM deleted)
)
SELECT
  (SELECT COUNT(*) FROM deleted)::float8 AS records,
  (SELECT COALESCE(SUM(count), 0) FROM deleted)::float8 AS entries,
  NOT EXISTS (
    SELECT 1 FROM journal
    WHERE ${ELIGIBLE} AND first_seq > COALESCE((SELECT MAX(first_seq) FROM deleted), -1)
  ) AS done`;

export interface PgJournalOptions {
  readonly connectionString: string;
  readonly limits?: BatchLimits;
  readonly readPageFrames?: number;
  /**
   * How long one batch's write may take before the journal counts as failed (default 30 s, as a
   * NATS publish): a server that stops answering (stopped, its disk hung) fails the service
   * instead of stalling it while commands pile up in memory, applied but never acknowledged.
   */
  readonly writeTimeoutMs?: number;
  /** Runs on the writer connection once it holds the lock, before the journal is read. */
  readonly onLocked?: (writer: pg.ClientBase) => Promise<void>;
}

const DEFAULT_WRITE_TIMEOUT_MS = 30_000;
/** How long a failed open waits for its writer's session to end (and its lock with it). */
const SESSION_END_WAIT_MS = 2_000;

export class PgJournal<C = unknown> extends CommittedJournal<C> {
  static async open<C = unknown>(options: PgJournalOptions): Promise<PgJournal<C>> {
    const pool = new pg.Pool({ connectionString: options.connectionString, max: 4 });
    // An idle connection dropped by the server must not crash the process; the next query fails.
    pool.on('error', () => undefined);
    const writer = await pool.connect();
    writer.on('error', () => undefined); // the next write then fails and poisons the journal
    let locked = false;
    try {
      const sync = await writer.query('SHOW synchronous_commit');
      if ((sync.rows[0] as { synchronous_commit: string }).synchronous_commit === 'off') {
        throw new Error('synchronous_commit is off: acknowledged appends would not be durable');
      }
      // Before anything is read: a second writer would journal under the running one's seqs.
      await lockDatabase(writer);
      locked = true;
      await options.onLocked?.(writer);
      await writer.query(PG_JOURNAL_SCHEMA);
      const openReport = await dropTornTail(writer);
      const last = await lastDurable<C>(writer);
      // Checkpoints of commands applied but never made durable describe a lost future.
      await writer.query('DELETE FROM hash_checkpoints WHERE seq > $1', [last.seq]);
      return new PgJournal<C>(pool, writer, openReport, last, options);
    } catch (error) {
      // The lock is released first, as `close` does. A connection that cannot release it is
      // dropped, not returned to the pool (a query may still be waiting on it): the lock goes with
      // its session, whose end is awaited (briefly).
      if (locked && (await unlockDatabase(writer, SESSION_END_WAIT_MS))) {
        writer.release();
      } else {
        const ended = new Promise<void>((resolve) => {
          writer.once('end', () => resolve());
          setTimeout(resolve, SESSION_END_WAIT_MS).unref();
        });
        writer.release(true);
        await ended;
      }
      await pool.end();
      throw error;
    }
  }

  protected readonly committer: GroupCommitter;
  private readonly pageFrames: number;
  private readonly writeTimeoutMs: number;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly writer: pg.PoolClient,
    readonly openReport: OpenReport,
    last: { seq: number; ts: number },
    options: PgJournalOptions,
  ) {
    super();
    this.pageFrames = options.readPageFrames ?? 64;
    this.writeTimeoutMs = options.writeTimeoutMs ?? DEFAULT_WRITE_TIMEOUT_MS;
    this.committer = new GroupCommitter(
      { write: (frame, checkpoints) => this.writeBatch(frame, checkpoints) },
      options.limits ?? DEFAULT_BATCH_LIMITS,
      last,
    );
  }

  private async writeBatch(frame: StoredFrame | null, checkpoints: readonly HashCheckpoint[]): Promise<void> {
    const frameInsert =
      'INSERT INTO journal (first_seq, count, version, payload, checksum) VALUES ($1, $2, $3, $4, $5)';
    const frameParams =
      frame === null ? [] : [frame.firstSeq, frame.count, frame.version, frame.payload, frame.checksum];
    const write = (text: string, values: unknown[]) =>
      this.writer.query(timedQuery(text, values, this.writeTimeoutMs));
    if (checkpoints.length === 0) {
      if (frame !== null) await write(frameInsert, frameParams);
      return;
    }
    const n = frameParams.length;
    const checkpointInsert = `INSERT INTO hash_checkpoints (seq, state_hash)
      SELECT * FROM unnest($${n + 1}::bigint[], $${n + 2}::text[])
      ON CONFLICT (seq) DO UPDATE SET state_hash = EXCLUDED.state_hash`;
    const sql = frame === null ? checkpointInsert : `WITH f AS (${frameInsert}) ${checkpointInsert}`;
    await write(sql, [...frameParams, checkpoints.map((c) => c.seq), checkpoints.map((c) => c.stateHash)]);
  }

  readBatches(fromSeq: number): AsyncIterable<readonly JournalEntry<C>[]> {
    return readPgJournal<C>(this.pool, fromSeq, this.pageFrames);
  }

  async checkpoints(fromSeq: number, toSeq: number): Promise<readonly HashCheckpoint[]> {
    const result = await this.pool.query(
      'SELECT seq::float8 AS seq, state_hash FROM hash_checkpoints WHERE seq >= $1 AND seq <= $2 ORDER BY seq',
      [fromSeq, toSeq],
    );
    return (result.rows as Array<{ seq: number; state_hash: string }>).map((r) => ({
      seq: r.seq,
      stateHash: r.state_hash,
    }));
  }

  async firstSeq(): Promise<number> {
    // Read before the query: were the journal empty then, nothing was durable before it either.
    const last = this.committer.lastDurable.seq;
    const result = await this.pool.query('SELECT MIN(first_seq)::float8 AS s FROM journal');
    return (result.rows[0] as { s: number | null }).s ?? last + 1;
  }

  protected async trimRecords(seq: number, maxRecords: number): Promise<TrimResult> {
    // With the writes' deadline: a trim stuck on a server that stopped answering would hold a
    // shutdown (the trimmer waits for its step) forever.
    const result = await this.writer.query(timedQuery(TRIM, [seq, maxRecords], this.writeTimeoutMs));
    const row = result.rows[0] as { records: number; entries: number; done: boolean };
    return { records: row.records, entries: row.entries, done: row.done };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.committer.close();
    await this.trimsSettled();
    // The lock is released before the connection goes: the server ends a closed session a moment
    // later, and a service (or test) opening the database right after must find it free.
    // A broken connection is dropped, and its session's end releases the lock.
    if (await unlockDatabase(this.writer, SESSION_END_WAIT_MS)) this.writer.release();
    else this.writer.release(true);
    await this.pool.end();
  }
}

async function lastFrame(client: pg.PoolClient): Promise<FrameRow | undefined> {
  const result = await client.query(`SELECT ${FRAME_COLUMNS} FROM journal ORDER BY first_seq DESC LIMIT 1`);
  return result.rows[0] as FrameRow | undefined;
}

async function dropTornTail(client: pg.PoolClient): Promise<OpenReport> {
  const row = await lastFrame(client);
  if (row === undefined || frameChecksumValid(toFrame(row)))
    return { droppedTailRecords: 0, droppedTailEntries: 0 };
  await client.query('BEGIN');
  await client.query('DELETE FROM journal WHERE first_seq = $1', [row.first_seq]);
  await client.query('DELETE FROM hash_checkpoints WHERE seq >= $1', [row.first_seq]);
  await client.query('COMMIT');
  return { droppedTailRecords: 1, droppedTailEntries: row.count };
}

async function lastDurable<C>(client: pg.PoolClient): Promise<{ seq: number; ts: number }> {
  const row = await lastFrame(client);
  if (row === undefined) return { seq: 0, ts: 0 };
  const entries = readVerifiedFrames<C>([toFrame(row)], row.first_seq, null);
  const last = entries[entries.length - 1]!;
  return { seq: last.seq, ts: last.ts };
}

/**
 * The durable entries with seq ≥ fromSeq of a PostgreSQL journal, in batches: also used by
 * readers with their own pool, such as the snapshot replica.
 */
export async function* readPgJournal<C>(
  pool: pg.Pool,
  fromSeq: number,
  pageFrames = 64,
): AsyncIterable<readonly JournalEntry<C>[]> {
  const start = await pool.query(
    'SELECT COALESCE(MAX(first_seq), 0)::float8 AS s FROM journal WHERE first_seq <= $1',
    [Math.max(fromSeq, 0)],
  );
  const fetchPage = async (cursor: number) =>
    (
      await pool.query(
        `SELECT ${FRAME_COLUMNS} FROM journal WHERE first_seq >= $1 ORDER BY first_seq LIMIT $2`,
        [cursor, pageFrames],
      )
    ).rows as FrameRow[];
  yield* readFramePages<C>(fetchPage, (start.rows[0] as { s: number }).s, fromSeq);
}
