/**
 * The order events of a linked placement (OCO, OTO, OTOCO) carry each order's links: pushes
 * (`user.orders.*`, `order.change.any`) and the read store are derived from them, so an event
 * without `ocoRef` would show a client an unlinked order that `get_order_state` shows linked
 * (review stop 43, F2).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { CommandResult, OrderView } from '../core/events.ts';
import { AdvancedHarness } from './advanced-testkit.ts';

const TP = { side: 'sell' as const, orderType: 'limit' as const, price: 110_000 };
const SL = {
  side: 'sell' as const,
  orderType: 'stop_market' as const,
  trigger: 'mark_price' as const,
  triggerPrice: 90_000,
};
const SL_LIMIT = { ...SL, orderType: 'stop_limit' as const, price: 89_000 };

/**
 * Runs one linked placement and checks its order events against the orders after the command:
 * each order's last event equals its state; every event carries its final links (`otoOrderIds`
 * may only grow within the command: a release publishes the longer list).
 */
function placeAndCheck(h: AdvancedHarness, command: Record<string, unknown>): OrderView[] {
  return check(h, h.ok(command as Parameters<AdvancedHarness['ok']>[0]));
}

function check(h: AdvancedHarness, result: CommandResult): OrderView[] {
  const byOrder = new Map<string, OrderView[]>();
  for (const e of result.events) {
    if (e.type !== 'order') continue;
    const list = byOrder.get(e.order.orderId) ?? [];
    list.push(e.order);
    byOrder.set(e.order.orderId, list);
  }
  assert.ok(byOrder.size > 0);
  for (const [id, events] of byOrder) {
    const now = h.get(id);
    assert.deepEqual(events.at(-1), now, `${id}: its last event is its state after the command`);
    let paired = false;
    for (const event of events) {
      for (const key of ['triggerFillCondition', 'isPrimaryOtoco', 'primaryOrderId'] as const)
        assert.deepEqual(event[key], now[key], `${id} ${event.orderState}: ${key}`);
      if (now.otoOrderIds === null) assert.equal(event.otoOrderIds, null, `${id}: otoOrderIds`);
      else assert.deepEqual(event.otoOrderIds, now.otoOrderIds.slice(0, event.otoOrderIds!.length));
      // An OTOCO secondary joins its pair when released, which may be later in the command:
      // its events before that are those of a waiting template, with no ocoRef yet.
      if (now.primaryOrderId !== null && event.ocoRef === null && !paired) continue;
      paired = true;
      assert.equal(event.ocoRef, now.ocoRef, `${id} ${event.orderState}: ocoRef`);
    }
  }
  if (result.ok && result.order !== undefined) assert.deepEqual(result.order, h.get(result.order.orderId));
  return [...byOrder.keys()].map((id) => h.get(id));
}

describe('linked placements: every order event carries the links', () => {
  test('OCO take-profit and protective stop: the stop’s event carries ocoRef and triggerFillCondition', () => {
    const h = new AdvancedHarness();
    const orders = placeAndCheck(
      h,
      h.orderCommand(1, 'sell', 5, 110_000, { linkedOrderType: 'one_cancels_other', otocoConfig: [SL] }),
    );
    assert.equal(orders.length, 2);
    const [tp, sl] = orders;
    assert.equal(sl!.orderState, 'untriggered');
    assert.ok(sl!.ocoRef !== null && sl!.ocoRef === tp!.ocoRef);
    assert.equal(sl!.triggerFillCondition, 'first_hit');
  });

  test('OCO with three secondaries, incremental', () => {
    const h = new AdvancedHarness();
    const orders = placeAndCheck(
      h,
      h.orderCommand(1, 'sell', 6, 110_000, {
        linkedOrderType: 'one_cancels_other',
        triggerFillCondition: 'incremental',
        otocoConfig: [{ ...TP, price: 111_000 }, SL, SL_LIMIT],
      }),
    );
    assert.equal(orders.length, 4);
    assert.equal(new Set(orders.map((o) => o.ocoRef)).size, 1);
  });

  test('OCO whose primary trades at placement (incremental cuts the members placed after it)', () => {
    const h = new AdvancedHarness();
    h.ok(h.orderCommand(2, 'buy', 2, 100_000));
    placeAndCheck(
      h,
      h.orderCommand(1, 'sell', 6, 100_000, {
        linkedOrderType: 'one_cancels_other',
        triggerFillCondition: 'incremental',
        otocoConfig: [SL, { ...TP, amount: 3 }],
      }),
    );
  });

  test('OCO whose secondary trades at placement and cancels the primary (first_hit)', () => {
    const h = new AdvancedHarness();
    h.ok(h.orderCommand(2, 'buy', 5, 100_000));
    const orders = placeAndCheck(
      h,
      h.orderCommand(1, 'sell', 5, 110_000, {
        linkedOrderType: 'one_cancels_other',
        otocoConfig: [{ ...TP, price: 100_000 }],
      }),
    );
    assert.ok(orders.some((o) => o.cancelReason === 'oco_other_closed'));
  });

  test('OTO and OTOCO resting: the primary’s event carries otoOrderIds, the templates theirs', () => {
    const h = new AdvancedHarness();
    placeAndCheck(
      h,
      h.orderCommand(1, 'buy', 5, 100_000, { linkedOrderType: 'one_triggers_other', otocoConfig: [TP] }),
    );
    const orders = placeAndCheck(
      h,
      h.orderCommand(1, 'buy', 5, 99_000, {
        linkedOrderType: 'one_triggers_one_cancels_other',
        otocoConfig: [TP, SL],
      }),
    );
    assert.equal(orders[0]!.isPrimaryOtoco, true);
  });

  test('OTO and OTOCO whose primary fills at placement: the release happens in the same command', () => {
    const h = new AdvancedHarness();
    h.ok(h.orderCommand(2, 'sell', 10, 100_000));
    placeAndCheck(
      h,
      h.orderCommand(1, 'buy', 4, 100_000, {
        linkedOrderType: 'one_triggers_other',
        triggerFillCondition: 'incremental',
        otocoConfig: [{ ...TP, amount: 3 }],
      }),
    );
    placeAndCheck(
      h,
      h.orderCommand(1, 'buy', 8, 100_000, {
        linkedOrderType: 'one_triggers_one_cancels_other',
        triggerFillCondition: 'incremental',
        otocoConfig: [TP, SL],
      }),
    );
  });

  test('property: any linked placement against any resting liquidity', () => {
    const types = ['one_cancels_other', 'one_triggers_other', 'one_triggers_one_cancels_other'] as const;
    const conditions = ['first_hit', 'complete_fill', 'incremental'] as const;
    const pool = [
      TP,
      { ...TP, price: 100_000 },
      SL,
      SL_LIMIT,
      { ...TP, side: 'buy' as const, price: 95_000 },
    ];
    fc.assert(
      fc.property(
        fc.constantFrom(...types),
        fc.constantFrom(...conditions),
        fc.integer({ min: 0, max: 12 }),
        fc.integer({ min: 1, max: 10 }),
        fc.subarray([0, 1, 2, 3, 4], { minLength: 1, maxLength: 3 }),
        fc.option(fc.integer({ min: 1, max: 10 })),
        (type, condition, resting, amount, picks, secondaryAmount) => {
          const h = new AdvancedHarness();
          if (resting > 0) h.ok(h.orderCommand(2, 'buy', resting, 100_000));
          let configs = picks.map((i) => ({
            ...pool[i]!,
            ...(secondaryAmount === null ? {} : { amount: secondaryAmount }),
          }));
          if (type === 'one_triggers_one_cancels_other' && configs.length < 2) configs = [TP, SL];
          const command = h.orderCommand(1, 'sell', amount, 100_000, {
            linkedOrderType: type,
            triggerFillCondition: condition,
            otocoConfig: configs,
          });
          const result = h.run(command as Parameters<AdvancedHarness['run']>[0]);
          if (result.ok) check(h, result); // else refused (e.g. an overlap): no order events
        },
      ),
      { numRuns: 150 },
    );
  });
});
