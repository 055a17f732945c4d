/**
 * Exact decimal parsing and printing at the edge of the core.
 *
 * Invariants:
 * - Inside the core every price and size is an integer count of grid steps (ticks, lots,
 *   minor currency units). Decimal strings are parsed here exactly, with no floating point.
 * - A value off the grid, with more decimals than the grid allows, or outside the safe
 *   integer range is an error naming the field, never a silent rounding.
 * - `formatSteps(parse(x))` prints the shortest exact decimal string (no trailing zeros).
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

  constructor(readonly step: string) {
    const parsed = parseDecimal(step, 'step');
    if (parsed.units <= 0n) throw new Error(`grid step must be positive, got ${step}`);
    this.scale = parsed.scale;
    this.stepUnits = parsed.units;
  }

  /**
   * Parses a decimal string into a whole number of steps.
   * Errors name `field`: not a number, too many decimals, off the grid, or too large.
   */
  parse(text: string, field: string): number {
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
          : Math.round(steps);
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
