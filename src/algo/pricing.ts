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
 * Rounding: a buy rounds down and a sell rounds up to the tick that applies at that level, so a
 * price is never worse for the client than asked; a buy limit below one tick is `unavailable` (no
 * valid price is that low), not raised to one tick.
 * - A `price` already in the quote currency (no conversion) is rounded exactly from its decimal:
 *   a BALANCE string as sent, a TWAP JSON number as its shortest decimal (what JSON writes; a
 *   number that is the same binary64 as a tick is that tick). No float, no tolerance.
 *   A DYNAMIC quote-currency offset on a whole or half-tick reference is exact the same way.
 * - A float from a conversion (another currency, IV, a fractional reference plus an offset) within
 *   FLOAT_NOISE (relative) of a tick is that tick (0.0003 / 0.0001 = 2.9999999999999996); any
 *   larger excess is real and rounds for the client.
 * Missing market data is a result (`unavailable`), never a guess: the caller waits for data.
 */
import type { Side } from '../core/types.ts';
import { parseDecimal } from '../domain/decimal.ts';
import type { Instrument } from '../domain/instrument.ts';
import { convertPriceIn, impliedVolPercent } from '../market/conversions.ts';
import type { AlgoMarketView, OwnAccounts } from './market-view.ts';
import type { LegPricing } from './types.ts';

export type ResolvedPrice =
  | { readonly kind: 'limit'; readonly price: number }
  /** A marketable order: at market, or, with `bound` (ticks), an immediate-or-cancel limit there. */
  | { readonly kind: 'market'; readonly bound?: number }
  | { readonly kind: 'unavailable'; readonly reason: string };

/** Moves whole ticks onto the tick step that applies at that level, in the client's favour. */
function alignToStep(instrument: Instrument, side: Side, ticks: number): number {
  const step = instrument.tickAt(ticks);
  if (step <= 1) return ticks;
  return side === 'buy' ? Math.floor(ticks / step) * step : Math.ceil(ticks / step) * step;
}

/**
 * Relative gap (to the size of the numbers a conversion worked with) below which a converted
 * float is the tick it is next to: about 4,500 ulps of binary64, far above the few ulps a
 * conversion adds, and a bound on how much a converted price may lose to that snap (6.5e-8 USD
 * on 65000, below the precision of the index it was converted at). Only converted prices take
 * it: a price already in the quote currency is rounded exactly (`decimalToTicks`).
 */
const FLOAT_NOISE = 1e-12;

/** Whole ticks (the directed integer) onto the level's tick: a buy ≥ 1 tick or null, a sell ≥ 1. */
function finishTicks(instrument: Instrument, side: Side, whole: number): number | null {
  const ticks = alignToStep(instrument, side, whole);
  if (side === 'buy') return ticks >= 1 ? ticks : null;
  return Math.max(ticks, 1);
}

/**
 * Rounds a quote-currency float (a conversion's result) to ticks, in the client's favour for
 * `side`. A sell is at least 1 tick (higher than asked is better); a buy below 1 tick has no valid
 * price: null, never a tick above what the client allowed. `magnitude` is the largest quote value
 * the float was computed from (a DYNAMIC reference before a negative offset): its noise is
 * relative to that, not to a small difference.
 */
export function roundToTicks(
  instrument: Instrument,
  side: Side,
  quotePrice: number,
  magnitude = quotePrice,
): number | null {
  const tick = Number(instrument.spec.tickSize);
  const raw = quotePrice / tick;
  // Absorb float noise only (18 / 60000 / 0.0001 = 2.9999999999999996) before the directed rounding.
  const nearest = Math.round(raw);
  const noise = Math.max(Math.abs(raw), Math.abs(magnitude / tick)) * FLOAT_NOISE;
  const exact = Math.abs(raw - nearest) <= noise ? nearest : raw;
  return finishTicks(instrument, side, side === 'buy' ? Math.floor(exact) : Math.ceil(exact));
}

const PLAIN_DECIMAL = /^-?\d+(\.\d+)?$/;

/** `numerator / denominator` ticks (denominator > 0) rounded down for a buy, up for a sell. */
function directedTicks(
  instrument: Instrument,
  side: Side,
  numerator: bigint,
  denominator: bigint,
): number | null {
  let whole = numerator / denominator; // truncates toward zero
  if (numerator % denominator !== 0n) {
    if (side === 'buy' && numerator < 0n) whole -= 1n;
    if (side === 'sell' && numerator > 0n) whole += 1n;
  }
  return finishTicks(instrument, side, Number(whole));
}

/**
 * Rounds a quote-currency decimal string to ticks exactly (bigints: no float on the way), in the
 * client's favour for `side`, with `roundToTicks`' bounds.
 */
export function decimalToTicks(instrument: Instrument, side: Side, text: string): number | null {
  const value = parseDecimal(text, 'price');
  const grid = instrument.priceGrid;
  // ticks = (units / 10^scale) / (stepUnits / 10^grid.scale), as one fraction.
  const numerator = value.units * 10n ** BigInt(grid.scale);
  return directedTicks(instrument, side, numerator, grid.stepUnits * 10n ** BigInt(value.scale));
}

/**
 * A DYNAMIC reference in whole or half ticks (MID) plus a quote-currency offset decimal, rounded
 * exactly; undefined when either is not exact (a fractional mark or model price, a converted
 * offset): the float path then applies.
 */
function exactOffsetTicks(
  instrument: Instrument,
  side: Side,
  reference: number,
  pricing: LegPricing,
): number | null | undefined {
  const halves = reference * 2;
  if (!Number.isSafeInteger(halves) || !isQuoteUnit(instrument, pricing.priceIn)) return undefined;
  const sent = pricing.dynamicOffsetAsSent;
  const text = typeof sent === 'string' ? sent : String(pricing.dynamicOffset);
  if (!PLAIN_DECIMAL.test(text)) return undefined;
  const offset = parseDecimal(text, 'dynamicPriceOffset');
  const grid = instrument.priceGrid;
  // halves / 2 + (units / 10^scale) / (stepUnits / 10^grid.scale), as one fraction.
  const offsetScale = 10n ** BigInt(offset.scale);
  const numerator =
    BigInt(halves) * grid.stepUnits * offsetScale + 2n * offset.units * 10n ** BigInt(grid.scale);
  return directedTicks(instrument, side, numerator, 2n * grid.stepUnits * offsetScale);
}

/** A rounded limit, or `unavailable` (the leg waits) for a buy limit below the smallest price. */
function limitAt(
  instrument: Instrument,
  side: Side,
  quotePrice: number,
  magnitude = quotePrice,
): ResolvedPrice {
  return ticksResult(roundToTicks(instrument, side, quotePrice, magnitude));
}

function ticksResult(ticks: number | null): ResolvedPrice {
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

const USD_LIKE = new Set(['USD', 'USDT', 'USDC']);
const USD_LIKE_OR_IV = new Set([...USD_LIKE, 'IV']);

function isOtherCoin(unit: string, instrument: Instrument): boolean {
  return (
    !USD_LIKE_OR_IV.has(unit) &&
    unit !== instrument.spec.baseCurrency &&
    unit !== instrument.spec.quoteCurrency
  );
}

/** True when `priceIn` needs no conversion on this instrument (`convertToQuote` returns the value). */
function isQuoteUnit(instrument: Instrument, priceIn: string | null): boolean {
  if (priceIn === null) return true;
  const unit = priceIn.toUpperCase();
  const quote = instrument.spec.quoteCurrency;
  if (unit === quote) return true;
  const quoteIsUsd = USD_LIKE.has(quote);
  return quoteIsUsd ? USD_LIKE.has(unit) : unit === instrument.spec.baseCurrency;
}

/**
 * The leg's `price` as a limit in ticks, rounded for the client: exactly from its decimal when it
 * is already in the quote currency (the string as sent, or the number's shortest decimal), else
 * converted at this instant and rounded as a float.
 */
function priceLimit(
  view: AlgoMarketView,
  instrument: Instrument,
  side: Side,
  pricing: LegPricing,
  price: number,
  now: number,
): ResolvedPrice {
  if (isQuoteUnit(instrument, pricing.priceIn)) {
    const sent = pricing.priceAsSent;
    const text = typeof sent === 'string' ? sent : String(price);
    // A journal from before `priceAsSent` may hold a float String() writes with an exponent.
    if (PLAIN_DECIMAL.test(text)) return ticksResult(decimalToTicks(instrument, side, text));
  }
  const quote = convertToQuote(view, instrument, pricing.priceIn, price, now);
  if (quote === null) return { kind: 'unavailable', reason: `cannot convert ${pricing.priceIn}` };
  return limitAt(instrument, side, quote);
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
  own: OwnAccounts | null = null,
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
  own: OwnAccounts | null = null,
): ResolvedPrice {
  switch (pricing.priceType) {
    case 'MARKET':
      return { kind: 'market' };
    case 'LIMIT': {
      if (pricing.price === null) return { kind: 'unavailable', reason: 'no price' };
      return priceLimit(view, instrument, side, pricing, pricing.price, now);
    }
    case 'DYNAMIC': {
      const strategy = pricing.dynamicStrategy ?? 'MARK';
      const reference = referenceTicks(view, instrument, strategy, now, own);
      if (reference === null) return { kind: 'unavailable', reason: `no ${strategy} reference` };
      const dynamicLimit = offsetLimit(view, instrument, side, pricing, reference, now);
      if (pricing.price === null) return dynamicLimit;
      // Each rounded for the client, then the lower for a buy and the higher for a sell (directed
      // rounding is monotone, so this is the bounded price rounded): never past the worst price.
      const worst = priceLimit(view, instrument, side, pricing, pricing.price, now);
      if (worst.kind !== 'limit') return worst;
      if (dynamicLimit.kind !== 'limit') return dynamicLimit;
      const price =
        side === 'buy'
          ? Math.min(dynamicLimit.price, worst.price)
          : Math.max(dynamicLimit.price, worst.price);
      return { kind: 'limit', price };
    }
    default: {
      const _exhaustive: never = pricing.priceType;
      return _exhaustive;
    }
  }
}

/**
 * A marketable leg's worst price: a LIMIT leg's price, or a DYNAMIC leg's given price (its worst
 * acceptable one), as the bound of its immediate-or-cancel orders; plain market without one.
 */
export function marketableBound(
  view: AlgoMarketView,
  instrument: Instrument,
  side: Side,
  pricing: LegPricing,
  now: number,
): ResolvedPrice {
  if (pricing.priceType === 'MARKET' || pricing.price === null) return { kind: 'market' };
  const worst = priceLimit(view, instrument, side, pricing, pricing.price, now);
  return worst.kind === 'limit' ? { kind: 'market', bound: worst.price } : worst;
}

/** The DYNAMIC reference (ticks) plus the leg's offset, rounded for the client. */
function offsetLimit(
  view: AlgoMarketView,
  instrument: Instrument,
  side: Side,
  pricing: LegPricing,
  reference: number,
  now: number,
): ResolvedPrice {
  const exact = exactOffsetTicks(instrument, side, reference, pricing);
  if (exact !== undefined) return ticksResult(exact);
  const referenceQuote = quoteOf(instrument, reference);
  let quote = referenceQuote;
  if (pricing.dynamicOffset !== 0) {
    const shifted = applyOffset(view, instrument, pricing, quote, now);
    if (shifted === null) return { kind: 'unavailable', reason: 'cannot apply the offset' };
    quote = shifted;
  }
  // Noise is relative to the larger operand (1000.05 − 1000 in floats is not exactly 0.05).
  return limitAt(instrument, side, quote, Math.max(Math.abs(referenceQuote), Math.abs(quote)));
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
