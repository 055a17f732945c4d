import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { Ladder, OrderBook } from './book.ts';
import { Order } from './order.ts';

let n = 0;
const order = (side: 'buy' | 'sell', price: number, amount = 1) =>
  new Order(
    `X-${++n}`,
    n,
    1,
    0,
    'X',
    'BTC',
    side,
    'limit',
    price,
    amount,
    'good_til_cancelled',
    0,
    '',
    null,
    0,
  );

describe('ladder', () => {
  test('keeps the best price at the top for both sides, with many levels', () => {
    const bids = new Ladder('buy');
    const asks = new Ladder('sell');
    const prices = Array.from({ length: 200 }, (_, i) => ((i * 7919) % 200) + 1);
    for (const p of prices) {
      bids.add(order('buy', p));
      asks.add(order('sell', p + 1000));
    }
    bids.validate();
    asks.validate();
    assert.equal(bids.best()!.price, 200);
    assert.equal(asks.best()!.price, 1001);
    assert.deepEqual(
      bids.levelsBestFirst(3).map((l) => l.price),
      [200, 199, 198],
    );
    assert.equal(bids.levelAtDepth(2)!.price, 198);
  });

  test('removes any order in O(1) and drops emptied levels', () => {
    const bids = new Ladder('buy');
    const a = order('buy', 10, 2);
    const b = order('buy', 10, 3);
    const c = order('buy', 9, 1);
    for (const o of [a, b, c]) bids.add(o);
    assert.equal(bids.level(10)!.total, 5);
    bids.remove(a);
    assert.equal(bids.level(10)!.head, b);
    bids.remove(b);
    assert.equal(bids.level(10), undefined);
    assert.equal(bids.best()!.price, 9);
    assert.equal(bids.levelCount, 1);
    bids.validate();
  });

  test('FIFO within a level; hidden orders count in total but not in visible', () => {
    const bids = new Ladder('buy');
    const first = order('buy', 5, 1);
    const hidden = order('buy', 5, 4);
    hidden.flags = 128;
    bids.add(first);
    bids.add(hidden);
    const level = bids.best()!;
    assert.equal(level.head, first);
    assert.equal(level.tail, hidden);
    assert.equal(level.total, 5);
    assert.equal(level.visible, 1);
  });

  test('validate reports a crossed book', () => {
    const book = new OrderBook();
    book.bids.add(order('buy', 10));
    book.asks.add(order('sell', 10));
    assert.throws(() => book.validate(), /crossed/);
  });

  test('finds, adds and drops levels like a price map on random streams (both sides)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<'buy' | 'sell'>('buy', 'sell'),
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 1, max: 120 })), { maxLength: 300 }),
        (side, ops) => {
          const ladder = new Ladder(side);
          const resting = new Map<number, Order[]>();
          for (const [add, price] of ops) {
            const here = resting.get(price) ?? [];
            if (add || here.length === 0) {
              const o = order(side, price);
              ladder.add(o);
              here.push(o);
              resting.set(price, here);
            } else {
              ladder.remove(here.shift()!);
              if (here.length === 0) resting.delete(price);
            }
            const probe = (price * 37) % 121;
            assert.equal(ladder.level(probe)?.count, resting.get(probe)?.length);
          }
          ladder.validate();
          assert.equal(ladder.levelCount, resting.size);
          const best = [...resting.keys()].sort((a, b) => (side === 'buy' ? b - a : a - b));
          assert.deepEqual(
            ladder.levelsBestFirst().map((l) => l.price),
            best,
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});
