/**
 * History queries over the read tables (never the journal): order history by currency and user
 * trades, with recent/historical windows, `includeOld`, `includeUnfilled`, count/offset and
 * continuation tokens.
 *
 * Semantics (see docs/decisions.md):
 * - An order is in history when it has fills, or when it is closed (filled/cancelled/rejected)
 *   with no fills and `includeUnfilled` is set. Open orders without fills are not history.
 * - `historical: false` → records updated within the recent window (orders 30 min, trades 24 h).
 *   `historical: true` → records older than the indexing delay; records older than 2 days only
 *   with `includeOld`.
 * - Newest first by the seq of the last change, then by the number the id ends in, so the rows
 *   one command wrote come in the order the engine made them (history-keyset.ts); a continuation
 *   token `<seq>:<id>` names the last record returned and is null when nothing follows.
 * - `currency` finds what is filed under it: the base coin, or the quote of a linear or spot pair
 *   (USDC finds BTC_USDC-PERPETUAL, and so does BTC).
 */
import type { OrderView, TradeView } from '../../core/events.ts';
import {
  afterPosition,
  historyOrderBy,
  historyToken,
  ID_NUMBER_COLUMN,
  idNumberSql,
  parseHistoryToken,
} from './history-keyset.ts';
import { parseOrderView, parseTradeView } from './packed-views.ts';
import type { RowValue } from './projection.ts';
import type { ReadDb } from './read-db.ts';

export interface HistoryWindows {
  /** Orders: the recent window (default 30 min). */
  readonly recentOrdersMs: number;
  /** Trades: the recent window (default 24 h). */
  readonly recentTradesMs: number;
  /** Older than this needs includeOld (default 2 days). */
  readonly oldAfterMs: number;
  /** Historical queries see records at least this old (default 1 s). */
  readonly indexingDelayMs: number;
}

export const DEFAULT_HISTORY_WINDOWS: HistoryWindows = {
  recentOrdersMs: 30 * 60_000,
  recentTradesMs: 24 * 3_600_000,
  oldAfterMs: 2 * 24 * 3_600_000,
  indexingDelayMs: 1_000,
};

export const MAX_HISTORY_COUNT = 1000;

export interface OrderHistoryQuery {
  readonly accountId: number;
  /** An upper-case currency the instruments are filed under (base or pair quote). */
  readonly currency: string;
  /** One instrument's orders only (filed under `currency`). */
  readonly instrumentName?: string;
  /** `any` or undefined: every kind. */
  readonly kind?: string;
  /** Default 20, at most 1000. */
  readonly count?: number;
  readonly offset?: number;
  readonly includeOld?: boolean;
  readonly includeUnfilled?: boolean;
  readonly historical?: boolean;
  readonly continuation?: string | null;
  /** The current time (the sequencer's clock), ms. */
  readonly now: number;
}

export interface OrderHistoryPage {
  readonly orders: OrderView[];
  readonly continuation: string | null;
}

export interface UserTradesQuery {
  readonly accountId: number;
  readonly currency?: string;
  readonly instrumentName?: string;
  readonly kind?: string;
  readonly startTimestamp?: number;
  readonly endTimestamp?: number;
  /** Default 10, at most 1000. */
  readonly count?: number;
  /** `asc` oldest first; `desc`/`default` newest first. */
  readonly sorting?: 'asc' | 'desc' | 'default';
  readonly historical?: boolean;
  readonly includeOld?: boolean;
  readonly continuation?: string | null;
  readonly now: number;
}

/**
 * One order's trades on one account: the order's instrument, traded no earlier than the order was
 * made, until `filled` lots are found (an order's fills add up to its filled amount).
 */
export interface OrderTradesQuery {
  readonly accountId: number;
  readonly orderId: string;
  readonly instrumentName: string;
  /** The order's creation time, ms: no trade of it is older. */
  readonly since: number;
  /** Lots the order has filled: the walk stops once its trades add up to them. */
  readonly filled: number;
}

export interface UserTrade {
  readonly trade: TradeView;
  /** Which side of the trade the account was on. */
  readonly liquidity: 'M' | 'T';
}

export interface UserTradesPage {
  readonly trades: UserTrade[];
  readonly hasMore: boolean;
  readonly continuation: string | null;
}

/**
 * `select` of an account's rows that meet `where`, and when a currency is given only those filed
 * under it (src/domain/currency.ts): the base coin (`currency`) or a pair's quote
 * (`quote_currency`), so USDC finds the BTC_USDC products and BTC finds them too
 * (core-projections.ts). No row has the same currency in both. The two are separate arms of a
 * UNION ALL, each read in order from its (account, currency column, seq) index and merged, where
 * an OR would read and sort every row of the account. The caller adds ORDER BY and LIMIT.
 */
function accountRows(
  select: string,
  accountId: number,
  currency: string | undefined,
  where: readonly string[],
  params: readonly RowValue[],
): { sql: string; params: RowValue[] } {
  const rest = where.map((condition) => ` AND ${condition}`).join('');
  if (currency === undefined)
    return { sql: `${select} WHERE account_id = ?${rest}`, params: [accountId, ...params] };
  const arm = (column: string) => `${select} WHERE account_id = ? AND ${column} = ?${rest}`;
  return {
    sql: `${arm('currency')} UNION ALL ${arm('quote_currency')}`,
    params: [accountId, currency, ...params, accountId, currency, ...params],
  };
}

function clampCount(count: number | undefined, fallback: number): number {
  const n = count ?? fallback;
  if (!Number.isInteger(n) || n < 1 || n > MAX_HISTORY_COUNT) throw new RangeError('count out of range');
  return n;
}

function timeWindow(
  column: string,
  historical: boolean,
  includeOld: boolean,
  recentMs: number,
  windows: HistoryWindows,
  now: number,
  where: string[],
  params: RowValue[],
): void {
  if (!historical) {
    where.push(`${column} >= ?`);
    params.push(now - recentMs);
    return;
  }
  where.push(`${column} <= ?`);
  params.push(now - windows.indexingDelayMs);
  if (!includeOld) {
    where.push(`${column} >= ?`);
    params.push(now - windows.oldAfterMs);
  }
}

export async function queryOrderHistory(
  db: ReadDb,
  windows: HistoryWindows,
  q: OrderHistoryQuery,
): Promise<OrderHistoryPage> {
  const count = clampCount(q.count, 20);
  const offset = q.offset ?? 0;
  if (!Number.isInteger(offset) || offset < 0) throw new RangeError('offset out of range');
  const where: string[] = [];
  const params: RowValue[] = [];
  if (q.instrumentName !== undefined) {
    where.push('instrument_name = ?');
    params.push(q.instrumentName);
  }
  if (q.kind !== undefined && q.kind !== 'any') {
    if (q.kind === 'combo') where.push("kind IN ('future_combo', 'option_combo')");
    else {
      where.push('kind = ?');
      params.push(q.kind);
    }
  }
  where.push(
    q.includeUnfilled === true
      ? "(filled_amount > 0 OR order_state IN ('filled', 'cancelled', 'rejected'))"
      : 'filled_amount > 0',
  );
  timeWindow(
    'last_updated_at',
    q.historical === true,
    q.includeOld === true,
    windows.recentOrdersMs,
    windows,
    q.now,
    where,
    params,
  );
  const token = parseHistoryToken(q.continuation);
  if (token !== null) {
    const after = afterPosition('updated_seq', 'order_id', token, false);
    where.push(after.condition);
    params.push(...after.params);
  }
  const selected = accountRows(
    `SELECT view, updated_seq, order_id, ${idNumberSql('order_id')} AS ${ID_NUMBER_COLUMN} FROM orders`,
    q.accountId,
    q.currency,
    where,
    params,
  );
  const rows = await db.query<{ view: string; updated_seq: number; order_id: string }>(
    `${selected.sql} ORDER BY ${historyOrderBy('updated_seq', 'order_id', false)} LIMIT ? OFFSET ?`,
    [...selected.params, count + 1, offset],
  );
  const page = rows.slice(0, count);
  const last = page[page.length - 1];
  return {
    orders: page.map((r) => parseOrderView(r.view)),
    continuation:
      rows.length > count && last !== undefined ? historyToken(last.updated_seq, last.order_id) : null,
  };
}

/** Rows read per step of an order's trades walk. */
const ORDER_TRADES_STEP = 500;

/**
 * An order's trades, newest first. Trades are not indexed by order (an index would cost two entries
 * per trade on every write): the account's trades on the instrument are walked down its (account,
 * instrument, seq) index from the newest, a step at a time, until the order's trades add up to its
 * filled amount or the rows are older than the order. The walk costs the account's trades on that
 * instrument during the order's life.
 */
export async function queryOrderTrades(db: ReadDb, q: OrderTradesQuery): Promise<UserTrade[]> {
  const found: UserTrade[] = [];
  let lots = 0;
  let after: { seq: number; id: string } | null = null;
  while (lots < q.filled) {
    const where = ['account_id = ?', 'instrument_name = ?'];
    const params: RowValue[] = [q.accountId, q.instrumentName];
    if (after !== null) {
      const past = afterPosition('seq', 'trade_id', after, false);
      where.push(past.condition);
      params.push(...past.params);
    }
    const rows = await db.query<{
      view: string;
      role: 'M' | 'T';
      seq: number;
      trade_id: string;
      order_id: string;
      timestamp: number;
    }>(
      `SELECT view, role, seq, trade_id, order_id, timestamp, ${idNumberSql('trade_id')} AS ${ID_NUMBER_COLUMN} FROM trades WHERE ${where.join(' AND ')} ORDER BY ${historyOrderBy('seq', 'trade_id', false)} LIMIT ?`,
      [...params, ORDER_TRADES_STEP],
    );
    for (const row of rows) {
      if (row.timestamp < q.since) return found;
      if (row.order_id !== q.orderId) continue;
      const trade = parseTradeView(row.view);
      found.push({ trade, liquidity: row.role });
      lots += trade.amount;
    }
    const last = rows[rows.length - 1];
    if (rows.length < ORDER_TRADES_STEP || last === undefined) break;
    after = { seq: last.seq, id: last.trade_id };
  }
  return found;
}

export async function queryUserTrades(
  db: ReadDb,
  windows: HistoryWindows,
  q: UserTradesQuery,
): Promise<UserTradesPage> {
  const count = clampCount(q.count, 10);
  const ascending = q.sorting === 'asc';
  const where: string[] = [];
  const params: RowValue[] = [];
  if (q.instrumentName !== undefined) {
    where.push('instrument_name = ?');
    params.push(q.instrumentName);
  }
  if (q.kind !== undefined && q.kind !== 'any') {
    if (q.kind === 'combo') where.push("kind IN ('future_combo', 'option_combo')");
    else {
      where.push('kind = ?');
      params.push(q.kind);
    }
  }
  if (q.startTimestamp !== undefined) {
    where.push('timestamp >= ?');
    params.push(q.startTimestamp);
  }
  if (q.endTimestamp !== undefined) {
    where.push('timestamp <= ?');
    params.push(q.endTimestamp);
  }
  timeWindow(
    'timestamp',
    q.historical === true,
    q.includeOld === true,
    windows.recentTradesMs,
    windows,
    q.now,
    where,
    params,
  );
  const token = parseHistoryToken(q.continuation);
  if (token !== null) {
    const after = afterPosition('seq', 'trade_id', token, ascending);
    where.push(after.condition);
    params.push(...after.params);
  }
  const selected = accountRows(
    `SELECT view, role, seq, trade_id, ${idNumberSql('trade_id')} AS ${ID_NUMBER_COLUMN} FROM trades`,
    q.accountId,
    q.currency,
    where,
    params,
  );
  const rows = await db.query<{ view: string; role: 'M' | 'T'; seq: number; trade_id: string }>(
    // A trade's two rows (role T and M) are one account's only in a self-trade, which the engine
    // prevents; role keeps their order fixed all the same.
    `${selected.sql} ORDER BY ${historyOrderBy('seq', 'trade_id', ascending)}, role ${ascending ? 'ASC' : 'DESC'} LIMIT ?`,
    [...selected.params, count + 1],
  );
  const page = rows.slice(0, count);
  const last = page[page.length - 1];
  const hasMore = rows.length > count;
  return {
    trades: page.map((r) => ({ trade: parseTradeView(r.view), liquidity: r.role })),
    hasMore,
    continuation: hasMore && last !== undefined ? historyToken(last.seq, last.trade_id) : null,
  };
}
