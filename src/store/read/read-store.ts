/**
 * The read store: projections fed from committed events, written asynchronously in batches to
 * SQLite or PostgreSQL, queried for history without touching the journal.
 *
 * Invariants:
 * - Fed in seq order from the sequencer's committed listener (after durability), never on the
 *   acknowledgement path: `push` only projects into memory; writes are coalesced (`writeDelayMs`)
 *   and, on SQLite, run on a worker thread. A query first waits until the commands it must see
 *   that were pushed before it are written, so a client reads its own acknowledged commands.
 * - Each write is one transaction holding the row changes AND the last applied seq, so after a
 *   crash the store knows exactly where to resume: `push` ignores seqs ≤ lastAppliedSeq, and
 *   recovery must replay from a snapshot no newer than lastAppliedSeq (pass it as
 *   `maxSnapshotSeq`) to re-feed what was lost.
 * - A store ahead of the journal (`lastAppliedSeq` past its last durable seq: a journal that lost
 *   acknowledged commands, or an older backup restored) is emptied by `reset` at start-up and
 *   re-fed from seq 1 (service.ts), since the journal reuses those seqs for other commands; from
 *   the snapshot a trimmed journal starts after when the journal no longer holds seq 1.
 * - A write that fails is tried again, after a delay that doubles from RETRY_FIRST_MS up to
 *   RETRY_MAX_MS, for as long as it fails: its rows are put back ahead of those pushed since
 *   (`RowBatch.restore`), so the next write holds both, and pushes go on being projected. Until one
 *   succeeds, `failure` is the last error and `flush()` rejects with it. The rows wait in memory
 *   meanwhile (a long outage costs memory; a restart re-feeds from the journal instead).
 * - Or the rows are written elsewhere (`writeElsewhere`: the snapshot replica projects the same
 *   commands on its thread): this store then takes no pushes and each query first waits for that
 *   writer to have caught up, so reading one's own acknowledged commands holds all the same.
 * - Never a stale answer: a query whose rows the store has written (with `waitPerAccount`, the
 *   account's last command; else every command pushed or handed over) answers at once; one whose
 *   rows it has not waits for them up to `maxWaitMs`, and is then refused with
 *   `ReadStoreBehindError` (the gateway answers `unavailable`, safe to retry).
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
  type OrderTradesQuery,
  queryOrderHistory,
  queryOrderTrades,
  queryUserTrades,
  type UserTrade,
  type UserTradesPage,
  type UserTradesQuery,
} from './history-queries.ts';
import { parseOrderView } from './packed-views.ts';
import type { CommittedEvents, Projection, RowValue, TableSpec } from './projection.ts';
import { RowBatch } from './projection.ts';
import type { ReadDb } from './read-db.ts';
import { retainsForever, retentionDeletes } from './retention.ts';
import { prepareTables } from './schema.ts';
import {
  querySettlements,
  type SettlementHistoryPage,
  type SettlementHistoryQuery,
} from './settlement-queries.ts';
import { changeStatements, type Statement } from './sql.ts';
import {
  queryTransactions,
  type TransactionLogPage,
  type TransactionLogQuery,
} from './transaction-queries.ts';

/**
 * How often the store's writes sweep history past its retention (command time), and how many rows
 * a sweep deletes from a table at most: a floor, plus a share per command since the last sweep
 * that outpaces the rows those commands can add, so the sweep keeps up with any load while one
 * chunk stays short (a store whose retention was just shortened is trimmed over a while).
 */
const SWEEP_EVERY_MS = 1_000;
const SWEEP_MIN_ROWS = 2_000;
const SWEEP_ROWS_PER_COMMAND = 8;

/** The delays before a failed write is tried again: doubling from the first, capped. */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 5_000;

/** How long a query waits for the store to write the commands it must see (default). */
export const DEFAULT_MAX_WAIT_MS = 2_000;

/** Calls `callback` once after `delayMs`; returns a cancel function (a clock's timer, in tests). */
export type Schedule = (delayMs: number, callback: () => void) => () => void;

const realTimer: Schedule = (delayMs, callback) => {
  const handle = setTimeout(callback, delayMs);
  handle.unref();
  return () => clearTimeout(handle);
};

/**
 * A query needed commands the store has not written (a write failed and is being tried again, the
 * replica writing it is down or catching up) and they were still not written after `waitedMs`: it
 * was refused rather than answered without them. Nothing was changed; asking again is safe.
 */
export class ReadStoreBehindError extends Error {
  override name = 'ReadStoreBehindError';

  constructor(
    /** The last seq the query had to see. */
    readonly neededSeq: number,
    /** The last seq the store had written. */
    readonly writtenSeq: number,
    readonly waitedMs: number,
    /** Why the writer stopped, when it did (a write error, a failed replica). */
    readonly reason: unknown,
  ) {
    super(
      `the read store has written through seq ${writtenSeq}, the query needs seq ${neededSeq}; still behind after ${waitedMs} ms`,
    );
  }
}

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
  /** Told each write that failed (it is tried again). */
  readonly onError?: (error: unknown) => void;
  /** Told the last applied seq after each write. */
  readonly onWritten?: (lastAppliedSeq: number) => void;
  /** How long a query waits for commands the store has not written (default 2 s). */
  readonly maxWaitMs?: number;
  /** The timers of those waits and of the write retries (default: real ones, unref'd). */
  readonly schedule?: Schedule;
}

/** Another writer of this store's rows (the snapshot replica's read store, on its thread). */
export interface RemoteReadWriter {
  /** The last seq it has written. */
  readonly lastAppliedSeq: number;
  /** The last seq handed to it to write: every command committed so far. */
  readonly handedSeq: number;
  /** Why it stopped writing, or null (while it runs, or is restarted, it writes again). */
  readonly failure: unknown;
  /**
   * Resolves once it has written through `throughSeq` (at most `handedSeq`), or without it every
   * command committed before the call; also when `signal` aborts, or when it stops for good. A
   * writer being restarted is waited for. The caller checks `lastAppliedSeq` afterwards.
   */
  caughtUp(throughSeq?: number, signal?: AbortSignal): Promise<void>;
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
  private maxWaitMs: number;
  private timer: Schedule;
  /** Writes that failed in a row, and the cancel of the retry they wait for (null: none waits). */
  private failedWrites = 0;
  private retry: (() => void) | null = null;
  private closed = false;
  /** Queries waiting for the store's own writes, each until it has written through `seq`. */
  private waiters: { readonly seq: number; readonly resolve: () => void }[] = [];
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
    this.maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
    this.timer = options.schedule ?? realTimer;
  }

  /**
   * How long a query waits for commands the store has not written, and the timers it (and the
   * retry of a failed write) run on: the service's clock, set once it runs.
   */
  boundWaits(maxWaitMs: number, schedule?: Schedule): void {
    this.maxWaitMs = maxWaitMs;
    if (schedule !== undefined) this.timer = schedule;
  }

  /**
   * With `accountSeq` (the last committed seq that changed an account's order, trade or position
   * rows), a query for one account needs only that seq written: an account that is not trading
   * answers at once, whatever the store's backlog or failure.
   */
  waitPerAccount(accountSeq: (accountId: number) => number): void {
    this.accountSeq = accountSeq;
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
    if (accountSeq !== undefined) this.accountSeq = accountSeq;
  }

  /** Projects one committed command's events; seqs already applied are ignored. */
  push(committed: CommittedEvents<CoreEvent | unknown>): void {
    if (this.remote !== null) throw new Error('the read store is written elsewhere: nothing is pushed to it');
    if (committed.seq <= this.pendingSeq) return;
    for (const projection of this.projections) projection.project(committed, this.batch);
    this.pendingSeq = committed.seq;
    this.pendingCommands++;
    this.commandsSinceSweep++;
    if (committed.ts > this.latestTs) this.latestTs = committed.ts;
    if (this.pendingCommands >= this.maxBatchCommands && this.writing === null && this.retry === null) {
      void this.write();
    } else {
      this.schedule();
    }
  }

  /**
   * Resolves once everything pushed so far is written, trying a failed write again at once;
   * rejects if a write fails. Written elsewhere: once everything committed is written, waiting up
   * to `maxWaitMs`; rejects with the writer's failure, or `ReadStoreBehindError`.
   */
  async flush(): Promise<void> {
    const remote = this.remote;
    if (remote !== null) {
      await this.waitFor(remote.handedSeq).catch((error: unknown) => {
        throw remote.failure ?? error;
      });
      if (remote.failure !== null) throw remote.failure;
      return;
    }
    while (this.writing !== null || this.pendingCommands > 0) {
      if (this.writing !== null) await this.writing;
      else {
        this.cancelRetry();
        await this.write();
      }
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
    // A write that failed waits for its retry, which writes everything pushed since as well.
    if (this.scheduled || this.retry !== null) return;
    this.scheduled = true;
    const due = () => {
      this.scheduled = false;
      if (this.writing === null && this.pendingCommands > 0 && this.retry === null) void this.write();
    };
    if (this.writeDelayMs > 0) setTimeout(due, this.writeDelayMs).unref();
    else setImmediate(due);
  }

  /** Tries the failed write again after the backoff: 100 ms, doubling up to 5 s, for as long as it fails. */
  private scheduleRetry(): void {
    if (this.closed || this.retry !== null) return;
    const delay = Math.min(RETRY_FIRST_MS * 2 ** Math.min(this.failedWrites - 1, 16), RETRY_MAX_MS);
    this.retry = this.timer(delay, () => {
      this.retry = null;
      if (!this.closed && this.writing === null && this.pendingCommands > 0) void this.write();
    });
  }

  private cancelRetry(): void {
    this.retry?.();
    this.retry = null;
  }

  /** The last seq a query must see: the account's last command, else every command pushed or handed over. */
  private neededSeq(accountId?: number): number {
    const all = this.remote === null ? this.pendingSeq : this.remote.handedSeq;
    if (accountId === undefined || this.accountSeq === null) return all;
    return Math.min(this.accountSeq(accountId), all);
  }

  /**
   * Resolves once the store has written what a query must see (see `neededSeq`): at once when it
   * has. Else it waits (asking for the pending write now, unless a failed one waits for its
   * retry) up to `maxWaitMs`, and rejects with `ReadStoreBehindError` if the store is still behind:
   * never an answer without the caller's acknowledged commands.
   */
  private caughtUp(accountId?: number): Promise<void> {
    return this.waitFor(this.neededSeq(accountId));
  }

  private async waitFor(seq: number): Promise<void> {
    if (this.lastAppliedSeq >= seq) return;
    const abort = new AbortController();
    const cancel = this.timer(this.maxWaitMs, () => abort.abort());
    try {
      if (this.remote !== null) await this.remote.caughtUp(seq, abort.signal);
      else await this.written(seq, abort.signal);
    } finally {
      cancel();
    }
    if (this.lastAppliedSeq < seq) {
      throw new ReadStoreBehindError(seq, this.lastAppliedSeq, this.maxWaitMs, this.failure);
    }
  }

  /** Resolves once this store's own writes reached `seq`, or `signal` aborts, or it closes. */
  private written(seq: number, signal: AbortSignal): Promise<void> {
    if (this.writing === null && this.pendingCommands > 0 && this.retry === null) void this.write();
    return new Promise((resolve) => {
      const waiter = {
        seq,
        resolve: () => {
          signal.removeEventListener('abort', aborted);
          resolve();
        },
      };
      const aborted = () => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve();
      };
      signal.addEventListener('abort', aborted, { once: true });
      this.waiters.push(waiter);
    });
  }

  private wakeWaiters(all = false): void {
    if (this.waiters.length === 0) return;
    const done = this.waiters.filter((w) => all || w.seq <= this.applied);
    if (done.length === 0) return;
    this.waiters = all ? [] : this.waiters.filter((w) => w.seq > this.applied);
    for (const waiter of done) waiter.resolve();
  }

  private write(): Promise<void> {
    const changes = this.batch.drain();
    const seq = this.pendingSeq;
    const commands = this.pendingCommands;
    this.pendingCommands = 0;
    const statements = changeStatements(changes, this.tables, this.options.db.maxParams);
    if (this.sweeps) this.addSweep(statements);
    const writing = this.options.db.commit(statements, seq).then(
      () => {
        this.applied = seq;
        this.writing = null;
        this.error = null;
        this.failedWrites = 0;
        this.options.onWritten?.(seq);
        this.wakeWaiters();
        if (this.pendingCommands > 0) {
          // Queries wait for what came meanwhile: written now, not after the coalescing delay.
          if (this.waiters.length > 0) void this.write();
          else this.schedule();
        }
      },
      (error: unknown) => {
        this.writing = null;
        this.error = error;
        this.failedWrites++;
        // Rolled back: its rows go back ahead of those pushed since, and are written with them.
        this.batch.restore(changes);
        this.pendingCommands += commands;
        this.options.onError?.(error);
        this.scheduleRetry();
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

  async orderTrades(query: OrderTradesQuery): Promise<UserTrade[]> {
    await this.caughtUp(query.accountId);
    return queryOrderTrades(this.options.db, query);
  }

  /** The account's settled positions, newest first (settlement-queries.ts). */
  async settlements(query: SettlementHistoryQuery): Promise<SettlementHistoryPage> {
    await this.caughtUp(query.accountId);
    return querySettlements(this.options.db, query);
  }

  /** The account's balance changes in one currency, newest first (transaction-queries.ts). */
  async transactions(query: TransactionLogQuery): Promise<TransactionLogPage> {
    await this.caughtUp(query.accountId);
    return queryTransactions(this.options.db, query);
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
    // A write that failed is not tried once more here: a restart re-feeds it from the journal.
    if (this.error === null) await this.flush().catch(() => undefined);
    this.closed = true;
    this.cancelRetry();
    this.wakeWaiters(true);
    await this.options.db.close();
  }
}
