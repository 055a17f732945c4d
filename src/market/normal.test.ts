import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { erfc, normCdf, normPdf } from './normal.ts';

function assertRelative(actual: number, expected: number, tolerance: number): void {
  const error = Math.abs(actual - expected) / Math.abs(expected);
  assert.ok(error <= tolerance, `expected ${expected}, got ${actual} (relative error ${error})`);
}

describe('normal distribution', () => {
  // Reference values: Abramowitz & Stegun Table 7.1 / 26.1 (to the digits printed there,
  // extended with standard high-precision tabulations).
  test('Φ at reference points', () => {
    assertRelative(normCdf(0), 0.5, 1e-15);
    assertRelative(normCdf(1), 0.8413447460685429, 1e-14);
    assertRelative(normCdf(-1), 0.15865525393145707, 1e-14);
    assertRelative(normCdf(-1.96), 0.024997895148220435, 1e-13);
    assertRelative(normCdf(-3), 0.0013498980316300946, 1e-13);
    assertRelative(normCdf(-5), 2.866515718791939e-7, 1e-13);
    assertRelative(normCdf(-10), 7.619853024160527e-24, 1e-12);
    assertRelative(normCdf(-20), 2.7536241186062337e-89, 1e-12);
  });

  // mpmath at 40 digits, rounded to doubles. Between the seam and the old one (|x| from 2.1 to 3.5) erfc came from
  // 1 − erf, which lost up to 3.4 digits (5e-13 relative at x = −3.5); an OTM option priced
  // there cancels a few more, which showed as 1e-10 noise in implied-volatility round trips.
  test('Φ keeps full relative accuracy where erfc is small but z is moderate', () => {
    assertRelative(normCdf(-1.9), 0.028716559816001807, 3e-15);
    assertRelative(normCdf(-2.2), 0.013903447513498604, 3e-15);
    assertRelative(normCdf(-2.6), 0.004661188023718749, 3e-15);
    assertRelative(normCdf(-3.0), 0.0013498980316300946, 3e-15);
    assertRelative(normCdf(-3.24), 0.0005976484979344153, 3e-15);
    assertRelative(normCdf(-3.5), 0.00023262907903552504, 3e-15);
  });

  test('erfc reference values', () => {
    assertRelative(erfc(0.5), 0.4795001221869535, 1e-14);
    assertRelative(erfc(3), 2.209049699858544e-5, 1e-13);
    assertRelative(erfc(5), 1.5374597944280349e-12, 1e-13);
  });

  test('symmetry Φ(x) + Φ(−x) = 1 and density', () => {
    for (const x of [0.1, 0.7, 1.5, 2.4, 3.6, 4.2]) {
      assert.ok(Math.abs(normCdf(x) + normCdf(-x) - 1) < 1e-15);
    }
    assertRelative(normPdf(0), 0.3989422804014327, 1e-15);
  });

  test('monotone across the series / continued-fraction seam', () => {
    let previous = 0;
    for (let x = -8; x <= 8; x += 0.001) {
      const value = normCdf(x);
      assert.ok(value >= previous, `not monotone at ${x}`);
      previous = value;
    }
  });
});
