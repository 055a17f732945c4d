/**
 * Listing traded RFQs (get_trades): newest first, within a look-back window, paged by a
 * continuation token `<timestamp>:<blockRfqId>` naming the last item returned.
 *
 * Invariants: items are ordered by (timestamp, RFQ number) descending, a total order, so pages
 * never repeat or skip an item even when many trades share a timestamp.
 */
import { matchesCurrency } from '../domain/currency.ts';
import type { RfqTradeRecord } from './types.ts';

export const TRADES_LOOKBACK_MS = 7 * 24 * 3_600_000;
export const TRADES_DEFAULT_COUNT = 20;
export const TRADES_MAX_COUNT = 1000;

export interface TradesQuery {
  /** A currency symbol or `any`: a trade is listed under its base and its quote currency. */
  readonly currency: string;
  readonly now: number;
  readonly continuation: string | null;
  readonly count: number;
}

export interface TradesPage {
  readonly results: readonly RfqTradeRecord[];
  readonly continuation: string | null;
}

/** Parses `<timestamp>:<blockRfqId>`; null when malformed. */
export function parseContinuation(token: string): { timestamp: number; number: number } | null {
  const match = /^(\d{1,15}):(\d{1,15})$/.exec(token);
  if (match === null) return null;
  return { timestamp: Number(match[1]), number: Number(match[2]) };
}

/** `trades` oldest first (the desk's order). */
export function pageTrades(trades: readonly RfqTradeRecord[], query: TradesQuery): TradesPage {
  const after = query.continuation === null ? null : parseContinuation(query.continuation);
  const since = query.now - TRADES_LOOKBACK_MS;
  const results: RfqTradeRecord[] = [];
  let more = false;
  for (let i = trades.length - 1; i >= 0; i--) {
    const trade = trades[i]!;
    if (trade.timestamp < since) break;
    if (!matchesCurrency(query.currency, trade.currency, trade.quoteCurrency ?? null)) continue;
    if (
      after !== null &&
      (trade.timestamp > after.timestamp ||
        (trade.timestamp === after.timestamp && trade.number >= after.number))
    ) {
      continue;
    }
    if (results.length === query.count) {
      more = true;
      break;
    }
    results.push(trade);
  }
  const last = results.at(-1);
  return {
    results,
    continuation: more && last !== undefined ? `${last.timestamp}:${last.blockRfqId}` : null,
  };
}
