import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { OrderView, TradeView } from '../core/events.ts';
import { MemoryHistory } from './memory-history.ts';

const NOW = 1_800_000_000_000;
function filled(id: string, at: number): OrderView {
  return {
    orderId: id,
    accountId: 1,
    currency: 'BTC',
    instrumentName: 'BTC-PERPETUAL',
    lastUpdatedAt: at,
    orderState: 'filled',
    filledAmount: 1,
  } as unknown as OrderView;
}
function historyOf(n: number, at: (i: number) => number = (i) => NOW - 60_000 + i): MemoryHistory {
  const h = new MemoryHistory(() => 'future');
  for (let i = 0; i < n; i++)
    h.record({ seq: i + 1, ts: at(i), events: [{ type: 'order', order: filled(`BTC-${i + 1}`, at(i)) }] });
  return h;
}
const base = { accountId: 1, currency: 'BTC', now: NOW };

test('count defaults to 20 and must be 1..1000', async () => {
  const h = historyOf(25);
  assert.equal((await h.orderHistory(base)).orders.length, 20);
  assert.equal((await h.orderHistory({ ...base, count: 1000 })).orders.length, 25);
  await assert.rejects(h.orderHistory({ ...base, count: 1001 }), RangeError);
  await assert.rejects(h.orderHistory({ ...base, count: 0 }), RangeError);
  await assert.rejects(h.userTrades({ ...base, count: 0 }), RangeError);
  await assert.rejects(h.userTrades({ ...base, count: 1001 }), RangeError);
});

test('offset skips rows; a page that ends exactly at the last row has no continuation', async () => {
  const h = historyOf(5);
  const page = await h.orderHistory({ ...base, offset: 2, count: 2 });
  assert.deepEqual(
    page.orders.map((o) => o.orderId),
    ['BTC-3', 'BTC-2'],
  );
  assert.notEqual(page.continuation, null);
  const exact = await h.orderHistory({ ...base, offset: 1, count: 4 });
  assert.equal(exact.orders.length, 4);
  assert.equal(exact.continuation, null);
  const all = await h.orderHistory({ ...base, count: 5 });
  assert.equal(all.continuation, null);
});

test('historical window edges: 1 s indexing delay, 2-day cutoff inclusive', async () => {
  const ats = [NOW - 500, NOW - 2 * 24 * 3_600_000, NOW - 2 * 24 * 3_600_000 - 1];
  const h = historyOf(3, (i) => ats[i]!);
  const ids = (await h.orderHistory({ ...base, historical: true })).orders.map((o) => o.orderId);
  assert.deepEqual(ids, ['BTC-2']);
});
test('a negative or fractional offset is a RangeError, as in the read store (history-queries.ts:163)', async () => {
  const h = new MemoryHistory(() => 'future');
  for (let i = 1; i <= 3; i++) {
    const order = {
      orderId: `BTC-${i}`,
      accountId: 1,
      currency: 'BTC',
      instrumentName: 'BTC-PERPETUAL',
      lastUpdatedAt: NOW - 60_000 + i,
      orderState: 'filled',
      filledAmount: 1,
    } as unknown as OrderView;
    h.record({ seq: i, ts: order.lastUpdatedAt, events: [{ type: 'order', order }] });
  }
  const q = { accountId: 1, currency: 'BTC', now: NOW, count: 2 };
  await assert.rejects(h.orderHistory({ ...q, offset: -1 }), RangeError);
  await assert.rejects(h.orderHistory({ ...q, offset: 0.5 }), RangeError);
});

test('userTrades: endTimestamp is inclusive, and a page holding exactly the rest has no more', async () => {
  const h = new MemoryHistory(() => 'future');
  for (let i = 1; i <= 3; i++) {
    const trade = {
      tradeId: `BTC-T${i}`,
      currency: 'BTC',
      instrumentName: 'BTC-PERPETUAL',
      timestamp: NOW - 60_000 + i,
      taker: { accountId: 1 },
      maker: { accountId: 2 },
    } as unknown as TradeView;
    h.record({ seq: i, ts: trade.timestamp, events: [{ type: 'trade', trade }] });
  }
  const upTo = await h.userTrades({ ...base, endTimestamp: NOW - 60_000 + 2, count: 10 });
  assert.deepEqual(
    upTo.trades.map((t) => t.trade.tradeId),
    ['BTC-T2', 'BTC-T1'],
  );
  const exact = await h.userTrades({ ...base, count: 3 });
  assert.equal(exact.trades.length, 3);
  assert.equal(exact.hasMore, false);
  assert.equal(exact.continuation, null);
});
