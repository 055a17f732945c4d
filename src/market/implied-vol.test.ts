import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { black76Price } from './black76.ts';
import { impliedVolatility } from './implied-vol.ts';
import { normCdf } from './normal.ts';

/** (size of the two terms of Black's OTM formula) / (their difference). */
function cancellationFactor(forward: number, strike: number, totalVol: number): number {
  const d1 = Math.log(forward / strike) / totalVol + totalVol / 2;
  const sign = forward < strike ? 1 : -1;
  const big = forward * normCdf(sign * d1) + strike * normCdf(sign * (d1 - totalVol));
  const small = Math.abs(forward * normCdf(sign * d1) - strike * normCdf(sign * (d1 - totalVol)));
  return (big / small) * (1 + d1 * d1);
}

describe('implied volatility', () => {
  test('recovers a known volatility', () => {
    const common = { forward: 60_000, strike: 70_000, timeToExpiry: 0.25 };
    const price = black76Price({ ...common, optionType: 'call', volatility: 0.65 });
    const result = impliedVolatility({ ...common, optionType: 'call', price });
    assert.ok(result.ok);
    assert.ok(Math.abs(result.volatility - 0.65) < 1e-12, String(result.volatility));
  });

  test('round trip price → IV → price within 1e-10 relative, deep ITM and OTM included', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 10, max: 200_000, noNaN: true }),
        fc.double({ min: -2.5, max: 2.5, noNaN: true }),
        fc.double({ min: 1 / (365 * 24), max: 5, noNaN: true }),
        fc.double({ min: 0.02, max: 4, noNaN: true }),
        fc.double({ min: 0, max: 0.1, noNaN: true }),
        fc.constantFrom('call' as const, 'put' as const),
        (forward, moneyness, timeToExpiry, volatility, rate, optionType) => {
          const strike = forward * Math.exp(moneyness);
          const discount = Math.exp(-rate * timeToExpiry);
          const common = { optionType, forward, strike, timeToExpiry, discount };
          const price = black76Price({ ...common, volatility });
          // Below ~1e-200 of the forward the price underflows towards denormals: not a price.
          fc.pre(price > forward * 1e-200);
          // Exclude only inputs where Black's formula itself cancels more than 4 digits (tiny
          // σ√T very near the money): there the price is not defined to 1e-10 in doubles.
          fc.pre(cancellationFactor(forward, strike, volatility * Math.sqrt(timeToExpiry)) < 1e4);
          const upper = optionType === 'call' ? forward : strike;
          fc.pre(price < discount * upper * (1 - 1e-12));
          const solved = impliedVolatility({ ...common, price });
          assert.ok(solved.ok, solved.ok ? '' : solved.message);
          const repriced = black76Price({ ...common, volatility: solved.volatility });
          const error = Math.abs(repriced - price) / price;
          assert.ok(error <= 1e-10, `relative error ${error} (price ${price}, iv ${solved.volatility})`);
        },
      ),
      { numRuns: 5000 },
    );
  });

  test('refuses prices below intrinsic and above the bound, with reasons', () => {
    const common = { forward: 100, strike: 80, timeToExpiry: 0.5 };
    const below = impliedVolatility({ ...common, optionType: 'call', price: 19.99 });
    assert.deepEqual(below.ok ? null : below.reason, 'below_intrinsic');
    const above = impliedVolatility({ ...common, optionType: 'call', price: 100 });
    assert.deepEqual(above.ok ? null : above.reason, 'above_maximum');
    const putAbove = impliedVolatility({ ...common, optionType: 'put', price: 80 });
    assert.deepEqual(putAbove.ok ? null : putAbove.reason, 'above_maximum');
    const expired = impliedVolatility({ ...common, optionType: 'put', price: 1, timeToExpiry: 0 });
    assert.deepEqual(expired.ok ? null : expired.reason, 'expired');
    const nan = impliedVolatility({ ...common, optionType: 'put', price: Number.NaN });
    assert.deepEqual(nan.ok ? null : nan.reason, 'invalid_input');
  });

  test('price at intrinsic value gives zero volatility', () => {
    const result = impliedVolatility({
      forward: 100,
      strike: 80,
      timeToExpiry: 0.5,
      optionType: 'call',
      price: 20,
    });
    assert.ok(result.ok && result.volatility === 0);
  });

  test('a price within rounding (1e-14 relative) below intrinsic value is intrinsic value: volatility 0', () => {
    const common = { forward: 100, strike: 90, timeToExpiry: 0.5, optionType: 'call' as const };
    // Intrinsic value 10; 5e-15 relative under it, as undiscounting a price can round.
    const result = impliedVolatility({ ...common, price: 9.99999999999995 });
    assert.deepEqual(result, { ok: true, volatility: 0, iterations: 0 });
    const below = impliedVolatility({ ...common, price: 10 * (1 - 1e-12) });
    assert.equal(below.ok ? null : below.reason, 'below_intrinsic');
  });
});
