import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AdvancedHarness, errorOf, orderOf, PERP } from './advanced-testkit.ts';
import { Venue } from './venue.ts';

describe('iceberg orders', () => {
  test('only the display shows in the book; fills come out of the display', () => {
    const h = new AdvancedHarness();
    const ice = orderOf(h.ok(h.orderCommand(1, 'sell', 1_000, 100_000, { displayAmount: 200 })));
    assert.equal(ice.displayAmount, 200);
    assert.equal(ice.refreshAmount, 200);
    const book = h.venue.book(PERP)!;
    assert.deepEqual(book.asks, [{ price: 100_000, amount: 200, orders: 1 }]);
    h.ok(h.orderCommand(2, 'buy', 50, 100_000));
    assert.equal(h.get(ice.orderId).displayAmount, 150);
    assert.equal(h.venue.book(PERP)!.asks[0]!.amount, 150);
    h.venue.validate();
  });

  test('a used-up display refreshes to refreshAmount at the tail of the level (priority lost)', () => {
    const h = new AdvancedHarness();
    const ice = orderOf(h.ok(h.orderCommand(1, 'sell', 1_000, 100_000, { displayAmount: 200 })));
    const plain = orderOf(h.ok(h.orderCommand(2, 'sell', 100, 100_000)));
    // 250 lots: 200 from the display, then the plain order (now ahead), then 50 of the refresh? No:
    // after the refresh the iceberg sits behind the plain order, so the plain order fills next.
    const result = h.ok(h.orderCommand(3, 'buy', 250, 100_000, { timeInForce: 'immediate_or_cancel' }));
    const makers = (result.trades ?? []).map((t) => [t.maker.orderId, t.amount]);
    assert.deepEqual(makers, [
      [ice.orderId, 200],
      [plain.orderId, 50],
    ]);
    assert.equal(h.get(ice.orderId).displayAmount, 200);
    assert.equal(h.get(ice.orderId).filledAmount, 200);
    // A large taker sweeps everything across refreshes.
    const sweep = h.ok(h.orderCommand(4, 'buy', 850, 100_000, { timeInForce: 'immediate_or_cancel' }));
    assert.equal(sweep.order!.filledAmount, 850);
    assert.equal(h.get(ice.orderId).orderState, 'filled');
    assert.deepEqual(h.venue.book(PERP)!.asks, []);
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('display rules: at least 100 lots, hidden part below 100 × the display, resting limit only', () => {
    const h = new AdvancedHarness();
    assert.equal(
      errorOf(h.run(h.orderCommand(1, 'sell', 1_000, 100_000, { displayAmount: 99 }))),
      'invalid_max_show_amount',
    );
    assert.equal(
      errorOf(h.run(h.orderCommand(1, 'sell', 10_100, 100_000, { displayAmount: 100 }))),
      'invalid_max_show_amount',
    );
    assert.equal(
      errorOf(
        h.run(
          h.orderCommand(1, 'sell', 1_000, 100_000, {
            displayAmount: 200,
            timeInForce: 'immediate_or_cancel',
          }),
        ),
      ),
      'invalid_max_show_amount',
    );
    // Hidden 9,999 lots against a display of 100: a ratio of 99.99.
    assert.equal(errorOf(h.run(h.orderCommand(1, 'sell', 10_099, 100_000, { displayAmount: 100 }))), null);
  });

  test('an iceberg survives snapshot/restore with its display', () => {
    const h = new AdvancedHarness();
    h.ok(h.orderCommand(1, 'sell', 1_000, 100_000, { displayAmount: 200 }));
    h.ok(h.orderCommand(2, 'buy', 30, 100_000));
    const restored = Venue.restore(h.venue.snapshot());
    assert.deepEqual(restored.book(PERP), h.venue.book(PERP));
    assert.equal(restored.stateHash(), h.venue.stateHash());
    restored.validate();
  });

  test('editing an iceberg keeps it an iceberg; a new displayAmount applies', () => {
    const h = new AdvancedHarness();
    const ice = orderOf(h.ok(h.orderCommand(1, 'sell', 1_000, 100_000, { displayAmount: 200 })));
    const edited = orderOf(
      h.ok({ type: 'edit_order', accountId: 1, orderId: ice.orderId, amount: 800, displayAmount: 300 }),
    );
    assert.equal(edited.amount, 800);
    assert.equal(edited.displayAmount, 300);
    assert.equal(h.venue.book(PERP)!.asks[0]!.amount, 300);
    h.venue.validate();
  });

  test('an edit without displayAmount keeps the display in the book (no trigger orders anywhere)', () => {
    const h = new AdvancedHarness();
    const ice = orderOf(h.ok(h.orderCommand(1, 'sell', 1_000, 100_000, { displayAmount: 200 })));
    h.ok(h.orderCommand(2, 'sell', 50, 100_000));
    const edited = orderOf(h.ok({ type: 'edit_order', accountId: 1, orderId: ice.orderId, amount: 600 }));
    assert.equal(edited.amount, 600);
    assert.equal(edited.displayAmount, 200);
    assert.deepEqual(h.venue.book(PERP)!.asks, [{ price: 100_000, amount: 250, orders: 2 }]);
    h.venue.validate();
  });

  test('shrunk below its display without a displayAmount, an iceberg shows what is left', () => {
    const h = new AdvancedHarness();
    const ice = orderOf(h.ok(h.orderCommand(1, 'sell', 5_000, 100_000, { displayAmount: 1_000 })));
    h.ok(h.orderCommand(2, 'buy', 300, 100_000));
    // 4,700 left; cut to 500 in all: 200 remain, shown whole, and the refresh is clamped alike.
    const edited = orderOf(h.ok({ type: 'edit_order', accountId: 1, orderId: ice.orderId, amount: 500 }));
    assert.equal(edited.amount, 500);
    assert.equal(edited.displayAmount, 200);
    assert.equal(edited.refreshAmount, 200);
    assert.deepEqual(h.venue.book(PERP)!.asks, [{ price: 100_000, amount: 200, orders: 1 }]);
    // A fill comes out of that display; the last lots fill it.
    h.ok(h.orderCommand(3, 'buy', 150, 100_000));
    assert.equal(h.get(ice.orderId).displayAmount, 50);
    assert.deepEqual(h.venue.book(PERP)!.asks, [{ price: 100_000, amount: 50, orders: 1 }]);
    h.ok(h.orderCommand(3, 'buy', 50, 100_000));
    assert.equal(h.get(ice.orderId).orderState, 'filled');
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('shrunk but still above its display, an iceberg keeps display and refresh; refreshes still work', () => {
    const h = new AdvancedHarness();
    const ice = orderOf(h.ok(h.orderCommand(1, 'sell', 5_000, 100_000, { displayAmount: 1_000 })));
    const edited = orderOf(h.ok({ type: 'edit_order', accountId: 1, orderId: ice.orderId, amount: 1_500 }));
    assert.equal(edited.displayAmount, 1_000);
    assert.equal(edited.refreshAmount, 1_000);
    h.ok(h.orderCommand(2, 'buy', 1_000, 100_000));
    // The display used up refreshes to min(refresh, remaining) = 500.
    assert.equal(h.get(ice.orderId).displayAmount, 500);
    assert.deepEqual(h.venue.book(PERP)!.asks, [{ price: 100_000, amount: 500, orders: 1 }]);
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('an edit that sends a displayAmount above its new quantity is refused naming displayAmount', () => {
    const h = new AdvancedHarness();
    const ice = orderOf(h.ok(h.orderCommand(1, 'sell', 5_000, 100_000, { displayAmount: 1_000 })));
    const hash = h.venue.stateHash();
    const refused = h.run({
      type: 'edit_order',
      accountId: 1,
      orderId: ice.orderId,
      amount: 500,
      displayAmount: 1_000,
    });
    assert.equal(errorOf(refused), 'invalid_max_show_amount');
    assert.equal(refused.ok ? null : refused.error.data.field, 'displayAmount');
    // Cut to or below what it filled: refused naming quantity, not the display.
    h.ok(h.orderCommand(2, 'buy', 300, 100_000));
    const below = h.run({ type: 'edit_order', accountId: 1, orderId: ice.orderId, amount: 300 });
    assert.equal(errorOf(below), 'invalid_amount');
    assert.equal(below.ok ? null : below.error.data.field, 'quantity');
    assert.equal(h.get(ice.orderId).displayAmount, 700);
    assert.notEqual(h.venue.stateHash(), hash);
    h.venue.validate();
  });

  test('a refused post-only edit cancels an iceberg as it stood: display kept, not replaced', () => {
    const h = new AdvancedHarness();
    h.ok(h.orderCommand(2, 'buy', 50, 99_000));
    const ice = orderOf(h.ok(h.orderCommand(1, 'sell', 1_000, 100_000, { displayAmount: 200 })));
    const result = h.ok({
      type: 'edit_order',
      accountId: 1,
      orderId: ice.orderId,
      price: 99_000,
      postOnly: true,
      rejectPostOnly: true,
    });
    const after = orderOf(result);
    assert.equal(after.orderState, 'cancelled');
    assert.equal(after.cancelReason, 'edit_post_only_reject');
    assert.equal(after.replaced, false);
    assert.equal(after.price, 100_000);
    assert.equal(after.displayAmount, 200);
    assert.equal(after.refreshAmount, 200);
    assert.deepEqual(h.venue.book(PERP)!.asks, []);
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('a refused edit leaves an iceberg as it was: display and place in the queue', () => {
    const h = new AdvancedHarness();
    const ice = orderOf(h.ok(h.orderCommand(1, 'sell', 1_000, 100_000, { displayAmount: 200 })));
    const plain = orderOf(h.ok(h.orderCommand(2, 'sell', 50, 100_000)));
    const hash = h.venue.stateHash();
    const late = { type: 'edit_order' as const, accountId: 1, orderId: ice.orderId, validUntil: h.ts - 1 };
    assert.equal(errorOf(h.run({ ...late, amount: 1_000, displayAmount: 300 })), 'timed_out');
    assert.equal(errorOf(h.run({ ...late, amount: 900 })), 'timed_out');
    assert.equal(
      // At 0.5 USD the inverse perpetual's margin is more coin than the account holds.
      errorOf(h.run({ type: 'edit_order', accountId: 1, orderId: ice.orderId, amount: 1_000, price: 1 })),
      'not_enough_funds',
    );
    assert.equal(h.venue.stateHash(), hash);
    assert.equal(h.get(ice.orderId).displayAmount, 200);
    assert.deepEqual(h.venue.book(PERP)!.asks, [{ price: 100_000, amount: 250, orders: 2 }]);
    // Still first in the queue: a buyer of 100 takes them from the iceberg's display.
    const taker = h.ok(h.orderCommand(3, 'buy', 100, 100_000, { timeInForce: 'immediate_or_cancel' }));
    assert.deepEqual(
      (taker.trades ?? []).map((t) => [t.maker.orderId, t.amount]),
      [[ice.orderId, 100]],
    );
    assert.equal(h.get(plain.orderId).filledAmount, 0);
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
  });
});
