import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Instrument } from '../domain/instrument.ts';
import { optionSpec, perpetualSpec } from '../engine/testkit.ts';
import {
  impliedVolPercent,
  type OptionPricingContext,
  quotePriceFromVolatility,
} from '../market/conversions.ts';
import type { AlgoMarketView } from './market-view.ts';
import { resolvePrice, roundToTicks } from './pricing.ts';
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
    markPrice: (name) => (name === option.name ? 500 : 120_000),
    indexPrice: () => 60_000,
    optionContext: (name) => (name === option.name ? context : null),
    modelPrice: (name) => (name === option.name ? 0.0512 : null),
    ...overrides,
  };
}
const limit = (price: number, priceIn: string | null): LegPricing => ({
  priceType: 'LIMIT',
  price,
  priceIn,
  dynamicStrategy: null,
  dynamicOffset: 0,
  dynamicMs: null,
});
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

  test('own orders are left out of the references', () => {
    const mine = { side: 'buy' as const, price: 120_004, amount: 10 };
    const book = view({
      bestBid: (_name, own) => (own?.price === 120_004 ? 119_990 : 120_004),
      bestAsk: () => 120_010,
    });
    assert.deepEqual(resolvePrice(book, perp, 'buy', dynamic('BID', 0, 'USD'), 0, mine), {
      kind: 'limit',
      price: 119_990,
    });
  });
});
