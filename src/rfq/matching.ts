/**
 * Which quotes an accept trades against, and how much of each (pure planning, no effects).
 *
 * Rules:
 * - A taker buying the structure trades against maker `sell` quotes priced at or below its
 *   limit; a taker selling against `buy` quotes at or above it.
 * - Priority: best price, then `all_or_none` before `any_part_of` at the same price, then
 *   time (`priority`, renewed by edits).
 * - `all_or_none` quotes trade their whole remaining quantity or nothing; `any_part_of`
 *   quotes trade any whole number of RFQ lots from the RFQ's `minTradeAmount` up (each quote's
 *   fill is a block trade of its own, so it meets the block minimum too). Planning is greedy in
 *   priority order: a quote that would trade less is passed over, as an AON quote is.
 * - The plan is all-or-nothing for the taker: it either covers the requested quantity exactly
 *   or is reported as short (and nothing trades).
 */
import type { Side } from '../core/types.ts';
import type { QuoteRecord } from './types.ts';

export interface PlannedFill {
  readonly quote: QuoteRecord;
  readonly quantity: number;
}

export interface Plan {
  readonly fills: readonly PlannedFill[];
  /** Lots covered (equals the request when complete). */
  readonly covered: number;
}

export function crosses(takerSide: Side, limit: number, quotePrice: number): boolean {
  return takerSide === 'buy' ? quotePrice <= limit : quotePrice >= limit;
}

/** Quotes a taker on `takerSide` could trade against, best first. */
export function rankQuotes(
  quotes: Iterable<QuoteRecord>,
  takerSide: Side,
  limit: number,
  now: number,
): QuoteRecord[] {
  const makerSide: Side = takerSide === 'buy' ? 'sell' : 'buy';
  const eligible: QuoteRecord[] = [];
  for (const quote of quotes) {
    if (quote.status !== 'open' || quote.side !== makerSide) continue;
    if (quote.expiresAt !== null && quote.expiresAt <= now) continue;
    if (quote.quantity - quote.filledQuantity <= 0) continue;
    if (!crosses(takerSide, limit, quote.price)) continue;
    eligible.push(quote);
  }
  const direction = takerSide === 'buy' ? 1 : -1;
  return eligible.sort((a, b) => {
    if (a.price !== b.price) return direction * (a.price - b.price);
    const aonA = a.executionInstruction === 'all_or_none' ? 0 : 1;
    const aonB = b.executionInstruction === 'all_or_none' ? 0 : 1;
    if (aonA !== aonB) return aonA - aonB;
    return a.priority - b.priority;
  });
}

/** `minimum`: the smallest fill of one quote (RFQ lots, the RFQ's minTradeAmount). */
export function planFills(ranked: readonly QuoteRecord[], requested: number, minimum = 1): Plan {
  const fills: PlannedFill[] = [];
  let need = requested;
  for (const quote of ranked) {
    if (need === 0) break;
    const remaining = quote.quantity - quote.filledQuantity;
    const take =
      quote.executionInstruction === 'all_or_none'
        ? remaining <= need
          ? remaining
          : 0
        : Math.min(remaining, need);
    if (take <= 0 || take < minimum) continue;
    fills.push({ quote, quantity: take });
    need -= take;
  }
  return { fills, covered: requested - need };
}
