/**
 * Option price units and the conversions orders and algorithms use.
 *
 * Inverse options (BTC-27DEC26-70000-C) are quoted and settled in the coin. The payoff
 * max(S_T − K, 0)/S_T coins is worth max(S_T − K, 0) USD at expiry, so its USD value is the
 * Black-76 value V_usd(F, K, σ, T). The venue's model price in coin is
 *
 *     coin = V_usd / F          (Black-76 undiscounted, F = forward of the expiry)
 *
 * i.e. the USD value converted at the forward — exact when the coin earns no interest and
 * carry sits in the forward, which is Deribit's convention (its mark IV is computed with the
 * forward as the underlying). IV ↔ coin conversions therefore use the forward.
 *
 * Advanced `usd` orders and `priceIn: USD` limits are a USD amount *now*: they convert with the
 * index (coin = usd / index), as Deribit's USD orders do. USDC and USDT are taken at par with
 * USD (no stablecoin index is simulated).
 *
 * Linear USDC options (BTC_USDC-27DEC26-70000-C) are quoted in USDC = V_usd; advanced `usd` is
 * not offered for them (Deribit), but `priceIn` USD/USDC/USDT is the identity and a coin price
 * converts with the index.
 *
 * Futures, perpetuals and spot are quoted in USD/USDC/USDT: `priceIn` coin values convert with
 * the index; IV is refused.
 */
import type { MarginKind, OptionType } from '../domain/instrument.ts';
import { black76Price } from './black76.ts';
import { type ImpliedVolResult, impliedVolatility } from './implied-vol.ts';

/** What a price conversion needs to know about an option and the market. */
export interface OptionPricingContext {
  readonly optionType: OptionType;
  readonly marginKind: MarginKind;
  readonly strike: number;
  readonly forward: number;
  readonly index: number;
  readonly timeToExpiry: number;
}

/** Model price in the instrument's quote currency (coin for inverse, USDC for linear). */
export function quotePriceFromVolatility(context: OptionPricingContext, volatility: number): number {
  const usd = black76Price({ ...context, volatility });
  return context.marginKind === 'inverse' ? usd / context.forward : usd;
}

/** Model value in USD for a volatility. */
export function usdValueFromVolatility(context: OptionPricingContext, volatility: number): number {
  return black76Price({ ...context, volatility });
}

/** Implied volatility of a price in the instrument's quote currency. */
export function volatilityFromQuotePrice(
  context: OptionPricingContext,
  quotePrice: number,
): ImpliedVolResult {
  const usd = context.marginKind === 'inverse' ? quotePrice * context.forward : quotePrice;
  return impliedVolatility({ ...context, price: usd });
}

/** USD amount → quote price: `usd / index` for inverse options, identity for linear. */
export function quotePriceFromUsd(
  context: Pick<OptionPricingContext, 'marginKind' | 'index'>,
  usd: number,
): number {
  return context.marginKind === 'inverse' ? usd / context.index : usd;
}

/** Quote price → USD amount (inverse: × index). */
export function usdFromQuotePrice(
  context: Pick<OptionPricingContext, 'marginKind' | 'index'>,
  quotePrice: number,
): number {
  return context.marginKind === 'inverse' ? quotePrice * context.index : quotePrice;
}

/** The units a portfolio leg's price may be given in (spec: priceIn). */
export type PriceIn = 'USD' | 'USDT' | 'USDC' | 'IV' | string;

export type PriceConversion =
  | { readonly ok: true; readonly quotePrice: number }
  | { readonly ok: false; readonly reason: 'unsupported_unit' | 'iv_not_option'; readonly message: string };

/** What `convertPriceIn` needs about the instrument. */
export interface PriceInInstrument {
  readonly baseCurrency: string;
  /** Currency the instrument's price is quoted in (BTC for inverse options, USD, USDC…). */
  readonly quoteCurrency: string;
  readonly option: OptionPricingContext | null;
}

const USD_LIKE = new Set(['USD', 'USDC', 'USDT']);

/**
 * Converts a price given in `priceIn` units (USD, USDT, USDC, the base coin, IV in percent
 * where 100 = 100%) into the instrument's quote currency. `index` is the base coin's USD index.
 */
export function convertPriceIn(
  instrument: PriceInInstrument,
  index: number,
  priceIn: PriceIn,
  value: number,
): PriceConversion {
  const unit = priceIn.toUpperCase();
  const quoteIsUsd = USD_LIKE.has(instrument.quoteCurrency);
  if (unit === 'IV') {
    if (instrument.option === null) {
      return { ok: false, reason: 'iv_not_option', message: 'priceIn IV is for options only' };
    }
    return { ok: true, quotePrice: quotePriceFromVolatility(instrument.option, value / 100) };
  }
  if (USD_LIKE.has(unit)) {
    return { ok: true, quotePrice: quoteIsUsd ? value : value / index };
  }
  if (unit === instrument.baseCurrency) {
    return { ok: true, quotePrice: quoteIsUsd ? value * index : value };
  }
  return {
    ok: false,
    reason: 'unsupported_unit',
    message: `priceIn ${priceIn} is not supported for an instrument quoted in ${instrument.quoteCurrency}`,
  };
}

/** IV in percent (100 = 100%) of a quote price, or the solver's refusal. */
export function impliedVolPercent(context: OptionPricingContext, quotePrice: number): ImpliedVolResult {
  const result = volatilityFromQuotePrice(context, quotePrice);
  return result.ok ? { ...result, volatility: result.volatility * 100 } : result;
}
