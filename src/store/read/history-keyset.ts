/**
 * The order of history rows and their keyset continuation: by the seq of the command that wrote
 * them, then by the number their id ends in, then by the id itself.
 *
 * Why the number: one command can write many rows of an account (a buy sweeping twelve sells
 * makes `BTC-T1` … `BTC-T12`), and ids are text, so their own order puts `BTC-T12` before
 * `BTC-T2`. The engine numbers ids from counters as it makes them (`BTC-12`, `BTC-SL-13` from one
 * counter for orders; `BTC-T12`, and the legs of a combo or block trade, from one per currency
 * for trades), so the trailing number is the order they were made in. Ids with the same number
 * (trades of two currencies) fall back to the id's text; an id with no trailing digits counts 0.
 *
 * Invariants:
 * - `idNumberSql` (SQL, the same text on SQLite and PostgreSQL) and `idNumber` (a token's id)
 *   compute the same number, so a token's position compares exactly with the rows'.
 * - The continuation `<seq>:<id>` names the last row returned; the next page holds exactly the
 *   rows after it in this order. A token a build before this order wrote (seq, then the id's text)
 *   has the same form and pages on after its row in this order: the same rows as then when its
 *   row was the last of its command's, else possibly a few of that one command's again or not.
 * - The seq bound is a term of its own (`seq <= ?`), so the index on (account, …, seq) is read
 *   from the token on rather than from the newest row.
 */
import type { RowValue } from './projection.ts';
import { ident } from './sql.ts';

/** Result column holding `idNumberSql` of the id: history SELECTs order by it. */
export const ID_NUMBER_COLUMN = 'id_number';

/** More digits than fit a double exactly are no id of ours: such a token is refused. */
const MAX_ID_DIGITS = 15;

/**
 * The number an id column ends in, as a BIGINT: the text after its trailing digits are trimmed
 * off (`rtrim` with a character set exists on both backends), prefixed with '0' so an id without
 * digits casts to 0 rather than failing on PostgreSQL.
 */
export function idNumberSql(column: string): string {
  const c = ident(column);
  return `CAST('0' || substr(${c}, length(rtrim(${c}, '0123456789')) + 1) AS BIGINT)`;
}

/** The number `id` ends in (0 when none), as `idNumberSql` computes it; RangeError if too long. */
export function idNumber(id: string): number {
  const digits = /\d*$/.exec(id)![0];
  if (digits.length > MAX_ID_DIGITS) throw new RangeError('invalid continuation token');
  return Number(`0${digits}`);
}

export interface HistoryPosition {
  readonly seq: number;
  readonly id: string;
}

/** Parses `<seq>:<id>`; null for no token, RangeError when malformed. */
const CANONICAL_SEQ = /^(0|[1-9][0-9]{0,15})$/;

export function parseHistoryToken(token: string | null | undefined): HistoryPosition | null {
  if (token === null || token === undefined || token === '') return null;
  const colon = token.indexOf(':');
  // Only what `historyToken` writes: digits, no sign, space, exponent or leading zero.
  const digits = token.slice(0, colon);
  const seq = Number(digits);
  if (colon <= 0 || !CANONICAL_SEQ.test(digits) || !Number.isSafeInteger(seq))
    throw new RangeError('invalid continuation token');
  return { seq, id: token.slice(colon + 1) };
}

export function historyToken(seq: number, id: string): string {
  return `${seq}:${id}`;
}

/** The ORDER BY terms over a history SELECT's result columns (seq, `id_number`, id). */
export function historyOrderBy(seqColumn: string, idColumn: string, ascending: boolean): string {
  const order = ascending ? 'ASC' : 'DESC';
  return `${ident(seqColumn)} ${order}, ${ID_NUMBER_COLUMN} ${order}, ${ident(idColumn)} ${order}`;
}

/** The condition (and its parameters) that keeps the rows after `after` in the history order. */
export function afterPosition(
  seqColumn: string,
  idColumn: string,
  after: HistoryPosition,
  ascending: boolean,
): { condition: string; params: RowValue[] } {
  const seq = ident(seqColumn);
  const id = ident(idColumn);
  const number = idNumberSql(idColumn);
  const [past, pastOrAt] = ascending ? ['>', '>='] : ['<', '<='];
  const n = idNumber(after.id);
  return {
    condition:
      `${seq} ${pastOrAt} ? AND ` +
      `(${seq} ${past} ? OR ${number} ${past} ? OR (${number} = ? AND ${id} ${past} ?))`,
    params: [after.seq, after.seq, n, n, after.id],
  };
}
