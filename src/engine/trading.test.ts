import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CommandResult } from '../core/events.ts';
import { COMBO_EXPIRY, FUTURE, LOW_CALL, listCombos, STRADDLE } from './combo-testkit.ts';
import { Harness, linearPerpetualSpec, orderCommand, perpetualSpec, restoreStored } from './testkit.ts';
import { sessionEnd } from './trading.ts';

function venue(config = {}): Harness {
  const h = new Harness(config);
  h.list(perpetualSpec());
  for (const a of [1, 2, 3]) h.account(a);
  return h;
}

function errorName(result: CommandResult): string | null {
  return result.ok ? null : result.error.name;
}

describe('limit orders and price-time priority', () => {
  test('a resting order comes back open with no trades', () => {
    const h = venue();
    const result = h.order(1, 'sell', 5, 100_000);
    assert.ok(result.ok);
    assert.equal(result.order!.orderState, 'open');
    assert.equal(result.order!.filledAmount, 0);
    assert.deepEqual(result.trades, []);
    assert.equal(result.order!.orderId, 'BTC-1');
  });

  test('better price first, then earlier order first; trades at the maker price', () => {
    const h = venue();
    const a = h.order(1, 'sell', 2, 100_002).order!.orderId;
    const b = h.order(1, 'sell', 2, 100_000).order!.orderId;
    const c = h.order(3, 'sell', 2, 100_000).order!.orderId;
    const result = h.order(2, 'buy', 5, 100_004);
    assert.ok(result.ok);
    assert.deepEqual(
      result.trades!.map((t) => [t.maker.orderId, t.price, t.amount]),
      [
        [b, 100_000, 2],
        [c, 100_000, 2],
        [a, 100_002, 1],
      ],
    );
    assert.equal(result.order!.orderState, 'filled');
    assert.equal(result.order!.averagePrice, (2 * 100_000 + 2 * 100_000 + 100_002) / 5);
    assert.equal(h.venue.getOrder(a)!.filledAmount, 1);
    assert.equal(h.venue.getOrder(b)!.orderState, 'filled');
  });

  test('trade fields: ids, per-instrument sequence, liquidity, fees, tick direction', () => {
    const h = venue();
    h.order(1, 'sell', 1, 100_000);
    h.order(1, 'sell', 1, 100_002);
    h.order(1, 'sell', 1, 100_002);
    const first = h.order(2, 'buy', 1, 100_000).trades![0]!;
    const second = h.order(2, 'buy', 1, 100_002).trades![0]!;
    const third = h.order(2, 'buy', 1, 100_002).trades![0]!;
    assert.equal(first.tradeId, 'BTC-T1');
    assert.deepEqual([first.tradeSeq, second.tradeSeq, third.tradeSeq], [1, 2, 3]);
    assert.deepEqual([first.tickDirection, second.tickDirection, third.tickDirection], [0, 0, 1]);
    assert.equal(first.taker.liquidity, 'T');
    assert.equal(first.maker.liquidity, 'M');
    assert.equal(first.taker.feeCurrency, 'BTC');
    assert.equal(first.taker.fee, 10); // 10 USD / 50,000 = 20,000 sat × 0.05%
    assert.equal(first.maker.fee, 0);
    h.order(1, 'buy', 1, 99_000);
    const down = h.order(2, 'sell', 1, 99_000).trades![0]!;
    assert.equal(down.tickDirection, 2);
  });

  test('tick direction: plus, minus, then zero-minus (3) for a repeat after a fall', () => {
    const h = venue();
    for (const price of [100_000, 99_000, 99_000]) h.order(1, 'buy', 1, price);
    const directions = [100_000, 99_000, 99_000].map(
      (price) => h.order(2, 'sell', 1, price).trades![0]!.tickDirection,
    );
    assert.deepEqual(directions, [0, 2, 3]);
    // Another repeat stays zero-minus; a rise and a repeat after it is zero-plus.
    h.order(1, 'buy', 1, 99_000);
    assert.equal(h.order(2, 'sell', 1, 99_000).trades![0]!.tickDirection, 3);
    h.order(1, 'sell', 2, 99_500);
    assert.deepEqual(
      [
        h.order(2, 'buy', 1, 99_500).trades![0]!.tickDirection,
        h.order(2, 'buy', 1, 99_500).trades![0]!.tickDirection,
      ],
      [0, 1],
    );
  });

  test('a trade carries the mark and the index at trade time, in the result and in recentTrades', () => {
    const h = venue();
    h.markPerpetual(100_010);
    h.order(1, 'sell', 1, 100_000);
    const trade = h.order(2, 'buy', 1, 100_000).trades![0]!;
    assert.deepEqual([trade.markPrice, trade.indexPrice], [100_010, 50_000]);
    const recent = h.venue.recentTrades('BTC-PERPETUAL', 1);
    assert.deepEqual(
      recent.map((t) => [t.tradeId, t.markPrice, t.indexPrice]),
      [[trade.tradeId, 100_010, 50_000]],
    );
  });

  test('label longer than 64 characters is refused naming the field', () => {
    const h = venue();
    const result = h.order(1, 'buy', 1, 100_000, { label: 'x'.repeat(65) });
    assert.equal(errorName(result), 'invalid_params');
    assert.equal(!result.ok && result.error.data.field, 'label');
    assert.ok(h.order(1, 'buy', 1, 100_000, { label: 'x'.repeat(64) }).ok);
  });

  test('prices off the tick grid, zero amounts and unknown instruments are refused', () => {
    const h = venue();
    assert.equal(errorName(h.order(1, 'buy', 0, 100_000)), 'invalid_amount');
    assert.equal(errorName(h.order(1, 'buy', 1, 1.5)), 'invalid_price');
    assert.equal(errorName(h.order(1, 'buy', 1, null, { orderType: 'limit' })), 'invalid_price');
    assert.equal(
      errorName(h.order(1, 'buy', 1, 100_000, { instrumentName: 'ETH-PERPETUAL' })),
      'invalid_instrument',
    );
    assert.equal(errorName(h.order(9, 'buy', 1, 100_000)), 'account_not_found');
    assert.equal(errorName(h.order(1, 'buy', 1, 100_000, { orderType: 'stop_limit' })), 'missing_params');
  });

  test('validUntil before the command time is refused with timed_out', () => {
    const h = venue();
    assert.equal(errorName(h.order(1, 'buy', 1, 100_000, { validUntil: h.ts - 1 })), 'timed_out');
    assert.ok(h.order(1, 'buy', 1, 100_000, { validUntil: h.ts }).ok);
  });

  test('a resting maker filled at its price shows that price as its average, partly and fully filled', () => {
    const h = venue();
    const maker = h.order(1, 'sell', 3, 100_000).order!.orderId;
    h.order(2, 'buy', 1, 100_004);
    assert.equal(h.venue.getOrder(maker)!.averagePrice, 100_000, 'partly filled maker average price');
    h.order(2, 'buy', 2, 100_004);
    assert.equal(h.venue.getOrder(maker)!.orderState, 'filled', 'maker filled');
    assert.equal(h.venue.getOrder(maker)!.averagePrice, 100_000, 'filled maker average price');
  });
});

describe('time in force', () => {
  test('IOC fills what it can and cancels the rest', () => {
    const h = venue();
    h.order(1, 'sell', 2, 100_000);
    const result = h.order(2, 'buy', 5, 100_000, { timeInForce: 'immediate_or_cancel' });
    assert.equal(result.order!.orderState, 'cancelled');
    assert.equal(result.order!.cancelReason, 'immediate_or_cancel');
    assert.equal(result.order!.filledAmount, 2);
    assert.equal(h.venue.book('BTC-PERPETUAL')!.bids.length, 0);
  });

  test('FOK fills completely or not at all', () => {
    const h = venue();
    h.order(1, 'sell', 2, 100_000);
    const killed = h.order(2, 'buy', 3, 100_000, { timeInForce: 'fill_or_kill' });
    assert.equal(killed.order!.orderState, 'cancelled');
    assert.deepEqual(killed.trades, []);
    assert.equal(h.venue.book('BTC-PERPETUAL')!.asks[0]!.amount, 2);
    const filled = h.order(2, 'buy', 2, 100_000, { timeInForce: 'fill_or_kill' });
    assert.equal(filled.order!.orderState, 'filled');
  });

  test('market orders sweep and never rest', () => {
    const h = venue();
    h.order(1, 'sell', 1, 100_000);
    h.order(1, 'sell', 1, 110_000);
    const result = h.order(2, 'buy', 3, null, { timeInForce: 'immediate_or_cancel' });
    assert.equal(result.order!.orderType, 'market');
    assert.equal(result.order!.price, 110_000, 'without a band the price shown is the worst fill');
    assert.equal(result.trades!.length, 2);
    assert.equal(result.order!.orderState, 'cancelled');
  });

  test('an executed market order shows the band edge it could trade to as its price', () => {
    const h = venue();
    h.ok({ type: 'update_prices', markPrices: [{ instrumentName: 'BTC-PERPETUAL', markPrice: 100_000 }] });
    h.order(1, 'sell', 1, 100_000);
    const bought = h.order(2, 'buy', 1, null, { timeInForce: 'immediate_or_cancel' });
    assert.equal(bought.order!.orderState, 'filled');
    assert.equal(bought.order!.price, 105_000);
    const sold = h.order(2, 'sell', 1, null, { timeInForce: 'immediate_or_cancel' });
    assert.equal(sold.order!.orderState, 'cancelled', 'nothing to sell into');
    assert.equal(sold.order!.price, 95_000);
  });

  test('good_til_day orders are cancelled at the end of the session (08:00 UTC)', () => {
    const h = venue();
    const id = h.order(1, 'buy', 1, 100_000, { timeInForce: 'good_til_day' }).order!.orderId;
    const end = sessionEnd(h.ts);
    assert.equal(new Date(end).getUTCHours(), 8);
    assert.ok(end > h.ts && end - h.ts <= 86_400_000);
    h.ts = end - 1;
    h.ok({ type: 'timer' });
    assert.equal(h.venue.getOrder(id)!.orderState, 'open');
    h.ts = end;
    const result = h.ok({ type: 'timer' });
    assert.equal(h.venue.getOrder(id)!.cancelReason, 'good_til_day');
    assert.equal(result.events[0]!.type, 'order');
  });

  test('nextWakeup names the next session end and forgets cancelled orders', () => {
    const h = venue();
    assert.equal(h.venue.nextWakeup(), null);
    const id = h.order(1, 'buy', 1, 100_000, { timeInForce: 'good_til_day' }).order!.orderId;
    assert.equal(h.venue.nextWakeup(), sessionEnd(h.ts));
    h.ok({ type: 'cancel_order', accountId: 1, orderId: id });
    assert.equal(h.venue.nextWakeup(), null);
  });
});

describe('post-only', () => {
  test('a crossing post-only buy is repriced one tick below the best ask and never takes', () => {
    const h = venue();
    h.order(1, 'sell', 1, 100_000);
    const result = h.order(2, 'buy', 1, 100_010, { postOnly: true });
    assert.equal(result.order!.price, 99_999);
    assert.equal(result.order!.orderState, 'open');
    assert.deepEqual(result.trades, []);
    const sell = h.order(1, 'sell', 1, 99_000, { postOnly: true });
    assert.equal(sell.order!.price, 100_000);
  });

  test('a post-only buy against an ask of one tick cannot be repriced below it: refused, nothing rests', () => {
    const h = venue();
    // No mark, so no band: one tick below the ask would be a price of 0.
    h.order(1, 'sell', 1, 1);
    const result = h.order(2, 'buy', 1, 1, { postOnly: true });
    assert.equal(errorName(result), 'post_only_price_modification_not_possible');
    assert.deepEqual(h.venue.book('BTC-PERPETUAL')!.bids, []);
    assert.deepEqual(h.venue.openOrders({ accountId: 2 }), []);
  });

  test('rejectPostOnly refuses instead of repricing', () => {
    const h = venue();
    h.order(1, 'sell', 1, 100_000);
    assert.equal(
      errorName(h.order(2, 'buy', 1, 100_000, { postOnly: true, rejectPostOnly: true })),
      'post_only_reject',
    );
    assert.ok(h.order(2, 'buy', 1, 99_999, { postOnly: true, rejectPostOnly: true }).ok);
  });

  test('post-only only with good_til_cancelled limit orders', () => {
    const h = venue();
    assert.equal(
      errorName(h.order(1, 'buy', 1, 100_000, { postOnly: true, timeInForce: 'immediate_or_cancel' })),
      'post_only_not_allowed',
    );
    assert.equal(errorName(h.order(1, 'buy', 1, 100_000, { rejectPostOnly: true })), 'invalid_params');
  });
});

describe('reduce-only', () => {
  test('needs a position to reduce and is clipped to it', () => {
    const h = venue();
    assert.equal(errorName(h.order(1, 'sell', 1, 100_000, { reduceOnly: true })), 'reduce_only_violation');
    h.order(2, 'sell', 3, 100_000);
    h.order(1, 'buy', 3, 100_000);
    const result = h.order(1, 'sell', 10, 101_000, { reduceOnly: true });
    assert.equal(result.order!.amount, 3);
    assert.equal(errorName(h.order(1, 'sell', 1, 101_000, { reduceOnly: true })), 'reduce_only_violation');
    assert.equal(errorName(h.order(1, 'buy', 1, 99_000, { reduceOnly: true })), 'reduce_only_violation');
  });

  test('newest is by placing, not by book priority: a venue restored from a snapshot clips the same order', () => {
    const h = venue();
    h.order(2, 'sell', 6, 100_000);
    h.order(1, 'buy', 6, 100_000);
    // The newer order has the better price, so the book (which a restore rebuilds from) lists it first.
    const older = h.order(1, 'sell', 3, 102_000, { reduceOnly: true }).order!.orderId;
    const newer = h.order(1, 'sell', 3, 101_000, { reduceOnly: true }).order!.orderId;
    const restored = new Harness({}, restoreStored(h.venue, h.seq));
    restored.seq = h.seq;
    for (const run of [h, restored]) {
      run.order(3, 'buy', 3, 99_000);
      run.order(1, 'sell', 3, 99_000);
      assert.equal(run.venue.getOrder(newer)!.orderState, 'cancelled');
      assert.equal(run.venue.getOrder(older)!.orderState, 'open');
    }
    assert.equal(restored.venue.stateHash(), h.venue.stateHash());
  });

  test('a resting reduce-only order shrinks with the position, newest first, and goes when it is gone', () => {
    const h = venue();
    h.order(2, 'sell', 6, 100_000);
    h.order(1, 'buy', 6, 100_000);
    const older = h.order(1, 'sell', 3, 101_000, { reduceOnly: true }).order!.orderId;
    const newer = h.order(1, 'sell', 3, 102_000, { reduceOnly: true }).order!.orderId;
    // A plain sell closes 2 of the 6: the newest reduce-only order gives up 2 lots in place.
    h.order(3, 'buy', 2, 99_000);
    const closing = h.order(1, 'sell', 2, 99_000);
    const shrunk = closing.events.filter((e) => e.type === 'order' && e.order.orderId === newer);
    assert.equal(shrunk.length, 1);
    assert.equal(h.venue.getOrder(newer)!.amount, 1);
    assert.equal(h.venue.getOrder(newer)!.orderState, 'open');
    assert.equal(h.venue.getOrder(older)!.amount, 3);
    assert.deepEqual(
      h.venue.book('BTC-PERPETUAL')!.asks.map((l) => [l.price, l.amount]),
      [
        [101_000, 3],
        [102_000, 1],
      ],
    );
    // The position flips short: nothing is left to reduce, both are cancelled.
    h.order(3, 'buy', 10, 99_000);
    h.order(1, 'sell', 10, 99_000);
    for (const id of [older, newer]) {
      assert.equal(h.venue.getOrder(id)!.orderState, 'cancelled');
      assert.equal(h.venue.getOrder(id)!.cancelReason, 'reduce_only');
    }
    assert.deepEqual(h.venue.book('BTC-PERPETUAL')!.asks, []);
    assert.deepEqual(
      h.venue.openOrders({ accountId: 1 }).map((o) => o.orderId),
      [],
    );
    // The counters followed: a new reduce-only buy may cover the whole short.
    assert.equal(h.order(1, 'buy', 20, 98_000, { reduceOnly: true }).order!.amount, 6);
    h.venue.validate();
  });

  test('a reduce-only maker shrinks when its position is closed by another order', () => {
    const h = venue();
    h.order(2, 'buy', 4, 100_000);
    h.order(1, 'sell', 4, 100_000);
    const ro = h.order(1, 'buy', 4, 99_000, { reduceOnly: true }).order!.orderId;
    h.order(3, 'sell', 3, 101_000);
    const result = h.order(1, 'buy', 3, 101_000);
    assert.ok(result.ok);
    assert.equal(h.venue.getOrder(ro)!.amount, 1);
    h.venue.validate();
  });

  test('an edit that only makes a resting order reduce-only clips it to the position', () => {
    const h = venue();
    h.order(2, 'sell', 2, 100_000);
    h.order(1, 'buy', 2, 100_000);
    const id = h.order(1, 'sell', 5, 101_000).order!.orderId;
    // Same price and amount: it keeps its priority, and is clipped as placing would clip it.
    const edited = h.ok({ type: 'edit_order', accountId: 1, orderId: id, reduceOnly: true });
    assert.deepEqual([edited.order!.amount, edited.order!.reduceOnly], [2, true]);
    assert.equal(h.venue.getOrder(id)!.amount, 2);
    assert.deepEqual(
      h.venue.book('BTC-PERPETUAL')!.asks.map((l) => [l.price, l.amount]),
      [[101_000, 2]],
    );
    assert.equal(errorName(h.order(1, 'sell', 1, 102_000, { reduceOnly: true })), 'reduce_only_violation');
    h.venue.validate();
  });

  test('a reduce-only iceberg shrinks its display with it', () => {
    const h = venue();
    h.order(2, 'sell', 300, 100_000);
    h.order(1, 'buy', 300, 100_000);
    const ice = h.order(1, 'sell', 300, 101_000, { reduceOnly: true, displayAmount: 100 }).order!.orderId;
    h.order(3, 'buy', 250, 99_000);
    h.order(1, 'sell', 250, 99_000);
    assert.equal(h.venue.getOrder(ice)!.amount, 50);
    assert.equal(h.venue.getOrder(ice)!.displayAmount, 50);
    assert.deepEqual(
      h.venue.book('BTC-PERPETUAL')!.asks.map((l) => [l.price, l.amount]),
      [[101_000, 50]],
    );
    h.venue.validate();
  });
});

describe('edit', () => {
  test('rejectPostOnly needs postOnly, on the order or in the edit', () => {
    const h = venue();
    const plain = h.order(1, 'sell', 5, 100_000).order!.orderId;
    const edit = (orderId: string, more = {}) =>
      h.run({ type: 'edit_order', accountId: 1, orderId, amount: 5, rejectPostOnly: true, ...more });
    assert.equal(errorName(edit(plain)), 'invalid_params');
    assert.equal(h.venue.getOrder(plain)!.rejectPostOnly, false);
    assert.equal(errorName(edit(plain, { postOnly: false })), 'invalid_params');
    const both = edit(plain, { postOnly: true });
    assert.ok(both.ok);
    assert.equal(both.order!.rejectPostOnly, true);
    const postOnly = h.order(1, 'sell', 5, 100_002, { postOnly: true }).order!.orderId;
    assert.equal(edit(postOnly).ok && h.venue.getOrder(postOnly)!.rejectPostOnly, true);
  });

  test('a size decrease keeps priority; replaced and lastUpdatedAt change', () => {
    const h = venue();
    const first = h.order(1, 'sell', 5, 100_000).order!.orderId;
    h.order(3, 'sell', 5, 100_000);
    h.ts += 1000;
    const edited = h.ok({ type: 'edit_order', accountId: 1, orderId: first, amount: 2 });
    assert.equal(edited.order!.replaced, true);
    assert.equal(edited.order!.lastUpdatedAt, h.ts);
    assert.equal(edited.order!.amount, 2);
    const trade = h.order(2, 'buy', 1, 100_000).trades![0]!;
    assert.equal(trade.maker.orderId, first);
  });

  test('a size increase or a price change loses priority', () => {
    const h = venue();
    const first = h.order(1, 'sell', 5, 100_000).order!.orderId;
    const second = h.order(3, 'sell', 5, 100_000).order!.orderId;
    h.ok({ type: 'edit_order', accountId: 1, orderId: first, amount: 6 });
    assert.equal(h.order(2, 'buy', 1, 100_000).trades![0]!.maker.orderId, second);
    h.ok({ type: 'edit_order', accountId: 3, orderId: second, price: 100_002 });
    h.ok({ type: 'edit_order', accountId: 3, orderId: second, price: 100_000 });
    assert.equal(h.order(2, 'buy', 1, 100_000).trades![0]!.maker.orderId, first);
  });

  test('an edit to a crossing price trades at once', () => {
    const h = venue();
    h.order(1, 'sell', 1, 100_000);
    const bid = h.order(2, 'buy', 2, 99_000).order!.orderId;
    const result = h.ok({ type: 'edit_order', accountId: 2, orderId: bid, price: 100_000 });
    assert.equal(result.trades!.length, 1);
    assert.equal(result.order!.filledAmount, 1);
    assert.equal(result.order!.orderState, 'open');
  });

  test('refusals: unknown, foreign, closed orders, amount not above filled', () => {
    const h = venue();
    const id = h.order(1, 'sell', 2, 100_000).order!.orderId;
    assert.equal(
      errorName(h.run({ type: 'edit_order', accountId: 2, orderId: id, amount: 1 })),
      'order_not_found',
    );
    h.order(2, 'buy', 1, 100_000);
    assert.equal(
      errorName(h.run({ type: 'edit_order', accountId: 1, orderId: id, amount: 1 })),
      'invalid_amount',
    );
    h.ok({ type: 'cancel_order', accountId: 1, orderId: id });
    assert.equal(
      errorName(h.run({ type: 'edit_order', accountId: 1, orderId: id, amount: 3 })),
      'not_open_order',
    );
  });

  test("an owned order's quantity is raised only by its owner; others may re-price or shrink it", () => {
    const h = venue();
    h.order(1, 'sell', 10, 100_000);
    const child = h.order(2, 'buy', 2, 99_000, { owner: '7' }).order!.orderId;
    const hash = h.venue.stateHash();
    // A raise at a crossing price would trade at once: refused, nothing changes.
    const grown = h.run({ type: 'edit_order', accountId: 2, orderId: child, amount: 10, price: 100_000 });
    assert.equal(errorName(grown), 'invalid_amount');
    assert.equal(!grown.ok && grown.error.data.field, 'quantity');
    assert.equal(!grown.ok && grown.error.data.portfolioId, 7);
    assert.match(!grown.ok ? grown.error.message : '', /belongs to portfolio 7/);
    assert.equal(h.venue.stateHash(), hash);
    assert.equal(h.venue.getOrder(child)!.amount, 2);
    assert.equal(h.venue.getOrder(child)!.filledAmount, 0);
    // Another owner is no owner either.
    assert.equal(
      errorName(h.run({ type: 'edit_order', accountId: 2, orderId: child, amount: 3, owner: '8' })),
      'invalid_amount',
    );
    // A price-only edit (same quantity) and a decrease stay allowed.
    assert.ok(h.run({ type: 'edit_order', accountId: 2, orderId: child, amount: 2, price: 99_500 }).ok);
    assert.equal(h.ok({ type: 'edit_order', accountId: 2, orderId: child, amount: 1 }).order!.amount, 1);
    // The owner itself (the portfolio amending its child) may raise it.
    const raised = h.ok({ type: 'edit_order', accountId: 2, orderId: child, amount: 3, owner: '7' });
    assert.equal(raised.order!.amount, 3);
    // An order without an owner grows as before.
    const plain = h.order(2, 'buy', 1, 99_000).order!.orderId;
    assert.equal(h.ok({ type: 'edit_order', accountId: 2, orderId: plain, amount: 4 }).order!.amount, 4);
    // Nor may anyone but the owner give it a display (an iceberg child's display is the portfolio's).
    const big = h.order(2, 'buy', 1000, 98_000, { owner: '7' }).order!.orderId;
    const shown = h.run({ type: 'edit_order', accountId: 2, orderId: big, displayAmount: 100 });
    assert.equal(errorName(shown), 'invalid_max_show_amount');
    assert.equal(!shown.ok && shown.error.data.portfolioId, 7);
    assert.ok(h.ok({ type: 'edit_order', accountId: 2, orderId: big, displayAmount: 100, owner: '7' }));
  });

  test('post-only edit with rejectPostOnly that would cross cancels the order', () => {
    const h = venue();
    h.order(1, 'sell', 1, 100_000);
    const id = h.order(2, 'buy', 1, 99_000, { postOnly: true, rejectPostOnly: true }).order!.orderId;
    const result = h.ok({ type: 'edit_order', accountId: 2, orderId: id, price: 100_000 });
    assert.equal(result.order!.orderState, 'cancelled');
    assert.equal(result.order!.cancelReason, 'edit_post_only_reject');
    // The edit was refused: the order is cancelled as it stood, never edited.
    assert.equal(result.order!.replaced, false);
    assert.equal(result.order!.price, 99_000);
  });

  test('a refused post-only edit of an edited order leaves replaced true, price and size as they were', () => {
    const h = venue();
    h.order(1, 'sell', 1, 100_000);
    const id = h.order(2, 'buy', 1, 98_000).order!.orderId;
    h.ok({ type: 'edit_order', accountId: 2, orderId: id, amount: 2, price: 99_000 });
    const result = h.ok({
      type: 'edit_order',
      accountId: 2,
      orderId: id,
      amount: 3,
      price: 100_000,
      postOnly: true,
      rejectPostOnly: true,
    });
    assert.equal(result.order!.cancelReason, 'edit_post_only_reject');
    assert.equal(result.order!.replaced, true);
    assert.equal(result.order!.price, 99_000);
    assert.equal(result.order!.amount, 2);
    assert.equal(result.order!.postOnly, false);
  });
});

describe('cancel', () => {
  test('cancel gives user_request; a second cancel is refused', () => {
    const h = venue();
    const id = h.order(1, 'buy', 1, 100_000).order!.orderId;
    const result = h.ok({ type: 'cancel_order', accountId: 1, orderId: id });
    assert.equal(result.order!.orderState, 'cancelled');
    assert.equal(result.order!.cancelReason, 'user_request');
    assert.equal(errorName(h.run({ type: 'cancel_order', accountId: 1, orderId: id })), 'not_open_order');
    assert.equal(
      errorName(h.run({ type: 'cancel_order', accountId: 1, orderId: 'BTC-999' })),
      'order_not_found',
    );
  });

  test('cancel_all by account, instrument, currency, label and owner', () => {
    const h = venue();
    h.list(perpetualSpec({ name: 'ETH-PERPETUAL', baseCurrency: 'ETH', settlementCurrency: 'ETH' }));
    h.ok({ type: 'deposit', accountId: 1, currency: 'ETH', amount: 1e12 });
    h.order(1, 'buy', 1, 100_000, { label: 'a' });
    h.order(1, 'buy', 1, 100_000, { owner: 'P-1' });
    h.order(1, 'buy', 1, 1000, { instrumentName: 'ETH-PERPETUAL' });
    h.order(2, 'buy', 1, 100_000);
    assert.equal(h.ok({ type: 'cancel_all', accountId: 1, label: 'a' }).orders!.length, 1);
    assert.equal(h.ok({ type: 'cancel_all', accountId: 1, owner: 'P-1' }).orders!.length, 1);
    assert.equal(h.ok({ type: 'cancel_all', accountId: 1, currency: 'BTC' }).orders!.length, 0);
    assert.equal(
      h.ok({ type: 'cancel_all', accountId: 1, instrumentName: 'ETH-PERPETUAL' }).orders!.length,
      1,
    );
    assert.equal(h.venue.openOrders({ accountId: 2 }).length, 1);
    assert.equal(h.ok({ type: 'cancel_all', accountId: 2 }).orders!.length, 1);
  });

  test('cancel_all cancels and lists the orders in placing order, whatever the book order', () => {
    const h = venue();
    const a = h.order(1, 'buy', 1, 90_000).order!.orderId;
    const b = h.order(1, 'buy', 1, 90_500).order!.orderId;
    // Re-priced, A re-enters the book after B, and below it.
    h.ok({ type: 'edit_order', accountId: 1, orderId: a, price: 89_500 });
    const result = h.ok({ type: 'cancel_all', accountId: 1 });
    assert.deepEqual(
      result.orders!.map((o) => o.orderId),
      [a, b],
    );
    assert.deepEqual(
      result.events.flatMap((e) => (e.type === 'order' ? [e.order.orderId] : [])),
      [a, b],
    );
  });

  test('a currency filter finds an instrument under its base and its settlement currency', () => {
    const h = venue();
    h.list(linearPerpetualSpec());
    for (const accountId of [1, 2]) h.ok({ type: 'deposit', accountId, currency: 'USDC', amount: 1e12 });
    const LINEAR = 'BTC_USDC-PERPETUAL';
    const inverse = h.order(1, 'buy', 2, 100_000).order!.orderId;
    h.order(2, 'sell', 1, 100_000);
    const linear = h.order(1, 'buy', 10, 100_000, { instrumentName: LINEAR }).order!.orderId;
    h.order(2, 'sell', 5, 100_000, { instrumentName: LINEAR });
    const stop = h.order(1, 'buy', 10, 110_000, {
      instrumentName: LINEAR,
      orderType: 'stop_limit',
      trigger: 'last_price',
      triggerPrice: 110_000,
    }).order!;
    assert.equal(stop.orderState, 'untriggered');
    const ids = (currency: string) =>
      h.venue.openOrders({ accountId: 1, currency }).map((order) => order.orderId);
    const positions = (currency: string) =>
      h.venue.positions(1, currency).map((position) => position.instrumentName);
    assert.deepEqual(ids('USDC'), [linear, stop.orderId]);
    assert.deepEqual(ids('BTC'), [inverse, linear, stop.orderId]);
    assert.deepEqual(ids('ETH'), []);
    assert.deepEqual(positions('USDC'), [LINEAR]);
    assert.deepEqual(positions('BTC').sort(), ['BTC-PERPETUAL', LINEAR]);
    const cancelled = h.ok({ type: 'cancel_all', accountId: 1, currency: 'USDC' }).orders!;
    assert.deepEqual(cancelled.map((order) => order.orderId).sort(), [linear, stop.orderId].sort());
    assert.deepEqual(ids('BTC'), [inverse]);
    h.venue.validate();
  });
});

describe('risk checks', () => {
  test('self-trade prevention cancels the resting maker by default', () => {
    const h = venue();
    const own = h.order(1, 'sell', 1, 100_000).order!.orderId;
    const other = h.order(2, 'sell', 1, 100_000).order!.orderId;
    const result = h.order(1, 'buy', 1, 100_000);
    assert.equal(h.venue.getOrder(own)!.cancelReason, 'self_trade_prevention');
    assert.equal(result.trades![0]!.maker.orderId, other);
  });

  test('reject_taker mode refuses with order_overlap', () => {
    const h = venue();
    h.ok({ type: 'set_account_settings', accountId: 1, selfTradeMode: 'reject_taker' });
    const own = h.order(1, 'sell', 1, 100_000).order!.orderId;
    assert.equal(errorName(h.order(1, 'buy', 1, 100_000)), 'order_overlap');
    assert.equal(h.venue.getOrder(own)!.orderState, 'open');
  });

  test('reject_taker after a partial fill: the fill stands and the rest is cancelled (self_trade_prevention)', () => {
    const h = venue();
    h.ok({ type: 'set_account_settings', accountId: 2, selfTradeMode: 'reject_taker' });
    h.order(1, 'sell', 1, 100_000);
    const own = h.order(2, 'sell', 1, 100_010).order!.orderId;
    // The buy fills 1 lot at 100,000, then meets its own ask at 100,010: it stops there.
    const result = h.order(2, 'buy', 2, 100_010);
    assert.ok(result.ok, errorName(result) ?? '');
    assert.equal(result.trades!.length, 1);
    const order = result.order!;
    assert.deepEqual(
      [order.filledAmount, order.orderState, order.cancelReason],
      [1, 'cancelled', 'self_trade_prevention'],
    );
    assert.equal(result.trades![0]!.taker.orderId, order.orderId);
    // The order that traded stays on record, and its id is not handed out again.
    const stored = h.venue.getOrder(order.orderId);
    assert.deepEqual([stored?.orderState, stored?.filledAmount], ['cancelled', 1]);
    assert.equal(h.venue.getOrder(own)!.orderState, 'open');
    assert.equal(h.venue.position(2, 'BTC-PERPETUAL')!.size, 1);
    assert.notEqual(h.order(3, 'buy', 1, 90_000).order!.orderId, order.orderId);
    h.venue.validate();
  });

  test('price band around the mark: too high / too low with the limit', () => {
    const h = venue();
    h.ok({ type: 'update_prices', markPrices: [{ instrumentName: 'BTC-PERPETUAL', markPrice: 100_000 }] });
    const high = h.order(1, 'buy', 1, 105_001);
    assert.equal(errorName(high), 'price_too_high');
    assert.equal(!high.ok && high.error.data.maxPrice, '52500', 'a wire price, not ticks (tick 0.5)');
    assert.match(!high.ok ? high.error.message : '', /maximum 52500$/);
    const low = h.order(1, 'sell', 1, 94_999);
    assert.equal(errorName(low), 'price_too_low');
    assert.equal(!low.ok && low.error.data.minPrice, '47500');
    assert.ok(h.order(1, 'buy', 1, 105_000).ok);
    assert.ok(h.order(1, 'buy', 1, 50_000).ok, 'passive prices far away are allowed');
  });

  test('per-account open-order limit', () => {
    const h = venue({ maxOpenOrdersPerAccount: 2 });
    h.order(1, 'buy', 1, 100_000);
    h.order(1, 'buy', 1, 100_000);
    assert.equal(errorName(h.order(1, 'buy', 1, 100_000)), 'max_open_orders');
    assert.ok(h.order(1, 'buy', 1, 100_000, { timeInForce: 'immediate_or_cancel' }).ok);
  });

  test('funds check: initial margin and taker fee must fit in available funds', () => {
    const h = new Harness();
    h.list(perpetualSpec());
    h.account(1, { BTC: 1010 });
    h.account(2);
    // 10 lots = 100 USD at 50,000 → 200,000 sat; 5% margin = 10,000 sat + fee 100
    const refused = h.order(1, 'buy', 10, 100_000);
    assert.equal(errorName(refused), 'not_enough_funds');
    assert.equal(!refused.ok && refused.error.data.required, '0.000101', 'BTC, not satoshi');
    assert.equal(!refused.ok && refused.error.data.available, '0.0000101');
    assert.equal(!refused.ok && refused.error.data.field, 'quantity');
    assert.ok(h.order(1, 'buy', 1, 100_000).ok); // 1,000 margin + 10 fee
    assert.equal(errorName(h.order(1, 'buy', 1, 100_000)), 'not_enough_funds');
    assert.equal(h.venue.accountSummary(1, 'BTC')!.orderMargin, 1010);
  });
});

describe('at the expiry instant, before the settlement is booked', () => {
  test('an expiring instrument and a combo on it take no new order and no edit; cancels still work', () => {
    const h = new Harness();
    listCombos(h, [STRADDLE]);
    h.account(1);
    h.account(2);
    const resting = h.order(1, 'sell', 10, 300, { instrumentName: LOW_CALL }).order!.orderId;
    h.ts = COMBO_EXPIRY - 1;
    assert.ok(h.order(2, 'buy', 1, 300, { instrumentName: LOW_CALL }).ok, 'trades until the instant');
    h.ts = COMBO_EXPIRY;
    for (const instrumentName of [LOW_CALL, STRADDLE]) {
      const refused = h.order(2, 'buy', 1, 600, { instrumentName });
      assert.equal(errorName(refused), 'instrument_expired', instrumentName);
    }
    const edit = h.run({ type: 'edit_order', accountId: 1, orderId: resting, amount: 10, price: 200 });
    assert.deepEqual(edit.ok ? null : [edit.error.name, edit.error.data?.field], [
      'instrument_expired',
      'orderId',
    ]);
    assert.equal(h.venue.getOrder(resting)!.price, 300);
    assert.ok(h.order(2, 'buy', 1, 100_000).ok, 'the perpetual still trades');
    assert.ok(h.run({ type: 'cancel_order', accountId: 1, orderId: resting }).ok);
  });

  test('nor trigger orders, one that fires then, or a block trade', () => {
    const h = new Harness();
    listCombos(h, []);
    h.account(1);
    h.account(2);
    const mark = (markPrice: number) =>
      h.ok({
        type: 'update_prices',
        indexPrices: [{ currency: 'BTC', price: 60_000 }],
        markPrices: [{ instrumentName: FUTURE, markPrice }],
      });
    mark(24_000);
    h.ok(orderCommand(2, 'buy', 10, 23_990, { instrumentName: FUTURE }));
    const stop = (triggerPrice: number) =>
      orderCommand(1, 'sell', 10, null, {
        instrumentName: FUTURE,
        orderType: 'stop_market',
        trigger: 'mark_price',
        triggerPrice,
      });
    const waiting = h.ok(stop(23_950)).order!.orderId;
    h.ts = COMBO_EXPIRY;
    assert.equal(errorName(h.run(stop(23_900))), 'instrument_expired');
    // The mark falls through the stop's trigger: it fires, and is rejected, not traded.
    mark(23_940);
    assert.equal(h.venue.getOrder(waiting)!.orderState, 'rejected');
    assert.equal(h.venue.getOrder(waiting)!.cancelReason, 'instrument_expired');
    assert.equal(h.venue.position(1, FUTURE), null);
    const block = h.run({
      type: 'block_trade',
      takerAccountId: 1,
      makerAccountId: 2,
      legs: [{ instrumentName: FUTURE, side: 'buy', amount: 10, price: 24_000 }],
    });
    assert.deepEqual(block.ok ? null : [block.error.name, block.error.data?.field], [
      'instrument_expired',
      'legs[0].instrumentName',
    ]);
  });
});
