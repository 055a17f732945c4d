import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { Instrument } from '../domain/instrument.ts';
import { Economics } from './economics.ts';
import { type OptionHolding, offsetGroup, pairLoss } from './option-offsets.ts';
import { optionSpec } from './testkit.ts';

type Kind = 'inverse' | 'linear';

/** A 27DEC26 BTC option: inverse (lot 0.1 BTC, in satoshi) or USDC-settled (lot 0.01 BTC, in micro-USDC). */
function option(kind: Kind, type: 'call' | 'put', strike: number): Economics {
  const name = `BTC${kind === 'linear' ? '_USDC' : ''}-27DEC26-${strike}-${type === 'call' ? 'C' : 'P'}`;
  const linear =
    kind === 'linear'
      ? {
          quoteCurrency: 'USDC',
          settlementCurrency: 'USDC',
          marginKind: 'linear' as const,
          tickSize: '5',
          tickSizeSteps: [],
          minTradeAmount: '0.01',
        }
      : {};
  return new Economics(
    new Instrument(0, optionSpec({ name, optionType: type, strike: String(strike), ...linear })),
  );
}

const holding = (economics: Economics, lots: number, value = 0, naked = 0): OptionHolding => ({
  economics,
  lots,
  value,
  naked,
});

describe('pairLoss', () => {
  test('a long at a better strike loses nothing', () => {
    assert.equal(pairLoss(option('inverse', 'call', 70_000), 10, 70_000, 65_000), 0);
    assert.equal(pairLoss(option('inverse', 'put', 70_000), 10, 70_000, 75_000), 0);
    assert.equal(pairLoss(option('linear', 'put', 70_000), 10, 70_000, 70_000), 0);
  });

  test('USDC-settled spreads lose their width', () => {
    // 10 lots = 0.1 BTC × 5,000 USD = 500 USDC.
    assert.equal(pairLoss(option('linear', 'call', 70_000), 10, 70_000, 75_000), 500_000_000);
    assert.equal(pairLoss(option('linear', 'put', 70_000), 10, 70_000, 65_000), 500_000_000);
  });

  test('coin-settled call spreads lose their width at the long strike; put spreads have no bound', () => {
    // 10 lots = 1 BTC × 5,000 / 75,000, rounded up.
    assert.equal(pairLoss(option('inverse', 'call', 70_000), 10, 70_000, 75_000), 6_666_667);
    assert.equal(pairLoss(option('inverse', 'put', 70_000), 10, 70_000, 65_000), Number.POSITIVE_INFINITY);
  });
});

describe('offsetGroup', () => {
  test('shorts take the best remaining cover in strike order', () => {
    // Shorts 110 and 130 against longs 100 and 120 (thousands): both fully covered.
    const call = (strike: number) => option('linear', 'call', strike * 1000);
    const result = offsetGroup(
      [holding(call(130), 10, 50, 1e12), holding(call(110), 10, 70, 1e12)],
      [holding(call(120), 10, 60), holding(call(100), 10, 80)],
    );
    assert.deepEqual(result, { margin: 0, offset: 120 });
  });

  test('a cover worth less than the naked margin is not used, and the rest of a short is naked', () => {
    const call = (strike: number) => option('linear', 'call', strike);
    // A 5,000 USD wide pair of 10 lots loses 500 USDC: more than a naked margin of 400.
    const wide = offsetGroup([holding(call(70_000), 10, 0, 400_000_000)], [holding(call(75_000), 10, 0)]);
    assert.deepEqual(wide, { margin: 400_000_000, offset: 0 });
    // Half of a short covered by a long at a lower strike: the other half pays half the naked margin.
    const half = offsetGroup([holding(call(70_000), 10, 100, 1_000)], [holding(call(65_000), 5, 300)]);
    assert.deepEqual(half, { margin: 500, offset: 50 });
  });

  const strikes = [55_000, 60_000, 65_000, 70_000, 75_000, 80_000];
  const arbitraryBook = fc.record({
    kind: fc.constantFrom<Kind>('inverse', 'linear'),
    type: fc.constantFrom('call' as const, 'put' as const),
    shorts: fc.array(
      fc.record({ strike: fc.constantFrom(...strikes), lots: fc.integer({ min: 1, max: 40 }) }),
      {
        minLength: 1,
        maxLength: 5,
      },
    ),
    longs: fc.array(
      fc.record({ strike: fc.constantFrom(...strikes), lots: fc.integer({ min: 1, max: 40 }) }),
      {
        maxLength: 5,
      },
    ),
    values: fc.array(fc.integer({ min: 0, max: 10_000_000 }), { minLength: 10, maxLength: 10 }),
  });

  /** Payoff at expiry, in settlement minor units, of `lots` of `economics` held long at price `s`. */
  function payoff(economics: Economics, lots: number, s: number): number {
    const intrinsic = economics.isCall
      ? Math.max(0, s - economics.strike)
      : Math.max(0, economics.strike - s);
    if (economics.settlementCurrency === economics.baseCurrency)
      return (economics.baseAmount(lots) * intrinsic) / s;
    return economics.underlyingNotional(lots, intrinsic)!;
  }

  test('property: the margin covers the worst loss at expiry of fully covered shorts', () => {
    fc.assert(
      fc.property(arbitraryBook, ({ kind, type, shorts, longs, values }) => {
        const shortLots = shorts.reduce((sum, s) => sum + s.lots, 0);
        const longLots = longs.reduce((sum, l) => sum + l.lots, 0);
        fc.pre(longLots >= shortLots && !(kind === 'inverse' && type === 'put'));
        // A naked margin above any spread loss, so every short is paired.
        const shortHoldings = shorts.map((s, i) =>
          holding(option(kind, type, s.strike), s.lots, values[i]!, 1e15),
        );
        const longHoldings = longs.map((l, i) =>
          holding(option(kind, type, l.strike), l.lots, values[5 + i]!),
        );
        const { margin, offset } = offsetGroup([...shortHoldings], [...longHoldings]);
        for (const s of [1, ...strikes, 1_000_000]) {
          let total = 0;
          for (const h of longHoldings) total += payoff(h.economics, h.lots, s);
          for (const h of shortHoldings) total -= payoff(h.economics, h.lots, s);
          assert.ok(total >= -margin - 1e-6, `at ${s}: payoff ${total}, margin ${margin}`);
        }
        assert.ok(offset <= longHoldings.reduce((sum, h) => sum + h.value, 0));
        assert.ok(offset <= shortHoldings.reduce((sum, h) => sum + h.value, 0));
      }),
    );
  });

  test('property: never more than the naked margin, and one more long never raises it', () => {
    fc.assert(
      fc.property(arbitraryBook, fc.constantFrom(...strikes), ({ kind, type, shorts, longs }, extra) => {
        const naked = (lots: number) => lots * 1_500_000;
        const build = () => ({
          shorts: shorts.map((s) => holding(option(kind, type, s.strike), s.lots, 0, naked(s.lots))),
          longs: longs.map((l) => holding(option(kind, type, l.strike), l.lots)),
        });
        const base = build();
        const { margin } = offsetGroup(base.shorts, base.longs);
        assert.ok(margin <= shorts.reduce((sum, s) => sum + naked(s.lots), 0) + shorts.length);
        const more = build();
        more.longs.push(holding(option(kind, type, extra), 10));
        assert.ok(offsetGroup(more.shorts, more.longs).margin <= margin + shorts.length);
      }),
    );
  });
});
