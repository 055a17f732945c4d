/**
 * Block RFQ queries over the `rfqs`, `rfq_quotes` and `rfq_trades` read tables (see
 * ./rfq-projection.ts), for SQLite and PostgreSQL alike (`?` placeholders, plain SQL).
 *
 * Semantics:
 * - `rfqTrades` is `block/rfqs/get_trades` served from SQL with the desk's own rules
 *   (src/rfq/trades.ts): trades of the past 7 days before `now`, newest first by (timestamp, RFQ
 *   number), a total order, so paging by the `<timestamp>:<blockRfqId>` continuation of the last
 *   item never repeats or skips one; a malformed token reads as none, as the desk does.
 * - `takerRfqs` and `deskQuotes` list records newest first by their number; their continuation
 *   is the number of the last item returned (which is also its id). Null when nothing follows.
 * - A currency filter follows the desk's classification (src/domain/currency.ts): an RFQ or trade
 *   is found under its base currency (the `currency` column) and its quote currency (read from
 *   the stored record's `quoteCurrency`, so the tables need no new column).
 */
import { currencyFilter } from '../../domain/currency.ts';
import { parseContinuation, TRADES_DEFAULT_COUNT, TRADES_LOOKBACK_MS } from '../../rfq/trades.ts';
import type { QuoteRecord, QuoteStatus, RfqRecord, RfqStatus, RfqTradeRecord } from '../../rfq/types.ts';
import { checkCount, pageByKeyDesc, type ReadQuerier } from './keyset-page.ts';
import type { RowValue } from './projection.ts';

export type { ReadQuerier } from './keyset-page.ts';

export interface RfqTradesQuery {
  /** A currency symbol or `any` (case-insensitive). */
  readonly currency: string;
  /** Default 20, at most 1000. */
  readonly count?: number;
  readonly continuation?: string | null;
  /** The sequencer's clock, ms. */
  readonly now: number;
  /** The look-back window (default 7 days). */
  readonly lookbackMs?: number;
}

export interface RfqTradesPage {
  readonly results: RfqTradeRecord[];
  readonly continuation: string | null;
}

/** Adds the condition "filed under `currency`" (a symbol or `any`) to a query. */
function addCurrencyCondition(currency: string, where: string[], params: RowValue[]): void {
  const wanted = currencyFilter(currency);
  if (wanted === 'ANY') return;
  if (!/^[A-Z0-9]+$/.test(wanted)) {
    where.push('1 = 0');
    return;
  }
  where.push('(currency = ? OR view LIKE ?)');
  params.push(wanted, `%"quoteCurrency":"${wanted}"%`);
}

export async function rfqTrades(db: ReadQuerier, q: RfqTradesQuery): Promise<RfqTradesPage> {
  const count = checkCount(q.count, TRADES_DEFAULT_COUNT);
  const where = ['timestamp >= ?'];
  const params: RowValue[] = [q.now - (q.lookbackMs ?? TRADES_LOOKBACK_MS)];
  addCurrencyCondition(q.currency, where, params);
  const after =
    q.continuation === null || q.continuation === undefined ? null : parseContinuation(q.continuation);
  if (after !== null) {
    where.push('(timestamp < ? OR (timestamp = ? AND number < ?))');
    params.push(after.timestamp, after.timestamp, after.number);
  }
  params.push(count + 1);
  const rows = await db.query<{ view: string }>(
    `SELECT view FROM rfq_trades WHERE ${where.join(' AND ')} ORDER BY timestamp DESC, number DESC LIMIT ?`,
    params,
  );
  const results = rows.slice(0, count).map((r) => JSON.parse(r.view) as RfqTradeRecord);
  const last = results[results.length - 1];
  return {
    results,
    continuation: rows.length > count && last !== undefined ? `${last.timestamp}:${last.blockRfqId}` : null,
  };
}

export interface TakerRfqsQuery {
  readonly takerAccountId: number;
  readonly currency?: string;
  readonly status?: RfqStatus;
  /** Default 20, at most 1000. */
  readonly count?: number;
  readonly continuation?: string | null;
}

export interface TakerRfqsPage {
  readonly rfqs: RfqRecord[];
  readonly continuation: string | null;
}

/** A taker's RFQs in any status (as long as retention keeps them), newest first. */
export async function takerRfqs(db: ReadQuerier, q: TakerRfqsQuery): Promise<TakerRfqsPage> {
  const count = checkCount(q.count, 20);
  const where = ['taker_account_id = ?'];
  const params: RowValue[] = [q.takerAccountId];
  if (q.currency !== undefined) addCurrencyCondition(q.currency, where, params);
  if (q.status !== undefined) {
    where.push('status = ?');
    params.push(q.status);
  }
  const page = await pageByKeyDesc<{ view: string; number: number }>(db, {
    columns: 'view, number',
    table: 'rfqs',
    key: 'number',
    where,
    params,
    count,
    continuation: q.continuation,
  });
  return { rfqs: page.rows.map((r) => JSON.parse(r.view) as RfqRecord), continuation: page.continuation };
}

/** One taker-side RFQ by the taker's id, or null. */
export async function rfqById(db: ReadQuerier, blockRfqId: string): Promise<RfqRecord | null> {
  const rows = await db.query<{ view: string }>('SELECT view FROM rfqs WHERE block_rfq_id = ?', [blockRfqId]);
  return rows[0] === undefined ? null : (JSON.parse(rows[0].view) as RfqRecord);
}

export interface DeskQuotesQuery {
  readonly desk: string;
  /** The taker's RFQ id (the desk's maker-side id is on each record as `makerRfqId`). */
  readonly rfqId?: string;
  readonly status?: QuoteStatus;
  /** Default 20, at most 1000. */
  readonly count?: number;
  readonly continuation?: string | null;
}

export interface DeskQuotesPage {
  readonly quotes: QuoteRecord[];
  readonly continuation: string | null;
}

/** A maker desk's quotes in any status, newest first. */
export async function deskQuotes(db: ReadQuerier, q: DeskQuotesQuery): Promise<DeskQuotesPage> {
  const count = checkCount(q.count, 20);
  const where = ['desk = ?'];
  const params: RowValue[] = [q.desk];
  if (q.rfqId !== undefined) {
    where.push('rfq_id = ?');
    params.push(q.rfqId);
  }
  if (q.status !== undefined) {
    where.push('status = ?');
    params.push(q.status);
  }
  const page = await pageByKeyDesc<{ view: string; number: number }>(db, {
    columns: 'view, number',
    table: 'rfq_quotes',
    key: 'number',
    where,
    params,
    count,
    continuation: q.continuation,
  });
  return { quotes: page.rows.map((r) => JSON.parse(r.view) as QuoteRecord), continuation: page.continuation };
}
