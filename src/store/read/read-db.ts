/**
 * The read database behind the read store: SQLite (embedded) or PostgreSQL, one interface.
 *
 * Invariants:
 * - `commit` applies a batch of row changes and the new last applied seq in ONE transaction, so
 *   after a crash the projections and the recorded seq agree (the store re-feeds from there).
 * - Queries use `?` placeholders on both backends; integers come back as JS numbers.
 * - Durability is relaxed on purpose (SQLite synchronous=NORMAL): the read store is derived
 *   data, rebuilt from the journal after whatever it lost.
 * - SQLite commits run on a worker thread by default (its own write connection; queries use the
 *   main connection and see every committed batch), so row writes do not block the event loop.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { inTransaction, isQueryTimeout, timedQuery } from '../postgres/pg-transaction.ts';
import { walPragmas } from '../sqlite/wal.ts';
import { SqliteWriterThread } from '../sqlite/writer-thread.ts';
import type { RowValue } from './projection.ts';
import { type Dialect, ident, type Statement, toPostgresPlaceholders } from './sql.ts';

export interface ReadDb {
  readonly dialect: Dialect;
  /** Most bound parameters in one statement. */
  readonly maxParams: number;
  init(ddl: readonly string[]): Promise<void>;
  commit(statements: readonly Statement[], lastSeq: number): Promise<void>;
  lastAppliedSeq(): Promise<number>;
  /**
   * Empties `tables` and sets the last applied seq to `seq`, in one transaction; the rest of
   * `read_meta` (the schema versions) stays. For a store to be re-fed from the journal's start
   * (0), or from after the snapshot a trimmed journal starts at.
   */
  reset(tables: readonly string[], seq: number): Promise<void>;
  query<T>(sql: string, params: readonly RowValue[]): Promise<T[]>;
  /** Runs one statement outside a batch; returns the number of rows changed. */
  execute(sql: string, params: readonly RowValue[]): Promise<number>;
  close(): Promise<void>;
}

const META_DDL = 'CREATE TABLE IF NOT EXISTS read_meta (key TEXT PRIMARY KEY, value BIGINT NOT NULL)';
const SET_SEQ =
  "INSERT INTO read_meta (key, value) VALUES ('last_applied_seq', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value";
const GET_SEQ = "SELECT value FROM read_meta WHERE key = 'last_applied_seq'";

const SQLITE_PRAGMAS = walPragmas('NORMAL');

export interface SqliteReadDbOptions {
  /** Commit batches on a worker thread (default true): row writes leave the event loop. */
  readonly writerThread?: boolean;
}

export class SqliteReadDb implements ReadDb {
  readonly dialect = 'sqlite' as const;
  readonly maxParams = 30_000;
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly useWriterThread: boolean;
  /** Started at the first commit, once `init` has created the tables. */
  private writer: SqliteWriterThread | null = null;

  constructor(
    private readonly path: string,
    options: SqliteReadDbOptions = {},
  ) {
    this.db = new Database(path);
    for (const pragma of SQLITE_PRAGMAS) this.db.pragma(pragma);
    this.db.exec(META_DDL);
    this.useWriterThread = options.writerThread ?? true;
  }

  private prepared(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql);
      if (this.statements.size > 500) this.statements.clear();
      this.statements.set(sql, statement);
    }
    return statement;
  }

  async init(ddl: readonly string[]): Promise<void> {
    this.db.transaction(() => {
      for (const sql of ddl) this.db.exec(sql);
    })();
  }

  /**
   * Not async: an async frame would hold `statements` (every row's values, views included) until
   * the worker's commit returns, long enough for a scavenge to copy them all; they are cloned into
   * the worker's message at once and can die young.
   */
  commit(statements: readonly Statement[], lastSeq: number): Promise<void> {
    if (this.useWriterThread) {
      // A writer thread that died is replaced: the write being retried (read-store.ts) then
      // succeeds, instead of every retry failing until a restart.
      if (this.writer?.failed != null) this.writer = null;
      this.writer ??= new SqliteWriterThread(this.path, SQLITE_PRAGMAS);
      return this.writer.run([...statements, { sql: SET_SEQ, params: [lastSeq] }]).then(() => undefined);
    }
    try {
      this.db.transaction(() => {
        // Bound as one array: spreading tens of thousands of arguments costs more than the insert.
        for (const s of statements) this.prepared(s.sql).run(s.params);
        this.prepared(SET_SEQ).run(lastSeq);
      })();
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async lastAppliedSeq(): Promise<number> {
    const row = this.prepared(GET_SEQ).get() as { value: number } | undefined;
    return row?.value ?? 0;
  }

  /**
   * On this connection: the writer thread, if started, has no write under way (the read store
   * resets only with nothing pending), and it sees the emptied tables like any committed batch.
   */
  async reset(tables: readonly string[], seq: number): Promise<void> {
    this.db.transaction(() => {
      for (const table of tables) this.db.exec(`DELETE FROM ${ident(table)}`);
      this.prepared(SET_SEQ).run(seq);
    })();
  }

  async query<T>(sql: string, params: readonly RowValue[]): Promise<T[]> {
    return this.prepared(sql).all(...params) as T[];
  }

  async execute(sql: string, params: readonly RowValue[]): Promise<number> {
    return this.prepared(sql).run(...params).changes;
  }

  async close(): Promise<void> {
    await this.writer?.close();
    if (this.db.open) this.db.close();
  }
}

const INT8_OID = 20;

/** How long a query (and the wait for a connection) may take by default (see `PgReadDbOptions`). */
export const DEFAULT_PG_READ_TIMEOUT_MS = 5_000;
/** How long each statement of a commit may take by default, as a journal write (pg-journal.ts). */
export const DEFAULT_PG_WRITE_TIMEOUT_MS = 30_000;

export interface PgReadDbOptions {
  /**
   * How long a history query, and the wait for a connection, may take before it fails (default
   * 5 s): a server that stopped answering (stopped, its disk hung) gets history answered
   * `unavailable` instead of never. Opening, `init`, `reset` and `execute` (schema changes, a
   * rebuild, an explicit prune: they may rightly take long) wait as long for a connection, then
   * for their statements without a deadline.
   */
  readonly timeoutMs?: number;
  /**
   * How long each statement of a commit (BEGIN and COMMIT included) may take before the write
   * fails and is tried again later (default 30 s): a batch may rightly be large, but a write
   * waiting on a hung server would hold a flush, and so a shutdown, forever.
   */
  readonly writeTimeoutMs?: number;
}

/**
 * The read store's PostgreSQL did not answer within the deadline. `code` is Node's ETIMEDOUT, so
 * history answers it as an outage (`unavailable`, src/api/history-outages.ts).
 */
export class ReadDbTimeoutError extends Error {
  override readonly name = 'ReadDbTimeoutError';
  readonly code = 'ETIMEDOUT';
}

/**
 * node-postgres' and pg-pool's timeouts as `ReadDbTimeoutError` (a statement past `answerMs`, no
 * connection within `connectMs`); other errors as they are.
 */
function timedOut(error: unknown, answerMs: number, connectMs: number): unknown {
  if (!(error instanceof Error)) return error;
  if (isQueryTimeout(error)) {
    return new ReadDbTimeoutError(`the read store's PostgreSQL did not answer within ${answerMs} ms`, {
      cause: error,
    });
  }
  if (
    /timeout exceeded when trying to connect|Connection terminated due to connection timeout/.test(
      error.message,
    )
  ) {
    return new ReadDbTimeoutError(`no connection to the read store's PostgreSQL within ${connectMs} ms`, {
      cause: error,
    });
  }
  return error;
}

export class PgReadDb implements ReadDb {
  readonly dialect = 'postgres' as const;
  readonly maxParams = 60_000;
  private closed = false;

  static async open(connectionString: string, options: PgReadDbOptions = {}): Promise<PgReadDb> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_PG_READ_TIMEOUT_MS;
    const writeTimeoutMs = options.writeTimeoutMs ?? DEFAULT_PG_WRITE_TIMEOUT_MS;
    const pool = new pg.Pool({
      connectionString,
      max: 4,
      connectionTimeoutMillis: timeoutMs,
      types: {
        getTypeParser: ((oid: number, format?: string) =>
          oid === INT8_OID
            ? (value: string) => Number(value)
            : pg.types.getTypeParser(oid, (format ?? 'text') as 'text')) as typeof pg.types.getTypeParser,
      },
    });
    pool.on('error', () => undefined);
    try {
      await pool.query(META_DDL);
    } catch (error) {
      await pool.end();
      throw error;
    }
    return new PgReadDb(pool, timeoutMs, writeTimeoutMs);
  }

  private constructor(
    private readonly pool: pg.Pool,
    private readonly timeoutMs: number,
    private readonly writeTimeoutMs: number,
  ) {}

  async init(ddl: readonly string[]): Promise<void> {
    for (const sql of ddl) await this.pool.query(sql);
  }

  commit(statements: readonly Statement[], lastSeq: number): Promise<void> {
    const deadline = this.writeTimeoutMs;
    return inTransaction(
      this.pool,
      async (client) => {
        for (const s of statements) {
          await client.query(timedQuery(toPostgresPlaceholders(s.sql), s.params, deadline));
        }
        await client.query(timedQuery(toPostgresPlaceholders(SET_SEQ), [lastSeq], deadline));
      },
      { queryTimeoutMs: deadline },
    ).catch((error: unknown) => {
      throw timedOut(error, deadline, this.timeoutMs);
    });
  }

  async lastAppliedSeq(): Promise<number> {
    const rows = await this.query<{ value: number }>(GET_SEQ, []);
    return rows[0]?.value ?? 0;
  }

  reset(tables: readonly string[], seq: number): Promise<void> {
    return inTransaction(this.pool, async (client) => {
      // TRUNCATE is transactional in PostgreSQL, and frees the space at once.
      if (tables.length > 0) await client.query(`TRUNCATE ${tables.map(ident).join(', ')}`);
      await client.query(toPostgresPlaceholders(SET_SEQ), [seq]);
    });
  }

  async query<T>(sql: string, params: readonly RowValue[]): Promise<T[]> {
    try {
      const result = await this.pool.query(timedQuery(toPostgresPlaceholders(sql), params, this.timeoutMs));
      return result.rows as T[];
    } catch (error) {
      throw timedOut(error, this.timeoutMs, this.timeoutMs);
    }
  }

  async execute(sql: string, params: readonly RowValue[]): Promise<number> {
    const result = await this.pool.query(toPostgresPlaceholders(sql), params as RowValue[]);
    return result.rowCount ?? 0;
  }

  /**
   * Idle connections are closed without waiting for the server; one in use is waited for (a query
   * or commit under way lets go of it within the deadline).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }
}
