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
 * - A lost writer connection (a server restart, a failover, a terminated session) is connected
 *   again within the batch's deadline (`writeTimeoutMs`, the NATS journal's publish deadline),
 *   on `watch.clock`, while later appends wait (./pg-writer.ts). The lock is taken again first
 *   (held by another session: the journal fails, never two writers) and `onLocked` runs again;
 *   then the journal's last record tells whether the batch in flight committed before the
 *   connection went: it is that batch (same first seq, count and checksum: acknowledged, not
 *   written again) or the one before it (written again); anything else means another writer
 *   wrote meanwhile, and the journal fails. Past the deadline the journal fails, as before.
 *   A connection that ends between batches (its `end` event) is connected again at once, by an
 *   empty batch (`GroupCommitter.wake`), so an idle journal holds the lock again too.
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
  JOURNAL_WRITE_DEADLINE_MS,
  type JournalEntry,
  type OpenReport,
  type TrimResult,
} from '../journal.ts';
import { type FrameRow, readFramePages, readVerifiedFrames, toFrame } from '../read-frames.ts';
import { frameChecksumValid, type StoredFrame } from '../record-format.ts';
import { endConnection, lockDatabase, unlockDatabase } from './pg-fence.ts';
import { timedQuery } from './pg-transaction.ts';
import {
  connectWriter,
  isConnectionLost,
  realWriterClock,
  retakeWriter,
  type WriterClock,
  WriterFencedError,
  type WriterSession,
} from './pg-writer.ts';

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
   * How long one batch's write may take, reconnections included, before the journal counts as
   * failed (default: the NATS journal's publish deadline, 30 s): a server that stops answering
   * (stopped, its disk hung) or stays away fails the service instead of stalling it while
   * commands pile up in memory, applied but never acknowledged.
   */
  readonly writeTimeoutMs?: number;
  /**
   * Runs on the writer connection once it holds the lock, before the journal is read; again on
   * each reconnection (a `StoreOpenError` then fails the journal).
   */
  readonly onLocked?: (writer: pg.ClientBase) => Promise<void>;
  /** The writer connection lost and connected again (see the module's docstring). */
  readonly watch?: PgWriterWatch;
}

export interface PgWriterWatch {
  /** Times the reconnection's backoff and deadline (default: real time). */
  readonly clock?: WriterClock;
  /** The writer connection was lost: it is being connected again. */
  readonly onDropped?: (error: Error) => void;
  /**
   * Connected again, holding the lock, after `tries`; `batchCommitted`: whether the batch in
   * flight had committed before the connection went (null: it held no entries).
   */
  readonly onReconnected?: (report: { tries: number; batchCommitted: boolean | null }) => void;
}

const DEFAULT_WRITE_TIMEOUT_MS = JOURNAL_WRITE_DEADLINE_MS;
/** How long a failed open waits for its writer's session to end (and its lock with it). */
const SESSION_END_WAIT_MS = 2_000;

export class PgJournal<C = unknown> extends CommittedJournal<C> {
  static async open<C = unknown>(options: PgJournalOptions): Promise<PgJournal<C>> {
    // Reads; the writer has a connection of its own (four in all, as before it had).
    const pool = new pg.Pool({ connectionString: options.connectionString, max: 3 });
    // An idle connection dropped by the server must not crash the process; the next query fails.
    pool.on('error', () => undefined);
    let session: WriterSession;
    try {
      session = await connectWriter(options.connectionString);
    } catch (error) {
      await pool.end();
      throw error;
    }
    const writer = session.client;
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
      return new PgJournal<C>(pool, session, openReport, last, options);
    } catch (error) {
      // The lock is released first, as `close` does; a connection that cannot release it is
      // ended all the same: the lock goes with its session, whose end is awaited (briefly).
      if (locked) await unlockDatabase(writer, SESSION_END_WAIT_MS);
      await endConnection(writer, SESSION_END_WAIT_MS);
      await pool.end();
      throw error;
    }
  }

  protected readonly committer: GroupCommitter;
  private readonly pageFrames: number;
  private readonly writeTimeoutMs: number;
  private readonly connectionString: string;
  private readonly onLocked: PgJournalOptions['onLocked'];
  private readonly watch: PgWriterWatch;
  private readonly clock: WriterClock;
  /** True from a lost writer connection until the new one knows the batch in flight's fate. */
  private reconnecting = false;
  /** The writer connection ended between batches: the next batch connects again first. */
  private endedBetween: Error | null = null;

  private constructor(
    private readonly pool: pg.Pool,
    /** The writer connection holding the lock: replaced when it is lost and connected again. */
    private session: WriterSession,
    readonly openReport: OpenReport,
    last: { seq: number; ts: number },
    options: PgJournalOptions,
  ) {
    super();
    this.pageFrames = options.readPageFrames ?? 64;
    this.writeTimeoutMs = options.writeTimeoutMs ?? DEFAULT_WRITE_TIMEOUT_MS;
    this.connectionString = options.connectionString;
    this.onLocked = options.onLocked;
    this.watch = options.watch ?? {};
    this.clock = this.watch.clock ?? realWriterClock;
    this.committer = new GroupCommitter(
      { write: (frame, checkpoints) => this.writeBatch(frame, checkpoints) },
      options.limits ?? DEFAULT_BATCH_LIMITS,
      last,
    );
    this.watchSession(session);
  }

  /** The session's connection ending outside a reconnection: connected again by an empty batch. */
  private watchSession(session: WriterSession): void {
    session.client.once('end', () => {
      if (this.closed || this.reconnecting || this.session !== session) return;
      this.endedBetween = new Error('the writer connection ended');
      this.committer.wake();
    });
  }

  /**
   * One batch in one statement, by its deadline; a lost connection is connected again and the
   * batch written again only when it had not committed (see the module's docstring).
   */
  private async writeBatch(frame: StoredFrame | null, checkpoints: readonly HashCheckpoint[]): Promise<void> {
    const statement = batchStatement(frame, checkpoints);
    if (statement === null && this.endedBetween === null) return;
    const lastBefore = frame === null ? this.committer.lastDurable.seq : frame.firstSeq - 1;
    const deadline = this.clock.now() + this.writeTimeoutMs;
    const left = () => Math.max(1, deadline - this.clock.now());
    let lost = this.endedBetween;
    this.endedBetween = null;
    for (;;) {
      // Connected again: the tries it took, until the batch's fate is known.
      const reconnected = lost === null ? null : await this.reconnect(lost, deadline);
      lost = null;
      const client = this.session.client;
      try {
        if (reconnected !== null) {
          const committed = await batchCommitted(client, frame, lastBefore, left());
          this.reconnecting = false;
          this.watch.onReconnected?.({
            tries: reconnected,
            batchCommitted: frame === null ? null : committed,
          });
          if (committed) return;
        }
        if (statement === null) return;
        await client.query(timedQuery(statement.text, statement.values, left()));
        return;
      } catch (error) {
        if (!isConnectionLost(error)) throw error;
        lost = error as Error;
      }
    }
  }

  /**
   * A new writer connection holding the lock, by `deadline` (else the error that stopped it);
   * resolves with the tries it took.
   */
  private async reconnect(error: Error, deadline: number): Promise<number> {
    this.reconnecting = true;
    // The loss this handles (a write that failed with it also saw its connection's `end`).
    this.endedBetween = null;
    this.watch.onDropped?.(error);
    const previous = this.session;
    previous.client.end().catch(() => undefined);
    const { session, tries } = await retakeWriter({
      connectionString: this.connectionString,
      previous,
      deadline,
      clock: this.clock,
      ...(this.onLocked === undefined ? {} : { onLocked: this.onLocked }),
    });
    this.session = session;
    this.watchSession(session);
    return tries;
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
    if (this.reconnecting) throw new Error('the journal is connecting to PostgreSQL again');
    const result = await this.session.client.query(timedQuery(TRIM, [seq, maxRecords], this.writeTimeoutMs));
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
    const writer = this.session.client;
    if (await unlockDatabase(writer, SESSION_END_WAIT_MS)) await endConnection(writer, SESSION_END_WAIT_MS);
    else writer.end().catch(() => undefined);
    await this.pool.end();
  }
}

/** The one statement of a batch (its frame, its checkpoints, or both), or null when empty. */
function batchStatement(
  frame: StoredFrame | null,
  checkpoints: readonly HashCheckpoint[],
): { text: string; values: unknown[] } | null {
  const frameInsert =
    'INSERT INTO journal (first_seq, count, version, payload, checksum) VALUES ($1, $2, $3, $4, $5)';
  const frameParams =
    frame === null ? [] : [frame.firstSeq, frame.count, frame.version, frame.payload, frame.checksum];
  if (checkpoints.length === 0) return frame === null ? null : { text: frameInsert, values: frameParams };
  const n = frameParams.length;
  const checkpointInsert = `INSERT INTO hash_checkpoints (seq, state_hash)
    SELECT * FROM unnest($${n + 1}::bigint[], $${n + 2}::text[])
    ON CONFLICT (seq) DO UPDATE SET state_hash = EXCLUDED.state_hash`;
  const text = frame === null ? checkpointInsert : `WITH f AS (${frameInsert}) ${checkpointInsert}`;
  return {
    text,
    values: [...frameParams, checkpoints.map((c) => c.seq), checkpoints.map((c) => c.stateHash)],
  };
}

/**
 * After a reconnection (the lock held again, so the lost session has ended and its statement
 * committed or not): true when the journal's last record is `frame` (same first seq, count and
 * checksum), false when it ends at `lastBefore` (the batch is to be written again; a batch of
 * checkpoints alone is always written again, its upsert being idempotent). Anything else:
 * another writer appended meanwhile, `WriterFencedError`. Never deleted by a trim (the newest
 * record never is), the last record answers for the batch whatever trims ran.
 */
async function batchCommitted(
  client: pg.Client,
  frame: StoredFrame | null,
  lastBefore: number,
  timeoutMs: number,
): Promise<boolean> {
  const result = await client.query(
    timedQuery(
      'SELECT first_seq::float8 AS first_seq, count, checksum FROM journal ORDER BY first_seq DESC LIMIT 1',
      [],
      timeoutMs,
    ),
  );
  const row = result.rows[0] as { first_seq: number; count: number; checksum: number } | undefined;
  const lastSeq = row === undefined ? 0 : row.first_seq + row.count - 1;
  if (
    frame !== null &&
    row !== undefined &&
    row.first_seq === frame.firstSeq &&
    row.count === frame.count &&
    row.checksum === frame.checksum
  ) {
    return true;
  }
  if (lastSeq === lastBefore) return false;
  throw new WriterFencedError(
    `the PostgreSQL journal reconnected, but its last record (through seq ${lastSeq}) is not what this writer left (through seq ${lastBefore}${frame === null ? '' : `, or its batch in flight at ${frame.firstSeq}`}): another writer used the database meanwhile`,
  );
}

async function lastFrame(client: pg.ClientBase): Promise<FrameRow | undefined> {
  const result = await client.query(`SELECT ${FRAME_COLUMNS} FROM journal ORDER BY first_seq DESC LIMIT 1`);
  return result.rows[0] as FrameRow | undefined;
}

async function dropTornTail(client: pg.ClientBase): Promise<OpenReport> {
  const row = await lastFrame(client);
  if (row === undefined || frameChecksumValid(toFrame(row)))
    return { droppedTailRecords: 0, droppedTailEntries: 0 };
  await client.query('BEGIN');
  await client.query('DELETE FROM journal WHERE first_seq = $1', [row.first_seq]);
  await client.query('DELETE FROM hash_checkpoints WHERE seq >= $1', [row.first_seq]);
  await client.query('COMMIT');
  return { droppedTailRecords: 1, droppedTailEntries: row.count };
}

async function lastDurable<C>(client: pg.ClientBase): Promise<{ seq: number; ts: number }> {
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
