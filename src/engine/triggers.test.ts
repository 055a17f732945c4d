import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AdvancedHarness, errorOf, orderOf } from './advanced-testkit.ts';
import { spotSpec } from './testkit.ts';
import { Venue } from './venue.ts';

/** Account 1's trailing stop of 2 lots on the index, 1,000 ticks behind it. */
function trailingStop(h: AdvancedHarness, side: 'buy' | 'sell') {
  return orderOf(
    h.ok(
      h.orderCommand(1, side, 2, null, {
        orderType: 'trailing_stop',
        trigger: 'index_price',
        triggerOffset: 1_000,
      }),
    ),
  );
}

describe('trigger orders', () => {
  test('stop_market sell on last_price waits, then fires when a trade prints at the trigger', () => {
    const h = new AdvancedHarness();
    h.ok(h.orderCommand(2, 'buy', 5, 98_000));
    const stop = orderOf(
      h.ok(
        h.orderCommand(1, 'sell', 3, null, {
          orderType: 'stop_market',
          trigger: 'last_price',
          triggerPrice: 99_000,
        }),
      ),
    );
    assert.equal(stop.orderState, 'untriggered');
    assert.equal(stop.triggered, false);
    assert.equal(stop.price, null);
    h.print(99_500);
    assert.equal(h.get(stop.orderId).orderState, 'untriggered');
    const result = h.print(99_000);
    const after = h.get(stop.orderId);
    assert.equal(after.orderState, 'filled');
    assert.equal(after.triggered, true);
    assert.equal(after.triggerOrderId, stop.orderId);
    assert.equal(after.averagePrice, 98_000);
    // The activation's events belong to the command whose trade fired it.
    assert.ok(result.events.some((e) => e.type === 'trade' && e.trade.price === 98_000));
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('stop_limit buy on mark_price rests at its price once the mark reaches the trigger', () => {
    const h = new AdvancedHarness();
    h.prices(50_000, 100_000);
    const stop = h.markStop(1, 'buy', 4, 101_000, 100_500);
    h.prices(null, 100_400);
    assert.equal(h.get(stop.orderId).orderState, 'untriggered');
    h.prices(null, 100_500);
    const live = h.get(stop.orderId);
    assert.equal(live.orderState, 'open');
    assert.equal(live.triggered, true);
    assert.equal(h.venue.book('BTC-PERPETUAL')!.bestBid, 101_000);
    h.venue.validate();
  });

  test('take_limit sell fires when the index rises to the trigger (index in instrument ticks)', () => {
    const h = new AdvancedHarness();
    h.prices(50_000);
    const take = orderOf(
      h.ok(
        h.orderCommand(1, 'sell', 2, 102_000, {
          orderType: 'take_limit',
          trigger: 'index_price',
          triggerPrice: 102_000,
        }),
      ),
    );
    h.prices(50_999.5);
    assert.equal(h.get(take.orderId).orderState, 'untriggered');
    // A quarter tick short: the index has not reached the trigger (nearest rounding fired here).
    h.prices(50_999.75);
    assert.equal(h.get(take.orderId).orderState, 'untriggered');
    h.prices(51_000);
    assert.equal(h.get(take.orderId).orderState, 'open');
  });

  test('an index trigger below the index fires only once the index is at or under it, not a part-tick above', () => {
    const h = new AdvancedHarness();
    h.prices(50_000);
    const stop = orderOf(
      h.ok(
        h.orderCommand(1, 'sell', 2, 97_000, {
          orderType: 'stop_limit',
          trigger: 'index_price',
          triggerPrice: 98_000,
        }),
      ),
    );
    h.prices(49_000.2);
    assert.equal(h.get(stop.orderId).orderState, 'untriggered');
    h.prices(49_000);
    assert.equal(h.get(stop.orderId).triggered, true);
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('trailing_stop sell follows the peak by the offset and fires on the retrace', () => {
    const h = new AdvancedHarness();
    h.prices(50_000);
    const trail = trailingStop(h, 'sell');
    assert.equal(trail.triggerPrice, 99_000);
    assert.equal(trail.triggerReferencePrice, 99_000);
    for (const index of [50_400, 51_000, 50_800]) h.prices(index);
    assert.equal(h.get(trail.orderId).triggerPrice, 101_000);
    assert.equal(h.get(trail.orderId).triggerReferencePrice, 99_000);
    h.prices(50_600);
    assert.equal(h.get(trail.orderId).orderState, 'untriggered');
    h.prices(50_500);
    const fired = h.get(trail.orderId);
    assert.equal(fired.triggered, true);
    // Market with nothing to hit: the remainder is cancelled.
    assert.equal(fired.orderState, 'cancelled');
    assert.equal(fired.cancelReason, 'immediate_or_cancel');
  });

  test('a trailing stop needs a price to trail and a positive offset', () => {
    const h = new AdvancedHarness();
    const more = { orderType: 'trailing_stop', trigger: 'index_price', triggerOffset: 1_000 };
    assert.equal(errorOf(h.run(h.orderCommand(1, 'sell', 2, null, more))), 'invalid_trigger_price');
    h.prices(50_000);
    assert.equal(
      errorOf(h.run(h.orderCommand(1, 'sell', 2, null, { ...more, triggerOffset: 0 }))),
      'invalid_trigger_price',
    );
  });

  test('a trigger order already crossed when placed fires at once, and the answer shows it', () => {
    const h = new AdvancedHarness();
    h.prices(50_000, 100_000);
    h.ok(h.orderCommand(2, 'buy', 5, 99_000));
    const result = h.ok(
      h.orderCommand(1, 'sell', 3, null, {
        orderType: 'stop_market',
        trigger: 'mark_price',
        triggerPrice: 101_000,
      }),
    );
    const order = orderOf(result);
    assert.equal(order.orderState, 'filled');
    assert.equal(order.triggered, true);
    assert.equal(order.price, 95_000, 'the band edge it could sell down to');
    assert.deepEqual(
      result.trades?.map((t) => [t.price, t.amount]),
      [[99_000, 3]],
    );
    assert.deepEqual(order, h.get(order.orderId));
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('a sell trailing stop cannot trail below zero; trigger fields of the other kind are refused', () => {
    const h = new AdvancedHarness();
    h.prices(50_000);
    const trailing = { orderType: 'trailing_stop', trigger: 'index_price' };
    const tooFar = h.run(h.orderCommand(1, 'sell', 1, null, { ...trailing, triggerOffset: 100_000 }));
    assert.equal(errorOf(tooFar), 'invalid_trigger_price');
    assert.equal(!tooFar.ok && tooFar.error.data.field, 'triggerOffset');
    assert.ok(h.run(h.orderCommand(1, 'buy', 1, null, { ...trailing, triggerOffset: 100_000 })).ok);
    const both = h.run(
      h.orderCommand(1, 'sell', 1, null, { ...trailing, triggerOffset: 10, triggerPrice: 99_000 }),
    );
    assert.equal(errorOf(both), 'unsupported_arg_combination');
    assert.equal(!both.ok && both.error.data.field, 'triggerPrice');
    const stop = { orderType: 'stop_market', trigger: 'index_price', triggerPrice: 90_000 };
    const offset = h.run(h.orderCommand(1, 'sell', 1, null, { ...stop, triggerOffset: 10 }));
    assert.equal(!offset.ok && offset.error.data.field, 'triggerOffset');
    const waiting = orderOf(h.ok(h.orderCommand(1, 'sell', 1, null, stop)));
    const edit = h.run({ type: 'edit_order', accountId: 1, orderId: waiting.orderId, triggerOffset: 10 });
    assert.equal(errorOf(edit), 'unsupported_arg_combination');
  });

  test('labels are limited in characters, not UTF-16 units', () => {
    const h = new AdvancedHarness();
    const stop = { orderType: 'stop_market', trigger: 'last_price', triggerPrice: 90_000 };
    assert.ok(h.run(h.orderCommand(1, 'sell', 1, null, { ...stop, label: '🚀'.repeat(64) })).ok);
    assert.ok(h.run(h.orderCommand(1, 'sell', 1, 100_000, { label: '🚀'.repeat(64) })).ok);
    const long = h.run(h.orderCommand(1, 'sell', 1, 100_000, { label: '🚀'.repeat(65) }));
    assert.equal(!long.ok && long.error.data.field, 'label');
  });

  test('validation: trigger kind, trigger price on grid, price for limit types, no FOK', () => {
    const h = new AdvancedHarness();
    const base = { orderType: 'stop_limit', trigger: 'last_price', triggerPrice: 99_000 };
    assert.equal(
      errorOf(h.run(h.orderCommand(1, 'sell', 1, 99_000, { ...base, trigger: null }))),
      'missing_params',
    );
    assert.equal(
      errorOf(h.run(h.orderCommand(1, 'sell', 1, 99_000, { ...base, triggerPrice: null }))),
      'invalid_trigger_price',
    );
    assert.equal(errorOf(h.run(h.orderCommand(1, 'sell', 1, null, base))), 'invalid_price');
    assert.equal(
      errorOf(h.run(h.orderCommand(1, 'sell', 1, 99_000, { ...base, timeInForce: 'fill_or_kill' }))),
      'invalid_arguments',
    );
    assert.equal(
      errorOf(h.run(h.orderCommand(1, 'sell', 1, 99_000, { ...base, validUntil: h.ts - 1 }))),
      'timed_out',
    );
  });

  test('untriggered orders: listed open, cancelled by cancel and cancel_all, edited in place', () => {
    const h = new AdvancedHarness();
    const more = { orderType: 'stop_market', trigger: 'last_price', triggerPrice: 90_000 };
    const a = orderOf(h.ok(h.orderCommand(1, 'sell', 1, null, more)));
    const b = orderOf(h.ok(h.orderCommand(1, 'sell', 1, null, more)));
    assert.deepEqual(
      h.venue.openOrders({ accountId: 1 }).map((o) => o.orderId),
      [a.orderId, b.orderId],
    );
    const edited = orderOf(
      h.ok({ type: 'edit_order', accountId: 1, orderId: a.orderId, triggerPrice: 91_000, amount: 3 }),
    );
    assert.equal(edited.triggerPrice, 91_000);
    assert.equal(edited.amount, 3);
    assert.equal(edited.replaced, true);
    const cancelled = orderOf(h.ok({ type: 'cancel_order', accountId: 1, orderId: a.orderId }));
    assert.equal(cancelled.orderState, 'cancelled');
    const all = h.ok({ type: 'cancel_all', accountId: 1 });
    assert.deepEqual(
      all.orders?.map((o) => o.orderId),
      [b.orderId],
    );
    assert.deepEqual(h.venue.openOrders({ accountId: 1 }), []);
  });

  test('an edit of an untriggered order refuses what placing one refuses (post-only, iceberg)', () => {
    const h = new AdvancedHarness();
    const more = { orderType: 'stop_limit', trigger: 'last_price', triggerPrice: 90_000 };
    const stop = orderOf(h.ok(h.orderCommand(1, 'sell', 1_000, 89_000, more)));
    const hash = h.venue.stateHash();
    const edit = { type: 'edit_order' as const, accountId: 1, orderId: stop.orderId, amount: 1_000 };
    const refused = (extra: Record<string, unknown>) => {
      const result = h.run({ ...edit, ...extra });
      assert.ok(!result.ok, JSON.stringify(extra));
      return [result.error.name, result.error.data?.field];
    };
    assert.deepEqual(refused({ postOnly: true }), ['post_only_not_allowed', 'postOnly']);
    assert.deepEqual(refused({ rejectPostOnly: true }), ['invalid_params', 'rejectPostOnly']);
    assert.deepEqual(refused({ displayAmount: 200 }), ['unsupported_arg_combination', 'displayAmount']);
    assert.equal(h.venue.stateHash(), hash);
    assert.equal(errorOf(h.run({ ...edit, postOnly: false, rejectPostOnly: false })), null);
    assert.equal(h.get(stop.orderId).postOnly, false);
  });

  test('an edit cannot make a spot trigger order reduce-only (placing refuses it too)', () => {
    const h = new AdvancedHarness();
    h.list(spotSpec());
    h.account(10, { BTC: 100_000_000_000, USDC: 10_000_000_000_000 });
    const base = { instrumentName: 'BTC_USDC' };
    const stop = {
      ...h.orderCommand(10, 'sell', 10, null, {
        orderType: 'stop_market',
        trigger: 'last_price',
        triggerPrice: 49_000,
      }),
      ...base,
    };
    const refused = h.run({ ...stop, reduceOnly: true });
    assert.ok(!refused.ok);
    const order = orderOf(h.ok(stop));
    const before = h.venue.stateHash();
    const edit = h.run({
      type: 'edit_order',
      accountId: 10,
      orderId: order.orderId,
      amount: 5,
      reduceOnly: true,
    });
    assert.ok(!edit.ok);
    assert.deepEqual([edit.error.name, edit.error.data.field], [refused.error.name, 'reduceOnly']);
    assert.equal(h.venue.stateHash(), before, 'a refused edit changes nothing');
    assert.equal(h.get(order.orderId).amount, 10);
    assert.equal(h.get(order.orderId).reduceOnly, false);
  });

  test('good_til_day untriggered orders expire at the session end; settlement cancels them', () => {
    const h = new AdvancedHarness();
    const more = { orderType: 'stop_market', trigger: 'last_price', triggerPrice: 90_000 };
    const gtd = orderOf(h.ok(h.orderCommand(1, 'sell', 1, null, { ...more, timeInForce: 'good_til_day' })));
    const gtc = orderOf(h.ok(h.orderCommand(1, 'sell', 1, null, more)));
    assert.equal(h.venue.nextWakeup(), Date.UTC(2026, 0, 6, 8));
    h.ts += 86_400_000;
    h.ok({ type: 'timer' });
    assert.equal(h.get(gtd.orderId).cancelReason, 'good_til_day');
    assert.equal(h.get(gtc.orderId).orderState, 'untriggered');
    h.ok({ type: 'settle_instrument', instrumentName: 'BTC-PERPETUAL', settlementPrice: 100_000 });
    assert.equal(h.get(gtc.orderId).cancelReason, 'settlement');
  });

  test('snapshot/restore mid-way behaves like the original (trailing peaks included)', () => {
    const h = new AdvancedHarness();
    h.prices(50_000);
    h.ok(h.orderCommand(2, 'buy', 5, 98_000));
    const trail = trailingStop(h, 'sell');
    h.prices(51_000);
    const restored = Venue.restore(h.venue.snapshot());
    assert.equal(restored.stateHash(), h.venue.stateHash());
    assert.deepEqual(Venue.restore(restored.snapshot()).snapshot(), h.venue.snapshot());
    h.ts += 1000;
    const command = {
      type: 'update_prices' as const,
      seq: 999,
      ts: h.ts,
      indexPrices: [{ currency: 'BTC', price: 50_400 }],
    };
    const a = h.venue.execute(command);
    const b = restored.execute(command);
    assert.deepEqual(b.events, a.events);
    assert.equal(restored.stateHash(), h.venue.stateHash());
    assert.equal(h.get(trail.orderId).orderState, 'filled');
  });

  test('trailing_stop buy follows the trough by the offset and fires when the price comes back to the stop', () => {
    const h = new AdvancedHarness();
    h.prices(50_000);
    const trail = trailingStop(h, 'buy');
    assert.equal(trail.triggerPrice, 101_000);
    for (const index of [49_600, 49_000, 49_200]) h.prices(index);
    assert.equal(h.get(trail.orderId).triggerPrice, 99_000, 'follows the trough, not the rebound');
    assert.equal(h.get(trail.orderId).triggerReferencePrice, 101_000);
    h.prices(49_499.5); // 98_999 ticks: one tick short of the stop
    assert.equal(h.get(trail.orderId).orderState, 'untriggered');
    h.prices(49_500); // 99_000 ticks: exactly at the stop
    assert.equal(h.get(trail.orderId).triggered, true);
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('a trailing stop that moves publishes its new triggerPrice in the command events', () => {
    const h = new AdvancedHarness();
    h.prices(50_000);
    const trail = trailingStop(h, 'sell');
    const moved = h.prices(51_000);
    const views = moved.events.flatMap((e) =>
      e.type === 'order' && e.order.orderId === trail.orderId ? [e.order] : [],
    );
    assert.deepEqual(
      views.map((v) => [v.orderState, v.triggerPrice]),
      [['untriggered', 101_000]],
    );
    // No move, no event.
    const still = h.prices(50_900);
    assert.equal(
      still.events.some((e) => e.type === 'order' && e.order.orderId === trail.orderId),
      false,
    );
  });

  test('an untriggered good_til_day order expires at exactly the session end', () => {
    const h = new AdvancedHarness();
    const more = { orderType: 'stop_market', trigger: 'last_price', triggerPrice: 90_000 };
    const gtd = orderOf(h.ok(h.orderCommand(1, 'sell', 1, null, { ...more, timeInForce: 'good_til_day' })));
    const end = h.venue.nextWakeup()!;
    h.ts = end - 1;
    h.ok({ type: 'timer' } as never);
    assert.equal(h.get(gtd.orderId).orderState, 'untriggered');
    h.ts = end;
    h.ok({ type: 'timer' } as never);
    assert.equal(h.get(gtd.orderId).cancelReason, 'good_til_day');
  });

  test('at most 200 untriggered orders per account: the 200th is accepted, the 201st refused', () => {
    const h = new AdvancedHarness();
    const stop = { orderType: 'stop_market', trigger: 'last_price', triggerPrice: 90_000 };
    for (let i = 0; i < 199; i++) h.ok(h.orderCommand(1, 'sell', 1, null, stop));
    assert.equal(errorOf(h.run(h.orderCommand(1, 'sell', 1, null, stop))), null, 'the 200th');
    assert.equal(errorOf(h.run(h.orderCommand(1, 'sell', 1, null, stop))), 'no_more_triggers');
    // Another account is not affected.
    assert.equal(errorOf(h.run(h.orderCommand(2, 'sell', 1, null, stop))), null);
  });

  test('editing a sell trailing stop offset re-trails below the price, without firing', () => {
    const h = new AdvancedHarness();
    h.prices(50_000);
    const trail = trailingStop(h, 'sell');
    const edited = orderOf(
      h.ok({ type: 'edit_order', accountId: 1, orderId: trail.orderId, triggerOffset: 2_000 }),
    );
    assert.equal(edited.triggerPrice, 98_000);
    assert.equal(h.get(trail.orderId).orderState, 'untriggered');
    assert.equal(h.get(trail.orderId).triggerPrice, 98_000);
  });

  test('an edit that moves the trigger price across the current price fires the order in that command', () => {
    const h = new AdvancedHarness();
    h.ok(h.orderCommand(2, 'buy', 5, 98_000));
    h.print(99_500);
    const stop = orderOf(
      h.ok(
        h.orderCommand(1, 'sell', 3, null, {
          orderType: 'stop_market',
          trigger: 'last_price',
          triggerPrice: 90_000,
        }),
      ),
    );
    assert.equal(h.get(stop.orderId).orderState, 'untriggered');
    h.ok({ type: 'edit_order', accountId: 1, orderId: stop.orderId, triggerPrice: 100_000 });
    const after = h.get(stop.orderId);
    assert.equal(after.triggered, true, 'fired by the edit itself, not by a later price move');
    assert.equal(after.orderState, 'filled');
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('reduce-only trigger orders: placed and edited flags hold, and a reduce-only stop without a position is rejected when it fires', () => {
    const h = new AdvancedHarness();
    h.ok(h.orderCommand(2, 'buy', 5, 98_000));
    const more = { orderType: 'stop_market', trigger: 'last_price', triggerPrice: 99_000 };
    const ro = orderOf(h.ok(h.orderCommand(1, 'sell', 3, null, { ...more, reduceOnly: true })));
    assert.equal(ro.reduceOnly, true);
    const plain = orderOf(h.ok(h.orderCommand(1, 'sell', 3, null, { ...more, triggerPrice: 90_000 })));
    const edited = orderOf(
      h.ok({ type: 'edit_order', accountId: 1, orderId: plain.orderId, reduceOnly: true }),
    );
    assert.equal(edited.reduceOnly, true);
    assert.equal(h.get(plain.orderId).reduceOnly, true);
    h.print(99_000);
    const fired = h.get(ro.orderId);
    assert.equal(fired.triggered, true);
    assert.equal(fired.orderState, 'rejected', 'no position to reduce');
    assert.equal(fired.cancelReason, 'reduce_only_violation');
    assert.equal(fired.filledAmount ?? 0, 0);
  });

  test('a post-only trigger order is refused', () => {
    const h = new AdvancedHarness();
    const result = h.run(
      h.orderCommand(1, 'sell', 1, 99_000, {
        orderType: 'stop_limit',
        trigger: 'last_price',
        triggerPrice: 99_000,
        postOnly: true,
      }),
    );
    assert.equal(errorOf(result), 'post_only_not_allowed');
    assert.equal(!result.ok && result.error.data.field, 'postOnly');
  });

  test("an account cannot edit another account's untriggered order", () => {
    const h = new AdvancedHarness();
    const stop = orderOf(
      h.ok(
        h.orderCommand(1, 'sell', 3, null, {
          orderType: 'stop_market',
          trigger: 'last_price',
          triggerPrice: 90_000,
        }),
      ),
    );
    const before = h.venue.stateHash();
    const edit = h.run({
      type: 'edit_order',
      accountId: 2,
      orderId: stop.orderId,
      amount: 1,
      triggerPrice: 99_000,
    });
    assert.equal(edit.ok, false);
    const after = h.get(stop.orderId);
    assert.deepEqual([after.amount, after.triggerPrice, after.replaced], [3, 90_000, false]);
    assert.equal(h.venue.stateHash(), before);
  });

  test('cancel_all answers the waiting orders in order-number order, even after an edit', () => {
    const h = new AdvancedHarness();
    const more = { orderType: 'stop_market', trigger: 'last_price', triggerPrice: 90_000 };
    const a = orderOf(h.ok(h.orderCommand(1, 'sell', 1, null, more)));
    const b = orderOf(h.ok(h.orderCommand(1, 'sell', 1, null, more)));
    h.ok({ type: 'edit_order', accountId: 1, orderId: a.orderId, triggerPrice: 91_000 });
    const all = h.ok({ type: 'cancel_all', accountId: 1 });
    assert.deepEqual(
      all.orders?.map((o) => o.orderId),
      [a.orderId, b.orderId],
    );
  });

  test('a trigger order cannot be an iceberg (displayAmount refused, not dropped)', () => {
    const h = new AdvancedHarness();
    const result = h.run(
      h.orderCommand(1, 'sell', 1_000, 99_000, {
        orderType: 'stop_limit',
        trigger: 'last_price',
        triggerPrice: 99_000,
        displayAmount: 200,
      }),
    );
    assert.equal(errorOf(result), 'unsupported_arg_combination');
    assert.deepEqual(h.venue.openOrders({ accountId: 1 }), []);
  });
});
