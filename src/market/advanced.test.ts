import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Instrument } from '../domain/instrument.ts';
import { advancedOrderPrice, IV_ORDER_CUTOFF_MS, nearestTick, priceInToTicks } from './advanced.ts';
import { buildCatalogue } from './catalogue.ts';
import { createCombo, parseComboName } from './combos.ts';
import { quotePriceFromVolatility } from './conversions.ts';
import { defaultMarketModel, priceMarket } from './market-state.ts';

const NOW = Date.UTC(2026, 10, 22, 6);
const INDEX = { BTC: 65_000, ETH: 3_200 };
const specs = buildCatalogue(NOW, INDEX);
const state = priceMarket(NOW, INDEX, specs, defaultMarketModel());
const instrument = (name: string) => new Instrument(1, specs.find((spec) => spec.name === name)!);

describe('advanced order prices', () => {
  const call = instrument('BTC-25DEC26-65000-C');

  test('nearest valid tick honours the coarse step above 0.005', () => {
    assert.equal(nearestTick(call, 0.00432), 43);
    assert.equal(nearestTick(call, 0.01234), 125);
    assert.equal(nearestTick(call, 0.01224), 120);
    assert.ok(call.isOnTick(nearestTick(call, 0.0051)));
  });

  test('usd converts with the index; implv through Black-76 on the forward', () => {
    assert.deepEqual(advancedOrderPrice(call, state, 'usd', 650), { ok: true, price: 100 });
    const iv = advancedOrderPrice(call, state, 'implv', 60);
    const expected = nearestTick(
      call,
      quotePriceFromVolatility(
        {
          optionType: 'call',
          marginKind: 'inverse',
          strike: 65_000,
          forward: state.forward('BTC', call.spec.expiration!),
          index: 65_000,
          timeToExpiry: state.mark(call.name)!.timeToExpiry!,
        },
        0.6,
      ),
    );
    assert.deepEqual(iv, { ok: true, price: expected });
  });

  test('a price that rounds to 0 ticks is one tick, the least an order can carry', () => {
    // 0.01 USD is about 1.5e-7 BTC, far under half the 0.0001 BTC tick.
    assert.equal(nearestTick(call, 0.01 / 65_000), 0);
    assert.deepEqual(advancedOrderPrice(call, state, 'usd', 0.01), { ok: true, price: 1 });
  });

  test('refusals', () => {
    const refusal = (result: ReturnType<typeof advancedOrderPrice>) => (result.ok ? null : result.error);
    assert.equal(
      refusal(advancedOrderPrice(instrument('BTC-PERPETUAL'), state, 'usd', 10)),
      'no_adv_for_futures',
    );
    assert.equal(
      refusal(advancedOrderPrice(instrument('BTC_USDC-25DEC26-65000-C'), state, 'usd', 10)),
      'invalid_args_for_instrument',
    );
    assert.equal(refusal(advancedOrderPrice(call, state, 'implv', -1)), 'invalid_price');
    assert.equal(refusal(advancedOrderPrice(call, state, 'implv', 0)), 'invalid_price');
    assert.equal(refusal(advancedOrderPrice(call, state, 'usd', 0)), 'invalid_price');
    const nearExpiry = priceMarket(Date.UTC(2026, 10, 22, 7, 50), INDEX, specs, defaultMarketModel());
    assert.equal(
      refusal(advancedOrderPrice(instrument('BTC-22NOV26-65000-C'), nearExpiry, 'implv', 50)),
      'outdated_instrument_for_iv_order',
    );
  });

  test('IV orders are taken until 15 minutes before expiry, not after', () => {
    const daily = instrument('BTC-22NOV26-65000-C');
    const at = (ms: number) => priceMarket(ms, INDEX, specs, defaultMarketModel());
    const expiry = daily.spec.expiration!;
    assert.ok(advancedOrderPrice(daily, at(expiry - IV_ORDER_CUTOFF_MS), 'implv', 50).ok);
    const late = advancedOrderPrice(daily, at(expiry - IV_ORDER_CUTOFF_MS + 1), 'implv', 50);
    assert.equal(late.ok ? null : late.error, 'outdated_instrument_for_iv_order');
  });

  test('priceIn on a future spread keeps a price at or below zero', () => {
    const spread = createCombo(
      parseComboName('BTC-FS-25DEC26_PERP')!,
      (name) => specs.find((s) => s.name === name),
      NOW,
    );
    assert.ok(spread.ok);
    const combo = new Instrument(9, spread.spec);
    const tick = Number(spread.spec.tickSize);
    const negative = priceInToTicks(combo, state, 'USD', -4 * tick);
    assert.deepEqual(negative, { ok: true, price: -4 });
    assert.deepEqual(priceInToTicks(combo, state, 'USD', 0), { ok: true, price: 0 });
  });

  test('priceIn for algorithm legs', () => {
    assert.deepEqual(priceInToTicks(call, state, 'USD', 650), { ok: true, price: 100 });
    assert.deepEqual(priceInToTicks(call, state, 'BTC', 0.0123), { ok: true, price: 125 });
    assert.deepEqual(priceInToTicks(instrument('BTC-PERPETUAL'), state, 'USDT', 65_000.3), {
      ok: true,
      price: 130_001,
    });
    const refused = priceInToTicks(instrument('BTC-PERPETUAL'), state, 'IV', 50);
    assert.ok(!refused.ok && refused.error === 'invalid_arguments');
  });
});
