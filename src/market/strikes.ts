/**
 * Strike grids per expiry, around the index.
 *
 * The step is a "nice" number (1, 2, 2.5 or 5 × 10^n) near a quarter of a one-standard-deviation
 * move to expiry (index·σ·√T / 4), never finer than 0.5% of the index: dailies get fine steps,
 * quarterlies coarse ones. Strikes are multiples of the step covering ±`standardDeviations`·σ√T
 * in log-moneyness, at least `minEachSide` and at most `maxEachSide` strikes on each side of
 * the at-the-money strike. The grid depends only on (index, T, σ, config): deterministic.
 */

export interface StrikeGridConfig {
  readonly standardDeviations: number;
  readonly minEachSide: number;
  readonly maxEachSide: number;
}

export const DEFAULT_STRIKE_GRID: StrikeGridConfig = {
  standardDeviations: 2.5,
  minEachSide: 4,
  maxEachSide: 10,
};

/**
 * The nice number (1, 2, 2.5, 5 × 10^n) nearest to `value` in log terms among those ≥ `floor`
 * (the nearest overall could be finer than the floor: 250 for a floor of 325).
 */
export function niceStep(value: number, floor: number): number {
  const target = Math.max(value, floor);
  const magnitude = 10 ** Math.floor(Math.log10(target));
  let best = Number.POSITIVE_INFINITY;
  for (const multiple of [1, 2, 2.5, 5, 10, 20]) {
    const candidate = multiple * magnitude;
    if (candidate < floor) continue;
    if (Math.abs(Math.log(candidate / target)) < Math.abs(Math.log(best / target))) best = candidate;
  }
  return best;
}

export function strikeStep(index: number, timeToExpiry: number, volatility: number): number {
  return niceStep((index * volatility * Math.sqrt(timeToExpiry)) / 4, index * 0.005);
}

/** Strikes for one expiry, ascending. */
export function strikeGrid(
  index: number,
  timeToExpiry: number,
  volatility: number,
  config: StrikeGridConfig = DEFAULT_STRIKE_GRID,
): number[] {
  const step = strikeStep(index, timeToExpiry, volatility);
  const atm = Math.round(index / step) * step;
  const width = config.standardDeviations * volatility * Math.sqrt(timeToExpiry);
  const strikes: number[] = [];
  for (let i = -config.maxEachSide; i <= config.maxEachSide; i++) {
    const strike = roundStrike(atm + i * step);
    if (strike <= 0) continue;
    const inside = Math.abs(Math.log(strike / index)) <= width || Math.abs(i) <= config.minEachSide;
    if (inside) strikes.push(strike);
  }
  return strikes;
}

/** Removes binary-float noise from step multiples (steps like 2.5 or 0.5). */
function roundStrike(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
