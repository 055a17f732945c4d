/**
 * Price resolution of one leg at one instant (SEMANTICS, Portfolios):
 * - LIMIT: `price` converted from `priceIn` (USD, USDT, USDC, the base coin, another coin through
 *   USD at its index, IV through Black-76 with the current forward and expiry) into the
 *   instrument's quote currency;
 * - MARKET: a market order (the engine bounds it by its price band);
 * - DYNAMIC: the reference named by the strategy (MID, MARK, MODEL, BID, ASK) plus the offset in
 *   `priceIn` units (IV: volatility points on the reference's implied vol), bounded by `price` as
 *   the worst acceptable price when one is given.
 *
 * Rounding (the only float → integer step): a buy rounds down and a sell rounds up to the tick
 * that applies at that level, so a converted price is never worse for the client than asked; a
 * buy limit below one tick is `unavailable` (no valid price is that low), not raised to one tick.
 * Missing market data is a result (`unavailable`), never a guess: the caller waits for data.
 */
import type { Side } from '../core/types.ts';
import type { Instrument } from '../domain/instrument.ts';
import { convertPriceIn, impliedVolPercent } from '../market/conversions.ts';
import type { AlgoMarketView, OwnOrder } from './market-view.ts';
import type { LegPricing } from './types.ts';

export type ResolvedPrice =
  | { readonly kind: 'limit'; readonly price: number }
  | { readonly kind: 'market' }
  | { readonly kind: 'unavailable'; readonly reason: string };

/** Moves whole ticks onto the tick step that applies at that level, in the client's favour. */
function alignToStep(instrument: Instrument, side: Side, ticks: number): number {
  const step = instrument.tickAt(ticks);
  if (step <= 1) return ticks;
  return side === 'buy' ? Math.floor(ticks / step) * step : Math.ceil(ticks / step) * step;
}

/**
 * Rounds a quote-currency price to ticks, in the client's favour for `side`. A sell is at least
 * 1 tick (higher than asked is better); a buy below 1 tick has no valid price: null, never a
 * tick above what the client allowed.
 */
export function roundToTicks(instrument: Instrument, side: Side, quotePrice: number): number | null {
  const tick = Number(instrument.spec.tickSize);
  const raw = quotePrice / tick;
  // Absorb float noise (0.1/0.0001 = 999.9999999) before the directed rounding.
  const nearest = Math.round(raw);
  const exact = Math.abs(raw - nearest) < 1e-7 ? nearest : raw;
  const ticks = alignToStep(instrument, side, side === 'buy' ? Math.floor(exact) : Math.ceil(exact));
  if (side === 'buy') return ticks >= 1 ? ticks : null;
  return Math.max(ticks, 1);
}

/** A rounded limit, or `unavailable` (the leg waits) for a buy limit below the smallest price. */
function limitAt(instrument: Instrument, side: Side, quotePrice: number): ResolvedPrice {
  const ticks = roundToTicks(instrument, side, quotePrice);
  return ticks === null
    ? { kind: 'unavailable', reason: 'buy limit below one tick' }
    : { kind: 'limit', price: ticks };
}

/**
 * A limit price kept clear of the account's own best resting order on the other side
 * (`ownOpposite`): a buy at or above it moves to the valid price just below it, a sell at or
 * below it to the one just above. Null when no valid price is left (a buy under 1 tick).
 */
export function clearOfOwnOrders(
  instrument: Instrument,
  side: Side,
  price: number,
  ownOpposite: number | null,
): number | null {
  if (ownOpposite === null) return price;
  if (side === 'buy') {
    if (price < ownOpposite) return price;
    const below = alignToStep(instrument, 'buy', ownOpposite - 1);
    return below >= 1 ? below : null;
  }
  if (price > ownOpposite) return price;
  return alignToStep(instrument, 'sell', ownOpposite + 1);
}

function quoteOf(instrument: Instrument, ticks: number): number {
  return ticks * Number(instrument.spec.tickSize);
}

const USD_LIKE_OR_IV = new Set(['USD', 'USDT', 'USDC', 'IV']);

function isOtherCoin(unit: string, instrument: Instrument): boolean {
  return (
    !USD_LIKE_OR_IV.has(unit) &&
    unit !== instrument.spec.baseCurrency &&
    unit !== instrument.spec.quoteCurrency
  );
}

/** `value` in `priceIn` units → quote currency float; null when the market cannot convert it. */
export function convertToQuote(
  view: AlgoMarketView,
  instrument: Instrument,
  priceIn: string | null,
  value: number,
  now: number,
): number | null {
  if (priceIn === null || priceIn.toUpperCase() === instrument.spec.quoteCurrency) return value;
  if (isOtherCoin(priceIn.toUpperCase(), instrument)) {
    // A coin the leg is not in (BTC on an ETH leg): to USD at that coin's index, then as USD.
    const coinIndex = view.indexPrice(priceIn.toUpperCase());
    if (coinIndex === null) return null;
    return convertToQuote(view, instrument, 'USD', value * coinIndex, now);
  }
  const index = view.indexPrice(instrument.spec.baseCurrency);
  const option = view.optionContext(instrument.name, now);
  const converted = convertPriceIn(
    { baseCurrency: instrument.spec.baseCurrency, quoteCurrency: instrument.spec.quoteCurrency, option },
    index ?? Number.NaN,
    priceIn,
    value,
  );
  if (!converted.ok || !Number.isFinite(converted.quotePrice)) return null;
  return converted.quotePrice;
}

/** The dynamic reference in ticks (may be fractional for MID), or null when the data is missing. */
export function referenceTicks(
  view: AlgoMarketView,
  instrument: Instrument,
  strategy: NonNullable<LegPricing['dynamicStrategy']>,
  now: number,
  own: OwnOrder | null = null,
): number | null {
  const name = instrument.name;
  switch (strategy) {
    case 'MID': {
      const bid = view.bestBid(name, own);
      const ask = view.bestAsk(name, own);
      if (bid !== null && ask !== null) return (bid + ask) / 2;
      return view.markPrice(name);
    }
    case 'MARK':
      return view.markPrice(name);
    case 'MODEL': {
      const model = view.modelPrice(name, now);
      return model === null ? view.markPrice(name) : model / Number(instrument.spec.tickSize);
    }
    case 'BID':
      return view.bestBid(name, own) ?? view.markPrice(name);
    case 'ASK':
      return view.bestAsk(name, own) ?? view.markPrice(name);
    default: {
      const _exhaustive: never = strategy;
      return _exhaustive;
    }
  }
}

export function resolvePrice(
  view: AlgoMarketView,
  instrument: Instrument,
  side: Side,
  pricing: LegPricing,
  now: number,
  own: OwnOrder | null = null,
): ResolvedPrice {
  switch (pricing.priceType) {
    case 'MARKET':
      return { kind: 'market' };
    case 'LIMIT': {
      if (pricing.price === null) return { kind: 'unavailable', reason: 'no price' };
      const quote = convertToQuote(view, instrument, pricing.priceIn, pricing.price, now);
      if (quote === null) return { kind: 'unavailable', reason: `cannot convert ${pricing.priceIn}` };
      return limitAt(instrument, side, quote);
    }
    case 'DYNAMIC': {
      const strategy = pricing.dynamicStrategy ?? 'MARK';
      const reference = referenceTicks(view, instrument, strategy, now, own);
      if (reference === null) return { kind: 'unavailable', reason: `no ${strategy} reference` };
      let quote = quoteOf(instrument, reference);
      if (pricing.dynamicOffset !== 0) {
        const shifted = applyOffset(view, instrument, pricing, quote, now);
        if (shifted === null) return { kind: 'unavailable', reason: 'cannot apply the offset' };
        quote = shifted;
      }
      if (pricing.price !== null) {
        const worst = convertToQuote(view, instrument, pricing.priceIn, pricing.price, now);
        if (worst === null) return { kind: 'unavailable', reason: `cannot convert ${pricing.priceIn}` };
        quote = side === 'buy' ? Math.min(quote, worst) : Math.max(quote, worst);
      }
      return limitAt(instrument, side, quote);
    }
    default: {
      const _exhaustive: never = pricing.priceType;
      return _exhaustive;
    }
  }
}

function applyOffset(
  view: AlgoMarketView,
  instrument: Instrument,
  pricing: LegPricing,
  referenceQuote: number,
  now: number,
): number | null {
  if (pricing.priceIn !== null && pricing.priceIn.toUpperCase() === 'IV') {
    const context = view.optionContext(instrument.name, now);
    if (context === null) return null;
    const iv = impliedVolPercent(context, referenceQuote);
    if (!iv.ok) return null;
    return convertToQuote(view, instrument, 'IV', iv.volatility + pricing.dynamicOffset, now);
  }
  // Every non-IV conversion is linear, so the offset converts on its own.
  const offset = convertToQuote(view, instrument, pricing.priceIn, pricing.dynamicOffset, now);
  return offset === null ? null : referenceQuote + offset;
}
