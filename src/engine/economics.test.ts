import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { parseDecimal } from '../domain/decimal.ts';
import { Instrument } from '../domain/instrument.ts';
import { DEFAULT_PRODUCTS, linearOptionSpec } from '../market/products.ts';
import { ceilTimesPrice, divRound, Economics, mulDivRound } from './economics.ts';
import { linearPerpetualSpec, optionSpec, perpetualSpec, propertySeed, spotSpec, T0 } from './testkit.ts';

const economics = (spec: ReturnType<typeof perpetualSpec>) => new Economics(new Instrument(0, spec));

describe('exact rounding helpers', () => {
  test('divRound rounds halves away from zero', () => {
    assert.equal(divRound(5, 2), 3);
    assert.equal(divRound(-5, 2), -3);
    assert.equal(divRound(4, 3), 1);
    assert.equal(divRound(-4, 3), -1);
  });
  test('mulDivRound stays exact beyond 2^53', () => {
    assert.equal(mulDivRound(2 ** 40, 2 ** 20, 2 ** 10), 2 ** 50);
    assert.equal(mulDivRound(9_007_199_254_740_991, 3, 3), 9_007_199_254_740_991);
  });
});

describe('values in settlement minor units', () => {
  test('inverse perpetual: USD quantity / price, in satoshi', () => {
    const e = economics(perpetualSpec());
    // 10 lots × 10 USD = 100 USD at 50,000 USD (100,000 ticks of 0.5) = 0.002 BTC
    assert.equal(e.value(10, 100_000), 200_000);
    assert.equal(e.direction, -1);
    assert.equal(e.settlementCurrency, 'BTC');
    // 1 lot = 10 USD at 30,000.5 USD → 33,332.77… sat → 33,333
    assert.equal(e.value(1, 60_001), 33_333);
  });
  test('linear perpetual: BTC quantity × USDC price, in USDC micro-units', () => {
    const e = economics(linearPerpetualSpec());
    // 0.005 BTC at 50,000 USDC = 250 USDC
    assert.equal(e.value(5, 100_000), 250_000_000);
    assert.equal(e.direction, 1);
  });
  test('inverse option premium: BTC quantity × BTC price', () => {
    const e = economics(optionSpec());
    // 0.5 BTC at 0.0125 BTC = 0.00625 BTC
    assert.equal(e.value(5, 125), 625_000);
  });
  test('spot: quote value and base delivery', () => {
    const e = economics(spotSpec());
    assert.equal(e.value(10, 50_000), 50_000_000); // 0.001 BTC × 50,000 = 50 USDC
    assert.equal(e.baseAmount(10), 100_000); // 0.001 BTC in sat
  });
});

describe('fees', () => {
  test('taker fees round up, maker rebates round toward zero', () => {
    const e = economics(linearPerpetualSpec());
    assert.equal(e.fee(1, 100_001, 'T', null), 25_001); // 50.0005 USDC × 0.0005 = 0.02500025 → 25,001 µUSDC
    assert.equal(e.fee(1, 100_001, 'M', null), -5_000); // rebate 0.0050001 → 5,000 µUSDC
  });
  test('option fee: rate × underlying, capped at 12.5% of the premium', () => {
    const e = economics(optionSpec());
    // 1 BTC underlying × 0.0003 = 30,000 sat; premium 0.1 BTC → cap 1.25M sat
    assert.equal(e.fee(10, 1000, 'T', 50_000), 30_000);
    // cheap option: premium 0.0001 BTC × 1 = 10,000 sat → cap 1,250 sat
    assert.equal(e.fee(10, 1, 'T', 50_000), 1_250);
  });
});

describe('underlying notional of a USDC-settled option', () => {
  // BTC_USDC options: lot 0.01 BTC (10^6 sat), settled in µUSDC. amount × index, rounded up once.
  const usdcOption = new Economics(
    new Instrument(0, linearOptionSpec(DEFAULT_PRODUCTS.BTC!, T0 + 86_400_000, 'day', 70_000, 'call', 0)),
  );
  /** ceil(lots × 0.01 BTC × index) in µUSDC, exactly, for an index of `cents` hundredths. */
  const exact = (lots: number, cents: number) => {
    const micro = BigInt(lots) * 10n ** 6n * BigInt(cents); // sat × cents = 10^-10 µUSDC units
    return Number((micro + 9_999n) / 10_000n);
  };
  test('is exact where floating point lands just past a whole unit', () => {
    // 2.23 BTC × 74,571.82 = 166,295.1586 USDC exactly; base × index × 0.01 in doubles gives
    // 166,295,158,600.00003 and rounded up one µUSDC too many.
    assert.equal(usdcOption.underlyingNotional(223, 74_571.82), 166_295_158_600);
  });
  test('equals amount × index rounded up once, for indexes in cents (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: 100_000, max: 20_000_000 }),
        (lots, cents) => {
          assert.equal(usdcOption.underlyingNotional(lots, cents / 100), exact(lots, cents));
        },
      ),
      { seed: propertySeed(), numRuns: 2_000 },
    );
  });
  test('a price printed with an exponent is read as that decimal', () => {
    assert.equal(ceilTimesPrice(10, 1.5e-7, 8), 150);
    assert.equal(ceilTimesPrice(3, 1e21, -20), 30);
    assert.equal(ceilTimesPrice(7, 0.1, 0), 1); // 0.7 up
  });
  test('the option fee follows it: 0.03% of an exact notional is not rounded up past it', () => {
    // 1 BTC × 69,999.99 = 69,999.99 USDC; × 0.0003 = 20.999997 USDC exactly. The doubles gave a
    // notional one µUSDC above it, and a fee one µUSDC above the schedule.
    assert.equal(usdcOption.underlyingNotional(100, 69_999.99), 69_999_990_000);
    assert.equal(usdcOption.fee(100, 2_000, 'T', 69_999.99), 20_999_997);
  });
});

describe('settlement values round one way, as the caller asks', () => {
  const decimal = (text: string) => parseDecimal(text, 'settlementIndex');
  test('inverse future at an index: 10 USD at 60,000.5 USD is 16,666.53 sat', () => {
    const e = economics(perpetualSpec());
    assert.equal(e.valueAt(1, decimal('60000.5'), 'floor'), 16_666);
    assert.equal(e.valueAt(1, decimal('60000.5'), 'ceil'), 16_667);
    // In whole ticks, the same value as `value` but rounded the way asked.
    assert.equal(e.valueOfTicks(1, 120_001, 'floor'), 16_666);
    assert.equal(e.valueOfTicks(1, 120_001, 'ceil'), 16_667);
    // Exact values do not move.
    assert.equal(e.valueOfTicks(10, 100_000, 'floor'), e.value(10, 100_000));
    assert.equal(e.valueOfTicks(10, 100_000, 'ceil'), e.value(10, 100_000));
  });
  test('signed: a negative linear value rounds toward −∞ or +∞', () => {
    // 0.001 BTC at −0.0005 USDC: −0.0000005 USDC, half a micro-unit below zero.
    const e = economics(linearPerpetualSpec({ tickSize: '0.0005' }));
    assert.equal(e.valueOfTicks(1, -1, 'floor'), -1);
    assert.equal(e.valueOfTicks(1, -1, 'ceil'), 0);
  });
  test('option payoff: 0.1 BTC of the 70,000 call at 70,000.38 is 54.28 sat', () => {
    const e = economics(optionSpec());
    assert.equal(e.optionPayoff(1, decimal('70000.38'), 'floor'), 54);
    assert.equal(e.optionPayoff(1, decimal('70000.38'), 'ceil'), 55);
    assert.equal(e.optionPayoff(1, decimal('69999.99'), 'ceil'), 0);
  });
});
