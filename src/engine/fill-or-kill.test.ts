/**
 * fill_or_kill is "fully immediately or not at all": the dry run that decides it (sweep.ts
 * `sweepable`) must follow what the match (matching.ts `match`) does mid-sweep, where liquidity
 * goes as the taker trades: a one_cancels_other maker's fill cancels (or, incremental, cuts) its
 * partners deeper in the book, and a reduce-only maker is capped by its position at fill time,
 * which its account's earlier fills in the same sweep have shrunk. Market orders sized by the
 * same walk (`marketTerms`) reach as deep as that liquidity needs.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { CommandResult } from '../core/events.ts';
import { AdvancedHarness, errorOf, orderOf, PERP } from './advanced-testkit.ts';

const P = 100_000;

/** Account `accountId` long `lots` (bought from account 4, which nothing else uses). */
function long(h: AdvancedHarness, accountId: number, lots: number): void {
  h.ok(h.orderCommand(4, 'sell', lots, P - 1000));
  h.ok(h.orderCommand(accountId, 'buy', lots, P - 1000, { timeInForce: 'immediate_or_cancel' }));
  assert.equal(h.venue.position(accountId, PERP)!.size, lots);
}

/** An OCO group of account 1: sell 100 at `P`, partner sell 100 at `P + 50`. */
function ocoMaker(h: AdvancedHarness, condition = 'first_hit'): [string, string] {
  const first = orderOf(
    h.ok(
      h.orderCommand(1, 'sell', 100, P, {
        linkedOrderType: 'one_cancels_other',
        triggerFillCondition: condition,
        otocoConfig: [{ side: 'sell', orderType: 'limit', price: P + 50, amount: 100 }],
      }),
    ),
  );
  const partner = h.venue.openOrders({ accountId: 1 }).find((o) => o.orderId !== first.orderId)!;
  assert.equal(partner.orderState, 'open');
  return [first.orderId, partner.orderId];
}

function asks(h: AdvancedHarness): [number, number][] {
  return h.venue.book(PERP)!.asks.map((l) => [l.price, l.amount]);
}

function assertKilled(result: CommandResult): void {
  const order = orderOf(result);
  assert.equal(order.orderState, 'cancelled');
  assert.equal(order.cancelReason, 'immediate_or_cancel');
  assert.equal(order.filledAmount, 0);
  assert.deepEqual(result.ok ? result.trades : null, []);
}

describe('fill_or_kill follows what the match removes mid-sweep', () => {
  test('OCO maker: the partner its first fill cancels is not counted; the FOK trades nothing', () => {
    const h = new AdvancedHarness();
    const [first, partner] = ocoMaker(h);
    const before = asks(h);
    assertKilled(h.ok(h.orderCommand(2, 'buy', 200, P + 50, { timeInForce: 'fill_or_kill' })));
    assert.deepEqual(asks(h), before);
    assert.equal(h.get(first).orderState, 'open');
    assert.equal(h.get(partner).orderState, 'open');
    assert.equal(h.venue.position(2, PERP), null);
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test("reject_taker: an iceberg refreshes behind the taker's own order, which stops the sweep: refused, nothing traded", () => {
    const h = new AdvancedHarness();
    h.ok({ type: 'set_account_settings', accountId: 2, selfTradeMode: 'reject_taker' });
    h.ok(h.orderCommand(1, 'sell', 1000, P, { displayAmount: 100 }));
    h.ok(h.orderCommand(2, 'sell', 500, P));
    const result = h.run(h.orderCommand(2, 'buy', 600, P, { timeInForce: 'fill_or_kill' }));
    assert.equal(result.ok ? orderOf(result).filledAmount : 0, 0);
    assert.equal(h.venue.position(2, PERP)?.size ?? 0, 0);
    h.venue.validate();
  });

  test("reject_taker: the taker's own order ahead of the liquidity it needs is refused (order_overlap), nothing traded", () => {
    const h = new AdvancedHarness();
    h.ok({ type: 'set_account_settings', accountId: 2, selfTradeMode: 'reject_taker' });
    h.ok(h.orderCommand(1, 'sell', 1, P));
    h.ok(h.orderCommand(2, 'sell', 1, P + 10));
    // Enough liquidity for the FOK, but behind account 2's own ask at P + 10.
    h.ok(h.orderCommand(1, 'sell', 1, P + 10));
    const before = asks(h);
    const result = h.run(h.orderCommand(2, 'buy', 2, P + 10, { timeInForce: 'fill_or_kill' }));
    assert.equal(errorOf(result), 'order_overlap');
    assert.deepEqual(asks(h), before);
    assert.equal(h.venue.position(2, PERP)?.size ?? 0, 0);
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('reduce-only maker: capped by the position its own plain fill just shrank; the FOK trades nothing', () => {
    const h = new AdvancedHarness();
    long(h, 1, 100);
    h.ok(h.orderCommand(1, 'sell', 100, P));
    h.ok(h.orderCommand(1, 'sell', 100, P + 50, { reduceOnly: true }));
    const before = asks(h);
    assertKilled(h.ok(h.orderCommand(2, 'buy', 200, P + 50, { timeInForce: 'fill_or_kill' })));
    assert.deepEqual(asks(h), before);
    assert.equal(h.venue.position(1, PERP)!.size, 100);
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('an incremental OCO partner is cut by the share its partner filled, and counts for the rest', () => {
    // Account 1 long 100: a plain sell 60 at P, then a group of a reduce-only sell 100 at P and a
    // sell 100 at P + 50. The plain fill leaves the reduce-only member 40 to reduce; its 40-lot
    // fill cuts the partner by 40 (incremental) or cancels it (first_hit).
    for (const [condition, most] of [
      ['incremental', 160],
      ['first_hit', 100],
      ['complete_fill', 200],
    ] as const) {
      const h = new AdvancedHarness();
      long(h, 1, 100);
      h.ok(h.orderCommand(1, 'sell', 60, P));
      h.ok(
        h.orderCommand(1, 'sell', 100, P, {
          reduceOnly: true,
          linkedOrderType: 'one_cancels_other',
          triggerFillCondition: condition,
          otocoConfig: [{ side: 'sell', orderType: 'limit', price: P + 50, amount: 100 }],
        }),
      );
      const fok = { timeInForce: 'fill_or_kill' };
      assertKilled(h.ok(h.orderCommand(2, 'buy', most + 1, P + 50, fok)));
      const filled = h.ok(h.orderCommand(2, 'buy', most, P + 50, fok));
      assert.equal(orderOf(filled).orderState, 'filled', condition);
      assert.deepEqual(
        filled.trades!.map((t) => [t.price, t.amount]),
        [[P, 60], [P, 40], ...(most > 100 ? [[P + 50, most - 100]] : [])],
        condition,
      );
      h.venue.validate();
    }
  });

  test('when the book suffices despite both effects, the FOK fills in full', () => {
    const h = new AdvancedHarness();
    const [first, partner] = ocoMaker(h);
    h.ok(h.orderCommand(3, 'sell', 100, P + 50));
    const oco = h.ok(h.orderCommand(2, 'buy', 200, P + 50, { timeInForce: 'fill_or_kill' }));
    assert.equal(orderOf(oco).orderState, 'filled');
    assert.deepEqual(
      oco.trades!.map((t) => [t.maker.accountId, t.price, t.amount]),
      [
        [1, P, 100],
        [3, P + 50, 100],
      ],
    );
    assert.equal(h.get(first).orderState, 'filled');
    assert.equal(h.get(partner).cancelReason, 'oco_other_closed');
  });

  test('reduce-only makers that their positions still cover: the FOK fills in full', () => {
    // Reduce-only first, then a plain order of the same account: the reduce-only one fills while
    // the position is there, the plain one is not capped.
    const h = new AdvancedHarness();
    long(h, 3, 100);
    h.ok(h.orderCommand(3, 'sell', 100, P, { reduceOnly: true }));
    h.ok(h.orderCommand(3, 'sell', 100, P + 50));
    const roFirst = h.ok(h.orderCommand(2, 'buy', 200, P + 50, { timeInForce: 'fill_or_kill' }));
    assert.equal(orderOf(roFirst).filledAmount, 200);
    assert.equal(h.venue.position(3, PERP)!.size, -100);

    // A position large enough for both: the plain fill leaves the reduce-only one its lots.
    long(h, 1, 200);
    h.ok(h.orderCommand(1, 'sell', 100, P));
    h.ok(h.orderCommand(1, 'sell', 100, P + 50, { reduceOnly: true }));
    const roAfter = h.ok(h.orderCommand(2, 'buy', 200, P + 50, { timeInForce: 'fill_or_kill' }));
    assert.equal(orderOf(roAfter).filledAmount, 200);
    assert.equal(h.venue.position(1, PERP)!.size, 0);
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('a market order with no band reaches past the OCO partner its fill cancels', () => {
    for (const timeInForce of ['immediate_or_cancel', 'fill_or_kill']) {
      const h = new AdvancedHarness();
      ocoMaker(h);
      h.ok(h.orderCommand(3, 'sell', 100, P + 100));
      const result = h.ok(h.orderCommand(2, 'buy', 200, null, { timeInForce }));
      assert.equal(orderOf(result).filledAmount, 200, timeInForce);
      assert.deepEqual(
        result.trades!.map((t) => [t.price, t.amount]),
        [
          [P, 100],
          [P + 100, 100],
        ],
      );
      h.venue.validate();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Property: for random books of plain, reduce-only, iceberg and OCO makers (every condition), a
// FOK either fills in full or trades nothing, and it fills exactly when an IOC of the same order
// on the same book would fill in full (the dry run is exact, not merely safe).

const CONDITIONS = ['first_hit', 'complete_fill', 'incremental'] as const;

type Maker = {
  account: 1 | 2 | 3;
  level: number;
  amount: number;
  reduceOnly: boolean;
  display: number | null;
  oco: { condition: (typeof CONDITIONS)[number]; level: number; amount: number } | null;
};

const makerArb: fc.Arbitrary<Maker> = fc.record({
  account: fc.constantFrom(1 as const, 3 as const, 3 as const, 1 as const, 2 as const),
  level: fc.integer({ min: 0, max: 4 }),
  amount: fc.integer({ min: 1, max: 300 }),
  reduceOnly: fc.boolean(),
  display: fc.option(fc.integer({ min: 100, max: 200 }), { freq: 3 }),
  oco: fc.option(
    fc.record({
      condition: fc.constantFrom(...CONDITIONS),
      level: fc.integer({ min: 0, max: 4 }),
      amount: fc.integer({ min: 1, max: 300 }),
    }),
    { freq: 2 },
  ),
});

function session(
  positions: [number, number],
  makers: Maker[],
  taker: { amount: number; level: number | null },
  timeInForce: 'fill_or_kill' | 'immediate_or_cancel',
  rejectTaker = false,
): { result: CommandResult; h: AdvancedHarness } {
  const h = new AdvancedHarness();
  // The taker's account (2) also rests makers: in reject_taker mode the sweep stops at them.
  if (rejectTaker) h.ok({ type: 'set_account_settings', accountId: 2, selfTradeMode: 'reject_taker' });
  if (positions[0] > 0) long(h, 1, positions[0]);
  if (positions[1] > 0) long(h, 3, positions[1]);
  for (const m of makers) {
    const amount = m.display === null ? m.amount : Math.max(m.amount, m.display);
    h.run(
      h.orderCommand(m.account, 'sell', amount, P + 10 * m.level, {
        reduceOnly: m.reduceOnly,
        ...(m.display === null ? {} : { displayAmount: m.display }),
        ...(m.oco === null
          ? {}
          : {
              linkedOrderType: 'one_cancels_other',
              triggerFillCondition: m.oco.condition,
              otocoConfig: [
                {
                  side: 'sell',
                  orderType: 'limit',
                  price: P + 10 * m.oco.level,
                  amount: m.oco.amount,
                  reduceOnly: m.reduceOnly,
                },
              ],
            }),
      }),
    );
  }
  const price = taker.level === null ? null : P + 10 * taker.level;
  return { result: h.run(h.orderCommand(2, 'buy', taker.amount, price, { timeInForce })), h };
}

describe('fill_or_kill property', () => {
  test('a FOK fills in full or not at all, and in full exactly when an IOC would', () => {
    fc.assert(
      fc.property(
        fc.tuple(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 400 })),
        fc.array(makerArb, { minLength: 1, maxLength: 8 }),
        fc.record({
          amount: fc.integer({ min: 1, max: 900 }),
          level: fc.option(fc.integer({ min: 0, max: 4 }), { freq: 4 }),
        }),
        fc.boolean(),
        (positions, makers, taker, rejectTaker) => {
          const fok = session(positions, makers, taker, 'fill_or_kill', rejectTaker);
          const ioc = session(positions, makers, taker, 'immediate_or_cancel', rejectTaker);
          fok.h.venue.validate();
          const filled = (r: CommandResult) => (r.ok ? r.order!.filledAmount : 0);
          const fokFilled = filled(fok.result);
          assert.ok(
            fokFilled === 0 || fokFilled === taker.amount,
            `FOK filled ${fokFilled} of ${taker.amount}`,
          );
          assert.equal(
            fokFilled === taker.amount,
            filled(ioc.result) === taker.amount,
            `FOK filled ${fokFilled}, IOC ${filled(ioc.result)} of ${taker.amount}`,
          );
          if (fokFilled === 0 && fok.result.ok) assert.deepEqual(fok.result.trades, []);
        },
      ),
      { numRuns: Number(process.env.FOK_RUNS ?? 300) },
    );
  });
});
