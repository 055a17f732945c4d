/**
 * Volatility surface: SSVI (Gatheral & Jacquier, "Arbitrage-free SVI volatility surfaces",
 * 2014). Each expiry's smile is a raw-SVI slice in total variance w(k) = σ²(k)·T of
 * log-moneyness k = ln(K/F):
 *
 *   w(k, θ) = θ/2 · (1 + ρ·φ(θ)·k + √((φ(θ)·k + ρ)² + 1 − ρ²)),
 *   φ(θ)    = η / (θ^γ · (1 + θ)^(1−γ))      (power-law curvature)
 *
 * θ(T) is the at-the-money total variance, interpolated LINEARLY IN TOTAL VARIANCE between
 * term-structure points (flat ATM vol outside them), and kept non-decreasing in T.
 *
 * No-arbitrage: with θ non-decreasing there is no calendar arbitrage; with η·(1 + |ρ|) ≤ 2 and
 * 0 < γ ≤ ½ no butterfly arbitrage (Gatheral–Jacquier, Remark 4.4). `createSurface` refuses
 * parameters outside those bounds.
 *
 * The surface is sticky-moneyness: it is a function of k = ln(K/F), so smiles move with the
 * forward.
 */
import { SeededRandom } from './random.ts';

export interface TermPoint {
  /** Years to expiry. */
  readonly timeToExpiry: number;
  /** ATM implied vol, 0.55 = 55%. */
  readonly atmVol: number;
}

export interface SurfaceParameters {
  /** ATM term structure, any order; at least one point. */
  readonly term: readonly TermPoint[];
  /** Skew: correlation-like, in (−1, 1); negative = puts richer. */
  readonly rho: number;
  /** Curvature level η > 0. */
  readonly eta: number;
  /** Curvature decay with total variance, 0 < γ ≤ ½. */
  readonly gamma: number;
}

export interface VolSurface {
  readonly parameters: SurfaceParameters;
  /** ATM total variance θ(T). */
  atmTotalVariance(timeToExpiry: number): number;
  /** Total variance w(k, T). */
  totalVariance(logMoneyness: number, timeToExpiry: number): number;
  /** Implied volatility for strike K and forward F at T years (T > 0). */
  volatility(strike: number, forward: number, timeToExpiry: number): number;
}

/** Shortest expiry used for the surface: below ~1 minute the smile is evaluated at 1 minute. */
const MIN_TIME = 1 / (365 * 24 * 60);

export function validateSurface(parameters: SurfaceParameters): string | null {
  const { rho, eta, gamma, term } = parameters;
  if (term.length === 0) return 'the ATM term structure needs at least one point';
  if (term.some((point) => !(point.timeToExpiry > 0) || !(point.atmVol > 0))) {
    return 'term points need positive time and volatility';
  }
  if (!(Math.abs(rho) < 1)) return 'rho must lie in (-1, 1)';
  if (!(eta > 0) || eta * (1 + Math.abs(rho)) > 2) return 'eta must be positive with eta·(1+|rho|) ≤ 2';
  if (!(gamma > 0 && gamma <= 0.5)) return 'gamma must lie in (0, 0.5]';
  return null;
}

export function createSurface(parameters: SurfaceParameters): VolSurface {
  const problem = validateSurface(parameters);
  if (problem !== null) throw new Error(`invalid volatility surface: ${problem}`);
  const sorted = [...parameters.term].sort((x, y) => x.timeToExpiry - y.timeToExpiry);
  // Total variance at the nodes, made non-decreasing (no calendar arbitrage).
  const times = sorted.map((point) => point.timeToExpiry);
  const variances: number[] = [];
  for (const point of sorted) {
    const variance = point.atmVol * point.atmVol * point.timeToExpiry;
    variances.push(Math.max(variance, variances[variances.length - 1] ?? 0));
  }
  const { rho, eta, gamma } = parameters;

  const atmTotalVariance = (timeToExpiry: number): number => {
    const t = Math.max(timeToExpiry, MIN_TIME);
    const last = times.length - 1;
    if (t <= times[0]!) return (variances[0]! / times[0]!) * t;
    if (t >= times[last]!) return (variances[last]! / times[last]!) * t;
    let i = 1;
    while (times[i]! < t) i++;
    const weight = (t - times[i - 1]!) / (times[i]! - times[i - 1]!);
    return variances[i - 1]! + weight * (variances[i]! - variances[i - 1]!);
  };

  const totalVariance = (logMoneyness: number, timeToExpiry: number): number => {
    const theta = atmTotalVariance(timeToExpiry);
    const phi = eta / (theta ** gamma * (1 + theta) ** (1 - gamma));
    const x = phi * logMoneyness;
    return (theta / 2) * (1 + rho * x + Math.sqrt((x + rho) * (x + rho) + 1 - rho * rho));
  };

  return {
    parameters,
    atmTotalVariance,
    totalVariance,
    volatility(strike, forward, timeToExpiry) {
      const t = Math.max(timeToExpiry, MIN_TIME);
      return Math.sqrt(totalVariance(Math.log(strike / forward), t) / t);
    },
  };
}

const DAY = 1 / 365;

/** Default surface parameters per currency (levels typical of the listed crypto markets). */
export const DEFAULT_SURFACES: Readonly<Record<string, SurfaceParameters>> = {
  BTC: {
    term: [
      { timeToExpiry: DAY, atmVol: 0.48 },
      { timeToExpiry: 7 * DAY, atmVol: 0.5 },
      { timeToExpiry: 30 * DAY, atmVol: 0.53 },
      { timeToExpiry: 90 * DAY, atmVol: 0.56 },
      { timeToExpiry: 365 * DAY, atmVol: 0.6 },
    ],
    rho: -0.15,
    eta: 1.2,
    gamma: 0.45,
  },
  ETH: {
    term: [
      { timeToExpiry: DAY, atmVol: 0.62 },
      { timeToExpiry: 7 * DAY, atmVol: 0.65 },
      { timeToExpiry: 30 * DAY, atmVol: 0.68 },
      { timeToExpiry: 90 * DAY, atmVol: 0.7 },
      { timeToExpiry: 365 * DAY, atmVol: 0.72 },
    ],
    rho: -0.2,
    eta: 1.3,
    gamma: 0.45,
  },
};

/** Generic parameters for a currency with no default of its own. */
const FALLBACK_SURFACE: SurfaceParameters = DEFAULT_SURFACES.ETH!;

/**
 * The default surface for a currency, jittered deterministically by `seed` (ATM levels ±5%,
 * skew ±0.05) so different seeds give different but sane markets. Seed 0 = the defaults.
 */
export function defaultSurface(currency: string, seed = 0): VolSurface {
  const base = DEFAULT_SURFACES[currency] ?? FALLBACK_SURFACE;
  if (seed === 0) return createSurface(base);
  const random = SeededRandom.fromSeed(seed).fork(currency);
  const level = 1 + 0.1 * (random.next() - 0.5);
  const rho = Math.max(-0.9, Math.min(0.9, base.rho + 0.1 * (random.next() - 0.5)));
  const eta = Math.min(base.eta, 1.9 / (1 + Math.abs(rho)));
  return createSurface({
    ...base,
    rho,
    eta,
    term: base.term.map((point) => ({ ...point, atmVol: point.atmVol * level })),
  });
}
