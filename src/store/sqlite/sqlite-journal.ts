/**
 * The SQLite journal (better-sqlite3), the embedded default under DATA_DIR.
 *
 * Durability: WAL mode with `synchronous=FULL`, so each commit fsyncs the WAL before it returns;
 * an acknowledged append therefore survives a process crash AND an OS crash or power loss.
 * (`NORMAL` would only survive a process crash: WAL content is fsynced at checkpoints only.)
 * One group-commit batch = one transaction = one fsync.
 *
 * Invariants (beyond ./journal.ts):
 * - Opening drops a last record whose checksum fails (a torn write) before anything is read or
 *   appended, and reports it in `openReport`; it also drops hash checkpoints beyond the last
 *   durable entry (recorded for commands that were applied but never made durable).
 * - Batches are written on a worker thread by default (./writer-thread.ts): better-sqlite3 is
 *   synchronous, and a commit on the main thread would block the event loop for its fsync. With
 *   `writerThread: false` the main thread writes (the loop blocks; appends queue in the OS).
 * - A trim is one transaction on the same writer (the thread, or the main thread's connection),
 *   so it runs between two batches; it picks the records to delete inside its own statements, so
 *   the newest record at that moment is never among them, whatever was appended meanwhile.
 */
import Database from 'better-sqlite3';
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
import { walPragmas } from './wal.ts';
import { SqliteWriterThread, type WriteStatement } from './writer-thread.ts';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS journal (
  first_seq INTEGER PRIMARY KEY,
  count INTEGER NOT NULL,
  version INTEGER NOT NULL,
  payload BLOB NOT NULL,
  checksum INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS hash_checkpoints (
  seq INTEGER PRIMARY KEY,
  state_hash TEXT NOT NULL
);
`;

const WRITER_PRAGMAS = walPragmas('FULL');
const INSERT_FRAME =
  'INSERT INTO journal (first_seq, count, version, payload, checksum) VALUES (?, ?, ?, ?, ?)';
const INSERT_CHECKPOINT = 'INSERT OR REPLACE INTO hash_checkpoints (seq, state_hash) VALUES (?, ?)';

/**
 * The first_seq of the oldest records (params: seq, seq, maxRecords) whose entries all have
 * seq ≤ seq, the newest record excluded. Eligible records are a prefix of the journal.
 */
const TRIMMED_RECORDS = `SELECT first_seq FROM journal
  WHERE first_seq <= ? AND first_seq + count - 1 <= ?
    AND first_seq < (SELECT MAX(first_seq) FROM journal)
  ORDER BY first_seq LIMIT ?`;
/** The trim: checkpoints first (they are found through the records), then the records. */
const TRIM_CHECKPOINTS = `DELETE FROM hash_checkpoints WHERE seq <=
  (SELECT MAX(first_seq + count - 1) FROM journal WHERE first_seq IN (${TRIMMED_RECORDS}))`;
const TRIM_RECORDS = `DELETE FROM journal WHERE first_seq IN (${TRIMMED_RECORDS})`;
const TRIM_LEFT = `SELECT EXISTS (${TRIMMED_RECORDS}) AS more`;
const FIRST_SEQ = 'SELECT MIN(first_seq) AS s FROM journal';

function trimStatements(seq: number, maxRecords: number): WriteStatement[] {
  const params = [seq, seq, maxRecords];
  return [
    { sql: TRIM_CHECKPOINTS, params },
    { sql: TRIM_RECORDS, params },
  ];
}

function batchStatements(
  frame: StoredFrame | null,
  checkpoints: readonly HashCheckpoint[],
): WriteStatement[] {
  const statements: WriteStatement[] = [];
  if (frame !== null) {
    statements.push({
      sql: INSERT_FRAME,
      params: [frame.firstSeq, frame.count, frame.version, frame.payload, frame.checksum],
    });
  }
  for (const c of checkpoints) statements.push({ sql: INSERT_CHECKPOINT, params: [c.seq, c.stateHash] });
  return statements;
}

export interface SqliteJournalOptions {
  /** Path of the database file. */
  readonly path: string;
  readonly limits?: BatchLimits;
  /** Frames fetched per read query. */
  readonly readPageFrames?: number;
  /** Write batches on a worker thread (default true), keeping fsyncs off the event loop. */
  readonly writerThread?: boolean;
}

export class SqliteJournal<C = unknown> extends CommittedJournal<C> {
  readonly openReport: OpenReport;
  private readonly db: Database.Database;
  protected readonly committer: GroupCommitter;
  private readonly pageFrames: number;
  private readonly writerThread: SqliteWriterThread | null;
  /** The trim as one transaction on the main thread's connection (no writer thread). */
  private readonly trimHere: (seq: number, maxRecords: number) => number;
  /** The smallest stored first_seq (null when empty), on the reader connection. */
  private readonly storedFirstSeq: () => number | null;
  /** Whether records ≤ a seq are left to trim (params: seq, seq, 1). */
  private readonly trimLeft: Database.Statement;

  static open<C = unknown>(options: SqliteJournalOptions): SqliteJournal<C> {
    return new SqliteJournal<C>(options);
  }

  private constructor(options: SqliteJournalOptions) {
    super();
    this.db = new Database(options.path);
    for (const pragma of WRITER_PRAGMAS) this.db.pragma(pragma);
    this.db.exec(SCHEMA);
    this.pageFrames = options.readPageFrames ?? 64;
    this.openReport = this.dropTornTail();
    const insertFrame = this.db.prepare(INSERT_FRAME);
    const insertCheckpoint = this.db.prepare(INSERT_CHECKPOINT);
    const writeBatch = this.db.transaction(
      (frame: StoredFrame | null, checkpoints: readonly HashCheckpoint[]) => {
        if (frame !== null) {
          insertFrame.run(frame.firstSeq, frame.count, frame.version, frame.payload, frame.checksum);
        }
        for (const c of checkpoints) insertCheckpoint.run(c.seq, c.stateHash);
      },
    );
    const trimCheckpoints = this.db.prepare(TRIM_CHECKPOINTS);
    const trimRecords = this.db.prepare(TRIM_RECORDS);
    const firstSeq = this.db.prepare(FIRST_SEQ);
    this.storedFirstSeq = () => (firstSeq.get() as { s: number | null }).s;
    this.trimLeft = this.db.prepare(TRIM_LEFT);
    this.trimHere = this.db.transaction((seq: number, maxRecords: number) => {
      trimCheckpoints.run(seq, seq, maxRecords);
      return trimRecords.run(seq, seq, maxRecords).changes;
    });
    const last = this.lastDurableRow();
    // Checkpoints of commands applied but never made durable describe a lost future.
    this.db.prepare('DELETE FROM hash_checkpoints WHERE seq > ?').run(last.seq);
    const thread =
      options.writerThread === false ? null : new SqliteWriterThread(options.path, WRITER_PRAGMAS);
    this.writerThread = thread;
    this.committer = new GroupCommitter(
      {
        write: (frame, checkpoints) =>
          thread === null ? writeBatch(frame, checkpoints) : thread.run(batchStatements(frame, checkpoints)),
      },
      options.limits ?? DEFAULT_BATCH_LIMITS,
      last,
    );
  }

  private dropTornTail(): OpenReport {
    const row = this.db
      .prepare(
        'SELECT first_seq, count, version, payload, checksum FROM journal ORDER BY first_seq DESC LIMIT 1',
      )
      .get() as FrameRow | undefined;
    if (row === undefined || frameChecksumValid(toFrame(row))) {
      return { droppedTailRecords: 0, droppedTailEntries: 0 };
    }
    this.db.prepare('DELETE FROM journal WHERE first_seq = ?').run(row.first_seq);
    this.db.prepare('DELETE FROM hash_checkpoints WHERE seq >= ?').run(row.first_seq);
    return { droppedTailRecords: 1, droppedTailEntries: row.count };
  }

  private lastDurableRow(): { seq: number; ts: number } {
    const row = this.db
      .prepare(
        'SELECT first_seq, count, version, payload, checksum FROM journal ORDER BY first_seq DESC LIMIT 1',
      )
      .get() as FrameRow | undefined;
    if (row === undefined) return { seq: 0, ts: 0 };
    const frames = readVerifiedFrames<C>([toFrame(row)], row.first_seq, null);
    const last = frames[frames.length - 1]!;
    return { seq: last.seq, ts: last.ts };
  }

  readBatches(fromSeq: number): AsyncIterable<readonly JournalEntry<C>[]> {
    return readSqliteJournal<C>(this.db, fromSeq, this.pageFrames);
  }

  async checkpoints(fromSeq: number, toSeq: number): Promise<readonly HashCheckpoint[]> {
    const rows = this.db
      .prepare('SELECT seq, state_hash FROM hash_checkpoints WHERE seq >= ? AND seq <= ? ORDER BY seq')
      .all(fromSeq, toSeq) as Array<{ seq: number; state_hash: string }>;
    return rows.map((r) => ({ seq: r.seq, stateHash: r.state_hash }));
  }

  async firstSeq(): Promise<number> {
    return this.storedFirstSeq() ?? this.committer.lastDurable.seq + 1;
  }

  /**
   * On the writer (thread), after the batches submitted before it. The entries deleted are the
   * distance the first stored seq moved: nothing but a trim deletes at the front, and trims run
   * one at a time; `done` is read after the delete committed.
   */
  protected async trimRecords(seq: number, maxRecords: number): Promise<TrimResult> {
    const before = this.storedFirstSeq();
    const thread = this.writerThread;
    const records =
      thread === null
        ? this.trimHere(seq, maxRecords)
        : (await thread.runCounted(trimStatements(seq, maxRecords))).changes[1]!;
    const after = this.storedFirstSeq();
    const left = this.trimLeft.get(seq, seq, 1) as { more: number };
    const entries = records > 0 && before !== null && after !== null ? after - before : 0;
    return { records, entries, done: left.more === 0 };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.committer.close();
    await this.trimsSettled();
    await this.writerThread?.close();
    this.db.close();
  }
}

/**
 * The durable entries with seq ≥ fromSeq of a journal database, in batches: also used by readers
 * on their own (read-only) connection, such as the snapshot replica.
 */
export async function* readSqliteJournal<C>(
  db: Database.Database,
  fromSeq: number,
  pageFrames = 64,
): AsyncIterable<readonly JournalEntry<C>[]> {
  const start = db
    .prepare('SELECT COALESCE(MAX(first_seq), 0) AS s FROM journal WHERE first_seq <= ?')
    .get(Math.max(fromSeq, 0)) as { s: number };
  const page = db.prepare(
    'SELECT first_seq, count, version, payload, checksum FROM journal WHERE first_seq >= ? ORDER BY first_seq LIMIT ?',
  );
  yield* readFramePages<C>((cursor) => page.all(cursor, pageFrames) as FrameRow[], start.s, fromSeq);
}
