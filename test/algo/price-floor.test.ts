/**
 * A buy limit below the smallest price: the leg waits (as for missing market data) and never
 * pays more than the client allowed; a sell below it rests at one tick, above what was asked.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LegPricing, LegSpec, PortfolioType } from '../../src/algo/types.ts';
import { AlgoHarness, leg, OPTION, portfolio } from './harness.ts';

/** The standard market with the option marked at one tick and 10 lots offered there. */
function oneTickOption(): AlgoHarness {
  const h = AlgoHarness.withMarket();
  h.core({ type: 'update_prices', markPrices: [{ instrumentName: OPTION, markPrice: 1 }] });
  h.maker('sell', 10, 1, OPTION);
  return h;
}

const optionLeg = (pricing: Partial<LegPricing>, overrides: Partial<LegSpec> = {}): LegSpec =>
  leg({
    instrumentName: OPTION,
    instrumentType: 'OPTION',
    amount: 10,
    pricing: { ...leg().pricing, ...pricing },
    ...overrides,
  });

const dynamicMark = (price: number, priceIn: string): Partial<LegPricing> => ({
  priceType: 'DYNAMIC',
  price,
  priceIn,
  dynamicStrategy: 'MARK',
  dynamicMs: 1000,
});

describe('a buy limit below one tick', () => {
  const cases: [string, PortfolioType, Partial<LegPricing>][] = [
    ['COMMON LIMIT 0.00005 BTC', 'COMMON', { price: 0.00005, priceIn: 'BTC' }],
    ['DYNAMIC MARK with worst price 0.00005 BTC', 'COMMON', dynamicMark(0.00005, 'BTC')],
    ['DYNAMIC MARK with worst price IV 1%', 'COMMON', dynamicMark(1, 'IV')],
    ['BALANCE DYNAMIC MARK with worst price 0.00005 BTC', 'BALANCE', dynamicMark(0.00005, 'BTC')],
  ];
  for (const [name, portfolioType, pricing] of cases) {
    test(`${name}: waits, never trades at one tick`, () => {
      const h = oneTickOption();
      const balance =
        portfolioType === 'BALANCE'
          ? { parts: 1, eachLimitMs: 60_000, totalLimitMs: 0, totalEndAction: 'CANCEL_REMAINING' as const }
          : null;
      const id = h.submit(portfolio({ portfolioType, legs: [optionLeg(pricing)], balance }));
      h.runUntil(h.ts + 5_000);
      const p = h.machine.portfolio(id)!;
      assert.equal(p.legs[0]!.filled, 0, 'nothing bought at 0.0001 BTC');
      assert.equal(h.childOrders(id).length, 0, 'no child placed');
      assert.equal(p.status, 'WORKING', 'the leg waits for a price it may pay');
      assert.ok(h.machine.nextWakeup() !== null, 'and looks again');
    });
  }

  test('a sell limit below one tick rests at one tick, better than asked', () => {
    const h = oneTickOption();
    const id = h.submit(
      portfolio({ legs: [optionLeg({ price: 0.00005, priceIn: 'BTC' }, { side: 'sell' })] }),
    );
    assert.deepEqual(
      h.childOrders(id).map((c) => c.price),
      [1],
    );
  });
});
