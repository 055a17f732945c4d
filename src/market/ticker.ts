/**
 * The figures `public/ticker` shows for an instrument, from the market state and the book's
 * best bid/ask (in ticks, passed in by the caller). Plain numbers; the gateway formats them.
 *
 * Units:
 * - prices (mark, best bid/ask) in the instrument's quote currency; index and underlying in USD;
 * - IVs in percent (55 = 55%); bid/ask IV are null when there is no order on that side or the
 *   price admits no volatility (below intrinsic value, at/above the bound);
 * - greeks (options only), Deribit's display units: delta per 1 unit of underlying (inverse
 *   options: premium-adjusted coin delta = Black delta − coin mark price, because the premium
 *   itself is held in the coin); gamma per 1 USD move of the forward; vega in USD per 1 vol
 *   point (1%); theta in USD per calendar day; rho 0 (the venue discounts nothing).
 */
import type { Instrument } from '../domain/instrument.ts';
import { volatilityFromQuotePrice } from './conversions.ts';
import type { MarketState } from './market-state.ts';
import { fromTicks } from './price-updates.ts';

export interface TickerGreeks {
  readonly delta: number;
  readonly gamma: number;
  readonly vega: number;
  readonly theta: number;
  readonly rho: number;
}

export interface TickerFigures {
  readonly instrumentName: string;
  readonly markPrice: number;
  readonly indexPrice: number;
  /** Forward of the expiry for options and futures, the index otherwise. */
  readonly underlyingPrice: number;
  readonly bestBidPrice: number | null;
  readonly bestAskPrice: number | null;
  readonly markIv: number | null;
  readonly bidIv: number | null;
  readonly askIv: number | null;
  readonly greeks: TickerGreeks | null;
  readonly interestRate: number;
}

export interface BestPrices {
  /** Ticks; null when that side of the book is empty. */
  readonly bestBid: number | null;
  readonly bestAsk: number | null;
}

/** Ticker figures; null when the instrument has no mark (unknown to the state, or expired). */
export function tickerFigures(
  instrument: Instrument,
  state: MarketState,
  book: BestPrices,
): TickerFigures | null {
  const spec = instrument.spec;
  const mark = state.mark(spec.name);
  if (mark === undefined) return null;
  const bestBidPrice = book.bestBid === null ? null : fromTicks(instrument, book.bestBid);
  const bestAskPrice = book.bestAsk === null ? null : fromTicks(instrument, book.bestAsk);
  const base = {
    instrumentName: spec.name,
    markPrice: mark.markPrice,
    indexPrice: state.index(spec.baseCurrency),
    underlyingPrice: mark.underlyingPrice,
    bestBidPrice,
    bestAskPrice,
    interestRate: 0,
  };
  if (spec.kind !== 'option' || mark.greeks === null || mark.markIv === null) {
    return { ...base, markIv: null, bidIv: null, askIv: null, greeks: null };
  }
  const context = {
    optionType: spec.optionType ?? 'call',
    marginKind: spec.marginKind,
    strike: Number(spec.strike),
    forward: mark.underlyingPrice,
    index: base.indexPrice,
    timeToExpiry: mark.timeToExpiry ?? 0,
  };
  const ivPercent = (price: number | null): number | null => {
    if (price === null || !(price > 0)) return null;
    const result = volatilityFromQuotePrice(context, price);
    return result.ok ? result.volatility * 100 : null;
  };
  const g = mark.greeks;
  const delta = spec.marginKind === 'inverse' ? g.delta - mark.markPrice : g.delta;
  return {
    ...base,
    markIv: mark.markIv * 100,
    bidIv: ivPercent(bestBidPrice),
    askIv: ivPercent(bestAskPrice),
    greeks: { delta, gamma: g.gamma, vega: g.vega / 100, theta: g.theta / 365, rho: 0 },
  };
}
