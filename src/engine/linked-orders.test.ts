import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { OrderView } from '../core/events.ts';
import { AdvancedHarness, errorOf, orderOf } from './advanced-testkit.ts';
import { Venue } from './venue.ts';

const TP = { side: 'sell' as const, orderType: 'limit' as const, price: 110_000 };
const SL = {
  side: 'sell' as const,
  orderType: 'stop_market' as const,
  trigger: 'last_price' as const,
  triggerPrice: 90_000,
};

describe('linked orders', () => {
  test('OTO first_hit: the first fill of the primary releases the secondaries in full', () => {
    const h = new AdvancedHarness();
    const primary = orderOf(
      h.ok(
        h.orderCommand(1, 'buy', 10, 100_000, { linkedOrderType: 'one_triggers_other', otocoConfig: [TP] }),
      ),
    );
    const [secondaryId] = primary.otoOrderIds!;
    const waiting = h.get(secondaryId!);
    assert.equal(waiting.orderState, 'untriggered');
    assert.equal(waiting.primaryOrderId, primary.orderId);
    assert.equal(waiting.isSecondaryOto, true);
    h.ok(h.orderCommand(2, 'sell', 3, 100_000));
    const live = h.get(secondaryId!);
    assert.equal(live.orderState, 'open');
    assert.equal(live.amount, 10);
    assert.equal(h.venue.book('BTC-PERPETUAL')!.bestAsk, 110_000);
    h.venue.validate();
  });

  test('OTO complete_fill waits for the complete fill; a cancelled primary cancels the secondaries', () => {
    const h = new AdvancedHarness();
    const more = {
      linkedOrderType: 'one_triggers_other',
      triggerFillCondition: 'complete_fill',
      otocoConfig: [TP],
    };
    const primary = orderOf(h.ok(h.orderCommand(1, 'buy', 10, 100_000, more)));
    const id = primary.otoOrderIds![0]!;
    h.ok(h.orderCommand(2, 'sell', 3, 100_000));
    assert.equal(h.get(id).orderState, 'untriggered');
    h.ok(h.orderCommand(2, 'sell', 7, 100_000));
    assert.equal(h.get(id).orderState, 'open');

    const other = orderOf(h.ok(h.orderCommand(1, 'buy', 10, 99_000, more)));
    h.ok({ type: 'cancel_order', accountId: 1, orderId: other.orderId });
    const cancelled = h.get(other.otoOrderIds![0]!);
    assert.equal(cancelled.orderState, 'cancelled');
    assert.equal(cancelled.cancelReason, 'oto_primary_closed');
  });

  test('OTO incremental releases floor(total × filled / amount) after each fill', () => {
    const h = new AdvancedHarness();
    const more = {
      linkedOrderType: 'one_triggers_other',
      triggerFillCondition: 'incremental',
      otocoConfig: [{ ...TP, amount: 7 }],
    };
    const primary = orderOf(h.ok(h.orderCommand(1, 'buy', 10, 100_000, more)));
    h.ok(h.orderCommand(2, 'sell', 3, 100_000)); // 7 × 3/10 = 2.1 → 2
    let ids = h.get(primary.orderId).otoOrderIds!;
    assert.equal(ids.length, 2);
    const released = () => ids.slice(1).reduce((s, id) => s + h.get(id).amount, 0);
    assert.equal(released(), 2);
    assert.equal(h.get(ids[0]!).amount, 5); // the template keeps the rest
    h.ok(h.orderCommand(2, 'sell', 7, 100_000)); // all of it
    ids = h.get(primary.orderId).otoOrderIds!;
    assert.equal(h.get(ids[0]!).orderState, 'open');
    assert.equal(h.get(ids[0]!).amount + released(), 7);
  });

  test('OCO: a fill of one cancels the other (oco_other_closed); both share ocoRef', () => {
    const h = new AdvancedHarness();
    const tp = orderOf(
      h.ok(
        h.orderCommand(1, 'sell', 5, 110_000, { linkedOrderType: 'one_cancels_other', otocoConfig: [SL] }),
      ),
    );
    const sl = h.venue.openOrders({ accountId: 1 }).find((o) => o.orderId !== tp.orderId)!;
    assert.equal(sl.orderState, 'untriggered');
    assert.ok(tp.ocoRef !== null && tp.ocoRef === sl.ocoRef);
    h.ok(h.orderCommand(2, 'buy', 1, 110_000));
    const closed = h.get(sl.orderId);
    assert.equal(closed.orderState, 'cancelled');
    assert.equal(closed.cancelReason, 'oco_other_closed');
    assert.equal(h.get(tp.orderId).orderState, 'open');
  });

  test('OCO: one sweep through both members fills one and cancels the other before reaching it', () => {
    const h = new AdvancedHarness();
    const first = orderOf(
      h.ok(
        h.orderCommand(1, 'sell', 5, 100_000, {
          linkedOrderType: 'one_cancels_other',
          otocoConfig: [{ side: 'sell', orderType: 'limit', price: 100_100 }],
        }),
      ),
    );
    const second = h.venue.openOrders({ accountId: 1 }).find((o) => o.orderId !== first.orderId)!;
    assert.equal(second.orderState, 'open');
    const sweep = h.ok(h.orderCommand(2, 'buy', 10, 100_200, { timeInForce: 'immediate_or_cancel' }));
    assert.deepEqual(
      sweep.trades!.map((t) => [t.price, t.amount]),
      [[100_000, 5]],
      'the group sold 5, not 10',
    );
    assert.equal(h.get(first.orderId).orderState, 'filled');
    assert.equal(h.get(second.orderId).orderState, 'cancelled');
    assert.equal(h.get(second.orderId).cancelReason, 'oco_other_closed');
    assert.equal(h.venue.position(1, 'BTC-PERPETUAL')!.size, -5);
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('OCO: a member fired by its trigger that fills as taker cancels its partner at once (sweep)', () => {
    const h = new AdvancedHarness();
    h.prices(50_000, 100_000);
    h.ok(h.orderCommand(3, 'sell', 10, 100_000));
    h.ok(h.orderCommand(1, 'buy', 10, 100_000));
    // Thin bids: the take-profit's sweep moves last_price through the stop's trigger.
    h.ok(h.orderCommand(2, 'buy', 5, 99_500));
    h.ok(h.orderCommand(2, 'buy', 100, 98_000));
    const tp = orderOf(
      h.ok(
        h.orderCommand(1, 'sell', 10, null, {
          orderType: 'take_market',
          trigger: 'mark_price',
          triggerPrice: 101_000,
          linkedOrderType: 'one_cancels_other',
          otocoConfig: [
            {
              side: 'sell',
              orderType: 'stop_market',
              trigger: 'last_price',
              triggerPrice: 99_000,
              amount: 10,
            },
          ],
        }),
      ),
    );
    const sl = h.venue.openOrders({ accountId: 1 }).find((o) => o.orderId !== tp.orderId)!;
    h.prices(null, 101_000);
    assert.equal(h.get(tp.orderId).orderState, 'filled');
    assert.equal(h.get(sl.orderId).orderState, 'cancelled');
    assert.equal(h.get(sl.orderId).cancelReason, 'oco_other_closed');
    assert.equal(h.venue.position(1, 'BTC-PERPETUAL')!.size, 0, 'sold 10, not 20');
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('OCO: two members due in one pass: the first fills as taker, the second never fires', () => {
    const h = new AdvancedHarness();
    h.prices(50_000, 100_000);
    h.ok(h.orderCommand(3, 'sell', 10, 100_000));
    h.ok(h.orderCommand(1, 'buy', 10, 100_000));
    h.ok(h.orderCommand(2, 'buy', 100, 99_000));
    const tp = orderOf(
      h.ok(
        h.orderCommand(1, 'sell', 10, null, {
          orderType: 'take_market',
          trigger: 'mark_price',
          triggerPrice: 101_000,
          linkedOrderType: 'one_cancels_other',
          otocoConfig: [
            {
              side: 'sell',
              orderType: 'stop_market',
              trigger: 'index_price',
              triggerPrice: 99_000,
              amount: 10,
            },
          ],
        }),
      ),
    );
    const sl = h.venue.openOrders({ accountId: 1 }).find((o) => o.orderId !== tp.orderId)!;
    // One price update makes both due: mark up to the take-profit, index down to the stop.
    h.prices(49_000, 101_000);
    assert.equal(h.get(tp.orderId).orderState, 'filled');
    assert.equal(h.get(sl.orderId).cancelReason, 'oco_other_closed');
    assert.equal(h.get(sl.orderId).filledAmount, 0);
    assert.equal(h.venue.position(1, 'BTC-PERPETUAL')!.size, 0);
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('a good_til_day secondary released days later lives to the end of the session it goes live in', () => {
    const h = new AdvancedHarness();
    const primary = orderOf(
      h.ok(
        h.orderCommand(1, 'buy', 10, 100_000, {
          linkedOrderType: 'one_triggers_other',
          otocoConfig: [{ ...TP, timeInForce: 'good_til_day' }],
        }),
      ),
    );
    h.ts += 2 * 86_400_000;
    h.ok(h.orderCommand(2, 'sell', 10, 100_000));
    const secondary = primary.otoOrderIds![0]!;
    assert.equal(h.get(secondary).orderState, 'open');
    h.ts += 1000;
    h.ok({ type: 'timer' } as never);
    assert.equal(h.get(secondary).orderState, 'open', 'still open a second later');
    h.ts += 86_400_000;
    h.ok({ type: 'timer' } as never);
    assert.equal(h.get(secondary).cancelReason, 'good_til_day');
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('a good_til_day stop released by its primary waits to the end of the session it is released in', () => {
    const h = new AdvancedHarness();
    const primary = orderOf(
      h.ok(
        h.orderCommand(1, 'buy', 5, 100_000, {
          linkedOrderType: 'one_triggers_other',
          otocoConfig: [{ ...SL, timeInForce: 'good_til_day' }],
        }),
      ),
    );
    h.ts += 2 * 86_400_000;
    h.ok(h.orderCommand(2, 'sell', 5, 100_000));
    const stop = primary.otoOrderIds![0]!;
    assert.equal(h.get(stop).orderState, 'untriggered');
    h.ts += 1000;
    h.ok({ type: 'timer' } as never);
    assert.equal(h.get(stop).orderState, 'untriggered', 'still waiting a second later');
    h.ts += 86_400_000;
    h.ok({ type: 'timer' } as never);
    assert.deepEqual([h.get(stop).orderState, h.get(stop).cancelReason], ['cancelled', 'good_til_day']);
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('a released sell trailing stop that would start at or below zero is rejected, as placing one is refused', () => {
    const h = new AdvancedHarness();
    h.prices(50_000); // 100_000 ticks
    const trailing = { orderType: 'trailing_stop', trigger: 'index_price', triggerOffset: 90_000 } as const;
    const primary = orderOf(
      h.ok(
        h.orderCommand(1, 'buy', 5, 60_000, {
          linkedOrderType: 'one_triggers_other',
          otocoConfig: [{ side: 'sell', ...trailing }],
        }),
      ),
    );
    h.prices(40_000); // 80_000 ticks: the offset is now above the index
    assert.equal(errorOf(h.run(h.orderCommand(1, 'sell', 1, null, trailing))), 'invalid_trigger_price');
    h.ok(h.orderCommand(2, 'sell', 5, 60_000));
    const released = h.get(primary.otoOrderIds![0]!);
    assert.deepEqual([released.orderState, released.triggerPrice], ['rejected', null]);
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('OCO incremental cuts the other member in proportion', () => {
    const h = new AdvancedHarness();
    const a = orderOf(
      h.ok(
        h.orderCommand(1, 'sell', 10, 110_000, {
          linkedOrderType: 'one_cancels_other',
          triggerFillCondition: 'incremental',
          otocoConfig: [{ ...SL, amount: 10 }],
        }),
      ),
    );
    const b = h.venue.openOrders({ accountId: 1 }).find((o) => o.orderId !== a.orderId)!;
    h.ok(h.orderCommand(2, 'buy', 4, 110_000));
    assert.equal(h.get(b.orderId).amount, 6);
    h.ok(h.orderCommand(2, 'buy', 6, 110_000));
    assert.equal(h.get(b.orderId).orderState, 'cancelled');
  });

  test('OTOCO: the primary fill places a TP/SL pair that cancel each other', () => {
    const h = new AdvancedHarness();
    const primary = orderOf(
      h.ok(
        h.orderCommand(1, 'buy', 5, 100_000, {
          linkedOrderType: 'one_triggers_one_cancels_other',
          otocoConfig: [TP, SL],
        }),
      ),
    );
    assert.equal(primary.isPrimaryOtoco, true);
    h.ok(h.orderCommand(2, 'sell', 5, 100_000));
    const [tpId, slId] = h.get(primary.orderId).otoOrderIds!;
    assert.equal(h.get(tpId!).orderState, 'open');
    assert.equal(h.get(slId!).orderState, 'untriggered');
    assert.equal(h.get(tpId!).ocoRef, h.get(slId!).ocoRef);
    // The stop fires on a print at 90,000 and its fill cancels the take-profit.
    h.ok(h.orderCommand(3, 'buy', 5, 89_000));
    h.print(90_000);
    assert.equal(h.get(slId!).orderState, 'filled');
    assert.equal(h.get(tpId!).cancelReason, 'oco_other_closed');
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
    const restored = Venue.restore(h.venue.snapshot());
    assert.equal(restored.stateHash(), h.venue.stateHash());
  });

  test('OTOCO incremental: each release round is its own pair; one round filling leaves the others', () => {
    const h = new AdvancedHarness();
    h.prices(50_000, 100_000);
    const primary = orderOf(
      h.ok(
        h.orderCommand(1, 'buy', 10, 100_000, {
          linkedOrderType: 'one_triggers_one_cancels_other',
          triggerFillCondition: 'incremental',
          otocoConfig: [
            { side: 'sell', orderType: 'limit', price: 102_000 },
            { side: 'sell', orderType: 'stop_market', trigger: 'mark_price', triggerPrice: 98_000 },
          ],
        }),
      ),
    );
    h.ok(h.orderCommand(2, 'sell', 5, 100_000, { timeInForce: 'immediate_or_cancel' }));
    h.ok(h.orderCommand(2, 'sell', 5, 100_000, { timeInForce: 'immediate_or_cancel' }));
    const ids = h.get(primary.orderId).otoOrderIds!;
    assert.equal(ids.length, 4);
    const views = () => ids.map((id) => h.get(id));
    const [tp2, sl2, tp1, sl1] = views(); // the templates went out last, with the second round
    assert.equal(tp1!.ocoRef, sl1!.ocoRef);
    assert.equal(tp2!.ocoRef, sl2!.ocoRef);
    assert.notEqual(tp1!.ocoRef, tp2!.ocoRef, 'rounds are separate groups');
    // The first round's take-profit fills: only its own stop goes.
    h.ok(h.orderCommand(2, 'buy', 5, 102_000, { timeInForce: 'immediate_or_cancel' }));
    const after = new Map(views().map((v) => [v.orderId, v]));
    assert.equal(after.get(tp1!.orderId)!.orderState, 'filled');
    assert.equal(after.get(sl1!.orderId)!.cancelReason, 'oco_other_closed');
    assert.equal(after.get(tp2!.orderId)!.orderState, 'open');
    assert.equal(after.get(sl2!.orderId)!.orderState, 'untriggered');
    assert.equal(after.get(sl2!.orderId)!.amount, 5);
    assert.equal(h.venue.position(1, 'BTC-PERPETUAL')!.size, 5);
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
    assert.equal(Venue.restore(h.venue.snapshot()).stateHash(), h.venue.stateHash());
  });

  test('OTOCO: a released member that trades at once as taker cancels its partner before it enters', () => {
    const h = new AdvancedHarness();
    h.prices(50_000, 100_000);
    h.ok(h.orderCommand(3, 'buy', 100, 99_000)); // a deep bid the take-limit crosses
    const primary = orderOf(
      h.ok(
        h.orderCommand(1, 'buy', 5, 100_000, {
          linkedOrderType: 'one_triggers_one_cancels_other',
          otocoConfig: [
            { side: 'sell', orderType: 'limit', price: 99_000 },
            // Already due when released (mark 100,000): it would fire right after entering.
            { side: 'sell', orderType: 'stop_market', trigger: 'mark_price', triggerPrice: 100_500 },
          ],
        }),
      ),
    );
    h.ok(h.orderCommand(2, 'sell', 5, 100_000));
    const [tpId, slId] = h.get(primary.orderId).otoOrderIds!;
    assert.equal(h.get(tpId!).orderState, 'filled');
    assert.equal(h.get(slId!).orderState, 'cancelled');
    assert.equal(h.get(slId!).cancelReason, 'oco_other_closed');
    assert.equal(h.venue.position(1, 'BTC-PERPETUAL')!.size, 0);
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('a waiting secondary can be cancelled (not edited); the primary fill then releases nothing', () => {
    const h = new AdvancedHarness();
    const primary = orderOf(
      h.ok(
        h.orderCommand(1, 'buy', 10, 100_000, { linkedOrderType: 'one_triggers_other', otocoConfig: [TP] }),
      ),
    );
    const id = primary.otoOrderIds![0]!;
    assert.equal(
      errorOf(h.run({ type: 'edit_order', accountId: 1, orderId: id, amount: 3 })),
      'not_open_order',
    );
    h.ok({ type: 'cancel_order', accountId: 1, orderId: id });
    h.ok(h.orderCommand(2, 'sell', 10, 100_000));
    assert.equal(h.get(id).orderState, 'cancelled');
    assert.equal(h.venue.book('BTC-PERPETUAL')!.bestAsk, null);
    h.venue.validate();
  });

  test('OCO: cancelling one member cancels the other', () => {
    const h = new AdvancedHarness();
    const a = orderOf(
      h.ok(
        h.orderCommand(1, 'sell', 5, 110_000, { linkedOrderType: 'one_cancels_other', otocoConfig: [SL] }),
      ),
    );
    const b = h.venue.openOrders({ accountId: 1 }).find((o) => o.orderId !== a.orderId)!;
    h.ok({ type: 'cancel_order', accountId: 1, orderId: a.orderId });
    assert.equal(h.get(b.orderId).cancelReason, 'oco_other_closed');
    assert.deepEqual(h.venue.openOrders({ accountId: 1 }), []);
  });

  test('a post-only secondary is re-priced inside the spread when released, or rejected', () => {
    const h = new AdvancedHarness();
    h.ok(h.orderCommand(3, 'buy', 5, 104_000));
    const more = (reject: boolean) => ({
      linkedOrderType: 'one_triggers_other',
      otocoConfig: [{ ...TP, price: 103_000, postOnly: true, rejectPostOnly: reject }],
    });
    const primary = orderOf(h.ok(h.orderCommand(1, 'buy', 5, 105_000, more(false))));
    const rejecting = orderOf(h.ok(h.orderCommand(1, 'buy', 5, 105_000, more(true))));
    h.ok(h.orderCommand(2, 'sell', 10, 105_000));
    const repriced = h.get(primary.otoOrderIds![0]!);
    assert.equal(repriced.orderState, 'open');
    assert.equal(repriced.price, 104_001);
    assert.equal(repriced.filledAmount, 0);
    assert.equal(h.get(rejecting.otoOrderIds![0]!).orderState, 'rejected');
    assert.equal(h.get(rejecting.otoOrderIds![0]!).cancelReason, 'post_only_reject');
    h.venue.validate();
  });

  test('validation: config needed, at most 3, OTOCO needs two, limit secondaries need a price', () => {
    const h = new AdvancedHarness();
    const run = (more: Record<string, unknown>) => errorOf(h.run(h.orderCommand(1, 'buy', 5, 100_000, more)));
    assert.equal(run({ linkedOrderType: 'one_triggers_other' }), 'missing_params');
    assert.equal(
      run({ linkedOrderType: 'one_triggers_other', otocoConfig: [TP, TP, TP, TP] }),
      'no_more_oto_orders',
    );
    assert.equal(
      run({ linkedOrderType: 'one_triggers_one_cancels_other', otocoConfig: [TP] }),
      'invalid_arguments',
    );
    assert.equal(
      run({ linkedOrderType: 'one_triggers_other', otocoConfig: [{ side: 'sell' }] }),
      'invalid_price',
    );
    assert.equal(run({ otocoConfig: [TP] }), 'invalid_arguments');
  });

  test('validation: triggerFillCondition needs a linked order; entries keep the post-only rules', () => {
    const h = new AdvancedHarness();
    const fieldOf = (more: Record<string, unknown>) => {
      const result = h.run(h.orderCommand(1, 'buy', 5, 100_000, more));
      return result.ok ? null : [result.error.name, result.error.data.field];
    };
    assert.deepEqual(fieldOf({ triggerFillCondition: 'incremental' }), [
      'invalid_arguments',
      'linkedOrderType',
    ]);
    const oto = (entry: Record<string, unknown>) =>
      fieldOf({ linkedOrderType: 'one_triggers_other', otocoConfig: [{ ...TP, ...entry }] });
    assert.deepEqual(oto({ rejectPostOnly: true }), ['invalid_params', 'otocoConfig[0].rejectPostOnly']);
    assert.deepEqual(oto({ postOnly: true, timeInForce: 'immediate_or_cancel' }), [
      'post_only_not_allowed',
      'otocoConfig[0].postOnly',
    ]);
    assert.equal(oto({ postOnly: true, rejectPostOnly: true }), null);
    // Only the valid one was placed: its primary and its waiting secondary.
    assert.equal(h.venue.openOrders({ accountId: 1 }).length, 2);
  });

  test('property: an OCO exit pair sells at most its size, however its members fire and trade', () => {
    type Move = { kind: 'mark' | 'index' | 'print'; ticks: number };
    const move: fc.Arbitrary<Move> = fc.record({
      kind: fc.constantFrom('mark' as const, 'index' as const, 'print' as const),
      ticks: fc.integer({ min: -3_000, max: 3_000 }),
    });
    fc.assert(
      fc.property(
        fc.constantFrom('first_hit' as const, 'incremental' as const),
        fc.constantFrom('take_market' as const, 'limit' as const),
        fc.constantFrom('last_price' as const, 'mark_price' as const, 'index_price' as const),
        fc.integer({ min: 0, max: 2_000 }),
        fc.integer({ min: 0, max: 2_000 }),
        fc.array(
          fc.record({ below: fc.integer({ min: 0, max: 4_000 }), lots: fc.integer({ min: 1, max: 8 }) }),
          {
            minLength: 1,
            maxLength: 5,
          },
        ),
        fc.array(move, { minLength: 1, maxLength: 8 }),
        (condition, takeType, stopTrigger, up, down, bids, moves) => {
          const h = new AdvancedHarness();
          h.prices(50_000, 100_000);
          h.ok(h.orderCommand(3, 'sell', 10, 100_000));
          h.ok(h.orderCommand(1, 'buy', 10, 100_000));
          for (const b of bids) h.ok(h.orderCommand(2, 'buy', b.lots, 100_000 - b.below));
          h.ok(h.orderCommand(2, 'buy', 100, 80_000));
          const take =
            takeType === 'limit'
              ? h.orderCommand(1, 'sell', 10, 100_000 + up)
              : h.orderCommand(1, 'sell', 10, null, {
                  orderType: 'take_market',
                  trigger: 'mark_price',
                  triggerPrice: 100_000 + up,
                });
          const placed = h.ok({
            ...take,
            linkedOrderType: 'one_cancels_other',
            triggerFillCondition: condition,
            otocoConfig: [
              {
                side: 'sell',
                orderType: 'stop_market',
                trigger: stopTrigger,
                triggerPrice: 100_000 - down,
                amount: 10,
              },
            ],
          });
          const ids = [
            ...new Set(
              placed.events.flatMap((e) =>
                e.type === 'order' && e.order.accountId === 1 ? [e.order.orderId] : [],
              ),
            ),
          ];
          for (const m of moves) {
            const price = 100_000 + m.ticks;
            if (m.kind === 'mark') h.prices(null, price);
            else if (m.kind === 'index') h.prices(price / 2, null);
            else {
              h.ts += 1000;
              // Outside the price band either side may be refused: no print then.
              h.run(h.orderCommand(3, 'sell', 1, price));
              h.run(h.orderCommand(4, 'buy', 1, price, { timeInForce: 'immediate_or_cancel' }));
            }
          }
          const fills = ids.map((id) => h.get(id).filledAmount);
          const sold = fills.reduce((a, b) => a + b, 0);
          assert.ok(sold <= 10, `the pair sold ${sold}`);
          if (condition === 'first_hit') assert.ok(fills.filter((f) => f > 0).length <= 1, `fills ${fills}`);
          assert.ok(h.venue.position(1, 'BTC-PERPETUAL')!.size >= 0, 'never short');
          h.venue.validate();
          assert.equal(h.replayHash(), h.venue.stateHash());
        },
      ),
      { numRuns: 150, seed: 31 },
    );
  });

  test('property: incremental OTO never creates or loses quantity across partial fills', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 40 }),
        fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 8 }),
        fc.boolean(),
        (primaryLots, secondaryLots, fills, cancelAtEnd) => {
          const h = new AdvancedHarness();
          const primary = orderOf(
            h.ok(
              h.orderCommand(1, 'buy', primaryLots, 100_000, {
                linkedOrderType: 'one_triggers_other',
                triggerFillCondition: 'incremental',
                otocoConfig: [{ ...TP, amount: secondaryLots }],
              }),
            ),
          );
          for (const lots of fills) {
            if (h.get(primary.orderId).orderState !== 'open') break;
            h.ok(h.orderCommand(2, 'sell', lots, 100_000, { timeInForce: 'immediate_or_cancel' }));
            const p = h.get(primary.orderId);
            const ids = p.otoOrderIds!;
            const views: OrderView[] = ids.map((id) => h.get(id));
            const template = views[0]!;
            const releasedLots = views.slice(1).reduce((s, v) => s + v.amount, 0);
            const expected = Math.floor((secondaryLots * p.filledAmount) / p.amount);
            const live =
              template.orderState === 'untriggered' ? releasedLots : releasedLots + template.amount;
            assert.equal(live, expected);
            assert.equal(template.amount + releasedLots, secondaryLots);
          }
          if (cancelAtEnd && h.get(primary.orderId).orderState === 'open')
            h.ok({ type: 'cancel_order', accountId: 1, orderId: primary.orderId });
          const p = h.get(primary.orderId);
          const views = p.otoOrderIds!.map((id) => h.get(id));
          const placed = views.filter(
            (v) => v.orderState !== 'untriggered' && v.cancelReason !== 'oto_primary_closed',
          );
          const placedLots = placed.reduce((s, v) => s + v.amount, 0);
          const dropped = views
            .filter((v) => v.cancelReason === 'oto_primary_closed' || v.orderState === 'untriggered')
            .reduce((s, v) => s + v.amount, 0);
          // Everything configured is either placed or (still waiting / dropped with the primary).
          assert.equal(placedLots + dropped, secondaryLots);
          assert.equal(placedLots, Math.floor((secondaryLots * p.filledAmount) / p.amount));
          h.venue.validate();
        },
      ),
      { numRuns: 60, seed: 8 },
    );
  });

  test('a trailing_stop secondary released by its primary trails on the right side of the price', () => {
    const h = new AdvancedHarness();
    h.prices(50_000); // 100_000 ticks
    const trailing = {
      orderType: 'trailing_stop' as const,
      trigger: 'index_price' as const,
      triggerOffset: 1_000,
    };
    const primary = orderOf(
      h.ok(
        h.orderCommand(1, 'buy', 5, 100_000, {
          linkedOrderType: 'one_triggers_other',
          otocoConfig: [
            { side: 'sell', ...trailing },
            { side: 'buy', ...trailing },
          ],
        }),
      ),
    );
    h.ok(h.orderCommand(2, 'sell', 5, 100_000));
    const [sellId, buyId] = primary.otoOrderIds!;
    const sell = h.get(sellId!);
    const buy = h.get(buyId!);
    assert.deepEqual(
      [sell.orderState, sell.triggerPrice, sell.triggerReferencePrice],
      ['untriggered', 99_000, 99_000],
    );
    assert.deepEqual(
      [buy.orderState, buy.triggerPrice, buy.triggerReferencePrice],
      ['untriggered', 101_000, 101_000],
    );
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('reduceOnly on an OTO secondary and on an OCO secondary is kept', () => {
    const h = new AdvancedHarness();
    // OTO: the waiting template, then the released order, are reduce-only.
    const primary = orderOf(
      h.ok(
        h.orderCommand(1, 'buy', 5, 100_000, {
          linkedOrderType: 'one_triggers_other',
          otocoConfig: [{ side: 'sell', orderType: 'limit', price: 110_000, reduceOnly: true }],
        }),
      ),
    );
    const tpId = primary.otoOrderIds![0]!;
    assert.equal(h.get(tpId).reduceOnly, true, 'waiting template');
    h.ok(h.orderCommand(2, 'sell', 5, 100_000));
    assert.deepEqual([h.get(tpId).orderState, h.get(tpId).reduceOnly], ['open', true]);
    // OCO on the long position of 5: the stop secondary is reduce-only.
    const oco = orderOf(
      h.ok(
        h.orderCommand(1, 'sell', 5, 111_000, {
          linkedOrderType: 'one_cancels_other',
          otocoConfig: [
            {
              side: 'sell',
              orderType: 'stop_market',
              trigger: 'last_price',
              triggerPrice: 90_000,
              reduceOnly: true,
            },
          ],
        }),
      ),
    );
    const stop = h.venue
      .openOrders({ accountId: 1 })
      .find((o) => o.ocoRef === oco.ocoRef && o.orderId !== oco.orderId)!;
    assert.equal(stop.orderType, 'stop_market');
    assert.equal(stop.reduceOnly, true);
    h.venue.validate();
  });

  test('incremental OTO: a secondary cancelled while waiting releases nothing on later partial fills', () => {
    const h = new AdvancedHarness();
    const primary = orderOf(
      h.ok(
        h.orderCommand(1, 'buy', 10, 100_000, {
          linkedOrderType: 'one_triggers_other',
          triggerFillCondition: 'incremental',
          otocoConfig: [{ side: 'sell', orderType: 'limit', price: 110_000 }],
        }),
      ),
    );
    const tpId = primary.otoOrderIds![0]!;
    h.ok({ type: 'cancel_order', accountId: 1, orderId: tpId });
    const before = h.venue.openOrders({ accountId: 1 }).map((o) => o.orderId);
    h.ok(h.orderCommand(2, 'sell', 5, 100_000));
    const after = h.venue.openOrders({ accountId: 1 }).map((o) => o.orderId);
    assert.deepEqual(after, before, 'no increment of a cancelled secondary goes live');
    assert.equal(h.venue.book('BTC-PERPETUAL')!.bestAsk, null);
    assert.deepEqual(h.get(primary.orderId).otoOrderIds, [tpId]);
    h.venue.validate();
  });
});
