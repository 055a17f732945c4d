/**
 * Portfolio queries over the `portfolios` and `portfolio_events` read tables (see
 * ./portfolio-projection.ts), for SQLite and PostgreSQL alike (`?` placeholders, plain SQL).
 *
 * Semantics:
 * - `portfolioHistory` lists an account's portfolios newest first by id; the continuation is the
 *   id of the last one returned (null when nothing follows). `status` filters one status, or
 *   `active` (PENDING, WORKING, CANCELLING) / `finished` (the terminal ones).
 * - `portfolioLegFills` sums ORDER_FILLED events per leg: the filled lots of each leg as the
 *   algorithm saw them, without reading the engine.
 * - `prunedPortfolio` is the final record of a portfolio the core no longer holds (pruned 7 days
 *   after it ended), for `info`; null for one the core still holds or retention has deleted.
 */
import type { PortfolioState } from '../../algo/portfolio-state.ts';
import type { PortfolioEvent, PortfolioStatus, PortfolioType } from '../../algo/types.ts';
import { checkCount, pageByKeyDesc, type ReadQuerier } from './keyset-page.ts';
import type { RowValue } from './projection.ts';

export const FINISHED_PORTFOLIO_STATUSES: readonly PortfolioStatus[] = [
  'COMPLETED',
  'CANCELLED',
  'EXPIRED',
  'FAILED',
];
const ACTIVE_STATUSES: readonly PortfolioStatus[] = ['PENDING', 'WORKING', 'CANCELLING'];

export interface PortfolioSummary {
  readonly portfolioId: number;
  readonly accountId: number;
  readonly portfolioType: PortfolioType;
  readonly status: PortfolioStatus;
  /** The trade-news type of the last event. */
  readonly lastMessage: string;
  /** A mirror's original portfolio, or null. */
  readonly linkedTo: number | null;
  readonly createdAt: number | null;
  readonly updatedAt: number;
  /** Set once the status is terminal. */
  readonly endedAt: number | null;
  readonly endReason: string | null;
}

interface PortfolioRow {
  portfolio_id: number;
  account_id: number;
  portfolio_type: PortfolioType;
  status: PortfolioStatus;
  last_message: string;
  linked_to: number | null;
  created_at: number | null;
  updated_at: number;
  ended_at: number | null;
  end_reason: string | null;
}

const SUMMARY_COLUMNS =
  'portfolio_id, account_id, portfolio_type, status, last_message, linked_to, created_at, updated_at, ended_at, end_reason';

function summaryOf(row: PortfolioRow): PortfolioSummary {
  return {
    portfolioId: row.portfolio_id,
    accountId: row.account_id,
    portfolioType: row.portfolio_type,
    status: row.status,
    lastMessage: row.last_message,
    linkedTo: row.linked_to,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    endedAt: row.ended_at,
    endReason: row.end_reason,
  };
}

export interface PortfolioHistoryQuery {
  readonly accountId: number;
  readonly status?: PortfolioStatus | 'active' | 'finished';
  readonly portfolioType?: PortfolioType;
  /** Default 20, at most 1000. */
  readonly count?: number;
  readonly continuation?: string | null;
}

export interface PortfolioHistoryPage {
  readonly portfolios: PortfolioSummary[];
  readonly continuation: string | null;
}

function statusFilter(status: PortfolioHistoryQuery['status'], where: string[], params: RowValue[]): void {
  if (status === undefined) return;
  const list =
    status === 'active' ? ACTIVE_STATUSES : status === 'finished' ? FINISHED_PORTFOLIO_STATUSES : [status];
  where.push(`status IN (${list.map(() => '?').join(', ')})`);
  params.push(...list);
}

export async function portfolioHistory(
  db: ReadQuerier,
  q: PortfolioHistoryQuery,
): Promise<PortfolioHistoryPage> {
  const count = checkCount(q.count, 20);
  const where = ['account_id = ?'];
  const params: RowValue[] = [q.accountId];
  statusFilter(q.status, where, params);
  if (q.portfolioType !== undefined) {
    where.push('portfolio_type = ?');
    params.push(q.portfolioType);
  }
  const page = await pageByKeyDesc<PortfolioRow>(db, {
    columns: SUMMARY_COLUMNS,
    table: 'portfolios',
    key: 'portfolio_id',
    where,
    params,
    count,
    continuation: q.continuation,
  });
  return { portfolios: page.rows.map(summaryOf), continuation: page.continuation };
}

export async function portfolioSummary(
  db: ReadQuerier,
  portfolioId: number,
): Promise<PortfolioSummary | null> {
  const rows = await db.query<PortfolioRow>(
    `SELECT ${SUMMARY_COLUMNS} FROM portfolios WHERE portfolio_id = ?`,
    [portfolioId],
  );
  return rows[0] === undefined ? null : summaryOf(rows[0]);
}

export async function prunedPortfolio(db: ReadQuerier, portfolioId: number): Promise<PortfolioState | null> {
  const rows = await db.query<{ state: string | null }>(
    'SELECT state FROM portfolios WHERE portfolio_id = ? AND state IS NOT NULL',
    [portfolioId],
  );
  return rows[0]?.state == null ? null : (JSON.parse(rows[0].state) as PortfolioState);
}

/** The read store as the portfolio routes' archive (`PortfolioRouteDeps.archive`). */
export function portfolioArchive(db: ReadQuerier): {
  portfolio(portfolioId: number): Promise<PortfolioState | null>;
} {
  return { portfolio: (portfolioId) => prunedPortfolio(db, portfolioId) };
}

/** A portfolio's trade-news events, oldest first. */
export async function portfolioEvents(db: ReadQuerier, portfolioId: number): Promise<PortfolioEvent[]> {
  const rows = await db.query<{ view: string }>(
    'SELECT view FROM portfolio_events WHERE portfolio_id = ? ORDER BY seq, n',
    [portfolioId],
  );
  return rows.map((r) => JSON.parse(r.view) as PortfolioEvent);
}

export interface LegFills {
  readonly legIndex: number;
  readonly instrumentName: string | null;
  /** Lots filled in total. */
  readonly filledAmount: number;
  /** ORDER_FILLED events counted. */
  readonly fills: number;
}

export async function portfolioLegFills(db: ReadQuerier, portfolioId: number): Promise<LegFills[]> {
  const rows = await db.query<{
    leg_index: number;
    instrument_name: string | null;
    filled: number;
    fills: number;
  }>(
    `SELECT leg_index, MAX(instrument_name) AS instrument_name, CAST(SUM(amount) AS BIGINT) AS filled,
            COUNT(*) AS fills
     FROM portfolio_events
     WHERE portfolio_id = ? AND message_type = 'ORDER_FILLED' AND leg_index IS NOT NULL
     GROUP BY leg_index ORDER BY leg_index`,
    [portfolioId],
  );
  return rows.map((r) => ({
    legIndex: r.leg_index,
    instrumentName: r.instrument_name,
    filledAmount: Number(r.filled),
    fills: Number(r.fills),
  }));
}
