/**
 * Instrument economics: the value of `lots` at `price` in settlement-currency minor units, fees,
 * and realised PnL, all in exact integer arithmetic.
 *
 * Value of a fill (settlement minor units, never negative):
 * - quote currency == settlement currency (linear futures/perpetuals, inverse and linear options,
 *   spot): value = quantity × price, i.e. lots × ticks × F with F a reduced rational.
 * - inverse futures/perpetuals (quantity in USD, settled in coin): value = quantity / price,
 *   i.e. lots × F / ticks.
 * Rounding: to the nearest minor unit, halves away from zero (exact: integer numerator and
 * denominator, BigInt fallback beyond 2^53). Fees round up (a fee never undercharges; a rebate
 * never overpays). Settlement values (`valueAt`, `valueOfTicks`, `optionPayoff`) round one way,
 * chosen by the caller against the holder, so the venue never pays out a rounding unit.
 *
 * Realised PnL on closing part of a position (dir = +1 "value grows with price", -1 inverse
 * futures whose coin value falls as the price rises; σ = sign of the position):
 *   pnl = dir × (σ × exitValue − removedCost)
 * where removedCost = round(openCost × closedLots / |size|), openCost the signed cost basis.
 */

import { currencyDecimals } from '../core/types.ts';
import { parseDecimal, type ScaledDecimal } from '../domain/decimal.ts';
import type { Instrument } from '../domain/instrument.ts';

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** numerator / denominator rounded to the nearest integer, halves away from zero. */
export function divRound(numerator: number, denominator: number): number {
  if (Math.abs(numerator) <= MAX_SAFE && denominator <= MAX_SAFE) {
    const negative = numerator < 0;
    const magnitude = negative ? -numerator : numerator;
    let quotient = Math.floor(magnitude / denominator);
    let remainder = magnitude - quotient * denominator;
    if (remainder < 0) {
      // float division rounded up to the next integer near 2^53
      quotient -= 1;
      remainder += denominator;
    }
    const rounded = remainder * 2 >= denominator ? quotient + 1 : quotient;
    return negative ? -rounded : rounded;
  }
  return bigDivRound(BigInt(numerator), BigInt(denominator));
}

function bigDivRound(numerator: bigint, denominator: bigint): number {
  const negative = numerator < 0n;
  const magnitude = negative ? -numerator : numerator;
  let quotient = magnitude / denominator;
  if ((magnitude % denominator) * 2n >= denominator) quotient += 1n;
  return Number(negative ? -quotient : quotient);
}

/** a × b / c, rounded to nearest (halves away from zero), exact for safe-integer inputs. */
export function mulDivRound(a: number, b: number, c: number): number {
  const product = a * b;
  if (Math.abs(product) <= MAX_SAFE) return divRound(product, c);
  return bigDivRound(BigInt(a) * BigInt(b), BigInt(c));
}

/** a × b / c for non-negative safe integers, rounded down, exact past 2^53. */
export function mulDivFloor(a: number, b: number, c: number): number {
  return mulDiv(a, b, c, false);
}

/** a × b / c for non-negative inputs, rounded up or down. */
function mulDiv(a: number, b: number, c: number, roundUp: boolean): number {
  const product = a * b;
  if (product <= MAX_SAFE) {
    let quotient = Math.floor(product / c);
    if (quotient * c > product) quotient -= 1;
    return roundUp && quotient * c < product ? quotient + 1 : quotient;
  }
  const big = BigInt(a) * BigInt(b);
  const quotient = big / BigInt(c);
  return Number(roundUp && big % BigInt(c) > 0n ? quotient + 1n : quotient);
}

/** A one-way rounding of a signed value: `floor` toward −∞, `ceil` toward +∞. */
export type Rounding = 'floor' | 'ceil';

/** numerator / denominator (denominator > 0) rounded toward −∞ or +∞, exactly. */
function divDirected(numerator: bigint, denominator: bigint, rounding: Rounding): number {
  let quotient = numerator / denominator; // truncated toward zero
  if (numerator % denominator !== 0n) {
    if (rounding === 'floor' && numerator < 0n) quotient -= 1n;
    else if (rounding === 'ceil' && numerator > 0n) quotient += 1n;
  }
  return Number(quotient);
}

/** Largest double product taken as is: below 2^52 a double still resolves halves. */
const FAST_PRODUCT_LIMIT = 2 ** 52;
/** Relative error the double product `base × price × 10^shift` can carry (four roundings), with room. */
const PRODUCT_TOLERANCE = 1e-15;

/**
 * ceil(base × price × 10^shift), `price` taken as the decimal it prints as (the index a trade
 * shows), exactly. The double product is used when it is clearly inside a unit; near a whole unit
 * (an index in cents times whole satoshi lands on one exactly) its rounding errors decide the
 * ceiling, so there the product is taken in integers.
 */
export function ceilTimesPrice(base: number, price: number, shift: number): number {
  const approx = base * price * 10 ** shift;
  if (approx >= 0 && approx < FAST_PRODUCT_LIMIT) {
    const ceiling = Math.ceil(approx);
    const tolerance = approx * PRODUCT_TOLERANCE;
    if (ceiling - approx > tolerance && approx - (ceiling - 1) > tolerance) return ceiling;
  }
  const decimal = decimalOfNumber(price);
  const exponent = shift - decimal.scale;
  const numerator = BigInt(base) * decimal.units * (exponent > 0 ? 10n ** BigInt(exponent) : 1n);
  return divDirected(numerator, exponent < 0 ? 10n ** BigInt(-exponent) : 1n, 'ceil');
}

/** A finite number as the exact decimal its shortest printed form (`String`) names. */
function decimalOfNumber(value: number): ScaledDecimal {
  const [mantissa, exponentText] = String(value).split('e');
  const parsed = parseDecimal(mantissa!, 'price');
  const exponent = exponentText === undefined ? 0 : Number(exponentText);
  return exponent <= parsed.scale
    ? { units: parsed.units, scale: parsed.scale - exponent }
    : { units: parsed.units * 10n ** BigInt(exponent - parsed.scale), scale: 0 };
}

interface Rational {
  readonly numerator: number;
  readonly denominator: number;
}

function reduce(numerator: bigint, denominator: bigint): Rational {
  const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? a : gcd(b, a % b));
  const divisor = gcd(numerator, denominator);
  const n = numerator / divisor;
  const d = denominator / divisor;
  if (n > BigInt(MAX_SAFE) || d > BigInt(MAX_SAFE)) throw new Error('instrument grid factor out of range');
  return { numerator: Number(n), denominator: Number(d) };
}

/** A fee rate as parts per 10^9 (rates are decimal strings such as "0.0003" or "-0.0001"). */
function ratePpb(rate: string): number {
  const parsed = parseDecimal(rate, 'commission');
  if (parsed.scale > 9) throw new Error(`commission ${rate} has more than 9 decimals`);
  return Number(parsed.units * 10n ** BigInt(9 - parsed.scale));
}

const PPB = 1_000_000_000;

/** Per-instrument money maths, built once when the instrument is listed. */
export class Economics {
  readonly settlementCurrency: string;
  /** +1 when value grows with price, -1 for inverse futures. */
  readonly direction: 1 | -1;
  readonly isOption: boolean;
  readonly isCall: boolean;
  /** Options: the strike in USD (NaN otherwise). */
  readonly strike: number;
  /**
   * Options that can cover each other's shorts (option-offsets.ts): same underlying, settlement
   * currency, expiry, type and lot. Null for anything else.
   */
  readonly coverGroup: string | null;
  readonly isSpot: boolean;
  /** A dated future or perpetual (not a combo). */
  readonly isFuture: boolean;
  readonly isInverseFuture: boolean;
  readonly baseCurrency: string;
  readonly makerRatePpb: number;
  readonly takerRatePpb: number;
  private readonly factor: Rational;
  /** lots → base-coin minor units (spot delivery, option underlying notional). */
  private readonly baseFactor: Rational;

  constructor(readonly instrument: Instrument) {
    const spec = instrument.spec;
    this.isOption = spec.kind === 'option';
    this.isCall = spec.optionType === 'call';
    this.strike = spec.strike === null ? Number.NaN : Number(spec.strike);
    this.coverGroup = this.isOption
      ? [
          spec.baseCurrency,
          spec.settlementCurrency,
          spec.expiration,
          spec.optionType,
          spec.minTradeAmount,
        ].join('|')
      : null;
    this.isSpot = spec.kind === 'spot';
    this.isFuture = spec.kind === 'future';
    this.isInverseFuture = spec.quoteCurrency !== spec.settlementCurrency && !this.isSpot;
    this.settlementCurrency = this.isSpot ? spec.quoteCurrency : spec.settlementCurrency;
    this.baseCurrency = spec.baseCurrency;
    this.direction = this.isInverseFuture ? -1 : 1;
    this.makerRatePpb = ratePpb(spec.makerCommission);
    this.takerRatePpb = ratePpb(spec.takerCommission);
    const lot = instrument.amountGrid;
    const tick = instrument.priceGrid;
    const money = 10n ** BigInt(currencyDecimals(this.settlementCurrency));
    if (this.isInverseFuture) {
      // (lots·lotUnits/10^aS) / (ticks·tickUnits/10^pS) · 10^d
      this.factor = reduce(
        lot.stepUnits * 10n ** BigInt(tick.scale) * money,
        tick.stepUnits * 10n ** BigInt(lot.scale),
      );
    } else {
      this.factor = reduce(lot.stepUnits * tick.stepUnits * money, 10n ** BigInt(lot.scale + tick.scale));
    }
    this.baseFactor = reduce(
      lot.stepUnits * 10n ** BigInt(currencyDecimals(spec.baseCurrency)),
      10n ** BigInt(lot.scale),
    );
  }

  /** Value of `lots` at `price` ticks in settlement minor units (≥ 0 for price > 0). */
  value(lots: number, price: number): number {
    const f = this.factor;
    if (this.isInverseFuture) {
      if (price <= 0) return 0;
      return mulDivRound(lots, f.numerator, price * f.denominator);
    }
    const product = lots * price;
    if (Math.abs(product) <= MAX_SAFE) return mulDivRound(product, f.numerator, f.denominator);
    return bigDivRound(BigInt(lots) * BigInt(price) * BigInt(f.numerator), BigInt(f.denominator));
  }

  /** `lots` as base-coin minor units (spot delivery, inverse option underlying notional). */
  baseAmount(lots: number): number {
    return mulDivRound(lots, this.baseFactor.numerator, this.baseFactor.denominator);
  }

  /**
   * Fee in settlement minor units (negative = rebate), rounded up.
   * Options: rate × underlying notional, capped at 12.5% of the premium (Deribit's model);
   * the underlying notional is the coin amount for coin-settled options, amount × index for
   * stablecoin-settled ones (premium-based when no index is known).
   * Everything else: rate × traded value.
   */
  fee(lots: number, price: number, liquidity: 'M' | 'T', indexPrice: number | null): number {
    const rate = liquidity === 'M' ? this.makerRatePpb : this.takerRatePpb;
    if (rate === 0) return 0;
    const rebate = rate < 0;
    const magnitudeRate = rebate ? -rate : rate;
    const premium = this.value(lots, price);
    let magnitude: number;
    if (!this.isOption) {
      magnitude = mulDiv(premium, magnitudeRate, PPB, !rebate);
    } else {
      const underlying = this.underlyingNotional(lots, indexPrice) ?? premium;
      const byUnderlying = mulDiv(underlying, magnitudeRate, PPB, !rebate);
      const cap = mulDiv(premium, 125, 1000, !rebate);
      magnitude = Math.min(byUnderlying, cap);
    }
    return rebate ? -magnitude : magnitude;
  }

  /** Underlying notional of an option amount in settlement minor units, or null if unknown. */
  underlyingNotional(lots: number, indexPrice: number | null): number | null {
    const base = this.baseAmount(lots);
    if (this.settlementCurrency === this.baseCurrency) return base;
    if (indexPrice === null) return null;
    return ceilTimesPrice(
      base,
      indexPrice,
      currencyDecimals(this.settlementCurrency) - currencyDecimals(this.baseCurrency),
    );
  }

  /**
   * Value of `lots` at a price that need not be on the tick grid (a settlement index), exactly,
   * rounded once to the minor unit in the direction given (signed: `floor` toward −∞).
   */
  valueAt(lots: number, price: ScaledDecimal, rounding: Rounding): number {
    const tick = this.instrument.priceGrid;
    // price in ticks = price.units · 10^tick.scale / (10^price.scale · tick.stepUnits)
    const tickNumerator = price.units * 10n ** BigInt(tick.scale);
    const tickDenominator = 10n ** BigInt(price.scale) * tick.stepUnits;
    const f = this.factor;
    const numerator = BigInt(lots) * BigInt(f.numerator);
    if (this.isInverseFuture) {
      return tickNumerator <= 0n
        ? 0
        : divDirected(numerator * tickDenominator, BigInt(f.denominator) * tickNumerator, rounding);
    }
    return divDirected(numerator * tickNumerator, BigInt(f.denominator) * tickDenominator, rounding);
  }

  /** `value` of `lots` at `price` whole ticks, rounded in the direction given instead of to nearest. */
  valueOfTicks(lots: number, price: number, rounding: Rounding): number {
    const tick = this.instrument.priceGrid;
    return this.valueAt(lots, { units: BigInt(price) * tick.stepUnits, scale: tick.scale }, rounding);
  }

  /**
   * An option's payoff at expiry for `lots` against the settlement index, exactly, in settlement
   * minor units rounded once in the direction given: max(±(S − K), 0) / S coin for coin-settled
   * options, max(±(S − K), 0) in the settlement currency otherwise.
   */
  optionPayoff(lots: number, index: ScaledDecimal, rounding: Rounding): number {
    const strike = parseDecimal(this.instrument.spec.strike!, 'strike');
    const scale = Math.max(strike.scale, index.scale);
    const s = index.units * 10n ** BigInt(scale - index.scale);
    const k = strike.units * 10n ** BigInt(scale - strike.scale);
    const intrinsic = this.isCall ? s - k : k - s;
    if (intrinsic <= 0n) return 0;
    // The underlying in base minor units, exactly: lots × baseFactor.
    const base = BigInt(lots) * BigInt(this.baseFactor.numerator);
    const baseDenominator = BigInt(this.baseFactor.denominator);
    if (this.settlementCurrency === this.baseCurrency)
      return divDirected(base * intrinsic, baseDenominator * s, rounding);
    const decimals = currencyDecimals(this.settlementCurrency) - currencyDecimals(this.baseCurrency) - scale;
    return decimals >= 0
      ? divDirected(base * intrinsic * 10n ** BigInt(decimals), baseDenominator, rounding)
      : divDirected(base * intrinsic, baseDenominator * 10n ** BigInt(-decimals), rounding);
  }

  /** Display average price in ticks for a signed cost basis over `lots` (0 when flat). */
  averagePrice(openCost: number, lots: number): number {
    if (lots === 0) return 0;
    const f = this.factor;
    const cost = Math.abs(openCost);
    if (this.isInverseFuture) return cost === 0 ? 0 : (Math.abs(lots) * f.numerator) / (cost * f.denominator);
    return (cost * f.denominator) / (Math.abs(lots) * f.numerator);
  }
}
