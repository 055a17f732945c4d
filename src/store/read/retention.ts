/**
 * History retention: which rows of the read tables are past their time, as one rule per table,
 * deleted either all at once (`ReadStore.prune`) or a bounded chunk at a time inside the store's
 * own writes (the sweep), on SQLite and PostgreSQL alike.
 *
 * Invariants:
 * - Never an open order, an open RFQ or quote, or an active portfolio.
 * - Rules run in order, and a portfolio's row goes only once its events are gone, so no event
 *   outlives its portfolio even when a chunk stops midway.
 * - A chunk deletes by primary key (`(key) IN (SELECT key … LIMIT ?)`), the one form both backends
 *   take; rows are found through the table's index on the time column.
 */
import { CLOSED_ORDER_SQL } from './core-projections.ts';
import type { RowValue, TableSpec } from './projection.ts';
import type { RetentionSettings } from './read-store.ts';
import { ident, type Statement } from './sql.ts';

interface RetentionRule {
  readonly table: string;
  /** How long the rows are kept, from the settings; null: forever. */
  readonly keepMs: (settings: RetentionSettings) => number | null | undefined;
  /** The rows past their time; `?` is the cutoff (now − keepMs). */
  readonly where: string;
}

const RULES: readonly RetentionRule[] = [
  {
    table: 'orders',
    keepMs: (s) => s.closedOrdersMs,
    // The closed-orders index serves only queries that name its condition as it is written.
    where: `last_updated_at < ? AND ${CLOSED_ORDER_SQL}`,
  },
  { table: 'trades', keepMs: (s) => s.tradesMs, where: 'timestamp < ?' },
  // The transaction log goes with the trades its rows mostly are.
  { table: 'transactions', keepMs: (s) => s.tradesMs, where: 'timestamp < ?' },
  { table: 'rfq_trades', keepMs: (s) => s.rfqsMs, where: 'timestamp < ?' },
  { table: 'rfq_quotes', keepMs: (s) => s.rfqsMs, where: "last_updated_at < ? AND status <> 'open'" },
  {
    table: 'rfqs',
    keepMs: (s) => s.rfqsMs,
    where: "last_updated_at < ? AND status NOT IN ('created', 'open')",
  },
  {
    table: 'portfolio_events',
    keepMs: (s) => s.finishedPortfoliosMs,
    // ended_at is set only on terminal statuses.
    where: 'portfolio_id IN (SELECT portfolio_id FROM portfolios WHERE ended_at < ?)',
  },
  {
    table: 'portfolios',
    keepMs: (s) => s.finishedPortfoliosMs,
    where:
      'ended_at < ? AND NOT EXISTS (SELECT 1 FROM portfolio_events e WHERE e.portfolio_id = portfolios.portfolio_id)',
  },
];

/** Whether the settings delete anything at all. */
export function retainsForever(settings: RetentionSettings): boolean {
  return RULES.every((rule) => (rule.keepMs(settings) ?? null) === null);
}

/**
 * The deletes of the rows past their time at `now`, for the tables present, in rule order: at
 * most `limit` rows each, or all of them when `limit` is null. Each statement's first parameter
 * is its cutoff; a limited one's second is the limit.
 */
export function retentionDeletes(
  tables: ReadonlyMap<string, TableSpec>,
  settings: RetentionSettings,
  now: number,
  limit: number | null,
): { table: string; statement: Statement }[] {
  const deletes: { table: string; statement: Statement }[] = [];
  for (const rule of RULES) {
    const keepMs = rule.keepMs(settings) ?? null;
    const spec = tables.get(rule.table);
    if (keepMs === null || spec === undefined) continue;
    const params: RowValue[] = [now - keepMs];
    let sql = `DELETE FROM ${ident(rule.table)} WHERE ${rule.where}`;
    if (limit !== null) {
      const key = spec.primaryKey.map(ident).join(', ');
      const keyed = spec.primaryKey.length === 1 ? key : `(${key})`;
      sql = `DELETE FROM ${ident(rule.table)} WHERE ${keyed} IN (SELECT ${key} FROM ${ident(rule.table)} WHERE ${rule.where} LIMIT ?)`;
      params.push(limit);
    }
    deletes.push({ table: rule.table, statement: { sql, params } });
  }
  return deletes;
}
