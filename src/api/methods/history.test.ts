import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { OrderView } from '../../core/events.ts';
import { pageOrderHistory, RECENT_ORDERS_MS } from './history.ts';

const NOW = 1_800_000_000_000;

function order(
  id: string,
  lastUpdatedAt: number,
  orderState: OrderView['orderState'],
  filledAmount: number,
): OrderView {
  return { orderId: id, lastUpdatedAt, orderState, filledAmount } as unknown as OrderView;
}

test('recent window, includeUnfilled, historical and includeOld', () => {
  const orders = [
    order('a', NOW - 1000, 'open', 0),
    order('b', NOW - 2000, 'cancelled', 0),
    order('c', NOW - 3000, 'filled', 5),
    order('d', NOW - RECENT_ORDERS_MS - 1, 'filled', 5),
    order('e', NOW - 3 * 24 * 3600_000, 'filled', 5),
  ];
  const ids = (page: { orders: OrderView[] }) => page.orders.map((o) => o.orderId);
  assert.deepEqual(ids(pageOrderHistory(orders, { currency: 'BTC' }, NOW)), ['a', 'c']);
  assert.deepEqual(ids(pageOrderHistory(orders, { currency: 'BTC', includeUnfilled: true }, NOW)), [
    'a',
    'b',
    'c',
  ]);
  assert.deepEqual(ids(pageOrderHistory(orders, { currency: 'BTC', historical: true }, NOW)), ['d']);
  assert.deepEqual(
    ids(pageOrderHistory(orders, { currency: 'BTC', historical: true, includeOld: true }, NOW)),
    ['d', 'e'],
  );
});

test('continuation pages through every order exactly once, newest first', () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 60 }),
      fc.integer({ min: 1, max: 7 }),
      (ages, count) => {
        const orders = ages.map((age, i) => order(`o${String(i).padStart(3, '0')}`, NOW - age, 'open', 0));
        const seen: string[] = [];
        let continuation: string | null | undefined;
        for (let guard = 0; guard < 100; guard++) {
          const page = pageOrderHistory(orders, { currency: 'BTC', count, continuation }, NOW);
          seen.push(...page.orders.map((o) => o.orderId));
          continuation = page.continuation;
          if (continuation === null) break;
        }
        assert.equal(seen.length, orders.length);
        assert.equal(new Set(seen).size, orders.length);
      },
    ),
  );
});
