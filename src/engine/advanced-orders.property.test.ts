import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { UnstampedCommand } from '../core/commands.ts';
import type { OrderView } from '../core/events.ts';
import { AdvancedHarness } from './advanced-testkit.ts';
import { propertySeed } from './testkit.ts';
import { Venue } from './venue.ts';

type Step =
  | { kind: 'index'; move: number }
  | { kind: 'mark'; move: number }
  | { kind: 'limit'; account: number; side: 'buy' | 'sell'; lots: number; offset: number; display: boolean }
  | {
      kind: 'stop';
      account: number;
      side: 'buy' | 'sell';
      offset: number;
      type: 'stop_market' | 'take_limit' | 'trailing_stop';
    }
  | {
      kind: 'linked';
      account: number;
      link: 'one_triggers_other' | 'one_cancels_other' | 'one_triggers_one_cancels_other';
      condition: 'first_hit' | 'complete_fill' | 'incremental';
      /** The first exit: a resting limit, or a take_market that fires on the mark and trades as taker. */
      exit: 'limit' | 'take';
    }
  | { kind: 'cancel'; account: number; pick: number }
  | { kind: 'wait'; ms: number };

const side = fc.constantFrom('buy' as const, 'sell' as const);
const account = fc.integer({ min: 1, max: 4 });
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('index' as const), move: fc.integer({ min: -400, max: 400 }) }),
  fc.record({ kind: fc.constant('mark' as const), move: fc.integer({ min: -400, max: 400 }) }),
  fc.record({
    kind: fc.constant('limit' as const),
    account,
    side,
    lots: fc.integer({ min: 1, max: 300 }),
    offset: fc.integer({ min: -600, max: 600 }),
    display: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('stop' as const),
    account,
    side,
    offset: fc.integer({ min: -600, max: 600 }),
    type: fc.constantFrom('stop_market' as const, 'take_limit' as const, 'trailing_stop' as const),
  }),
  fc.record({
    kind: fc.constant('linked' as const),
    account,
    link: fc.constantFrom(
      'one_triggers_other' as const,
      'one_cancels_other' as const,
      'one_triggers_one_cancels_other' as const,
    ),
    condition: fc.constantFrom('first_hit' as const, 'complete_fill' as const, 'incremental' as const),
    exit: fc.constantFrom('limit' as const, 'take' as const),
  }),
  fc.record({ kind: fc.constant('cancel' as const), account, pick: fc.nat() }),
  fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 1, max: 40_000_000 }) }),
);

function toCommand(
  h: AdvancedHarness,
  s: Step,
  index: { value: number },
  mark: { value: number },
): UnstampedCommand {
  const near = (offset: number) => Math.max(2, mark.value + offset * 2);
  switch (s.kind) {
    case 'index':
      index.value = Math.max(1_000, index.value + s.move);
      return { type: 'update_prices', indexPrices: [{ currency: 'BTC', price: index.value }] };
    case 'mark':
      mark.value = Math.max(1_000, mark.value + s.move * 2);
      return {
        type: 'update_prices',
        markPrices: [{ instrumentName: 'BTC-PERPETUAL', markPrice: mark.value }],
      };
    case 'limit': {
      const lots = s.display ? Math.max(s.lots, 100) * 3 : s.lots;
      return h.orderCommand(
        s.account,
        s.side,
        lots,
        near(s.offset),
        s.display ? { displayAmount: Math.max(s.lots, 100) } : {},
      );
    }
    case 'stop':
      return h.orderCommand(s.account, s.side, 20, s.type === 'take_limit' ? near(s.offset) : null, {
        orderType: s.type,
        trigger:
          s.type === 'take_limit' ? 'mark_price' : s.type === 'trailing_stop' ? 'index_price' : 'last_price',
        ...(s.type === 'trailing_stop' ? { triggerOffset: 200 } : { triggerPrice: near(s.offset) }),
      });
    case 'linked': {
      const buy = s.account % 2 === 0;
      const exit = buy ? 'sell' : 'buy';
      // A take_market exit sits close to its stop: its sweep often prints through the stop.
      const away = s.exit === 'take' ? 20 : 300;
      return h.orderCommand(s.account, buy ? 'buy' : 'sell', 30, near(buy ? 50 : -50), {
        linkedOrderType: s.link,
        triggerFillCondition: s.condition,
        otocoConfig: [
          s.exit === 'limit'
            ? { side: exit, amount: 30, orderType: 'limit', price: near(buy ? 300 : -300) }
            : {
                side: exit,
                amount: 30,
                orderType: 'take_market',
                trigger: 'mark_price',
                triggerPrice: near(buy ? away : -away),
              },
          {
            side: exit,
            amount: 20,
            orderType: 'stop_market',
            trigger: 'last_price',
            triggerPrice: near(buy ? -away : away),
          },
        ],
      });
    }
    case 'cancel': {
      const open = h.venue.openOrders({ accountId: s.account });
      const target = open[s.pick % Math.max(1, open.length)];
      return target === undefined
        ? { type: 'timer' }
        : { type: 'cancel_order', accountId: s.account, orderId: target.orderId };
    }
    case 'wait':
      h.ts += s.ms;
      return { type: 'timer' };
    default: {
      const _exhaustive: never = s;
      throw new Error(`unknown step ${JSON.stringify(_exhaustive)}`);
    }
  }
}

test('property: random advanced-order sessions stay consistent, replay and restore identically', () => {
  fc.assert(
    fc.property(
      fc.array(step, { minLength: 5, maxLength: 60 }),
      fc.integer({ min: 0, max: 59 }),
      (steps, cut) => {
        const h = new AdvancedHarness();
        const index = { value: 50_000 };
        const mark = { value: 100_000 };
        h.prices(index.value, mark.value);
        let restored: Venue | null = null;
        const views = new Map<string, OrderView>();
        steps.forEach((s, i) => {
          h.ts += 100;
          const command = h.stamp(toCommand(h, s, index, mark));
          const a = h.venue.execute(command);
          for (const e of a.events) if (e.type === 'order') views.set(e.order.orderId, e.order);
          if (restored !== null) {
            const b = restored.execute(command);
            assert.deepEqual(b.events, a.events);
          }
          h.venue.validate();
          if (i === cut % steps.length) restored = Venue.restore(h.venue.snapshot());
          // Book depth never shows more than the displays of icebergs plus plain remainders.
          for (const o of h.venue.openOrders({ accountId: 1 })) {
            if (o.displayAmount !== null)
              assert.ok(o.displayAmount > 0 && o.displayAmount <= o.amount - o.filledAmount);
          }
        });
        // first_hit: one member of an OCO group trades, never two (whether maker or taker).
        const traded = new Map<string, number>();
        for (const v of views.values()) {
          const primary = v.primaryOrderId === null ? undefined : views.get(v.primaryOrderId);
          const condition = v.triggerFillCondition ?? primary?.triggerFillCondition;
          if (v.ocoRef === null || condition !== 'first_hit' || v.filledAmount === 0) continue;
          traded.set(v.ocoRef, (traded.get(v.ocoRef) ?? 0) + 1);
        }
        for (const [ref, n] of traded) assert.ok(n <= 1, `${n} members of ${ref} traded`);
        assert.equal(h.replayHash(), h.venue.stateHash());
        if (restored !== null) assert.equal((restored as Venue).stateHash(), h.venue.stateHash());
      },
    ),
    { numRuns: Number(process.env.PROPERTY_RUNS ?? 40), seed: propertySeed() ?? 20261122 },
  );
});
