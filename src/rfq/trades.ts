/**
 * Listing traded RFQs (get_trades): newest first, within a look-back window, paged by a
 * continuation token `<timestamp>:<blockRfqId>` naming the last item returned.
 *
 * Invariants: items are ordered by (timestamp, RFQ number) descending, a total order, so pages
 * never repeat or skip an item even when many trades share a timestamp.
 *
 * A trade's leg prices and hedge price are its fills' amount-weighted averages (`tradeAverages`),
 * kept as exact integer fractions of ticks: one quote filled (or several at equal prices) gives
 * its prices exactly; several at different prices give their average, which the wire prints.
 */
import { matchesCurrency } from '../domain/currency.ts';
import type { RfqTradeRecord } from './types.ts';

/** An exact average price: Σ weight × ticks over Σ weight (weights in lots). */
export interface PriceAverage {
  /** Σ weight × price, ticks × lots. */
  readonly notional: bigint;
  /** Σ weight, lots; positive. */
  readonly weight: bigint;
}

export interface TradeAverages {
  /** Per RFQ leg, weighted by the RFQ lots of each fill (leg lots are a fixed multiple of them). */
  readonly legs: readonly PriceAverage[];
  /**
   * Weighted by the hedge lots each fill booked (or by RFQ lots when no fill booked any, so the
   * price still says what the quotes traded the hedge at); null without a hedge.
   */
  readonly hedge: PriceAverage | null;
}

/**
 * The trade's prices over all its fills. A fill without a hedge price of its own (none is
 * recorded without a hedge) counts at the RFQ's hedge price.
 */
export function tradeAverages(trade: RfqTradeRecord): TradeAverages {
  const legs = trade.legs.map((_, index) => {
    let notional = 0n;
    let weight = 0n;
    for (const fill of trade.fills) {
      notional += BigInt(fill.quantity) * BigInt(fill.legPrices[index]!);
      weight += BigInt(fill.quantity);
    }
    return { notional, weight };
  });
  if (trade.hedge === null) return { legs, hedge: null };
  const hedge = trade.hedge;
  const booked = trade.fills.some((fill) => fill.hedgeAmount > 0);
  let notional = 0n;
  let weight = 0n;
  for (const fill of trade.fills) {
    const lots = BigInt(booked ? fill.hedgeAmount : fill.quantity);
    notional += lots * BigInt(fill.hedgePrice ?? hedge.price);
    weight += lots;
  }
  return {
    legs,
    hedge: weight === 0n ? { notional: BigInt(hedge.price), weight: 1n } : { notional, weight },
  };
}

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
