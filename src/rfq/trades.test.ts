import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pageTrades, parseContinuation, TRADES_LOOKBACK_MS } from './trades.ts';
import type { RfqTradeRecord } from './types.ts';

function trade(number: number, timestamp: number, currency = 'BTC'): RfqTradeRecord {
  return {
    blockRfqId: String(number),
    number,
    timestamp,
    currency,
    takerAccountId: 1,
    side: 'buy',
    quantity: 1,
    quantityStep: '1',
    priceScale: 0,
    comboId: null,
    legs: [],
    hedge: null,
    markPrice: null,
    fills: [],
    quoteCurrency: currency,
  };
}

test('pages newest first by (timestamp, id), with a continuation naming the last item', () => {
  const now = 10 * TRADES_LOOKBACK_MS;
  const trades = [
    trade(1, now - TRADES_LOOKBACK_MS - 1),
    trade(2, now - 5),
    trade(4, now - 5),
    trade(3, now - 1, 'ETH'),
    trade(5, now),
  ];
  const first = pageTrades(trades, { currency: 'any', now, continuation: null, count: 2 });
  assert.deepEqual(
    first.results.map((t) => t.blockRfqId),
    ['5', '3'],
  );
  assert.equal(first.continuation, `${now - 1}:3`);
  const second = pageTrades(trades, { currency: 'any', now, continuation: first.continuation, count: 2 });
  assert.deepEqual(
    second.results.map((t) => t.blockRfqId),
    ['4', '2'],
  );
  assert.equal(second.continuation, null, 'the 8-day-old trade is outside the look-back');
  assert.deepEqual(
    pageTrades(trades, { currency: 'btc', now, continuation: null, count: 10 }).results.map(
      (t) => t.blockRfqId,
    ),
    ['5', '4', '2'],
  );
  assert.equal(parseContinuation('x:1'), null);
});
