/**
 * The read store: projections fed from committed events, written asynchronously in batches to
 * SQLite or PostgreSQL, queried for history without touching the journal.
 *
 * Invariants:
 * - Fed in seq order from the sequencer's committed listener (after durability), never on the
 *   acknowledgement path: `push` only projects into memory; writes are coalesced (`writeDelayMs`)
 *   and, on SQLite, run on a worker thread. Every query first waits until what was pushed
 *   before it is written, so a client reads its own acknowledged commands.
 * - Each write is one transaction holding the row changes AND the last applied seq, so after a
 *   crash the store knows exactly where to resume: `push` ignores seqs ≤ lastAppliedSeq, and
 *   recovery must replay from a snapshot no newer than lastAppliedSeq (pass it as
 *   `maxSnapshotSeq`) to re-feed what was lost.
 * - A store ahead of the journal (`lastAppliedSeq` past its last durable seq: a journal that lost
 *   acknowledged commands, or an older backup restored) is emptied by `reset` at start-up and
 *   re-fed from seq 1 (service.ts), since the journal reuses those seqs for other commands; from
 *   the snapshot a trimmed journal starts after when the journal no longer holds seq 1.
 * - A write failure is kept and reported by `flush()`/`failure`; later pushes are dropped
 *   (queries still work on what was written). The service should restart to re-feed.
 * - Or the rows are written elsewhere (`writeElsewhere`: the snapshot replica projects the same
 *   commands on its thread): this store then takes no pushes and each query first waits for that
 *   writer to have caught up, so reading one's own acknowledged commands holds all the same.
 * - Tables an older build wrote are brought up to their specs when the store opens (schema.ts).
 * - With retention settings, the store's writes also delete history past them, a bounded chunk
 *   per second of command time inside the write's own transaction (retention.ts): so on whichever
 *   thread and connection write the rows, never the event loop's, and never racing them.
 */
import type { CoreEvent, OrderView, PositionView } from '../../core/events.ts';
import { coreProjection, type KindOf } from './core-projections.ts';
import {
  DEFAULT_HISTORY_WINDOWS,
  type HistoryWindows,
  type OrderHistoryPage,
  type OrderHistoryQuery,
  queryOrderHistory,
  queryUserTrades,
  type UserTradesPage,
  type UserTradesQuery,
} from './history-queries.ts';
import { parseOrderView } from './packed-views.ts';
import type { CommittedEvents, Projection, RowValue, TableSpec } from './projection.ts';
import { RowBatch } from './projection.ts';
import type { ReadDb } from './read-db.ts';
import { retainsForever, retentionDeletes } from './retention.ts';
import { prepareTables } from './schema.ts';
import { changeStatements, type Statement } from './sql.ts';

/**
 * How often the store's writes sweep history past its retention (command time), and how many rows
 * a sweep deletes from a table at most: a floor, plus a share per command since the last sweep
 * that outpaces the rows those commands can add, so the sweep keeps up with any load while one
 * chunk stays short (a store whose retention was just shortened is trimmed over a while).
 */
const SWEEP_EVERY_MS = 1_000;
const SWEEP_MIN_ROWS = 2_000;
const SWEEP_ROWS_PER_COMMAND = 8;

export interface RetentionSettings {
  /** Closed orders last updated longer ago than this are deleted by prune (null: keep forever). */
  readonly closedOrdersMs: number | null;
  /** Trades older than this are deleted by prune (null: keep forever). */
  readonly tradesMs: number | null;
  /**
   * RFQ history (when the RFQ projection is registered): RFQ trades older than this, and closed
   * RFQs and quotes last updated longer ago, are deleted by prune (null/absent: keep forever).
   */
  readonly rfqsMs?: number | null;
  /**
   * Finished portfolios (when the portfolio projection is registered) that ended longer ago than
   * this are deleted by prune with their events; active ones never (null/absent: keep forever).
   */
  readonly finishedPortfoliosMs?: number | null;
}

export const DEFAULT_RETENTION: RetentionSettings = { closedOrdersMs: null, tradesMs: null };

export interface ReadStoreOptions {
  readonly db: ReadDb;
  /** More projections (portfolios, RFQs...) next to the core orders/trades/positions. */
  readonly projections?: readonly Projection[];
  readonly kindOf?: KindOf;
  readonly windows?: HistoryWindows;
  readonly retention?: RetentionSettings;
  /** Most commands projected into one write (default 10 000). */
  readonly maxBatchCommands?: number;
  /**
   * How long pushed rows may wait to be coalesced into one write (default 10 ms; 0: the next
   * turn). Queries never see this delay: they first wait for what was pushed before them.
   */
  readonly writeDelayMs?: number;
  readonly onError?: (error: unknown) => void;
  /** Told the last applied seq after each write. */
  readonly onWritten?: (lastAppliedSeq: number) => void;
}

/** Another writer of this store's rows (the snapshot replica's read store, on its thread). */
export interface RemoteReadWriter {
  /** The last seq it has written. */
  readonly lastAppliedSeq: number;
  /** Why it stopped writing, or null. */
  readonly failure: unknown;
  /**
   * Resolves once it has written through `throughSeq`, or without it every command committed
   * before the call; at once when it has failed (queries then answer from what was written).
   */
  caughtUp(throughSeq?: number): Promise<void>;
}

export interface PruneReport {
  readonly orders: number;
  readonly trades: number;
  /** Present when `rfqsMs` is set and the RFQ tables exist. */
  readonly rfqs?: { readonly rfqs: number; readonly quotes: number; readonly trades: number };
  /** Present when `finishedPortfoliosMs` is set and the portfolio tables exist. */
  readonly portfolios?: number;
}

export class ReadStore {
  static async open(options: ReadStoreOptions): Promise<ReadStore> {
    const projections: Projection[] = [
      coreProjection(options.kindOf) as Projection,
      ...(options.projections ?? []),
    ];
    const tables = new Map<string, TableSpec>();
    for (const projection of projections) {
      for (const table of projection.tables) {
        if (tables.has(table.name)) throw new Error(`read table ${table.name} declared twice`);
        tables.set(table.name, table);
      }
    }
    await prepareTables(options.db, [...tables.values()]);
    const lastApplied = await options.db.lastAppliedSeq();
    return new ReadStore(options, projections, tables, lastApplied);
  }

  private readonly batch: RowBatch;
  private pendingSeq: number;
  private pendingCommands = 0;
  private writing: Promise<void> | null = null;
  private scheduled = false;
  private error: unknown = null;
  private readonly windows: HistoryWindows;
  private readonly retention: RetentionSettings;
  /** Whether the settings delete anything, so writes sweep at all (fixed at open). */
  private readonly sweeps: boolean;
  private readonly maxBatchCommands: number;
  private readonly writeDelayMs: number;
  private remote: RemoteReadWriter | null = null;
  private accountSeq: ((accountId: number) => number) | null = null;
  /** The newest command time pushed, the one of the last sweep, and the commands since it. */
  private latestTs = Number.NEGATIVE_INFINITY;
  private sweptAt = Number.NEGATIVE_INFINITY;
  private commandsSinceSweep = 0;

  private constructor(
    private readonly options: ReadStoreOptions,
    private readonly projections: readonly Projection[],
    private readonly tables: ReadonlyMap<string, TableSpec>,
    private applied: number,
  ) {
    this.batch = new RowBatch(tables);
    this.pendingSeq = applied;
    this.windows = options.windows ?? DEFAULT_HISTORY_WINDOWS;
    this.retention = options.retention ?? DEFAULT_RETENTION;
    this.sweeps = !retainsForever(this.retention);
    this.maxBatchCommands = options.maxBatchCommands ?? 10_000;
    this.writeDelayMs = options.writeDelayMs ?? 10;
  }

  /** The last seq whose projections are written (as of open, then of each write). */
  get lastAppliedSeq(): number {
    return this.remote === null ? this.applied : Math.max(this.applied, this.remote.lastAppliedSeq);
  }

  get failure(): unknown {
    return this.error ?? this.remote?.failure ?? null;
  }

  /**
   * From now on `writer` writes the rows (to the same database): this store only answers queries,
   * each once the writer has caught up. Called before anything is pushed. With `accountSeq` (the
   * last committed seq that changed an account's order, trade or position rows), a query for one
   * account waits only for that seq.
   */
  writeElsewhere(writer: RemoteReadWriter, accountSeq?: (accountId: number) => number): void {
    if (this.pendingCommands > 0 || this.writing !== null) {
      throw new Error('the read store has pending writes of its own');
    }
    this.remote = writer;
    this.accountSeq = accountSeq ?? null;
  }

  /** Projects one committed command's events; seqs already applied are ignored. */
  push(committed: CommittedEvents<CoreEvent | unknown>): void {
    if (this.remote !== null) throw new Error('the read store is written elsewhere: nothing is pushed to it');
    if (this.error !== null || committed.seq <= this.pendingSeq) return;
    for (const projection of this.projections) projection.project(committed, this.batch);
    this.pendingSeq = committed.seq;
    this.pendingCommands++;
    this.commandsSinceSweep++;
    if (committed.ts > this.latestTs) this.latestTs = committed.ts;
    if (this.pendingCommands >= this.maxBatchCommands && this.writing === null) {
      void this.write();
    } else {
      this.schedule();
    }
  }

  /**
   * Resolves once everything pushed so far (written elsewhere: everything committed) is written;
   * rejects if a write failed.
   */
  async flush(): Promise<void> {
    if (this.remote !== null) {
      await this.remote.caughtUp();
      if (this.remote.failure !== null) throw this.remote.failure;
      return;
    }
    while (this.writing !== null || this.pendingCommands > 0) {
      if (this.writing !== null) await this.writing;
      else await this.write();
      if (this.error !== null) break;
    }
    if (this.error !== null) throw this.error;
  }

  /**
   * Empties every projected table (the sub-projections' too) and sets lastAppliedSeq to `seq`
   * (default 0), in one transaction, keeping the schema versions: the store is then re-fed from
   * the command after it. For a store ahead of its journal (the journal came back shorter than
   * what was projected: those seqs will be reused by other commands), or behind a trimmed one
   * (`seq` is then the snapshot the journal starts after). Before anything is pushed, and not
   * while written elsewhere; what was pushed is written first.
   */
  async reset(seq = 0): Promise<void> {
    if (this.remote !== null) throw new Error('the read store is written elsewhere: it is reset before that');
    await this.flush();
    await this.options.db.reset([...this.tables.keys()], seq);
    this.applied = seq;
    this.pendingSeq = seq;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    const due = () => {
      this.scheduled = false;
      if (this.writing === null && this.pendingCommands > 0) void this.write();
    };
    if (this.writeDelayMs > 0) setTimeout(due, this.writeDelayMs).unref();
    else setImmediate(due);
  }

  /**
   * Resolves once everything pushed before the call is written (writing it now if it waits),
   * so a query sees every command acknowledged before it arrived; written elsewhere, with an
   * account, only that account's commands. After a write failure it resolves at once: queries
   * answer from what was written.
   */
  private async caughtUp(accountId?: number): Promise<void> {
    if (this.remote !== null) {
      return this.remote.caughtUp(
        accountId === undefined || this.accountSeq === null ? undefined : this.accountSeq(accountId),
      );
    }
    const target = this.pendingSeq;
    while (this.applied < target && this.error === null) {
      if (this.writing !== null) await this.writing;
      else if (this.pendingCommands > 0) await this.write();
      else break;
    }
  }

  private write(): Promise<void> {
    const changes = this.batch.drain();
    const seq = this.pendingSeq;
    this.pendingCommands = 0;
    const statements = changeStatements(changes, this.tables, this.options.db.maxParams);
    if (this.sweeps) this.addSweep(statements);
    const writing = this.options.db.commit(statements, seq).then(
      () => {
        this.applied = seq;
        this.writing = null;
        this.options.onWritten?.(seq);
        if (this.pendingCommands > 0) this.schedule();
      },
      (error: unknown) => {
        this.error = error;
        this.writing = null;
        this.options.onError?.(error);
      },
    );
    this.writing = writing;
    return writing;
  }

  /**
   * Adds a chunk of the retention sweep to the write under way (same transaction) when one is due:
   * once per SWEEP_EVERY_MS of command time, at the newest command's time, so replays and virtual
   * clocks sweep as live time does.
   */
  private addSweep(statements: Statement[]): void {
    if (this.latestTs - this.sweptAt < SWEEP_EVERY_MS) return;
    const limit = SWEEP_MIN_ROWS + SWEEP_ROWS_PER_COMMAND * this.commandsSinceSweep;
    this.sweptAt = this.latestTs;
    this.commandsSinceSweep = 0;
    for (const { statement } of retentionDeletes(this.tables, this.retention, this.latestTs, limit)) {
      statements.push(statement);
    }
  }

  async orderHistory(query: OrderHistoryQuery): Promise<OrderHistoryPage> {
    await this.caughtUp(query.accountId);
    return queryOrderHistory(this.options.db, this.windows, query);
  }

  async userTrades(query: UserTradesQuery): Promise<UserTradesPage> {
    await this.caughtUp(query.accountId);
    return queryUserTrades(this.options.db, this.windows, query);
  }

  /** The latest view of any order ever projected (open or closed). */
  async order(orderId: string): Promise<OrderView | null> {
    await this.caughtUp();
    const rows = await this.options.db.query<{ view: string }>('SELECT view FROM orders WHERE order_id = ?', [
      orderId,
    ]);
    return rows[0] === undefined ? null : parseOrderView(rows[0].view);
  }

  /** Positions of an account, optionally of one currency (base or pair quote, as history). */
  async positions(accountId: number, currency?: string): Promise<PositionView[]> {
    await this.caughtUp(accountId);
    const params: RowValue[] = [accountId];
    let sql = 'SELECT view FROM positions WHERE account_id = ?';
    if (currency !== undefined) {
      sql += ' AND (currency = ? OR quote_currency = ?)';
      params.push(currency, currency);
    }
    const rows = await this.options.db.query<{ view: string }>(`${sql} ORDER BY instrument_name`, params);
    return rows.map((r) => JSON.parse(r.view) as PositionView);
  }

  /** For other projections' queries (`?` placeholders on both backends). */
  async query<T>(sql: string, params: readonly RowValue[]): Promise<T[]> {
    await this.caughtUp();
    return this.options.db.query<T>(sql, params);
  }

  /**
   * Deletes all history beyond the retention settings at `now` (never open orders), at once. The
   * store's own writes also sweep it, a chunk at a time (`write`).
   */
  async prune(now: number): Promise<PruneReport> {
    const deleted = new Map<string, number>();
    for (const { table, statement } of retentionDeletes(this.tables, this.retention, now, null)) {
      deleted.set(table, await this.options.db.execute(statement.sql, statement.params));
    }
    const count = (table: string) => deleted.get(table) ?? 0;
    return {
      orders: count('orders'),
      trades: count('trades'),
      ...(deleted.has('rfqs')
        ? { rfqs: { rfqs: count('rfqs'), quotes: count('rfq_quotes'), trades: count('rfq_trades') } }
        : {}),
      ...(deleted.has('portfolios') ? { portfolios: count('portfolios') } : {}),
    };
  }

  async close(): Promise<void> {
    await this.flush().catch(() => undefined);
    await this.options.db.close();
  }
}
