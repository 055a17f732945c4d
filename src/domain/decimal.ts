/**
 * Exact decimal parsing and printing at the edge of the core.
 *
 * Invariants:
 * - Inside the core every price and size is an integer count of grid steps (ticks, lots,
 *   minor currency units). Decimal strings are parsed here exactly, with no floating point.
 * - A value off the grid, with more decimals than the grid allows, or outside the safe
 *   integer range is an error naming the field, never a silent rounding.
 * - `formatSteps(parse(x))` prints the shortest exact decimal string (no trailing zeros).
 * - Grids parse and print plain decimals of up to 15 digits with JS integers (exact below 2^53,
 *   and checked to stay there); anything else takes the bigint path, which also names every error.
 *   Both paths give the same answers (property-tested): the fast one only allocates less.
 */
import { VenueError } from './errors.ts';

const DECIMAL_PATTERN = /^(-)?(\d+)(?:\.(\d+))?$/;

/** A decimal value as a scaled integer: `units / 10^scale`. */
export interface ScaledDecimal {
  readonly units: bigint;
  readonly scale: number;
}

/** Parses a decimal string exactly. Accepts an optional sign; rejects exponents and blanks. */
export function parseDecimal(text: string, field: string): ScaledDecimal {
  const match = DECIMAL_PATTERN.exec(text.trim());
  if (text.trim() !== text || match === null) {
    throw new VenueError('invalid_params', `${field} must be a decimal number, got '${text}'`, { field });
  }
  const [, sign, whole = '0', fraction = ''] = match;
  const trimmedFraction = fraction.replace(/0+$/, '');
  const magnitude = BigInt(whole + trimmedFraction);
  return { units: sign ? -magnitude : magnitude, scale: trimmedFraction.length };
}

/** Rescales an exact decimal to `scale` places; throws when that would lose digits. */
export function toScale(value: ScaledDecimal, scale: number, field: string): bigint {
  if (value.scale > scale) {
    throw new VenueError('precision_exceeded', `${field} has more than ${scale} decimal places`, {
      field,
      maxDecimals: scale,
    });
  }
  return value.units * 10n ** BigInt(scale - value.scale);
}

/** Prints `units / 10^scale` as the shortest exact decimal string. */
export function formatScaled(units: bigint | number, scale: number): string {
  const big = typeof units === 'bigint' ? units : BigInt(units);
  const negative = big < 0n;
  const digits = (negative ? -big : big).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const fraction = digits.slice(digits.length - scale).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** Powers of ten that are exact JS numbers (10^0 to 10^15). */
const POW10: readonly number[] = Array.from({ length: 16 }, (_, i) => 10 ** i);
/** Digits a plain decimal may have for its value to be an exact JS integer (< 10^15 < 2^53). */
const MAX_SMALL_DIGITS = 15;

/** The scale of the last `parseSmallDecimal` result (a second return value, not allocated). */
let smallScale = 0;

/**
 * `-?\d+(\.\d+)?` with at most 15 digits, as integer units of 10^-smallScale with trailing fraction
 * zeros dropped (the value `parseDecimal` gives); NaN for any other text.
 */
function parseSmallDecimal(text: string): number {
  const length = text.length;
  const negative = length > 0 && text.charCodeAt(0) === 45;
  let units = 0;
  let digits = 0;
  let scale = 0;
  let dot = -1;
  for (let i = negative ? 1 : 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 48 && code <= 57) {
      units = units * 10 + (code - 48);
      digits++;
      if (dot >= 0) scale++;
    } else if (code === 46 && dot < 0) {
      dot = i;
    } else {
      return Number.NaN;
    }
  }
  if (digits === 0 || digits > MAX_SMALL_DIGITS || dot === (negative ? 1 : 0) || dot === length - 1) {
    return Number.NaN;
  }
  while (scale > 0 && units % 10 === 0) {
    units /= 10;
    scale--;
  }
  smallScale = scale;
  return negative ? -units : units;
}

/** `formatScaled` for a safe integer and a scale of at most 15. */
function formatSmall(units: number, scale: number): string {
  if (scale === 0) return String(units);
  const magnitude = Math.abs(units);
  let fraction = magnitude % POW10[scale]!;
  const whole = (magnitude - fraction) / POW10[scale]!;
  const sign = units < 0 ? '-' : '';
  if (fraction === 0) return `${sign}${whole}`;
  let places = scale;
  while (fraction % 10 === 0) {
    fraction /= 10;
    places--;
  }
  return `${sign}${whole}.${String(fraction).padStart(places, '0')}`;
}

/** Number of decimal places in a decimal string such as "0.0005" (4) or "10" (0). */
export function decimalsOf(text: string): number {
  return parseDecimal(text, 'step').scale;
}

/**
 * A grid of equally spaced values: a tick size, a lot size, or a currency's minor unit.
 * Values on the grid are represented by their step count, an integer JS number.
 */
export class DecimalGrid {
  /** Decimal places used to express one step exactly. */
  readonly scale: number;
  /** The step in units of 10^-scale. */
  readonly stepUnits: bigint;
  /** `stepUnits` as a JS number for the fast paths; 0 (fast paths off) when it is not exact. */
  private readonly stepNumber: number;

  constructor(readonly step: string) {
    const parsed = parseDecimal(step, 'step');
    if (parsed.units <= 0n) throw new Error(`grid step must be positive, got ${step}`);
    this.scale = parsed.scale;
    this.stepUnits = parsed.units;
    this.stepNumber =
      parsed.units <= BigInt(Number.MAX_SAFE_INTEGER) && this.scale <= MAX_SMALL_DIGITS
        ? Number(parsed.units)
        : 0;
  }

  /**
   * Parses a decimal string into a whole number of steps.
   * Errors name `field`: not a number, too many decimals, off the grid, or too large.
   */
  parse(text: string, field: string): number {
    if (this.stepNumber > 0) {
      const units = parseSmallDecimal(text);
      if (!Number.isNaN(units) && smallScale <= this.scale) {
        const scaled = units * POW10[this.scale - smallScale]!;
        if (Number.isSafeInteger(scaled) && scaled % this.stepNumber === 0) {
          const steps = scaled / this.stepNumber;
          return steps === 0 ? 0 : steps;
        }
      }
    }
    return this.parseExact(text, field);
  }

  /** `parse` with bigints only: the reference the fast path must agree with, and every error. */
  parseExact(text: string, field: string): number {
    const scaled = toScale(parseDecimal(text, field), this.scale, field);
    if (scaled % this.stepUnits !== 0n) {
      throw new VenueError('off_grid', `${field} ${text} is not a multiple of ${this.step}`, {
        field,
        step: this.step,
      });
    }
    return toSafeInteger(scaled / this.stepUnits, field);
  }

  /** Prints a step count back as the exact decimal string. */
  format(steps: number | bigint): string {
    if (typeof steps === 'number' && this.stepNumber > 0) {
      const units = steps * this.stepNumber;
      if (Number.isSafeInteger(units)) return formatSmall(units, this.scale);
    }
    return this.formatExact(steps);
  }

  /** `format` with bigints only (the fast path's reference). */
  formatExact(steps: number | bigint): string {
    return formatScaled(BigInt(steps) * this.stepUnits, this.scale);
  }

  /** The decimal value of `steps` as a float, for pricing models and display only. */
  toNumber(steps: number): number {
    return (steps * Number(this.stepUnits)) / 10 ** this.scale;
  }

  /** Nearest step count to a float (pricing models), rounding half away from zero. */
  fromNumber(value: number, rounding: 'nearest' | 'down' | 'up' = 'nearest'): number {
    const steps = (value * 10 ** this.scale) / Number(this.stepUnits);
    const adjusted =
      rounding === 'down'
        ? Math.floor(steps + 1e-9)
        : rounding === 'up'
          ? Math.ceil(steps - 1e-9)
          : Math.sign(steps) * Math.round(Math.abs(steps)) + 0; // + 0: never -0
    return adjusted;
  }
}

/** Converts a bigint to a JS number, refusing anything outside the safe integer range. */
export function toSafeInteger(value: bigint, field: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new VenueError('invalid_params', `${field} is out of range`, { field });
  }
  return Number(value);
}
