import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { black76Price } from './black76.ts';
import { createSurface, DEFAULT_SURFACES, defaultSurface } from './vol-surface.ts';

describe('SSVI volatility surface', () => {
  test('reproduces the ATM term structure at its nodes', () => {
    const surface = defaultSurface('BTC');
    for (const point of DEFAULT_SURFACES.BTC!.term) {
      const vol = surface.volatility(60_000, 60_000, point.timeToExpiry);
      assert.ok(Math.abs(vol - point.atmVol) < 1e-12, `${vol} vs ${point.atmVol}`);
    }
  });

  test('flat ATM vol before the first node and after the last', () => {
    const surface = defaultSurface('BTC');
    // Six hours out (inside an option's last day), and two years out.
    assert.ok(Math.abs(surface.volatility(60_000, 60_000, 0.25 / 365) - 0.48) < 1e-12);
    assert.ok(Math.abs(surface.volatility(60_000, 60_000, 2) - 0.6) < 1e-12);
  });

  test('the smile off the money is the SSVI formula, puts richer with a negative rho', () => {
    const { rho, eta, gamma } = DEFAULT_SURFACES.BTC!;
    const surface = defaultSurface('BTC');
    const T = 30 / 365; // a node: θ = 0.53² T
    const theta = 0.53 * 0.53 * T;
    const phi = eta / (theta ** gamma * (1 + theta) ** (1 - gamma));
    const ssvi = (k: number) =>
      Math.sqrt(((theta / 2) * (1 + rho * phi * k + Math.sqrt((phi * k + rho) ** 2 + 1 - rho * rho))) / T);
    for (const strike of [50_000, 80_000]) {
      const vol = surface.volatility(strike, 65_000, T);
      assert.ok(Math.abs(vol - ssvi(Math.log(strike / 65_000))) < 1e-12, `${strike}: ${vol}`);
    }
    // Equally far out in log-moneyness, the put wing is the richer one.
    const k = 0.2;
    assert.ok(
      surface.volatility(65_000 * Math.exp(-k), 65_000, T) >
        surface.volatility(65_000 * Math.exp(k), 65_000, T),
    );
  });

  test('interpolates linearly in total variance between nodes', () => {
    const surface = createSurface({
      term: [
        { timeToExpiry: 0.1, atmVol: 0.5 },
        { timeToExpiry: 0.3, atmVol: 0.7 },
      ],
      rho: 0,
      eta: 1,
      gamma: 0.5,
    });
    const expected = (0.5 * 0.5 * 0.1 + 0.7 * 0.7 * 0.3) / 2;
    assert.ok(Math.abs(surface.atmTotalVariance(0.2) - expected) < 1e-15);
  });

  test('a term structure whose total variance falls with expiry is made non-decreasing', () => {
    // 0.1 years at 100% (variance 0.1), then 0.2 years at 50% (variance 0.05): held at 0.1.
    const surface = createSurface({
      term: [
        { timeToExpiry: 0.1, atmVol: 1.0 },
        { timeToExpiry: 0.2, atmVol: 0.5 },
      ],
      rho: 0,
      eta: 1,
      gamma: 0.5,
    });
    assert.ok(
      Math.abs(surface.atmTotalVariance(0.2) - 0.1) < 1e-15,
      `θ(0.2) ${surface.atmTotalVariance(0.2)}`,
    );
    let previous = 0;
    for (let t = 0.01; t <= 0.5; t += 0.01) {
      const theta = surface.atmTotalVariance(t);
      assert.ok(theta >= previous, `θ falls at T = ${t}: ${theta} < ${previous}`);
      previous = theta;
    }
  });

  test('refuses arbitrageable parameters', () => {
    assert.throws(() =>
      createSurface({ term: [{ timeToExpiry: 1, atmVol: 0.5 }], rho: -0.5, eta: 1.5, gamma: 0.4 }),
    );
    assert.throws(() =>
      createSurface({ term: [{ timeToExpiry: 1, atmVol: 0.5 }], rho: 0, eta: 1, gamma: 0.7 }),
    );
    assert.throws(() => createSurface({ term: [], rho: 0, eta: 1, gamma: 0.4 }));
  });

  test('negative rho: puts (low strikes) carry higher vol than calls', () => {
    const surface = defaultSurface('BTC');
    assert.ok(surface.volatility(50_000, 60_000, 0.25) > surface.volatility(70_000, 60_000, 0.25));
  });

  test('no static arbitrage: call prices decrease and are convex in strike, increase in expiry', () => {
    for (const seed of [0, 1, 2, 3]) {
      for (const currency of ['BTC', 'ETH']) {
        const surface = defaultSurface(currency, seed);
        fc.assert(
          fc.property(
            fc.double({ min: 1 / 365, max: 2, noNaN: true }),
            fc.double({ min: -1.2, max: 1.2, noNaN: true }),
            (timeToExpiry, k) => {
              const forward = 100;
              const call = (strike: number, t: number): number =>
                black76Price({
                  optionType: 'call',
                  forward,
                  strike,
                  timeToExpiry: t,
                  volatility: surface.volatility(strike, forward, t),
                });
              const strike = forward * Math.exp(k);
              const h = strike * 1e-3;
              const [low, mid, high] = [
                call(strike - h, timeToExpiry),
                call(strike, timeToExpiry),
                call(strike + h, timeToExpiry),
              ];
              assert.ok(low >= mid - 1e-12 && mid >= high - 1e-12, 'decreasing in strike');
              assert.ok(low + high - 2 * mid >= -1e-10, 'convex in strike');
              assert.ok(call(strike, timeToExpiry * 1.05) >= mid - 1e-12, 'increasing in expiry');
            },
          ),
          { numRuns: 150 },
        );
      }
    }
  });

  test('seeded surfaces are deterministic and differ by seed', () => {
    assert.equal(
      defaultSurface('ETH', 7).volatility(3000, 3100, 0.1),
      defaultSurface('ETH', 7).volatility(3000, 3100, 0.1),
    );
    assert.notEqual(
      defaultSurface('ETH', 7).volatility(3000, 3100, 0.1),
      defaultSurface('ETH', 8).volatility(3000, 3100, 0.1),
    );
  });
});
