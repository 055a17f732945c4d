/**
 * Linked orders: a released market_limit secondary, OCO commands that are refused whole when a
 * secondary cannot be placed, and trigger fields on the non-trigger types of otocoConfig.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AdvancedHarness, orderOf, PERP } from './advanced-testkit.ts';
import { spotSpec } from './testkit.ts';
import { Venue } from './venue.ts';

type More = Record<string, unknown>;

/** The error name and field of a refused command, or null when it succeeded. */
function refusalOf(h: AdvancedHarness, command: ReturnType<AdvancedHarness['orderCommand']>) {
  const result = h.run(command);
  return result.ok ? null : [result.error.name, result.error.data.field];
}

/** Runs a command that must be refused and checks it changed nothing. */
function refusedWhole(h: AdvancedHarness, command: ReturnType<AdvancedHarness['orderCommand']>) {
  const before = h.venue.stateHash();
  const refused = refusalOf(h, command);
  assert.equal(h.venue.stateHash(), before, 'a refused command changes nothing');
  return refused;
}

const oco = (otocoConfig: More[], more: More = {}) => ({
  linkedOrderType: 'one_cancels_other',
  otocoConfig,
  ...more,
});

describe('linked orders: a released market_limit secondary', () => {
  test('becomes a limit at the best opposite price, originalOrderType market_limit', () => {
    const h = new AdvancedHarness();
    h.ok(h.orderCommand(3, 'buy', 5, 99_000));
    const primary = orderOf(
      h.ok(
        h.orderCommand(1, 'buy', 10, 100_000, {
          linkedOrderType: 'one_triggers_other',
          otocoConfig: [{ side: 'sell', orderType: 'market_limit' }],
        }),
      ),
    );
    const id = primary.otoOrderIds![0]!;
    const fill = h.ok(h.orderCommand(2, 'sell', 10, 100_000));
    assert.deepEqual(
      fill.events.flatMap((e) => (e.type === 'trade' ? [[e.trade.price, e.trade.amount]] : [])),
      [
        [100_000, 10],
        [99_000, 5],
      ],
      'the secondary took the best bid, not a bid at 0',
    );
    const secondary = h.get(id);
    assert.equal(secondary.orderType, 'limit');
    assert.equal(secondary.originalOrderType, 'market_limit');
    assert.equal(secondary.price, 99_000);
    assert.equal(secondary.orderState, 'open');
    assert.equal(secondary.filledAmount, 5);
    assert.equal(h.venue.book(PERP)!.bestAsk, 99_000);
    assert.equal(h.venue.position(1, PERP)!.size, 5);
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
    assert.equal(Venue.restore(h.venue.snapshot()).stateHash(), h.venue.stateHash());
  });

  test('an incremental release prices the part it releases at the best opposite price then', () => {
    const h = new AdvancedHarness();
    h.ok(h.orderCommand(3, 'buy', 10, 99_000));
    h.ok(h.orderCommand(2, 'sell', 4, 100_000));
    // An immediate-or-cancel primary fills 4 of 10: 4 lots of the secondary are released.
    const primary = orderOf(
      h.ok(
        h.orderCommand(1, 'buy', 10, 100_000, {
          timeInForce: 'immediate_or_cancel',
          linkedOrderType: 'one_triggers_other',
          triggerFillCondition: 'incremental',
          otocoConfig: [{ side: 'sell', orderType: 'market_limit', timeInForce: 'immediate_or_cancel' }],
        }),
      ),
    );
    const ids = h.get(primary.orderId).otoOrderIds!;
    assert.equal(ids.length, 2);
    const part = h.get(ids[1]!);
    assert.deepEqual(
      [part.orderType, part.originalOrderType, part.price, part.filledAmount, part.orderState],
      ['limit', 'market_limit', 99_000, 4, 'filled'],
    );
    const template = h.get(ids[0]!);
    // The rest waited for fills that never came: cancelled with the primary.
    assert.deepEqual(
      [template.orderType, template.orderState, template.amount, template.cancelReason],
      ['market_limit', 'cancelled', 6, 'oto_primary_closed'],
    );
    assert.equal(h.venue.position(1, PERP)!.size, 0);
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('is rejected when the opposite side is empty at release: no order at price 0', () => {
    const h = new AdvancedHarness();
    const primary = orderOf(
      h.ok(
        h.orderCommand(1, 'buy', 10, 100_000, {
          linkedOrderType: 'one_triggers_other',
          otocoConfig: [{ side: 'sell', orderType: 'market_limit' }],
        }),
      ),
    );
    const id = primary.otoOrderIds![0]!;
    h.ok(h.orderCommand(2, 'sell', 10, 100_000));
    const secondary = h.get(id);
    assert.equal(secondary.orderState, 'rejected');
    assert.equal(secondary.cancelReason, 'no_liquidity');
    assert.equal(h.venue.book(PERP)!.bestAsk, null);
    // Nothing rests at 0: a later buy finds no ask to trade with.
    const later = h.ok(h.orderCommand(2, 'buy', 10, 100_000, { timeInForce: 'immediate_or_cancel' }));
    assert.deepEqual(later.trades, []);
    assert.equal(h.venue.position(1, PERP)!.size, 10);
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('is rejected when the best opposite price is outside the price band', () => {
    const h = new AdvancedHarness();
    h.prices(null, 100_000);
    h.ok(h.orderCommand(3, 'buy', 5, 96_000));
    h.prices(null, 110_000); // the band is now 104,500 … 115,500: the bid at 96,000 is outside it
    const primary = orderOf(
      h.ok(
        h.orderCommand(1, 'buy', 10, 110_000, {
          linkedOrderType: 'one_triggers_other',
          otocoConfig: [{ side: 'sell', orderType: 'market_limit' }],
        }),
      ),
    );
    h.ok(h.orderCommand(2, 'sell', 10, 110_000));
    assert.equal(h.get(primary.otoOrderIds![0]!).orderState, 'rejected');
    assert.equal(h.get(primary.otoOrderIds![0]!).cancelReason, 'price_too_low');
    assert.equal(h.venue.position(1, PERP)!.size, 10);
    h.venue.validate();
  });

  test('OTOCO: a released market_limit rejected at release cancels its partner before the partner can fire', () => {
    const h = new AdvancedHarness();
    h.prices(50_000, 100_000); // band 95_000…105_000
    h.ok(h.orderCommand(3, 'buy', 5, 94_000)); // the only bid, below the band
    const primary = orderOf(
      h.ok(
        h.orderCommand(1, 'buy', 5, 100_000, {
          linkedOrderType: 'one_triggers_one_cancels_other',
          otocoConfig: [
            { side: 'sell', orderType: 'market_limit' },
            { side: 'sell', orderType: 'stop_market', trigger: 'last_price', triggerPrice: 100_000 },
          ],
        }),
      ),
    );
    h.ok(h.orderCommand(2, 'sell', 5, 100_000)); // fills the primary at 100_000: the stop is crossed
    const [tpId, slId] = h.get(primary.orderId).otoOrderIds!;
    assert.equal(h.get(tpId!).orderState, 'rejected');
    assert.equal(h.get(tpId!).cancelReason, 'price_too_low');
    const sl = h.get(slId!);
    assert.deepEqual(
      [sl.orderState, sl.cancelReason, sl.triggered],
      ['cancelled', 'oco_other_closed', false],
    );
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
  });
});

describe('linked orders: an OCO is refused whole when a secondary cannot be placed', () => {
  test('a secondary outside the price band names otocoConfig[0].price', () => {
    const h = new AdvancedHarness();
    h.prices(null, 100_000);
    const command = h.orderCommand(
      1,
      'sell',
      10,
      100_000,
      oco([{ side: 'sell', orderType: 'limit', price: 1_000 }]),
    );
    assert.deepEqual(refusedWhole(h, command), ['price_too_low', 'otocoConfig[0].price']);
    assert.deepEqual(h.venue.openOrders({ accountId: 1 }), []);
  });

  test('a reduce-only secondary with nothing to reduce names otocoConfig[0].reduceOnly', () => {
    const h = new AdvancedHarness();
    const command = h.orderCommand(
      1,
      'sell',
      10,
      100_000,
      oco([{ side: 'sell', orderType: 'limit', price: 101_000, reduceOnly: true }]),
    );
    assert.deepEqual(refusedWhole(h, command), ['reduce_only_violation', 'otocoConfig[0].reduceOnly']);
    // With a position of 10 and a reduce-only primary of 10, a reduce-only partner on that side
    // has nothing left (as placing them one after the other would find).
    h.ok(h.orderCommand(2, 'sell', 10, 100_000));
    h.ok(h.orderCommand(1, 'buy', 10, 100_000));
    const both = h.orderCommand(
      1,
      'sell',
      10,
      101_000,
      oco([{ side: 'sell', orderType: 'limit', price: 102_000, reduceOnly: true }], { reduceOnly: true }),
    );
    assert.deepEqual(refusedWhole(h, both), ['reduce_only_violation', 'otocoConfig[0].reduceOnly']);
    // A reduce-only stop (checked when it fires) is fine beside it.
    const stop = {
      side: 'sell',
      orderType: 'stop_market',
      trigger: 'last_price',
      triggerPrice: 90_000,
      reduceOnly: true,
    };
    h.ok(h.orderCommand(1, 'sell', 10, 101_000, oco([stop], { reduceOnly: true })));
    h.venue.validate();
  });

  test('funds: each secondary, and all of them with the primary, must fit', () => {
    const h = new AdvancedHarness();
    h.account(5, { BTC: 150_000 });
    // 100 lots at 50,000 USD reserve about 0.00101 BTC: one fits, two do not.
    const alone = h.orderCommand(
      5,
      'buy',
      100,
      99_000,
      oco([{ side: 'sell', orderType: 'limit', price: 101_000, amount: 1_000 }]),
    );
    assert.deepEqual(refusedWhole(h, alone), ['not_enough_funds', 'otocoConfig[0].quantity']);
    const together = h.orderCommand(
      5,
      'buy',
      100,
      99_000,
      oco([{ side: 'sell', orderType: 'limit', price: 101_000 }]),
    );
    assert.deepEqual(refusedWhole(h, together), ['not_enough_funds', 'otocoConfig[0].quantity']);
    // The primary short of funds on its own is reported as its own error.
    const primary = h.orderCommand(
      5,
      'buy',
      1_000,
      99_000,
      oco([{ side: 'sell', orderType: 'limit', price: 101_000 }]),
    );
    assert.deepEqual(refusedWhole(h, primary), ['not_enough_funds', 'quantity']);
    // A stop partner reserves nothing: fine.
    const stop = { side: 'sell', orderType: 'stop_market', trigger: 'last_price', triggerPrice: 90_000 };
    h.ok(h.orderCommand(5, 'buy', 100, 99_000, oco([stop])));
  });

  test('members that would trade with each other are refused (order_overlap)', () => {
    const h = new AdvancedHarness();
    const crossing = h.orderCommand(
      1,
      'sell',
      10,
      100_000,
      oco([{ side: 'buy', orderType: 'limit', price: 100_000 }]),
    );
    assert.deepEqual(refusedWhole(h, crossing), ['order_overlap', 'otocoConfig[0].price']);
    const twoSecondaries = h.orderCommand(
      1,
      'sell',
      10,
      100_000,
      oco([
        { side: 'sell', orderType: 'limit', price: 98_000 },
        { side: 'buy', orderType: 'limit', price: 99_000 },
      ]),
    );
    assert.deepEqual(refusedWhole(h, twoSecondaries), ['order_overlap', 'otocoConfig[1].price']);
    // Apart, they are fine.
    h.ok(h.orderCommand(1, 'sell', 10, 100_000, oco([{ side: 'buy', orderType: 'limit', price: 99_000 }])));
  });

  test('market_limit needs the opposite side; post-only with rejectPostOnly must not cross', () => {
    const h = new AdvancedHarness();
    const empty = h.orderCommand(1, 'sell', 10, 100_000, oco([{ side: 'sell', orderType: 'market_limit' }]));
    assert.deepEqual(refusedWhole(h, empty), ['invalid_arguments', 'otocoConfig[0].type']);
    h.ok(h.orderCommand(3, 'buy', 5, 99_000));
    const reject = h.orderCommand(
      1,
      'sell',
      10,
      100_000,
      oco([{ side: 'sell', orderType: 'limit', price: 99_000, postOnly: true, rejectPostOnly: true }]),
    );
    assert.deepEqual(refusedWhole(h, reject), ['post_only_reject', 'otocoConfig[0].price']);
  });

  test('the open-order limit counts the primary', () => {
    const h = new AdvancedHarness();
    h.ok({ type: 'set_account_settings', accountId: 1, maxOpenOrders: 1 });
    const command = h.orderCommand(
      1,
      'sell',
      10,
      100_000,
      oco([{ side: 'sell', orderType: 'limit', price: 101_000 }]),
    );
    assert.deepEqual(refusedWhole(h, command), ['max_open_orders', 'otocoConfig[0]']);
  });

  test('the trigger-order limit counts the trigger secondaries of an OTO as if released now', () => {
    const h = new AdvancedHarness();
    const stop = { orderType: 'stop_market', trigger: 'last_price', triggerPrice: 90_000 };
    for (let i = 0; i < 199; i++) h.ok(h.orderCommand(1, 'sell', 1, null, stop));
    const oto = (configs: More[]) => ({ linkedOrderType: 'one_triggers_other', otocoConfig: configs });
    const two = h.orderCommand(
      1,
      'buy',
      5,
      100_000,
      oto([
        { side: 'sell', ...stop },
        { side: 'sell', ...stop },
      ]),
    );
    assert.deepEqual(refusedWhole(h, two), ['no_more_triggers', 'otocoConfig[1].type']);
    const primary = orderOf(h.ok(h.orderCommand(1, 'buy', 5, 100_000, oto([{ side: 'sell', ...stop }]))));
    // The waiting secondary holds no slot: a direct stop takes the last one before the release.
    h.ok(h.orderCommand(1, 'sell', 1, null, stop));
    h.ok(h.orderCommand(2, 'sell', 5, 100_000));
    assert.equal(h.get(primary.otoOrderIds![0]!).orderState, 'rejected');
    assert.equal(h.get(primary.otoOrderIds![0]!).cancelReason, 'no_more_triggers');
    const waiting = h.venue.openOrders({ accountId: 1 }).filter((o) => o.orderState === 'untriggered');
    assert.equal(waiting.length, 200);
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('a secondary that fails only after the primary traded cancels the group (no orphan primary)', () => {
    const h = new AdvancedHarness();
    h.ok(h.orderCommand(3, 'buy', 5, 99_000)); // the only bid
    // The primary sells 5 into that bid and rests 5 (complete_fill: the group has not fired);
    // then no bid is left for the market_limit.
    const result = h.ok(
      h.orderCommand(
        1,
        'sell',
        10,
        99_000,
        oco([{ side: 'sell', orderType: 'market_limit' }], { triggerFillCondition: 'complete_fill' }),
      ),
    );
    assert.deepEqual(
      result.trades!.map((t) => [t.price, t.amount]),
      [[99_000, 5]],
    );
    const primary = h.get(result.order!.orderId);
    assert.equal(primary.orderState, 'cancelled');
    assert.equal(primary.cancelReason, 'oco_other_closed');
    assert.equal(primary.filledAmount, 5);
    assert.deepEqual(h.venue.openOrders({ accountId: 1 }), []);
    assert.equal(h.venue.position(1, PERP)!.size, -5);
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('a primary that trades when placed fires first_hit: the secondaries are cancelled unplaced', () => {
    const h = new AdvancedHarness();
    h.prices(50_000, 100_000);
    h.ok(h.orderCommand(3, 'sell', 10, 100_000));
    h.ok(h.orderCommand(1, 'buy', 10, 100_000));
    h.ok(h.orderCommand(2, 'buy', 4, 100_500));
    h.ok(h.orderCommand(2, 'buy', 100, 100_000));
    const result = h.ok(
      h.orderCommand(
        1,
        'sell',
        10,
        100_500,
        oco([
          { side: 'sell', orderType: 'stop_market', trigger: 'mark_price', triggerPrice: 98_000 },
          // Would sell into the deep bid at once if it were placed.
          { side: 'sell', orderType: 'limit', price: 100_000 },
        ]),
      ),
    );
    const primary = result.order!;
    assert.equal(primary.filledAmount, 4);
    assert.equal(primary.orderState, 'open');
    const members = result.events.flatMap((e) =>
      e.type === 'order' && e.order.accountId === 1 && e.order.orderId !== primary.orderId ? [e.order] : [],
    );
    assert.deepEqual(
      members.map((o) => [o.orderType, o.orderState, o.cancelReason, o.filledAmount, o.ocoRef]),
      [
        ['stop_market', 'cancelled', 'oco_other_closed', 0, primary.ocoRef],
        ['limit', 'cancelled', 'oco_other_closed', 0, primary.ocoRef],
      ],
    );
    assert.equal(h.venue.position(1, PERP)!.size, 6, 'sold 4, nothing more');
    assert.deepEqual(
      h.venue.openOrders({ accountId: 1 }).map((o) => o.orderId),
      [primary.orderId],
    );
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('incremental: a primary that trades when placed cuts its secondaries by the same share', () => {
    const h = new AdvancedHarness();
    h.prices(50_000, 100_000);
    h.ok(h.orderCommand(3, 'sell', 10, 100_000));
    h.ok(h.orderCommand(1, 'buy', 10, 100_000));
    h.ok(h.orderCommand(2, 'buy', 4, 100_500));
    const result = h.ok(
      h.orderCommand(
        1,
        'sell',
        10,
        100_500,
        oco([{ side: 'sell', orderType: 'stop_market', trigger: 'mark_price', triggerPrice: 98_000 }], {
          triggerFillCondition: 'incremental',
        }),
      ),
    );
    assert.equal(result.order!.filledAmount, 4);
    const stop = h.venue.openOrders({ accountId: 1 }).find((o) => o.orderId !== result.order!.orderId)!;
    assert.equal(stop.orderState, 'untriggered');
    assert.equal(stop.amount, 6);
    // The rest of the primary fills: the stop goes (10 of 10 done).
    h.ok(h.orderCommand(2, 'buy', 6, 100_500));
    assert.equal(h.get(stop.orderId).orderState, 'cancelled');
    assert.equal(h.venue.position(1, PERP)!.size, 0);
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
    assert.equal(Venue.restore(h.venue.snapshot()).stateHash(), h.venue.stateHash());
  });

  test('a secondary that trades when placed acts on the members placed before it at once', () => {
    const h = new AdvancedHarness();
    h.prices(50_000, 100_000);
    h.ok(h.orderCommand(3, 'sell', 10, 100_000));
    h.ok(h.orderCommand(1, 'buy', 10, 100_000));
    h.ok(h.orderCommand(2, 'buy', 100, 99_500));
    const result = h.ok(
      h.orderCommand(
        1,
        'sell',
        10,
        101_000,
        oco([
          { side: 'sell', orderType: 'limit', price: 99_500 }, // sells into the bid when placed
          { side: 'sell', orderType: 'limit', price: 99_000 }, // would sell again
        ]),
      ),
    );
    const primary = h.get(result.order!.orderId);
    assert.equal(primary.orderState, 'cancelled');
    assert.equal(primary.cancelReason, 'oco_other_closed');
    const members = result.events.flatMap((e) =>
      e.type === 'order' && e.order.accountId === 1 ? [e.order.orderId] : [],
    );
    const [, first, second] = [...new Set(members)].map((id) => h.get(id));
    assert.equal(first!.filledAmount, 10);
    assert.equal(second!.orderState, 'cancelled');
    assert.equal(second!.filledAmount, 0);
    assert.equal(h.venue.position(1, PERP)!.size, 0, 'sold 10, not 20');
    assert.deepEqual(h.venue.openOrders({ accountId: 1 }), []);
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('a good OCO still places every member', () => {
    const h = new AdvancedHarness();
    const stop = { side: 'sell', orderType: 'stop_market', trigger: 'last_price', triggerPrice: 90_000 };
    const result = h.ok(
      h.orderCommand(
        1,
        'sell',
        10,
        110_000,
        oco([stop, { side: 'sell', orderType: 'limit', price: 111_000 }]),
      ),
    );
    const open = h.venue.openOrders({ accountId: 1 });
    assert.equal(open.length, 3);
    assert.ok(open.every((o) => o.ocoRef === result.order!.ocoRef));
  });
});

describe('linked orders: otocoConfig entries keep the top-level field rules', () => {
  const cases: [More, string, string][] = [
    [
      { side: 'sell', orderType: 'limit', price: 110_000, trigger: 'mark_price' },
      'unsupported_arg_combination',
      'otocoConfig[0].trigger',
    ],
    [
      { side: 'sell', orderType: 'limit', price: 110_000, triggerPrice: 105_000 },
      'unsupported_arg_combination',
      'otocoConfig[0].triggerPrice',
    ],
    [
      { side: 'sell', orderType: 'market', triggerOffset: 500 },
      'unsupported_arg_combination',
      'otocoConfig[0].triggerOffset',
    ],
    [
      { side: 'sell', orderType: 'market_limit', trigger: 'index_price' },
      'unsupported_arg_combination',
      'otocoConfig[0].trigger',
    ],
    [
      { side: 'sell', orderType: 'market', postOnly: true },
      'post_only_not_allowed',
      'otocoConfig[0].postOnly',
    ],
    [
      { side: 'sell', orderType: 'market_limit', postOnly: true },
      'post_only_not_allowed',
      'otocoConfig[0].postOnly',
    ],
    [
      { side: 'sell', orderType: 'market', timeInForce: 'good_til_day' },
      'invalid_arguments',
      'otocoConfig[0].timeInForce',
    ],
    [
      { side: 'sell', orderType: 'limit', price: 110_000, label: 'x'.repeat(65) },
      'invalid_params',
      'otocoConfig[0].label',
    ],
  ];
  for (const linkedOrderType of [
    'one_triggers_other',
    'one_triggers_one_cancels_other',
    'one_cancels_other',
  ]) {
    test(`${linkedOrderType}: a reduce-only entry on spot is refused at placing, as a top-level one is`, () => {
      const h = new AdvancedHarness();
      h.list(spotSpec());
      h.account(10, { BTC: 100_000_000_000, USDC: 10_000_000_000_000 });
      const spot = (command: ReturnType<AdvancedHarness['orderCommand']>) => ({
        ...command,
        instrumentName: 'BTC_USDC',
      });
      const top = refusedWhole(h, spot(h.orderCommand(10, 'sell', 10, 110_000, { reduceOnly: true })));
      assert.deepEqual(top, ['invalid_arguments', 'reduceOnly']);
      const exit = { side: 'sell', orderType: 'limit', price: 110_000 };
      const command = h.orderCommand(10, 'buy', 10, 100_000, {
        linkedOrderType,
        otocoConfig: [exit, { ...exit, price: 120_000, reduceOnly: true }],
      });
      assert.deepEqual(refusedWhole(h, spot(command)), ['invalid_arguments', 'otocoConfig[1].reduceOnly']);
    });
  }

  for (const linkedOrderType of ['one_triggers_other', 'one_cancels_other']) {
    test(`${linkedOrderType}: trigger fields on limit/market types, post-only and time in force`, () => {
      const h = new AdvancedHarness();
      for (const [entry, name, field] of cases) {
        const command = h.orderCommand(1, 'buy', 10, 100_000, { linkedOrderType, otocoConfig: [entry] });
        assert.deepEqual(refusedWhole(h, command), [name, field], JSON.stringify(entry));
      }
      assert.deepEqual(h.venue.openOrders({ accountId: 1 }), []);
    });
  }
});
