import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { Order } from './order.ts';
import { OrderIndex, trailingNumber } from './order-index.ts';

function order(id: string, number: number): Order {
  return new Order(
    id,
    number,
    1,
    0,
    'BTC-PERPETUAL',
    'BTC',
    'buy',
    'limit',
    1,
    1,
    'good_til_cancelled',
    0,
    '',
    null,
    0,
  );
}

describe('trailingNumber', () => {
  test('reads the digits after the last dash', () => {
    assert.equal(trailingNumber('BTC-42'), 42);
    assert.equal(trailingNumber('BTC-SLTB-7'), 7);
    assert.equal(trailingNumber('ETH-0'), 0);
  });
  test('refuses ids of another form', () => {
    for (const id of ['', '42', 'BTC-', 'BTC42', 'BTC-4a', 'BTC-007', 'BTC-1234567890123456'])
      assert.equal(trailingNumber(id), -1, id);
  });
});

describe('OrderIndex', () => {
  test('finds an order only by its exact id', () => {
    const index = new OrderIndex();
    const a = order('BTC-5', 5);
    index.set(a.id, a);
    assert.equal(index.get('BTC-5'), a);
    assert.equal(index.get('ETH-5'), undefined);
    assert.equal(index.get('BTC-05'), undefined);
    assert.equal(index.delete('ETH-5'), false);
    assert.equal(index.delete('BTC-5'), true);
    assert.equal(index.get('BTC-5'), undefined);
    assert.equal(index.size, 0);
  });

  test('ids not ending in the order number, and number clashes, still work', () => {
    const index = new OrderIndex();
    const odd = order('OCO-x', 9);
    const first = order('BTC-9', 9);
    const clash = order('ETH-9', 9);
    index.set(odd.id, odd);
    index.set(first.id, first);
    index.set(clash.id, clash);
    assert.equal(index.get('OCO-x'), odd);
    assert.equal(index.get('BTC-9'), first);
    assert.equal(index.get('ETH-9'), clash);
    assert.equal(index.size, 3);
    assert.equal(index.remove(order('BTC-9', 9)), false, 'another object with the same id');
    assert.equal(index.remove(first), true);
    assert.equal(index.remove(first), false);
    assert.equal(index.get('ETH-9'), clash);
    assert.deepEqual([...index.values()].map((o) => o.id).sort(), ['ETH-9', 'OCO-x']);
  });

  test('behaves like a Map<string, Order> on random operations', () => {
    const ids = fc.constantFrom('BTC-1', 'BTC-2', 'ETH-1', 'BTC-T-2', 'X', 'BTC-01', 'ETH-3');
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('set', 'delete', 'get'), ids, fc.integer({ min: 0, max: 3 })), {
          maxLength: 60,
        }),
        (ops) => {
          const index = new OrderIndex();
          const model = new Map<string, Order>();
          for (const [op, id, number] of ops) {
            if (op === 'set') {
              const o = order(id, number);
              index.set(id, o);
              model.set(id, o);
            } else if (op === 'delete') assert.equal(index.delete(id), model.delete(id));
            else assert.equal(index.get(id), model.get(id));
            assert.equal(index.size, model.size);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  test('orders that come and go one at a time reuse one page; emptied older pages are dropped', () => {
    const index = new OrderIndex();
    for (let number = 1; number <= 1_000; number++) {
      const o = order(`BTC-${number}`, number);
      index.set(o.id, o);
      assert.equal(index.remove(o), true);
      assert.equal(index.pageCount, 1);
    }
    const resting = order('BTC-1001', 1_001);
    index.set(resting.id, resting);
    const later = order('BTC-5000', 5_000);
    index.set(later.id, later);
    index.remove(later);
    assert.equal(index.pageCount, 2, "the resting order's page and the newest page");
    index.remove(resting);
    assert.equal(index.pageCount, 1, 'only the newest page is kept empty');
    assert.equal(index.size, 0);
  });

  test('matches a Map across pages, with engine ids and large numbers', () => {
    const numbers = fc.constantFrom(0, 1, 255, 256, 257, 511, 512, 1_000_000, 2 ** 40 + 3);
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.constantFrom('set', 'delete', 'get', 'remove'), fc.constantFrom('BTC', 'ETH'), numbers),
          {
            maxLength: 80,
          },
        ),
        (ops) => {
          const index = new OrderIndex();
          const model = new Map<string, Order>();
          for (const [op, prefix, number] of ops) {
            const id = `${prefix}-${number}`;
            if (op === 'set') {
              const o = order(id, number);
              index.set(id, o);
              model.set(id, o);
            } else if (op === 'delete') assert.equal(index.delete(id), model.delete(id));
            else if (op === 'remove') {
              const held = model.get(id);
              if (held !== undefined) {
                assert.equal(index.remove(held), true);
                model.delete(id);
              }
            } else assert.equal(index.get(id), model.get(id));
            assert.equal(index.size, model.size);
          }
          assert.deepEqual([...index.values()].map((o) => o.id).sort(), [...model.keys()].sort());
        },
      ),
      { numRuns: 500 },
    );
  });
});
