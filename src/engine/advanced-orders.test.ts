import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { black76Price, yearsBetween } from '../market/black76.ts';
import { AdvancedHarness, errorOf, orderOf, PERP } from './advanced-testkit.ts';
import { linearPerpetualSpec, optionSpec } from './testkit.ts';
import { Venue } from './venue.ts';

const OPTION = 'BTC-27DEC26-70000-C';
const EXPIRY = Date.UTC(2026, 11, 27, 8);

function withOption(): AdvancedHarness {
  const h = new AdvancedHarness();
  h.list(optionSpec());
  h.prices(50_000);
  return h;
}

function optionOrder(h: AdvancedHarness, more: Record<string, unknown>) {
  return { ...h.orderCommand(1, 'buy', 10, null, { orderType: 'limit', ...more }), instrumentName: OPTION };
}

describe('advanced options orders (usd / implv)', () => {
  test('usd: priced at usd / index, re-priced when the index moves (replaced, autoReplaced)', () => {
    const h = withOption();
    const order = orderOf(h.ok(optionOrder(h, { advanced: 'usd', advancedValue: 2_500 })));
    assert.equal(order.price, 500); // 0.05 BTC
    assert.equal(order.advanced, 'usd');
    assert.equal(order.usd, 2_500);
    assert.equal(order.replaced, false);
    h.prices(62_500);
    const moved = h.get(order.orderId);
    assert.equal(moved.price, 400); // 0.04 BTC
    assert.equal(moved.replaced, true);
    assert.equal(moved.autoReplaced, true);
    assert.equal(moved.usd, 2_500);
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
    const restored = Venue.restore(h.venue.snapshot());
    assert.equal(restored.stateHash(), h.venue.stateHash());
  });

  test('implv: Black-76 on the index as forward before any forward is published, snapped to the nearest tick', () => {
    const h = withOption();
    const order = orderOf(h.ok(optionOrder(h, { advanced: 'implv', advancedValue: 60 })));
    const usd = black76Price({
      optionType: 'call',
      forward: 50_000,
      strike: 70_000,
      timeToExpiry: yearsBetween(h.ts, EXPIRY),
      volatility: 0.6,
    });
    const coin = usd / 50_000;
    assert.ok(Math.abs(order.price! * 0.0001 - coin) <= 0.00025 + 1e-12, `${order.price} vs ${coin}`);
    assert.equal(order.implv, 60);
    h.prices(55_000);
    assert.ok(h.get(order.orderId).price! > order.price!);
  });

  test('implv: on the forward the market publishes with the option mark, as the mark itself', () => {
    const h = withOption();
    h.ts += 1000;
    // The market's forward for the expiry: 4% over the index; the mark at 60% on it.
    const forward = 52_000;
    const coin =
      black76Price({
        optionType: 'call',
        forward,
        strike: 70_000,
        timeToExpiry: yearsBetween(h.ts, EXPIRY),
        volatility: 0.6,
      }) / forward;
    const markPrice = Math.round(coin / 0.0001);
    h.ok({
      type: 'update_prices',
      markPrices: [{ instrumentName: OPTION, markPrice, delta: 0.3, vega: 50, forwardFactor: 1.04 }],
    });
    const order = orderOf(h.ok(optionOrder(h, { advanced: 'implv', advancedValue: 60 })));
    assert.ok(Math.abs(order.price! - markPrice) <= 5, `${order.price} vs the mark ${markPrice}`);
    assert.ok(Math.abs(order.price! * 0.0001 - coin) <= 0.00025 + 1e-12, `${order.price} vs ${coin}`);
    assert.equal(h.replayHash(), h.venue.stateHash());
    const restored = Venue.restore(h.venue.snapshot());
    assert.equal(restored.stateHash(), h.venue.stateHash());
  });

  test('refusals: futures, linear usd, post-only, missing value; a plain edit drops advanced', () => {
    const h = withOption();
    assert.equal(
      errorOf(h.run({ ...optionOrder(h, { advanced: 'usd', advancedValue: 1 }), instrumentName: PERP })),
      'no_adv_for_futures',
    );
    assert.equal(
      errorOf(h.run(optionOrder(h, { advanced: 'usd', advancedValue: 1, postOnly: true }))),
      'no_adv_postonly',
    );
    assert.equal(errorOf(h.run(optionOrder(h, { advanced: 'implv' }))), 'missing_params');
    const order = orderOf(h.ok(optionOrder(h, { advanced: 'usd', advancedValue: 2_500 })));
    const edited = orderOf(h.ok({ type: 'edit_order', accountId: 1, orderId: order.orderId, price: 450 }));
    assert.equal(edited.advanced, null);
    h.prices(62_500);
    assert.equal(h.get(order.orderId).price, 450);
    const again = orderOf(
      h.ok({
        type: 'edit_order',
        accountId: 1,
        orderId: order.orderId,
        advanced: 'usd',
        advancedValue: 3_125,
      }),
    );
    assert.equal(again.price, 500);
    assert.equal(again.usd, 3_125);
  });

  test('a refused post-only edit of an advanced order cancels it still advanced, not replaced', () => {
    const h = withOption();
    h.ok({ ...h.orderCommand(2, 'sell', 10, 600), instrumentName: OPTION });
    const order = orderOf(h.ok(optionOrder(h, { advanced: 'usd', advancedValue: 2_500 })));
    const result = orderOf(
      h.ok({
        type: 'edit_order',
        accountId: 1,
        orderId: order.orderId,
        price: 600,
        postOnly: true,
        rejectPostOnly: true,
      }),
    );
    assert.equal(result.cancelReason, 'edit_post_only_reject');
    assert.equal(result.replaced, false);
    assert.equal(result.price, 500);
    assert.equal(result.advanced, 'usd');
    assert.equal(result.usd, 2_500);
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('an edit that makes an order advanced and post-only is refused like such a placement', () => {
    const h = withOption();
    const plain = orderOf(h.ok(optionOrder(h, { price: 300 })));
    const advanced = orderOf(h.ok(optionOrder(h, { advanced: 'usd', advancedValue: 2_500 })));
    const hash = h.venue.stateHash();
    for (const order of [plain, advanced]) {
      const refused = h.run({
        type: 'edit_order',
        accountId: 1,
        orderId: order.orderId,
        amount: 10,
        advanced: 'usd',
        advancedValue: 2_000,
        postOnly: true,
      });
      assert.equal(errorOf(refused), 'no_adv_postonly');
      assert.equal(refused.ok ? null : refused.error.data.field, 'postOnly');
    }
    assert.equal(h.venue.stateHash(), hash);
    assert.equal(h.get(plain.orderId).advanced, null);
    assert.equal(h.get(plain.orderId).postOnly, false);
    assert.equal(h.get(advanced.orderId).usd, 2_500);
    assert.equal(h.get(advanced.orderId).postOnly, false);
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('a refused plain edit leaves an advanced order advanced and re-priced', () => {
    const h = withOption();
    const order = orderOf(h.ok(optionOrder(h, { advanced: 'usd', advancedValue: 2_500 })));
    const hash = h.venue.stateHash();
    const refused = h.run({
      type: 'edit_order',
      accountId: 1,
      orderId: order.orderId,
      amount: 10,
      price: 450,
      validUntil: h.ts - 1,
    });
    assert.equal(errorOf(refused), 'timed_out');
    assert.equal(h.venue.stateHash(), hash);
    assert.equal(h.get(order.orderId).advanced, 'usd');
    h.prices(62_500);
    assert.equal(h.get(order.orderId).price, 400); // still re-priced from its 2,500 USD
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('advanced orders are cancelled 15 minutes before expiry', () => {
    const h = withOption();
    const order = orderOf(h.ok(optionOrder(h, { advanced: 'usd', advancedValue: 2_500 })));
    h.ts = EXPIRY - 15 * 60 * 1000;
    h.prices(50_000);
    assert.equal(h.get(order.orderId).orderState, 'cancelled');
    assert.equal(
      errorOf(h.run(optionOrder(h, { advanced: 'usd', advancedValue: 2_500 }))),
      'outdated_instrument_for_iv_order',
    );
  });
});

describe('market_limit', () => {
  test('takes the best opposite level and rests the rest there as a limit', () => {
    const h = new AdvancedHarness();
    h.ok(h.orderCommand(2, 'sell', 5, 100_000));
    h.ok(h.orderCommand(2, 'sell', 5, 100_500));
    const order = orderOf(h.ok(h.orderCommand(1, 'buy', 8, null, { orderType: 'market_limit' })));
    assert.equal(order.orderType, 'limit');
    assert.equal(order.originalOrderType, 'market_limit');
    assert.equal(order.filledAmount, 5);
    assert.equal(order.price, 100_000);
    assert.equal(order.orderState, 'open');
    assert.equal(errorOf(h.run(h.orderCommand(1, 'sell', 8, null, { orderType: 'market_limit' }))), null);
    h.list(linearPerpetualSpec());
    assert.equal(
      errorOf(
        h.run({
          ...h.orderCommand(1, 'buy', 8, null, { orderType: 'market_limit' }),
          instrumentName: 'BTC_USDC-PERPETUAL',
        }),
      ),
      'invalid_arguments',
    );
  });

  test('displayAmount is refused as on a market order, not dropped', () => {
    const h = new AdvancedHarness();
    h.ok(h.orderCommand(2, 'sell', 1_000, 100_000));
    const market = h.run(h.orderCommand(1, 'buy', 10_000, null, { displayAmount: 1_000 }));
    assert.equal(errorOf(market), 'invalid_max_show_amount');
    const hash = h.venue.stateHash();
    const refused = h.run(
      h.orderCommand(1, 'buy', 10_000, null, { orderType: 'market_limit', displayAmount: 1_000 }),
    );
    assert.equal(errorOf(refused), 'invalid_max_show_amount');
    assert.equal(refused.ok ? null : refused.error.data.field, 'displayAmount');
    assert.equal(h.venue.stateHash(), hash);
  });

  test('postOnly is refused as on a market order', () => {
    const h = new AdvancedHarness();
    h.ok(h.orderCommand(2, 'sell', 5, 100_000));
    const market = h.run(h.orderCommand(1, 'buy', 5, null, { postOnly: true }));
    assert.equal(errorOf(market), 'post_only_not_allowed');
    const hash = h.venue.stateHash();
    for (const rejectPostOnly of [false, true]) {
      const refused = h.run(
        h.orderCommand(1, 'buy', 5, null, { orderType: 'market_limit', postOnly: true, rejectPostOnly }),
      );
      assert.equal(errorOf(refused), 'post_only_not_allowed');
      assert.deepEqual(refused.ok ? null : refused.error, market.ok ? null : market.error);
    }
    assert.equal(h.venue.stateHash(), hash);
    assert.equal(h.venue.book(PERP)!.bestBid, null);
  });
});

describe('reactions after a command', () => {
  test('an OTO whose primary is a stop: the fill made when it fires releases the secondary in that command', () => {
    const h = new AdvancedHarness();
    h.ok(h.orderCommand(2, 'sell', 5, 100_500));
    const primary = orderOf(
      h.ok(
        h.orderCommand(1, 'buy', 5, null, {
          orderType: 'stop_market',
          trigger: 'last_price',
          triggerPrice: 100_000,
          linkedOrderType: 'one_triggers_other',
          otocoConfig: [{ side: 'sell', orderType: 'limit', price: 110_000 }],
        }),
      ),
    );
    const tpId = primary.otoOrderIds![0]!;
    h.print(100_000);
    assert.equal(h.get(primary.orderId).orderState, 'filled');
    assert.equal(h.get(tpId).orderState, 'open', 'released by the command whose print fired the primary');
    assert.equal(h.venue.book('BTC-PERPETUAL')!.bestAsk, 110_000);
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('a fired stop that trades against mmp quotes counts toward the MMP limit in that command', () => {
    const h = new AdvancedHarness();
    h.ok({
      type: 'set_mmp_config',
      accountId: 1,
      indexName: 'btc_usd',
      interval: 10,
      frozenTime: 0,
      quantityLimit: 500,
    });
    const quote = orderOf(h.ok(h.orderCommand(1, 'sell', 100, 100_500, { mmp: true })));
    h.ok(
      h.orderCommand(2, 'buy', 60, null, {
        orderType: 'stop_market',
        trigger: 'last_price',
        triggerPrice: 100_000,
      }),
    );
    const fired = h.print(100_000); // the stop buys 60 lots (600 USD) of the quote
    assert.equal(fired.events.filter((e) => e.type === 'mmp_trigger').length, 1);
    assert.equal(h.get(quote.orderId).cancelReason, 'mmp_trigger');
    h.venue.validate();
  });
});
