import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { black76, black76Price, MS_PER_YEAR, yearsBetween } from './black76.ts';

function close(actual: number, expected: number, tolerance: number, what: string): void {
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: expected ${expected}, got ${actual}`);
}

function closeRelative(actual: number, expected: number, tolerance: number, what: string): void {
  close(actual, expected, tolerance * Math.max(1, Math.abs(expected)), what);
}

describe('Black-76 reference values', () => {
  // Hull, "Options, Futures, and Other Derivatives" (8th ed.), Example 18.3 (futures options
  // chapter): European put on crude-oil futures, F0 = K = 20, r = 9%, T = 4 months, σ = 25%;
  // Hull prints d1 = 0.07216, d2 = −0.07216 and a put value of 1.12.
  test("Hull's crude-oil futures put", () => {
    const put = black76Price({
      optionType: 'put',
      forward: 20,
      strike: 20,
      timeToExpiry: 4 / 12,
      volatility: 0.25,
      discount: Math.exp(-0.09 * (4 / 12)),
    });
    close(put, 1.12, 0.005, 'put');
  });

  // Haug, "The Complete Guide to Option Pricing Formulas" (2nd ed.), §1.1.4 Black-76 example:
  // F = K = 19, T = 0.75, r = 10%, σ = 28%; call = put = 1.7011.
  test("Haug's Black-76 example", () => {
    const inputs = {
      forward: 19,
      strike: 19,
      timeToExpiry: 0.75,
      volatility: 0.28,
      discount: Math.exp(-0.1 * 0.75),
    };
    close(black76Price({ ...inputs, optionType: 'call' }), 1.7011, 0.00005, 'call');
    close(black76Price({ ...inputs, optionType: 'put' }), 1.7011, 0.00005, 'put');
  });

  test('intrinsic value at expiry and zero vol', () => {
    const base = { forward: 100, strike: 90, volatility: 0.5 };
    assert.equal(black76Price({ ...base, optionType: 'call', timeToExpiry: 0 }), 10);
    assert.equal(black76Price({ ...base, optionType: 'put', timeToExpiry: 0 }), 0);
    assert.equal(black76Price({ ...base, optionType: 'call', timeToExpiry: 1, volatility: 0 }), 10);
    // At the money nothing is left, however it is priced (ln(F/K)/0 is no number).
    const atTheMoney = { forward: 100, strike: 100, volatility: 0.5, timeToExpiry: 0 };
    assert.equal(black76Price({ ...atTheMoney, optionType: 'call' }), 0);
    assert.equal(black76Price({ ...atTheMoney, optionType: 'put', timeToExpiry: 1, volatility: 0 }), 0);
  });

  test('greeks at expiry: a step delta (the discount, signed, in the money; 0 at and out of it), nothing else', () => {
    const expired = { timeToExpiry: 0, volatility: 0.5, discount: 0.9 };
    const greeks = (optionType: 'call' | 'put', forward: number, strike: number) =>
      black76({ ...expired, optionType, forward, strike });
    assert.deepEqual(greeks('call', 100, 100), { price: 0, delta: 0, gamma: 0, vega: 0, theta: 0 });
    assert.deepEqual(greeks('put', 90, 100), { price: 9, delta: -0.9, gamma: 0, vega: 0, theta: 0 });
    assert.deepEqual(greeks('call', 110, 100), { price: 9, delta: 0.9, gamma: 0, vega: 0, theta: 0 });
    assert.deepEqual(greeks('call', 90, 100), { price: 0, delta: 0, gamma: 0, vega: 0, theta: 0 });
  });

  test('years between two instants are never negative', () => {
    assert.equal(yearsBetween(2_000, 1_000), 0);
    assert.equal(yearsBetween(0, MS_PER_YEAR / 2), 0.5);
  });
});

describe('theta with discounting', () => {
  test('the time decay at a fixed rate: the price moves with T and the discount e^(−rT) together', () => {
    const rate = 0.05;
    const T = 1;
    const priced = (t: number) =>
      black76Price({
        optionType: 'call',
        forward: 100,
        strike: 100,
        timeToExpiry: t,
        volatility: 0.2,
        discount: Math.exp(-rate * t),
      });
    const dt = 1e-6;
    const finite = (priced(T - dt) - priced(T + dt)) / (2 * dt);
    const { theta } = black76({
      optionType: 'call',
      forward: 100,
      strike: 100,
      timeToExpiry: T,
      volatility: 0.2,
      discount: Math.exp(-rate * T),
    });
    close(theta, finite, 1e-6, 'theta');
  });
});

describe('Black-76 properties', () => {
  const inputs = fc.record({
    forward: fc.double({ min: 100, max: 200_000, noNaN: true }),
    moneyness: fc.double({ min: -2, max: 2, noNaN: true }),
    timeToExpiry: fc.double({ min: 1 / 365, max: 3, noNaN: true }),
    volatility: fc.double({ min: 0.05, max: 3, noNaN: true }),
    rate: fc.double({ min: 0, max: 0.1, noNaN: true }),
  });

  test('put–call parity: C − P = D·(F − K)', () => {
    fc.assert(
      fc.property(inputs, ({ forward, moneyness, timeToExpiry, volatility, rate }) => {
        const strike = forward * Math.exp(moneyness);
        const discount = Math.exp(-rate * timeToExpiry);
        const common = { forward, strike, timeToExpiry, volatility, discount };
        const call = black76Price({ ...common, optionType: 'call' });
        const put = black76Price({ ...common, optionType: 'put' });
        const parity = discount * (forward - strike);
        return Math.abs(call - put - parity) <= 1e-12 * Math.max(forward, strike);
      }),
    );
  });

  test('greeks match finite differences', () => {
    fc.assert(
      fc.property(inputs, fc.constantFrom('call' as const, 'put' as const), (x, optionType) => {
        const strike = x.forward * Math.exp(x.moneyness / 4);
        const base = {
          optionType,
          forward: x.forward,
          strike,
          timeToExpiry: x.timeToExpiry,
          volatility: x.volatility,
        };
        const greeks = black76(base);
        const h = x.forward * 1e-5;
        const up = black76Price({ ...base, forward: x.forward + h });
        const down = black76Price({ ...base, forward: x.forward - h });
        const scale = x.forward;
        close(greeks.delta, (up - down) / (2 * h), 1e-6, 'delta');
        closeRelative(
          greeks.gamma * scale,
          ((up - 2 * greeks.price + down) / (h * h)) * scale,
          1e-3,
          'gamma',
        );
        const dv = 1e-5;
        const vegaFd =
          (black76Price({ ...base, volatility: x.volatility + dv }) -
            black76Price({ ...base, volatility: x.volatility - dv })) /
          (2 * dv);
        closeRelative(greeks.vega / scale, vegaFd / scale, 1e-6, 'vega');
        const dt = Math.min(1e-6, x.timeToExpiry / 10);
        const thetaFd =
          (black76Price({ ...base, timeToExpiry: x.timeToExpiry - dt }) -
            black76Price({ ...base, timeToExpiry: x.timeToExpiry + dt })) /
          (2 * dt);
        closeRelative(greeks.theta / scale, thetaFd / scale, 1e-5, 'theta');
      }),
      { numRuns: 200 },
    );
  });
});
