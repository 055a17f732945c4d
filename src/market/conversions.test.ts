import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { black76Price } from './black76.ts';
import {
  convertPriceIn,
  impliedVolPercent,
  type OptionPricingContext,
  quotePriceFromUsd,
  quotePriceFromVolatility,
  usdFromQuotePrice,
  volatilityFromQuotePrice,
} from './conversions.ts';

const inverseCall: OptionPricingContext = {
  optionType: 'call',
  marginKind: 'inverse',
  strike: 70_000,
  forward: 65_000,
  index: 64_000,
  timeToExpiry: 0.5,
};

describe('option price conversions', () => {
  test('inverse coin price is the Black-76 USD value over the forward', () => {
    const usd = black76Price({ ...inverseCall, volatility: 0.6 });
    assert.equal(quotePriceFromVolatility(inverseCall, 0.6), usd / 65_000);
  });

  test('coin ↔ IV round trip, inverse and linear', () => {
    for (const marginKind of ['inverse', 'linear'] as const) {
      const context = { ...inverseCall, marginKind };
      const price = quotePriceFromVolatility(context, 0.55);
      const iv = volatilityFromQuotePrice(context, price);
      assert.ok(iv.ok && Math.abs(iv.volatility - 0.55) < 1e-12);
      const percent = impliedVolPercent(context, price);
      assert.ok(percent.ok && Math.abs(percent.volatility - 55) < 1e-9);
    }
  });

  test('USD amounts convert with the index for inverse options, identity for linear', () => {
    assert.equal(quotePriceFromUsd(inverseCall, 3200), 0.05);
    assert.equal(usdFromQuotePrice(inverseCall, 0.05), 3200);
    assert.equal(quotePriceFromUsd({ marginKind: 'linear', index: 64_000 }, 3200), 3200);
  });

  test('priceIn conversions', () => {
    const option = { baseCurrency: 'BTC', quoteCurrency: 'BTC', option: inverseCall };
    assert.deepEqual(convertPriceIn(option, 64_000, 'USD', 640), { ok: true, quotePrice: 0.01 });
    assert.deepEqual(convertPriceIn(option, 64_000, 'USDT', 640), { ok: true, quotePrice: 0.01 });
    assert.deepEqual(convertPriceIn(option, 64_000, 'BTC', 0.02), { ok: true, quotePrice: 0.02 });
    const iv = convertPriceIn(option, 64_000, 'IV', 60);
    assert.ok(iv.ok && iv.quotePrice === quotePriceFromVolatility(inverseCall, 0.6));
    const perpetual = { baseCurrency: 'BTC', quoteCurrency: 'USD', option: null };
    assert.deepEqual(convertPriceIn(perpetual, 64_000, 'BTC', 1), { ok: true, quotePrice: 64_000 });
    assert.deepEqual(convertPriceIn(perpetual, 64_000, 'USDC', 65_000), { ok: true, quotePrice: 65_000 });
    const refused = convertPriceIn(perpetual, 64_000, 'IV', 50);
    assert.ok(!refused.ok && refused.reason === 'iv_not_option');
    const unknown = convertPriceIn(perpetual, 64_000, 'ETH', 1);
    assert.ok(!unknown.ok && unknown.reason === 'unsupported_unit');
  });
});
