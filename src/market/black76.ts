/**
 * Black-76: European options on a forward, in the currency the strike is quoted in (USD).
 *
 *   d1 = (ln(F/K) + σ²T/2) / (σ√T),  d2 = d1 − σ√T
 *   call = D·(F·Φ(d1) − K·Φ(d2)),     put = D·(K·Φ(−d2) − F·Φ(−d1))
 *
 * `discount` D = e^{−rT}. The venue's own marks use D = 1: crypto option premiums are paid at
 * trade time but the carry lives in the forward (the future basis), as Deribit does.
 *
 * Greeks are with respect to the forward and are in USD per 1 unit of underlying:
 *   delta = ∂V/∂F, gamma = ∂²V/∂F², vega = ∂V/∂σ (per 1.00 of vol, i.e. per 100 vol points),
 *   theta = ∂V/∂t (per year of calendar time passing, at fixed F and σ; negative for a long
 *   option). Display units (vega per vol point, theta per day) are produced in `ticker.ts`.
 *
 * At T = 0 or σ = 0 the value is the discounted intrinsic value and gamma/vega/theta are 0.
 * Invariant (tested): call − put = D·(F − K) exactly up to rounding, for every input.
 */
import type { OptionType } from '../domain/instrument.ts';
import { normCdf, normPdf } from './normal.ts';

export interface Black76Inputs {
  readonly optionType: OptionType;
  /** Forward price of the underlying at expiry, USD. */
  readonly forward: number;
  readonly strike: number;
  /** Time to expiry in years (ACT/365). */
  readonly timeToExpiry: number;
  /** Annualised lognormal volatility, 0.8 = 80%. */
  readonly volatility: number;
  /** Discount factor to expiry; 1 when omitted. */
  readonly discount?: number;
}

export interface Greeks {
  readonly delta: number;
  readonly gamma: number;
  readonly vega: number;
  readonly theta: number;
}

export interface PricedOption extends Greeks {
  readonly price: number;
}

export const MS_PER_YEAR = 365 * 24 * 60 * 60 * 1000;

/** Years between two ms timestamps (ACT/365), never negative. */
export function yearsBetween(fromMs: number, toMs: number): number {
  return Math.max(0, (toMs - fromMs) / MS_PER_YEAR);
}

/** Undiscounted intrinsic value max(±(F − K), 0). */
export function intrinsicValue(optionType: OptionType, forward: number, strike: number): number {
  return optionType === 'call' ? Math.max(forward - strike, 0) : Math.max(strike - forward, 0);
}

/**
 * Undiscounted Black price of the option that is out of the money (or at the money), computed
 * without cancellation against intrinsic value. Used by `black76Price` and the IV solver.
 */
export function undiscountedPrice(
  optionType: OptionType,
  forward: number,
  strike: number,
  totalVol: number,
): number {
  if (!(totalVol > 0)) return intrinsicValue(optionType, forward, strike);
  const d1 = Math.log(forward / strike) / totalVol + totalVol / 2;
  const d2 = d1 - totalVol;
  if (optionType === 'call') return forward * normCdf(d1) - strike * normCdf(d2);
  return strike * normCdf(-d2) - forward * normCdf(-d1);
}

/** Black-76 price in USD. */
export function black76Price(inputs: Black76Inputs): number {
  const { optionType, forward, strike, timeToExpiry, volatility } = inputs;
  const discount = inputs.discount ?? 1;
  const totalVol = volatility * Math.sqrt(Math.max(timeToExpiry, 0));
  // Price the OTM side and add intrinsic through parity: accurate for deep ITM and OTM alike.
  const otmType: OptionType = forward >= strike ? 'put' : 'call';
  const otm = undiscountedPrice(otmType, forward, strike, totalVol);
  const value = otmType === optionType ? otm : otm + intrinsicValue(optionType, forward, strike);
  return discount * value;
}

/** Black-76 price and greeks (see the header for units). */
export function black76(inputs: Black76Inputs): PricedOption {
  const { optionType, forward, strike, timeToExpiry, volatility } = inputs;
  const discount = inputs.discount ?? 1;
  const price = black76Price(inputs);
  const t = Math.max(timeToExpiry, 0);
  const sqrtT = Math.sqrt(t);
  const totalVol = volatility * sqrtT;
  if (!(totalVol > 0)) {
    const inTheMoney = optionType === 'call' ? forward > strike : forward < strike;
    const delta = inTheMoney ? (optionType === 'call' ? discount : -discount) : 0;
    return { price, delta, gamma: 0, vega: 0, theta: 0 };
  }
  const d1 = Math.log(forward / strike) / totalVol + totalVol / 2;
  const density = normPdf(d1);
  const delta = optionType === 'call' ? discount * normCdf(d1) : -discount * normCdf(-d1);
  const gamma = (discount * density) / (forward * totalVol);
  const vega = discount * forward * density * sqrtT;
  // ∂V/∂t at fixed F, σ, r: −F·φ(d1)·σ/(2√T)·D plus the discounting drift r·V (r = −ln D / T).
  const rate = discount === 1 ? 0 : -Math.log(discount) / t;
  const theta = (-discount * forward * density * volatility) / (2 * sqrtT) + rate * price;
  return { price, delta, gamma, vega, theta };
}
