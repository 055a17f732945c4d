/**
 * Settlement history over the `settlements` read table (core-projections.ts): an account's
 * settled positions, newest first, as Deribit's private/get_settlement_history_by_currency and
 * _by_instrument page them.
 *
 * Semantics (see docs/decisions.md, "Settlement history"):
 * - One entry per position a settlement closed (account, instrument), with the cash it booked.
 * - `currency` finds what is filed under it, as the other history queries: the base coin or the
 *   quote of a linear pair (USDC finds BTC_USDC options, and so does BTC).
 * - `type`: every entry is a `delivery` (an expiry); `settlement` and `bankruptcy` find none.
 * - `searchStartTimestamp`: entries no newer than it (Deribit's "latest timestamp to return
 *   results from").
 * - Newest first by the seq of the settling command, then by instrument name; the continuation
 *   `<seq>:<instrumentName>` names the last entry returned and is null when nothing follows.
 * - Count default 20, 1 to 1000 (RangeError otherwise, and for a malformed token).
 */
import type { SettlementRecord } from './core-projections.ts';
import { historyToken, parseHistoryToken } from './history-keyset.ts';
import { MAX_HISTORY_COUNT } from './history-queries.ts';
import type { RowValue } from './projection.ts';
import type { ReadDb } from './read-db.ts';

export type { SettlementRecord };

export type SettlementType = 'settlement' | 'delivery' | 'bankruptcy';

export interface SettlementHistoryQuery {
  readonly accountId: number;
  /** An upper-case currency the instruments are filed under (base or pair quote). */
  readonly currency?: string;
  readonly instrumentName?: string;
  readonly type?: SettlementType;
  /** Default 20, at most 1000. */
  readonly count?: number;
  readonly continuation?: string | null;
  /** Entries no newer than this, ms. */
  readonly searchStartTimestamp?: number;
}

export interface SettlementHistoryPage {
  readonly settlements: SettlementRecord[];
  readonly continuation: string | null;
}

export const DEFAULT_SETTLEMENT_COUNT = 20;

export function settlementCount(count: number | undefined): number {
  const n = count ?? DEFAULT_SETTLEMENT_COUNT;
  if (!Number.isInteger(n) || n < 1 || n > MAX_HISTORY_COUNT) throw new RangeError('count out of range');
  return n;
}

export async function querySettlements(
  db: ReadDb,
  q: SettlementHistoryQuery,
): Promise<SettlementHistoryPage> {
  const count = settlementCount(q.count);
  const where: string[] = [];
  const params: RowValue[] = [];
  if (q.instrumentName !== undefined) {
    where.push('instrument_name = ?');
    params.push(q.instrumentName);
  }
  if (q.type !== undefined) {
    where.push('settlement_type = ?');
    params.push(q.type);
  }
  if (q.searchStartTimestamp !== undefined) {
    where.push('timestamp <= ?');
    params.push(q.searchStartTimestamp);
  }
  const token = parseHistoryToken(q.continuation);
  if (token !== null) {
    where.push('seq <= ? AND (seq < ? OR instrument_name < ?)');
    params.push(token.seq, token.seq, token.id);
  }
  const rest = where.map((condition) => ` AND ${condition}`).join('');
  const select = 'SELECT view, seq, instrument_name FROM settlements';
  let sql: string;
  let bound: RowValue[];
  if (q.currency === undefined) {
    sql = `${select} WHERE account_id = ?${rest}`;
    bound = [q.accountId, ...params];
  } else {
    // Two arms, as the other history queries (history-queries.ts `accountRows`): no row has the
    // same currency in both.
    const arm = (column: string) => `${select} WHERE account_id = ? AND ${column} = ?${rest}`;
    sql = `${arm('currency')} UNION ALL ${arm('quote_currency')}`;
    bound = [q.accountId, q.currency, ...params, q.accountId, q.currency, ...params];
  }
  const rows = await db.query<{ view: string; seq: number; instrument_name: string }>(
    `${sql} ORDER BY seq DESC, instrument_name DESC LIMIT ?`,
    [...bound, count + 1],
  );
  const page = rows.slice(0, count);
  const last = page[page.length - 1];
  return {
    settlements: page.map((r) => JSON.parse(r.view) as SettlementRecord),
    continuation:
      rows.length > count && last !== undefined ? historyToken(Number(last.seq), last.instrument_name) : null,
  };
}
