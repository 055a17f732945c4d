/**
 * The transaction log over the `transactions` read table (core-projections.ts): every change of
 * an account's balance in one currency, newest first, with its cause, as Deribit's
 * private/get_transaction_log pages it.
 *
 * Semantics (see docs/decisions.md, "Transaction log"):
 * - One entry per balance change (a trade's side, a deposit, a withdrawal, a delivery), each
 *   with the change and the balance after it: walked oldest first, each balance is the one
 *   before plus the change, to the minor unit.
 * - `currency` is the balance's own currency (not the instruments filed under it).
 * - `startTimestamp` ≤ timestamp ≤ `endTimestamp`, both inclusive.
 * - `query`: words that must all be an entry's (TRANSACTION_QUERY_WORDS): its type (`trade`,
 *   `deposit`, `withdrawal`, `delivery`), a trade's `buy`/`sell`, `maker`/`taker` and
 *   `block_trade`, and the instrument's kind. Another word is a RangeError (field query).
 * - Newest first by the command's seq, then the change's place in it; the continuation
 *   `<seq>:<place>` (the last entry's id) is null when nothing follows.
 * - Count default 100, 1 to 1000 (RangeError otherwise, and for a malformed token).
 */
import type { TransactionRecord } from './core-projections.ts';
import { historyToken, parseHistoryToken } from './history-keyset.ts';
import { MAX_HISTORY_COUNT } from './history-queries.ts';
import type { RowValue } from './projection.ts';
import type { ReadDb } from './read-db.ts';

export type { TransactionRecord };

export const TRANSACTION_QUERY_WORDS = [
  'trade',
  'deposit',
  'withdrawal',
  'delivery',
  'buy',
  'sell',
  'maker',
  'taker',
  'block_trade',
  'future',
  'option',
  'spot',
  'future_combo',
  'option_combo',
] as const;

export interface TransactionLogQuery {
  readonly accountId: number;
  /** The balance's currency, upper case. */
  readonly currency: string;
  readonly startTimestamp: number;
  readonly endTimestamp: number;
  /** Words separated by spaces or commas, each of TRANSACTION_QUERY_WORDS. */
  readonly query?: string;
  /** Default 100, at most 1000. */
  readonly count?: number;
  readonly continuation?: string | null;
}

export interface TransactionLogPage {
  readonly logs: TransactionRecord[];
  readonly continuation: string | null;
}

export const DEFAULT_TRANSACTION_COUNT = 100;

export function transactionCount(count: number | undefined): number {
  const n = count ?? DEFAULT_TRANSACTION_COUNT;
  if (!Number.isInteger(n) || n < 1 || n > MAX_HISTORY_COUNT) throw new RangeError('count out of range');
  return n;
}

/** The query's words, each one an entry must have; RangeError naming `query` for another. */
export function transactionQueryWords(query: string | undefined): string[] {
  if (query === undefined) return [];
  const words = query
    .toLowerCase()
    .split(/[\s,]+/)
    .filter((word) => word !== '');
  for (const word of words) {
    if (!(TRANSACTION_QUERY_WORDS as readonly string[]).includes(word))
      throw new RangeError(`query word '${word}' is not one of ${TRANSACTION_QUERY_WORDS.join(', ')}`);
  }
  return [...new Set(words)];
}

/** The place after which a token's page starts: `<seq>:<place>`. */
export function transactionToken(token: string | null | undefined): { seq: number; index: number } | null {
  const position = parseHistoryToken(token);
  if (position === null) return null;
  if (!/^(0|[1-9][0-9]{0,8})$/.test(position.id)) throw new RangeError('invalid continuation token');
  return { seq: position.seq, index: Number(position.id) };
}

export async function queryTransactions(db: ReadDb, q: TransactionLogQuery): Promise<TransactionLogPage> {
  const count = transactionCount(q.count);
  const words = transactionQueryWords(q.query);
  const after = transactionToken(q.continuation);
  const where = ['account_id = ?', 'currency = ?', 'timestamp >= ?', 'timestamp <= ?'];
  const params: RowValue[] = [q.accountId, q.currency, q.startTimestamp, q.endTimestamp];
  for (const word of words) {
    where.push('tags LIKE ?');
    params.push(`% ${word} %`);
  }
  if (after !== null) {
    where.push('seq <= ? AND (seq < ? OR idx < ?)');
    params.push(after.seq, after.seq, after.index);
  }
  const rows = await db.query<{ view: string; seq: number; idx: number }>(
    `SELECT view, seq, idx FROM transactions WHERE ${where.join(' AND ')} ORDER BY seq DESC, idx DESC LIMIT ?`,
    [...params, count + 1],
  );
  const page = rows.slice(0, count);
  const last = page[page.length - 1];
  return {
    logs: page.map((r) => JSON.parse(r.view) as TransactionRecord),
    continuation:
      rows.length > count && last !== undefined ? historyToken(Number(last.seq), String(last.idx)) : null,
  };
}
