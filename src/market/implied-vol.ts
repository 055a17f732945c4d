/**
 * Implied volatility from a Black-76 price: robust for deep in- and out-of-the-money options.
 *
 * Method:
 * 1. Undiscount the price and move to the out-of-the-money side through put–call parity
 *    (an ITM call's time value equals the OTM put's price). The OTM price b(s) is a smooth,
 *    strictly increasing function of the total volatility s = σ√T, from 0 to F (call) or
 *    K (put), and it carries all the information; intrinsic value carries none.
 * 2. Solve ln b(s) = ln target: in log space the very steep small-s wing becomes tame, so
 *    the same iteration works for prices of 1e-30·F and 0.99·F.
 * 3. Safeguarded Newton: keep a bracket [lo, hi] with b(lo) < target < b(hi); take the
 *    Newton step when it lands strictly inside the bracket, else bisect (geometrically once
 *    lo > 0). Stop when the price matches to 1e-14 relative or the bracket collapses.
 *
 * Accuracy: the re-priced value matches the input to ~1e-12 relative wherever Black's formula
 * is itself that accurate in doubles; with a tiny σ√T just off the money the formula's two
 * terms cancel (the test quantifies this) and the match is to that noise floor instead.
 *
 * Refusals are results, not exceptions: a price below intrinsic value (no volatility gives
 * it), at or above the forward/strike bound (no finite volatility gives it) or non-finite
 * inputs. A price equal to intrinsic value gives volatility 0.
 */
import type { OptionType } from '../domain/instrument.ts';
import { intrinsicValue, undiscountedPrice } from './black76.ts';
import { normPdf } from './normal.ts';

export interface ImpliedVolInputs {
  readonly optionType: OptionType;
  readonly price: number;
  readonly forward: number;
  readonly strike: number;
  readonly timeToExpiry: number;
  readonly discount?: number;
}

export type ImpliedVolRefusal = 'invalid_input' | 'below_intrinsic' | 'above_maximum' | 'expired';

export type ImpliedVolResult =
  | { readonly ok: true; readonly volatility: number; readonly iterations: number }
  | { readonly ok: false; readonly reason: ImpliedVolRefusal; readonly message: string };

const MAX_ITERATIONS = 200;
const PRICE_TOLERANCE = 1e-14;
const MAX_TOTAL_VOL = 60;
const INTRINSIC_ROUNDING = 1e-14;

function refuse(reason: ImpliedVolRefusal, message: string): ImpliedVolResult {
  return { ok: false, reason, message };
}

/** Black-76 implied volatility (annualised) of a USD price; see the module header. */
export function impliedVolatility(inputs: ImpliedVolInputs): ImpliedVolResult {
  const { optionType, forward, strike, timeToExpiry } = inputs;
  const discount = inputs.discount ?? 1;
  if (![inputs.price, forward, strike, timeToExpiry, discount].every(Number.isFinite)) {
    return refuse('invalid_input', 'price, forward, strike, time and discount must be finite numbers');
  }
  if (forward <= 0 || strike <= 0 || discount <= 0) {
    return refuse('invalid_input', 'forward, strike and discount must be positive');
  }
  if (timeToExpiry <= 0) return refuse('expired', 'the option has no time left to expiry');
  const price = inputs.price / discount;
  const intrinsic = intrinsicValue(optionType, forward, strike);
  const upperBound = optionType === 'call' ? forward : strike;
  // Undiscounting rounds; a few ulps under intrinsic value is intrinsic value (volatility 0).
  if (price < intrinsic * (1 - INTRINSIC_ROUNDING)) {
    return refuse(
      'below_intrinsic',
      `price ${inputs.price} is below intrinsic value ${intrinsic * discount}`,
    );
  }
  if (price >= upperBound) {
    return refuse(
      'above_maximum',
      `price ${inputs.price} is at or above the ${optionType === 'call' ? 'forward' : 'strike'} bound ${upperBound * discount}`,
    );
  }
  const otmType: OptionType = forward >= strike ? 'put' : 'call';
  const target = otmType === optionType ? price : price - intrinsic;
  if (!(target > 0)) return { ok: true, volatility: 0, iterations: 0 };
  const solved = solveTotalVol(otmType, forward, strike, target);
  return { ok: true, volatility: solved.totalVol / Math.sqrt(timeToExpiry), iterations: solved.iterations };
}

function solveTotalVol(
  otmType: OptionType,
  forward: number,
  strike: number,
  target: number,
): { totalVol: number; iterations: number } {
  const logTarget = Math.log(target);
  const logMoneyness = Math.log(forward / strike);
  let lo = 0;
  let hi = 1;
  let iterations = 0;
  while (undiscountedPrice(otmType, forward, strike, hi) < target && hi < MAX_TOTAL_VOL) {
    lo = hi;
    hi *= 2;
    iterations++;
  }
  // Start from the Brenner–Subrahmanyam ATM guess clipped into the bracket.
  let s = Math.min(Math.max((target / Math.sqrt(forward * strike)) * Math.sqrt(2 * Math.PI), lo), hi);
  if (s <= lo || s >= hi) s = lo > 0 ? Math.sqrt(lo * hi) : hi / 2;
  let best = s;
  let bestError = Number.POSITIVE_INFINITY;
  for (; iterations < MAX_ITERATIONS; iterations++) {
    const value = undiscountedPrice(otmType, forward, strike, s);
    const error = Math.abs(value - target);
    if (error < bestError) {
      best = s;
      bestError = error;
    }
    if (value > 0 && error <= PRICE_TOLERANCE * target) break;
    if (value < target) lo = s;
    else hi = s;
    if (hi - lo <= 4 * Number.EPSILON * hi) break;
    let next = Number.NaN;
    if (value > 0) {
      const d1 = logMoneyness / s + s / 2;
      const vega = forward * normPdf(d1);
      // Newton on ln b(s): step = (ln target − ln b) · b / b'.
      if (vega > 0) next = s + ((logTarget - Math.log(value)) * value) / vega;
    }
    if (!(next > lo && next < hi)) next = lo > 0 ? Math.sqrt(lo * hi) : hi / 2;
    s = next;
  }
  // Near the noise floor of the price function the last iterate need not be the closest.
  return { totalVol: best, iterations };
}
