import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { validatePortfolioBody } from '../api/portfolios/validate.ts';
import { Instrument } from '../domain/instrument.ts';
import { optionSpec, perpetualSpec } from '../engine/testkit.ts';
import {
  impliedVolPercent,
  type OptionPricingContext,
  quotePriceFromVolatility,
} from '../market/conversions.ts';
import type { AlgoMarketView } from './market-view.ts';
import { clearOfOwnOrders, resolvePrice, roundToTicks } from './pricing.ts';
import type { LegPricing } from './types.ts';

const option = new Instrument(1, optionSpec());
const perp = new Instrument(2, perpetualSpec());
const context: OptionPricingContext = {
  optionType: 'call',
  marginKind: 'inverse',
  strike: 70_000,
  forward: 61_000,
  index: 60_000,
  timeToExpiry: 0.9,
};

function view(overrides: Partial<AlgoMarketView> = {}): AlgoMarketView {
  return {
    instrument: (name) => (name === option.name ? option : name === perp.name ? perp : undefined),
    expired: () => false,
    bestBid: () => null,
    bestAsk: () => null,
    accountBest: () => null,
    engineTouch: () => null,
    priceBand: () => null,
    markPrice: (name) => (name === option.name ? 500 : 120_000),
    indexPrice: () => 60_000,
    optionContext: (name) => (name === option.name ? context : null),
    modelPrice: (name) => (name === option.name ? 0.0512 : null),
    ...overrides,
  };
}
const limit = (price: number, priceIn: string | null, priceAsSent?: string | number): LegPricing => ({
  priceType: 'LIMIT',
  price,
  priceIn,
  dynamicStrategy: null,
  dynamicOffset: 0,
  dynamicMs: null,
  ...(priceAsSent === undefined ? {} : { priceAsSent }),
});
/** A BALANCE leg's price as validation keeps it: the float and the decimal string as sent. */
const balanceLimit = (text: string, priceIn: string): LegPricing => limit(Number(text), priceIn, text);
const dynamic = (
  strategy: LegPricing['dynamicStrategy'],
  offset: number,
  priceIn: string,
  price: number | null = null,
): LegPricing => ({
  priceType: 'DYNAMIC',
  price,
  priceIn,
  dynamicStrategy: strategy,
  dynamicOffset: offset,
  dynamicMs: 100,
});

describe('leg price resolution', () => {
  test('USD, USDT, USDC → coin for an inverse option with the index, rounded in the client’s favour on the level’s tick', () => {
    for (const unit of ['USD', 'USDT', 'USDC']) {
      assert.deepEqual(resolvePrice(view(), option, 'buy', limit(3000, unit), 0), {
        kind: 'limit',
        price: 500,
      });
    }
    // 3001 USD = 0.050017 BTC: a buy rounds down to 0.05, a sell up to 0.0505 (0.0005 steps above 0.005).
    assert.deepEqual(resolvePrice(view(), option, 'buy', limit(3001, 'USD'), 0), {
      kind: 'limit',
      price: 500,
    });
    assert.deepEqual(resolvePrice(view(), option, 'sell', limit(3001, 'USD'), 0), {
      kind: 'limit',
      price: 505,
    });
    assert.deepEqual(
      resolvePrice(view(), option, 'sell', limit(180, 'USD'), 0),
      { kind: 'limit', price: 30 },
      'below 0.005 the fine tick',
    );
  });

  test('coin → USD for a USD-quoted perpetual; the quote currency itself is the identity', () => {
    assert.deepEqual(resolvePrice(view(), perp, 'buy', limit(1, 'BTC'), 0), {
      kind: 'limit',
      price: 120_000,
    });
    assert.deepEqual(resolvePrice(view(), option, 'buy', limit(0.05, 'BTC'), 0), {
      kind: 'limit',
      price: 500,
    });
  });

  test('a buy below one tick has no price (the leg waits); a sell below it goes up to one tick', () => {
    assert.equal(roundToTicks(option, 'buy', 0.00005), null);
    assert.equal(roundToTicks(option, 'buy', 0), null);
    assert.equal(roundToTicks(option, 'buy', 0.0001), 1);
    assert.equal(roundToTicks(option, 'sell', 0.00005), 1);
    const oneTickMark = view({ markPrice: (name) => (name === option.name ? 1 : 120_000) });
    for (const pricing of [
      limit(0.00005, 'BTC'),
      dynamic('MARK', 0, 'BTC', 0.00005),
      dynamic('MARK', 0, 'IV', 1),
    ]) {
      assert.equal(resolvePrice(oneTickMark, option, 'buy', pricing, 0).kind, 'unavailable');
      assert.deepEqual(resolvePrice(oneTickMark, option, 'sell', pricing, 0), { kind: 'limit', price: 1 });
    }
  });

  test('IV → Black-76 price on the forward and expiry', () => {
    const expected = quotePriceFromVolatility(context, 0.5);
    const buy = resolvePrice(view(), option, 'buy', limit(50, 'IV'), 0);
    assert.equal(buy.kind, 'limit');
    assert.equal((buy as { price: number }).price, roundToTicks(option, 'buy', expected));
    assert.ok(Math.abs((buy as { price: number }).price * 0.0001 - expected) <= 0.0005);
  });

  test('BTC on an ETH leg goes through USD at the two indices', () => {
    const ethOption = new Instrument(
      3,
      optionSpec({ name: 'ETH-27DEC26-4000-C', baseCurrency: 'ETH', quoteCurrency: 'ETH', strike: '4000' }),
    );
    const ethPerp = new Instrument(
      4,
      perpetualSpec({ name: 'ETH-PERPETUAL', baseCurrency: 'ETH', tickSize: '0.05' }),
    );
    const indices = view({
      indexPrice: (currency) => (currency === 'BTC' ? 60_000 : currency === 'ETH' ? 3_000 : null),
    });
    // 0.01 BTC = 600 USD = 0.2 ETH.
    const option = resolvePrice(indices, ethOption, 'buy', limit(0.01, 'BTC'), 0);
    assert.deepEqual(option, { kind: 'limit', price: roundToTicks(ethOption, 'buy', 0.2) });
    const perpetual = resolvePrice(indices, ethPerp, 'sell', limit(0.05, 'BTC'), 0);
    assert.deepEqual(perpetual, { kind: 'limit', price: roundToTicks(ethPerp, 'sell', 3_000) });
    const noBtcIndex = view({ indexPrice: (currency) => (currency === 'ETH' ? 3_000 : null) });
    assert.equal(resolvePrice(noBtcIndex, ethOption, 'buy', limit(0.01, 'BTC'), 0).kind, 'unavailable');
  });

  test('a conversion the market cannot make is unavailable, never a guess', () => {
    assert.equal(
      resolvePrice(view({ indexPrice: () => null }), option, 'buy', limit(3000, 'USD'), 0).kind,
      'unavailable',
    );
    assert.equal(resolvePrice(view(), perp, 'buy', limit(50, 'IV'), 0).kind, 'unavailable');
  });

  test('DYNAMIC: references MID, MARK, MODEL, BID, ASK plus the offset, bounded by the worst price', () => {
    const book = view({ bestBid: () => 119_990, bestAsk: () => 120_010 });
    const at = (pricing: LegPricing, side: 'buy' | 'sell' = 'buy') =>
      (resolvePrice(book, perp, side, pricing, 0) as { price: number }).price;
    assert.equal(at(dynamic('MID', 0, 'USD')), 120_000);
    assert.equal(at(dynamic('BID', 1, 'USD')), 119_992, 'offset in priceIn units: +1 USD = 2 ticks');
    assert.equal(at(dynamic('ASK', -1, 'USD'), 'sell'), 120_008);
    assert.equal(at(dynamic('MARK', 0, 'USD')), 120_000);
    assert.equal(at(dynamic('MID', 10, 'USD', 60_002)), 120_004, 'a buy never above the worst price');
    assert.equal(at(dynamic('MID', -10, 'USD', 59_999), 'sell'), 119_998, 'a sell never below it');
    assert.equal(
      (resolvePrice(view(), option, 'buy', dynamic('MODEL', 0, 'BTC'), 0) as { price: number }).price,
      510,
    );
    assert.equal(
      (resolvePrice(view(), option, 'buy', dynamic('BID', 0, 'BTC'), 0) as { price: number }).price,
      500,
      'no bid: the mark',
    );
  });

  test('DYNAMIC with IV: the offset moves the reference’s implied vol by that many points', () => {
    const markIv = impliedVolPercent(context, 0.05);
    assert.ok(markIv.ok);
    const shifted = resolvePrice(view(), option, 'buy', dynamic('MARK', 5, 'IV'), 0) as { price: number };
    const expected = quotePriceFromVolatility(context, (markIv.volatility + 5) / 100);
    assert.equal(shifted.price, roundToTicks(option, 'buy', expected));
    assert.ok(shifted.price > 500);
  });

  test('DYNAMIC: an offset in another unit than the quote currency is converted, a negative one too', () => {
    // −600 USD at the 60,000 index is −0.01 BTC: 0.05 − 0.01 = 0.04 BTC (400 ticks, on the 5-tick step).
    for (const side of ['buy', 'sell'] as const) {
      assert.deepEqual(resolvePrice(view(), option, side, dynamic('MARK', -600, 'USD'), 0), {
        kind: 'limit',
        price: 400,
      });
      assert.deepEqual(resolvePrice(view(), option, side, dynamic('MARK', 600, 'USD'), 0), {
        kind: 'limit',
        price: 600,
      });
    }
    // −0.01 BTC on the USD-quoted perpetual is −600 USD: 60,000 − 600 = 59,400 (118,800 ticks of 0.5).
    assert.deepEqual(resolvePrice(view(), perp, 'buy', dynamic('MARK', -0.01, 'BTC'), 0), {
      kind: 'limit',
      price: 118_800,
    });
  });

  test('own orders are left out of the references', () => {
    const mine = [2, 3];
    const book = view({
      bestBid: (_name, own) => (own === mine ? 119_990 : 120_004),
      bestAsk: () => 120_010,
    });
    assert.deepEqual(resolvePrice(book, perp, 'buy', dynamic('BID', 0, 'USD'), 0, mine), {
      kind: 'limit',
      price: 119_990,
    });
  });

  test('a price already in the quote currency is never rounded against the client (tick 0.5)', () => {
    const at = (side: 'buy' | 'sell', pricing: LegPricing) =>
      resolvePrice(view(), perp, side, pricing, 0) as { kind: string; price?: number };
    // TWAP: JSON numbers, read as their shortest decimal (what JSON writes), with or without priceAsSent.
    for (const unit of ['USD', 'USDT', 'USDC']) {
      assert.deepEqual(at('sell', limit(65000.00000001, unit)), { kind: 'limit', price: 130_001 });
      assert.deepEqual(at('sell', limit(65000.00000001, unit, 65000.00000001)), {
        kind: 'limit',
        price: 130_001,
      });
      assert.deepEqual(at('buy', limit(65000.49999999, unit)), { kind: 'limit', price: 130_000 });
      assert.deepEqual(at('buy', limit(65000.49999999, unit, 65000.49999999)), {
        kind: 'limit',
        price: 130_000,
      });
    }
    // On the tick: the tick itself, either side.
    assert.deepEqual(at('buy', limit(65000.5, 'USD')), { kind: 'limit', price: 130_001 });
    assert.deepEqual(at('sell', limit(65000.5, 'USD')), { kind: 'limit', price: 130_001 });
    // A number the same binary64 as the tick is the tick (JSON text beyond float precision).
    assert.deepEqual(at('sell', limit(JSON.parse('65000.50000000000001'), 'USD')), {
      kind: 'limit',
      price: 130_001,
    });
    // The DYNAMIC worst price follows the same rule.
    const book = view({ bestBid: () => 129_990, bestAsk: () => 130_010, markPrice: () => 130_000 });
    const dyn = (side: 'buy' | 'sell', worst: number) =>
      resolvePrice(book, perp, side, dynamic('MARK', 0, 'USD', worst), 0);
    assert.deepEqual(dyn('sell', 65000.00000001), { kind: 'limit', price: 130_001 });
    assert.deepEqual(dyn('buy', 64999.99999999), { kind: 'limit', price: 129_999 });
  });

  test('BALANCE decimal strings are parsed exactly, never through a float', () => {
    const at = (side: 'buy' | 'sell', pricing: LegPricing) => resolvePrice(view(), perp, side, pricing, 0);
    assert.equal(Number('65000.00000000000000000001'), 65000, 'the float alone has lost the excess');
    assert.deepEqual(at('sell', balanceLimit('65000.00000000000000000001', 'USD')), {
      kind: 'limit',
      price: 130_001,
    });
    assert.deepEqual(at('buy', balanceLimit('65000.49999999999999999999', 'USD')), {
      kind: 'limit',
      price: 130_000,
    });
    assert.deepEqual(at('buy', balanceLimit('65000.00000000000000000000', 'USD')), {
      kind: 'limit',
      price: 130_000,
    });
    // Below one tick: a buy has no price, a sell is one tick.
    assert.equal(at('buy', balanceLimit('0.49999999999999999999', 'USD')).kind, 'unavailable');
    assert.deepEqual(at('sell', balanceLimit('0.00000000000000000001', 'USD')), { kind: 'limit', price: 1 });
    // On a coin-quoted option in its own coin, with the level's coarser tick (0.0005 above 0.005).
    assert.deepEqual(resolvePrice(view(), option, 'sell', balanceLimit('0.05000000000000000001', 'BTC'), 0), {
      kind: 'limit',
      price: 505,
    });
    assert.deepEqual(resolvePrice(view(), option, 'buy', balanceLimit('0.05049999999999999999', 'BTC'), 0), {
      kind: 'limit',
      price: 500,
    });
  });

  test('a BALANCE string keeps its exact value through validation to the child price', () => {
    const spec = validatePortfolioBody(
      {
        accountId: 7,
        portfolioType: 'BALANCE',
        balanceTrade: { parts: 1, eachLimitMs: 15_000, totalLimitMs: 0, totalEndAction: 2 },
        legs: [
          {
            instrument: perp.name,
            instrumentType: 'PERPETUAL',
            side: 2,
            quantity: '10',
            priceOptions: { priceType: 'LIMIT', price: '65000.00000000000000000001', priceIn: 'USD' },
          },
        ],
      },
      { accountIds: new Set([7]), instrument: (name) => (name === perp.name ? perp : undefined), now: 0 },
    );
    const leg = spec.legs[0]!;
    assert.deepEqual(resolvePrice(view(), perp, leg.side, leg.pricing, 0), { kind: 'limit', price: 130_001 });
  });

  test('float noise of a conversion lands on the intended tick; a genuine excess rounds for the client', () => {
    // 18 USD / 60000 / 0.0001 = 2.9999999999999996 in floats: 3 ticks either side.
    for (const side of ['buy', 'sell'] as const) {
      assert.deepEqual(resolvePrice(view(), option, side, limit(18, 'USD'), 0), { kind: 'limit', price: 3 });
      assert.equal(roundToTicks(option, side, 18 / 60_000), 3);
    }
    // A quote-currency 0.1 on the 0.0001 grid is exactly 1000 ticks (5-tick steps at that level).
    assert.deepEqual(resolvePrice(view(), option, 'sell', limit(0.1, 'BTC'), 0), {
      kind: 'limit',
      price: 1000,
    });
    assert.deepEqual(resolvePrice(view(), option, 'buy', limit(0.1, 'BTC'), 0), {
      kind: 'limit',
      price: 1000,
    });
    // DYNAMIC: 1 tick of 0.05 + 0.1 = 3.0000000000000004 ticks in floats: a sell stays at 3.
    const ethPerp = new Instrument(
      4,
      perpetualSpec({ name: 'ETH-PERPETUAL', baseCurrency: 'ETH', tickSize: '0.05' }),
    );
    const oneTick = view({ markPrice: () => 1 });
    assert.deepEqual(resolvePrice(oneTick, ethPerp, 'sell', dynamic('MARK', 0.1, 'USD'), 0), {
      kind: 'limit',
      price: 3,
    });
    // 3000.00000001 USD = 500.0000000016667 ticks: genuinely above 500, so a sell goes up to 505.
    assert.deepEqual(resolvePrice(view(), option, 'sell', limit(3000.00000001, 'USD'), 0), {
      kind: 'limit',
      price: 505,
    });
    assert.deepEqual(resolvePrice(view(), option, 'buy', limit(2999.99999999, 'USD'), 0), {
      kind: 'limit',
      price: 495,
    });
    // The float path's bound: 1e-12 relative is noise, 1e-11 is not. (A client's quote-currency
    // 65000.00000001, 1.5e-13 above a tick, never takes this path: see the exact tests above.)
    assert.equal(roundToTicks(perp, 'sell', 65000 * (1 + 1e-11)), 130_001);
    assert.equal(roundToTicks(perp, 'buy', 65000.5 * (1 - 1e-11)), 130_000);
    assert.equal(roundToTicks(perp, 'sell', 65000 * (1 + 1e-13)), 130_000);
    // Noise is relative to the numbers worked with: 1000.05 − 1000 = 1.0000000000013642 ticks of 0.05.
    const bigMark = view({ markPrice: () => 20_001 });
    for (const side of ['buy', 'sell'] as const) {
      assert.deepEqual(resolvePrice(bigMark, ethPerp, side, dynamic('MARK', -1000, 'USD'), 0), {
        kind: 'limit',
        price: 1,
      });
    }
  });

  test('DYNAMIC: a quote-currency offset is exact on a whole or half-tick reference', () => {
    const offsetBy = (offset: number, sent?: string): LegPricing => ({
      ...dynamic('MARK', offset, 'USD'),
      ...(sent === undefined ? {} : { dynamicOffsetAsSent: sent }),
    });
    const marked = view({ markPrice: () => 130_000 });
    const at = (side: 'buy' | 'sell', pricing: LegPricing, market = marked) =>
      resolvePrice(market, perp, side, pricing, 0);
    // MARK − 0.00000001 USD is below 65000: a buy may not pay 65000.
    assert.deepEqual(at('buy', offsetBy(-0.00000001, '-0.00000001')), { kind: 'limit', price: 129_999 });
    assert.deepEqual(at('sell', offsetBy(0.00000001, '0.00000001')), { kind: 'limit', price: 130_001 });
    assert.deepEqual(at('buy', offsetBy(-0.000001)), { kind: 'limit', price: 129_999 });
    assert.deepEqual(at('sell', offsetBy(0.000001)), { kind: 'limit', price: 130_001 });
    assert.deepEqual(at('buy', offsetBy(0, '-0.00000000000000000001')), { kind: 'limit', price: 129_999 });
    assert.deepEqual(at('sell', offsetBy(0, '0.00000000000000000001')), { kind: 'limit', price: 130_001 });
    // On the tick: the tick, either side.
    assert.deepEqual(at('buy', offsetBy(-0.5)), { kind: 'limit', price: 129_999 });
    assert.deepEqual(at('sell', offsetBy(-0.5)), { kind: 'limit', price: 129_999 });
    // MID on a half tick: + 0.25 USD is exactly the next tick; + 0.2 is below it.
    const book = view({ bestBid: () => 129_990, bestAsk: () => 130_011 });
    assert.deepEqual(at('buy', { ...dynamic('MID', 0.25, 'USD') }, book), { kind: 'limit', price: 130_001 });
    assert.deepEqual(at('sell', { ...dynamic('MID', 0.25, 'USD') }, book), { kind: 'limit', price: 130_001 });
    assert.deepEqual(at('buy', { ...dynamic('MID', 0.2, 'USD') }, book), { kind: 'limit', price: 130_000 });
    assert.deepEqual(at('sell', { ...dynamic('MID', 0.2, 'USD') }, book), { kind: 'limit', price: 130_001 });
  });
});

describe('clearOfOwnOrders', () => {
  test("a limit exactly at its own account's opposite order crosses it: it rests one step short", () => {
    assert.equal(clearOfOwnOrders(perp, 'buy', 1000, 1001), 1000, 'below the own ask: unchanged');
    assert.equal(clearOfOwnOrders(perp, 'buy', 1001, 1001), 1000, 'at the own ask: one tick below');
    assert.equal(clearOfOwnOrders(perp, 'sell', 1001, 1000), 1001, 'above the own bid: unchanged');
    assert.equal(clearOfOwnOrders(perp, 'sell', 1000, 1000), 1001, 'at the own bid: one tick above');
    assert.equal(clearOfOwnOrders(perp, 'buy', 1, 1), null, 'no valid price below a one-tick ask');
  });
});
