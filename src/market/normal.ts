/**
 * Standard normal density and distribution with full relative accuracy in the tails.
 *
 * Option prices far out of the money are differences of tiny tail probabilities, and the
 * implied-volatility solver inverts them, so `normCdf(x)` must be accurate *relative* to its
 * value for very negative x (a plain `0.5 * (1 + erf)` loses every digit there).
 *
 * Method: for |z| = |x|/√2 < 1.25 a positive-term series for erf (no cancellation,
 * erf(z) = 2z/√π · e^{-z²} · Σ (2z²)^n / (1·3·…·(2n+1))); beyond, a continued fraction for
 * erfc evaluated with the modified Lentz algorithm. Both reach ~1e-15 relative. The seam is
 * where erfc = 1 − erf still keeps its digits (erfc(1.25) = 0.077); at 2.5, where it was, 1 − erf
 * had lost 3.4 of them. The fraction takes about 120 steps at the seam, 45 at 2.5.
 */

const SQRT_2 = Math.SQRT2;
const INV_SQRT_2PI = 1 / Math.sqrt(2 * Math.PI);
const INV_SQRT_PI = 1 / Math.sqrt(Math.PI);
const SERIES_LIMIT = 1.25;

/** The standard normal density φ(x). */
export function normPdf(x: number): number {
  return INV_SQRT_2PI * Math.exp(-0.5 * x * x);
}

/** erf(z) for 0 ≤ z < SERIES_LIMIT by the positive-term series. */
function erfSeries(z: number): number {
  const twoZ2 = 2 * z * z;
  let term = 1;
  let sum = 1;
  for (let n = 1; n < 200; n++) {
    term *= twoZ2 / (2 * n + 1);
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return 2 * z * INV_SQRT_PI * Math.exp(-z * z) * sum;
}

/**
 * erfc(z) for z ≥ SERIES_LIMIT: erfc(z) = e^{-z²}/√π · 1/(z + (1/2)/(z + 1/(z + (3/2)/(z + …)))),
 * i.e. the continued fraction b0 = z, a_k = k/2, b_k = z, by modified Lentz.
 */
function erfcContinuedFraction(z: number): number {
  const tiny = 1e-300;
  let f = z;
  let c = z;
  let d = 0;
  for (let k = 1; k < 500; k++) {
    const a = k / 2;
    d = z + a * d;
    if (d === 0) d = tiny;
    c = z + a / c;
    if (c === 0) c = tiny;
    d = 1 / d;
    const delta = c * d;
    f *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return (expMinusSquare(z) * INV_SQRT_PI) / f;
}

/**
 * e^{−z²} without the rounding of z² blowing up: z = hi + lo with hi on a 1/16 grid, so
 * hi² is exact and e^{−z²} = e^{−hi²}·e^{−lo·(z + hi)}.
 */
function expMinusSquare(z: number): number {
  const hi = Math.round(z * 16) / 16;
  const lo = z - hi;
  return Math.exp(-hi * hi) * Math.exp(-lo * (z + hi));
}

/** erfc(z) for any real z, accurate relative to its value. */
export function erfc(z: number): number {
  if (Number.isNaN(z)) return Number.NaN;
  if (z < 0) return 2 - erfc(-z);
  if (z < SERIES_LIMIT) return 1 - erfSeries(z);
  if (z > 27) return 0;
  return erfcContinuedFraction(z);
}

/** The standard normal distribution Φ(x) = ½·erfc(−x/√2). */
export function normCdf(x: number): number {
  return 0.5 * erfc(-x / SQRT_2);
}
