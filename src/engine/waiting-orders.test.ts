import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AdvancedHarness, orderOf, PERP } from './advanced-testkit.ts';

const TP = { side: 'sell' as const, orderType: 'limit' as const, price: 110_000, label: 'tp' };
const SL = {
  side: 'sell' as const,
  orderType: 'stop_market' as const,
  trigger: 'last_price' as const,
  triggerPrice: 90_000,
  label: 'sl',
};

function otoco(h: AdvancedHarness, accountId = 1, more: Record<string, unknown> = {}) {
  return orderOf(
    h.ok(
      h.orderCommand(accountId, 'buy', 10, 100_000, {
        linkedOrderType: 'one_triggers_one_cancels_other',
        otocoConfig: [TP, SL],
        label: 'entry',
        owner: 'desk-a',
        ...more,
      }),
    ),
  );
}

const ids = (orders: readonly { orderId: string }[]) => orders.map((o) => o.orderId);

describe('open orders list waiting OTO/OTOCO secondaries', () => {
  test('the primary and its waiting secondaries are listed with all their fields', () => {
    const h = new AdvancedHarness();
    const primary = otoco(h);
    const [tpId, slId] = primary.otoOrderIds!;
    const open = h.venue.openOrders({ accountId: 1 });
    assert.deepEqual(ids(open), [primary.orderId, tpId, slId]);
    const tp = open[1]!;
    assert.deepEqual(tp, h.get(tpId!));
    assert.equal(tp.orderState, 'untriggered');
    assert.equal(tp.primaryOrderId, primary.orderId);
    assert.equal(tp.price, 110_000);
    assert.equal(tp.amount, 10);
    assert.equal(open[2]!.orderType, 'stop_market');
    assert.equal(open[2]!.triggerPrice, 90_000);
    assert.deepEqual(h.venue.openOrders({ accountId: 2 }), []);
  });

  test('filters apply to waiting secondaries: instrument, currency, kind, label, owner', () => {
    const h = new AdvancedHarness();
    const primary = otoco(h);
    const [tpId, slId] = primary.otoOrderIds!;
    const all = [primary.orderId, tpId, slId];
    const list = (filter: Record<string, string>) => ids(h.venue.openOrders({ accountId: 1, ...filter }));
    assert.deepEqual(list({ instrumentName: PERP }), all);
    assert.deepEqual(list({ instrumentName: 'BTC-OTHER' }), []);
    assert.deepEqual(list({ currency: 'BTC' }), all);
    assert.deepEqual(list({ currency: 'ETH' }), []);
    assert.deepEqual(list({ kind: 'future' }), all);
    assert.deepEqual(list({ kind: 'any' }), all);
    assert.deepEqual(list({ kind: 'option' }), []);
    assert.deepEqual(list({ label: 'tp' }), [tpId]);
    assert.deepEqual(list({ label: 'entry' }), [primary.orderId]);
    assert.deepEqual(list({ owner: 'desk-a' }), all);
    assert.deepEqual(list({ owner: 'desk-b' }), []);
  });

  test('a released secondary is listed once, as open; the closed primary drops the rest', () => {
    const h = new AdvancedHarness();
    const primary = otoco(h);
    const [tpId, slId] = primary.otoOrderIds!;
    h.ok(h.orderCommand(2, 'sell', 10, 100_000));
    const open = h.venue.openOrders({ accountId: 1 });
    assert.deepEqual(ids(open), [tpId, slId]);
    assert.equal(open[0]!.orderState, 'open');
    assert.equal(open[1]!.orderState, 'untriggered'); // the stop waits in the trigger book
    h.venue.validate();
  });

  test('cancel by id and cancel_all remove waiting secondaries from the list', () => {
    const h = new AdvancedHarness();
    const first = otoco(h);
    const [tpId, slId] = first.otoOrderIds!;
    const cancelled = h.ok({ type: 'cancel_order', accountId: 1, orderId: tpId! });
    assert.equal(cancelled.order!.orderState, 'cancelled');
    assert.equal(cancelled.order!.cancelReason, 'user_request');
    assert.deepEqual(ids(h.venue.openOrders({ accountId: 1 })), [first.orderId, slId]);
    // Another account cannot cancel it.
    assert.equal(h.run({ type: 'cancel_order', accountId: 2, orderId: slId! }).ok, false);

    const second = otoco(h);
    h.ok({ type: 'cancel_all', accountId: 1 });
    assert.deepEqual(h.venue.openOrders({ accountId: 1 }), []);
    for (const id of [slId!, ...second.otoOrderIds!]) assert.equal(h.get(id).orderState, 'cancelled');
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
  });
});

describe('cancel_all limited to orderIds (cancel-on-disconnect of one connection)', () => {
  test('cancels the listed orders and what they made, nothing else', () => {
    const h = new AdvancedHarness();
    const mine = otoco(h);
    const stop = orderOf(
      h.ok(
        h.orderCommand(1, 'sell', 1, null, {
          orderType: 'stop_market',
          trigger: 'last_price',
          triggerPrice: 90_000,
        }),
      ),
    );
    const plain = orderOf(h.ok(h.orderCommand(1, 'buy', 1, 99_000)));
    const other = otoco(h);
    const otherPlain = orderOf(h.ok(h.orderCommand(1, 'buy', 1, 98_000)));
    const result = h.ok({
      type: 'cancel_all',
      accountId: 1,
      orderIds: [mine.orderId, stop.orderId, plain.orderId, 'BTC-999999'],
      cancelReason: 'cancel_on_disconnect',
    });
    assert.deepEqual(
      ids(result.orders!).sort(),
      [mine.orderId, ...mine.otoOrderIds!, stop.orderId, plain.orderId].sort(),
    );
    for (const order of result.orders!) assert.equal(order.cancelReason, 'cancel_on_disconnect');
    assert.deepEqual(ids(h.venue.openOrders({ accountId: 1 })), [
      other.orderId,
      ...other.otoOrderIds!,
      otherPlain.orderId,
    ]);
    // Another account's order of the same id list is out of reach.
    assert.equal(h.ok({ type: 'cancel_all', accountId: 2, orderIds: [other.orderId] }).orders!.length, 0);
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
  });
});

describe('open-order limit on activation', () => {
  test('a released limit secondary is rejected (max_open_orders) when the account is at its limit', () => {
    const h = new AdvancedHarness();
    h.ok({ type: 'set_account_settings', accountId: 1, maxOpenOrders: 1 });
    const primary = otoco(h);
    const [tpId, slId] = primary.otoOrderIds!;
    // A partial fill releases both; the primary still rests, so the account is at its limit.
    h.ok(h.orderCommand(2, 'sell', 3, 100_000));
    const tp = h.get(tpId!);
    assert.equal(tp.orderState, 'rejected');
    assert.equal(tp.cancelReason, 'max_open_orders');
    assert.equal(tp.cancelReason, 'max_open_orders');
    assert.equal(tp.filledAmount, 0);
    // Its OCO partner follows (any member closing cancels the others).
    assert.equal(h.get(slId!).orderState, 'cancelled');
    assert.equal(h.get(primary.orderId).orderState, 'open');
    const account = h.venue.account(1)!;
    assert.equal(account.openOrderCount, 1);
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('a fired stop_limit is rejected before trading at the limit; a stop_market still trades', () => {
    const h = new AdvancedHarness();
    h.ok({ type: 'set_account_settings', accountId: 1, maxOpenOrders: 1 });
    h.ok(h.orderCommand(1, 'buy', 1, 90_000)); // the one resting order allowed
    h.ok(h.orderCommand(2, 'sell', 5, 101_000)); // liquidity the stops could take
    const stopLimit = orderOf(
      h.ok(
        h.orderCommand(1, 'buy', 2, 102_000, {
          orderType: 'stop_limit',
          trigger: 'last_price',
          triggerPrice: 100_500,
        }),
      ),
    );
    const stopMarket = orderOf(
      h.ok(
        h.orderCommand(1, 'buy', 2, null, {
          orderType: 'stop_market',
          trigger: 'last_price',
          triggerPrice: 100_500,
        }),
      ),
    );
    assert.deepEqual(ids(h.venue.openOrders({ accountId: 1 })).length, 3);
    h.print(100_500);
    const rejected = h.get(stopLimit.orderId);
    assert.equal(rejected.orderState, 'rejected');
    assert.equal(rejected.cancelReason, 'max_open_orders');
    assert.equal(rejected.cancelReason, 'max_open_orders');
    assert.equal(rejected.filledAmount, 0);
    assert.equal(rejected.triggered, true);
    const traded = h.get(stopMarket.orderId);
    assert.equal(traded.orderState, 'filled');
    assert.equal(traded.filledAmount, 2);
    assert.equal(h.venue.account(1)!.openOrderCount, 1);
    h.venue.validate();
  });

  test('below the limit, activation rests as before and the count never exceeds the limit', () => {
    const h = new AdvancedHarness();
    h.ok({ type: 'set_account_settings', accountId: 1, maxOpenOrders: 2 });
    const primary = otoco(h, 1, { otocoConfig: [TP, { ...SL, orderType: 'stop_limit', price: 89_000 }] });
    const [tpId] = primary.otoOrderIds!;
    h.ok(h.orderCommand(2, 'sell', 3, 100_000));
    assert.equal(h.get(tpId!).orderState, 'open');
    assert.equal(h.venue.account(1)!.openOrderCount, 2);
    // Plain placements are refused at the limit as before.
    const refused = h.run(h.orderCommand(1, 'buy', 1, 95_000));
    assert.equal(refused.ok, false);
    h.venue.validate();
  });
});
