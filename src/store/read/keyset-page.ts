/**
 * Newest-first keyset paging over one integer key, shared by the read-store listings (RFQs,
 * quotes, portfolios). Dialect-neutral SQL with `?` placeholders.
 *
 * Invariants:
 * - Rows come ordered by the key, descending; a page holds at most `count` rows.
 * - The continuation is the key of the page's last row, and null when no row follows, so walking
 *   the pages never repeats or skips a row.
 * - A count outside 1..1000 or a malformed continuation is a RangeError (the gateway answers
 *   invalid_params).
 */
import type { RowValue } from './projection.ts';

/** What the queries need: `ReadStore` and every `ReadDb` qualify. */
export interface ReadQuerier {
  query<T>(sql: string, params: readonly RowValue[]): Promise<T[]>;
}

export const LIST_MAX_COUNT = 1000;

export function checkCount(count: number | undefined, fallback: number): number {
  const n = count ?? fallback;
  if (!Number.isInteger(n) || n < 1 || n > LIST_MAX_COUNT) throw new RangeError('count out of range');
  return n;
}

/** A `<number>` continuation (the key of the last row); RangeError when malformed. */
export function numberToken(token: string | null | undefined): number | null {
  if (token === null || token === undefined || token === '') return null;
  if (!/^\d{1,15}$/.test(token)) throw new RangeError('invalid continuation token');
  return Number(token);
}

export interface KeysetQuery {
  readonly columns: string;
  readonly table: string;
  /** The integer key column the pages are ordered by. */
  readonly key: string;
  /** Conditions joined with AND, with their parameters in order. */
  readonly where: readonly string[];
  readonly params: readonly RowValue[];
  readonly count: number;
  readonly continuation: string | null | undefined;
}

export async function pageByKeyDesc<R extends object>(
  db: ReadQuerier,
  q: KeysetQuery,
): Promise<{ rows: R[]; continuation: string | null }> {
  const where = [...q.where];
  const params = [...q.params];
  const before = numberToken(q.continuation);
  if (before !== null) {
    where.push(`${q.key} < ?`);
    params.push(before);
  }
  params.push(q.count + 1);
  const rows = await db.query<R>(
    `SELECT ${q.columns} FROM ${q.table} WHERE ${where.join(' AND ')} ORDER BY ${q.key} DESC LIMIT ?`,
    params,
  );
  const page = rows.slice(0, q.count);
  const last = page[page.length - 1];
  return {
    rows: page,
    continuation:
      rows.length > q.count && last !== undefined ? String((last as Record<string, unknown>)[q.key]) : null,
  };
}
