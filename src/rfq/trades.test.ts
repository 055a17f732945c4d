import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pageTrades, parseContinuation, TRADES_LOOKBACK_MS, tradeAverages } from './trades.ts';
import type { RfqFill, RfqTradeRecord } from './types.ts';

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

function fill(
  quantity: number,
  legPrices: number[],
  hedgeAmount: number,
  hedgePrice: number | null,
): RfqFill {
  return {
    quoteId: 'q',
    desk: 'd',
    makerAccountId: 2,
    takerAccountId: 1,
    blockTradeId: 'BLOCK-1',
    quantity,
    price: 0,
    hedgeAmount,
    legPrices,
    hedgePrice,
    tradeIds: [],
  };
}

test('trade prices: legs weighted by RFQ lots, the hedge by the hedge lots each fill booked', () => {
  const hedged: RfqTradeRecord = {
    ...trade(1, 0),
    legs: [{ instrumentName: 'A', side: 'buy', ratio: 1, lotsPerUnit: 2 }],
    hedge: { instrumentName: 'H', side: 'sell', amount: 5, price: 1000 },
    fills: [fill(4, [500], 2, 990), fill(1, [510], 0, 1200), fill(6, [505], 3, null)],
  };
  const averages = tradeAverages(hedged);
  // (4 × 500 + 1 × 510 + 6 × 505) / 11; the 1-lot fill booked no hedge, so its price does not count.
  assert.deepEqual(averages.legs, [{ notional: 5540n, weight: 11n }]);
  // A fill without a hedge price of its own counts at the RFQ's: (2 × 990 + 3 × 1000) / 5.
  assert.deepEqual(averages.hedge, { notional: 4980n, weight: 5n });
  // No fill booked any hedge lot: the prices the quotes traded it at, weighted by RFQ lots.
  const none = tradeAverages({ ...hedged, fills: [fill(1, [500], 0, 990), fill(3, [500], 0, 1010)] });
  assert.deepEqual(none.hedge, { notional: 4020n, weight: 4n });
  assert.equal(tradeAverages(trade(2, 0)).hedge, null);
});
