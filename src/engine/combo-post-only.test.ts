import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { CoreEvent } from '../core/events.ts';
import {
  FUTURE,
  FUTURE_SPREAD,
  HIGH_CALL,
  LOW_CALL,
  listCombos,
  PERP,
  PUT,
  SPREAD,
  STRADDLE,
} from './combo-testkit.ts';
import { Harness } from './testkit.ts';

/**
 * A venue with the combo testkit's legs and `combo` listed, accounts 1–4 funded, the legs at
 * `legMarks` (a leg left out is marked at one tick) and the combo itself marked at `comboMark`
 * (so its band is centred there).
 */
function venue(combo: string, comboMark: number, legMarks: Record<string, number> = {}): Harness {
  const h = new Harness();
  listCombos(h, [combo]);
  for (const a of [1, 2, 3, 4]) h.account(a);
  const marks = { [PERP]: 120_010, [FUTURE]: 24_200, [LOW_CALL]: 1, [HIGH_CALL]: 1, [PUT]: 1, ...legMarks };
  h.ok({
    type: 'update_prices',
    indexPrices: [{ currency: 'BTC', price: 60_000 }],
    markPrices: [
      ...Object.entries(marks).map(([instrumentName, markPrice]) => ({ instrumentName, markPrice })),
      { instrumentName: combo, markPrice: comboMark },
    ],
  });
  return h;
}

function trades(events: readonly CoreEvent[]) {
  return events.flatMap((event) => (event.type === 'trade' ? [event.trade] : []));
}

describe('post-only on combos reprices only to prices the legs can split', () => {
  test('a straddle bid cannot be repriced below one tick per leg: refused, and nothing rests', () => {
    const h = venue(STRADDLE, 2);
    // The straddle's lowest price is 0.0002 (one tick of each leg); an ask sits there.
    assert.ok(h.order(1, 'sell', 10, 2, { instrumentName: STRADDLE }).ok);
    const bid = h.order(2, 'buy', 10, 2, { instrumentName: STRADDLE, postOnly: true });
    assert.ok(!bid.ok, 'a post-only buy repriced to 0.0001 used to rest there');
    assert.equal(bid.error.name, 'post_only_price_modification_not_possible');
    assert.equal(bid.error.data.field, 'price');
    assert.match(bid.error.message, /no price below the ask/);
    // A market sell finds no bid: before, it hit the 0.0001 bid and the core threw (the service stopped).
    const sold = h.order(3, 'sell', 10, null, { instrumentName: STRADDLE, orderType: 'market' });
    assert.ok(sold.ok);
    assert.deepEqual(trades(sold.events), []);
    h.venue.validate();
  });

  test('a straddle bid one tick above the floor reprices onto the floor and trades there', () => {
    const h = venue(STRADDLE, 3);
    assert.ok(h.order(1, 'sell', 10, 3, { instrumentName: STRADDLE }).ok);
    const bid = h.order(2, 'buy', 10, 5, { instrumentName: STRADDLE, postOnly: true });
    assert.ok(bid.ok);
    assert.equal(bid.order!.price, 2);
    assert.equal(bid.order!.orderState, 'open');
    const sold = h.order(3, 'sell', 10, null, { instrumentName: STRADDLE, orderType: 'market' });
    assert.ok(sold.ok);
    const [combo] = trades(sold.events);
    assert.equal(combo!.price, 2);
    assert.deepEqual(
      combo!.legs!.map((leg) => [leg.instrumentName, leg.price]),
      [
        [LOW_CALL, 1],
        [PUT, 1],
      ],
    );
    h.venue.validate();
  });

  test('a future spread bid reprices below an ask at zero: combo prices may be zero or negative', () => {
    // The dated future 2.5 USD under the perpetual: the spread's net is about −1 tick.
    const h = venue(FUTURE_SPREAD, -1, { [FUTURE]: 24_000, [PERP]: 120_005 });
    assert.ok(h.order(1, 'sell', 10, 0, { instrumentName: FUTURE_SPREAD }).ok);
    const bid = h.order(2, 'buy', 10, 0, { instrumentName: FUTURE_SPREAD, postOnly: true });
    assert.ok(bid.ok, 'refused "no price below the ask" before');
    assert.equal(bid.order!.price, -1);
    const sold = h.order(3, 'sell', 10, null, { instrumentName: FUTURE_SPREAD, orderType: 'market' });
    const [combo] = trades(sold.ok ? sold.events : []);
    assert.equal(combo!.price, -1);
    h.venue.validate();
  });

  test('an edit that crosses a negative ask reprices below it (it was refused before)', () => {
    const h = venue(FUTURE_SPREAD, -1, { [FUTURE]: 24_000, [PERP]: 120_005 });
    assert.ok(h.order(1, 'sell', 10, -2, { instrumentName: FUTURE_SPREAD }).ok);
    const resting = h.order(2, 'buy', 10, -5, { instrumentName: FUTURE_SPREAD, postOnly: true });
    assert.ok(resting.ok);
    const edit = h.run({ type: 'edit_order', accountId: 2, orderId: resting.order!.orderId, price: 0 });
    assert.ok(edit.ok, edit.ok ? '' : `${edit.error.name}: ${edit.error.message}`);
    assert.equal(h.venue.getOrder(resting.order!.orderId)!.price, -3);
    h.venue.validate();
  });

  test('a post-only OTO secondary released against its own partly filled primary is not repriced below the floor', () => {
    const h = venue(STRADDLE, 2);
    // Account 2 asks at the floor and, once that fills, bids at the floor post-only.
    const placed = h.order(2, 'sell', 10, 2, {
      instrumentName: STRADDLE,
      linkedOrderType: 'one_triggers_other',
      otocoConfig: [{ side: 'buy', orderType: 'limit', price: 2, postOnly: true, amount: 10 }],
    });
    assert.ok(placed.ok);
    // A partial fill releases the secondary while the primary's rest is still the ask at 2.
    assert.ok(h.order(3, 'buy', 5, 2, { instrumentName: STRADDLE }).ok);
    const bids = h.venue.openOrders({ accountId: 2 }).filter((o) => o.side === 'buy');
    assert.ok(
      bids.every((o) => o.price! >= 2),
      `a bid rests at ${bids.map((o) => o.price)}`,
    );
    // Before, the bid rested at 1 and this market sell made the core throw.
    assert.ok(h.order(4, 'sell', 10, null, { instrumentName: STRADDLE, orderType: 'market' }).ok);
    h.venue.validate();
  });

  test('property: every post-only reprice on a combo splits into leg prices, and trades', () => {
    const ranges: Record<string, [number, number]> = {
      [STRADDLE]: [2, 30],
      [SPREAD]: [-20, 20],
      [FUTURE_SPREAD]: [-20, 20],
    };
    fc.assert(
      fc.property(
        fc.constantFrom(STRADDLE, SPREAD, FUTURE_SPREAD),
        fc.constantFrom<'buy' | 'sell'>('buy', 'sell'),
        fc.integer({ min: 0, max: 1_000 }),
        fc.integer({ min: 0, max: 1_000 }),
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 0, max: 5 }),
        (combo, side, low, high, offset, through) => {
          const [from, to] = ranges[combo]!;
          const touch = from + (offset % (to - from + 1));
          const h = venue(combo, touch, { [LOW_CALL]: 1 + low, [HIGH_CALL]: 1 + high, [PUT]: 1 + high });
          // A straddle (two bought legs of one tick each) trades at 2 ticks or more; spreads at any price.
          const floor = combo === STRADDLE ? 2 : Number.NEGATIVE_INFINITY;
          // Account 1 makes the touch; account 2 crosses it post-only; account 3 takes account 2's order.
          const opposite = side === 'buy' ? 'sell' : 'buy';
          assert.ok(h.order(1, opposite, 10, touch, { instrumentName: combo }).ok);
          const limit = side === 'buy' ? touch + through : touch - through;
          if (limit < floor) return true;
          const placed = h.order(2, side, 10, limit, { instrumentName: combo, postOnly: true });
          if (!placed.ok) {
            assert.equal(placed.error.name, 'post_only_price_modification_not_possible');
            // Refused only when one tick inside the touch is no combo price.
            const inside = side === 'buy' ? touch - 1 : touch + 1;
            assert.ok(inside < floor, `refused at ${inside}`);
            return true;
          }
          const price = placed.order!.price!;
          assert.ok(price >= floor, `rests at ${price}, which the legs cannot split`);
          assert.deepEqual(trades(placed.events), [], 'post-only never takes');
          // Taking it books leg prices of at least one tick that net to it (the core throws when none exist).
          const taken = h.order(3, opposite, 10, null, { instrumentName: combo, orderType: 'market' });
          assert.ok(taken.ok);
          const [trade] = trades(taken.events);
          assert.equal(trade!.price, price);
          assert.ok(trade!.legs!.every((leg) => leg.price >= 1));
          h.venue.validate();
          return true;
        },
      ),
      { numRuns: 150 },
    );
  });
});
