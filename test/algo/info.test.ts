import assert from 'node:assert/strict';
import { test } from 'node:test';
import { portfolioInfoToWire, tradeNewsToWire } from '../../src/api/portfolios/wire.ts';
import { AlgoHarness, leg, PERP_60K, portfolio } from './harness.ts';

test('info: arrival from the mid, else the priceSnapshot; average, slippage in bps, children, parts', () => {
  const h = AlgoHarness.withMarket();
  const snapshot = [{ placePriceIn: 'USD', placePrice: 59_000, price: 59_000, priceIn: 'USD' }];
  const id = h.submit(portfolio({ legs: [leg({ amount: 10, priceSnapshot: snapshot })] }));
  h.maker('sell', 10, PERP_60K);
  const lookup = (name: string) => h.venue.instrument(name)?.instrument;
  const info = portfolioInfoToWire(h.machine.portfolio(id)!, lookup);
  assert.equal(info.portfolioStatus, 'COMPLETED');
  const wireLeg = info.legs[0]!;
  assert.equal(wireLeg.arrivalPrice, '59000', 'empty book at submit: the priceSnapshot');
  assert.equal(wireLeg.averagePrice, '60000');
  assert.equal(wireLeg.slippageBps, 169.49, 'bought 1,000 USD above arrival: (60000 − 59000)/59000');
  assert.equal(wireLeg.filledQuantity, '100');
  assert.equal(wireLeg.childOrderIds.length, 1);
  assert.deepEqual(wireLeg.priceSnapshot, snapshot);
  assert.equal(info.childOrders[0]!.price, '60000');
  assert.equal(info.endReason, 'filled');

  const fill = h.news.find((e) => e.portfolioId === id && e.messageType === 'ORDER_FILLED')!;
  assert.deepEqual(
    { ...tradeNewsToWire(fill, lookup), timestamp: 0 },
    {
      type: 'ORDER_FILLED',
      portfolioId: id,
      accountId: 2,
      portfolioType: 'COMMON',
      portfolioStatus: 'WORKING',
      timestamp: 0,
      legId: 0,
      orderId: fill.orderId,
      instrument: 'BTC-PERPETUAL',
      quantity: '100',
      price: '60000',
    },
  );
});

test('info: a sell leg filled above arrival has negative slippage (better than arrival)', () => {
  const h = AlgoHarness.withMarket();
  h.maker('buy', 1, PERP_60K - 10);
  h.maker('sell', 1, PERP_60K + 10);
  const id = h.submit(
    portfolio({ legs: [leg({ side: 'sell', amount: 10, pricing: { ...leg().pricing, price: 60_005 } })] }),
  );
  h.maker('buy', 10, PERP_60K + 10);
  const info = portfolioInfoToWire(h.machine.portfolio(id)!, (name) => h.venue.instrument(name)?.instrument);
  assert.equal(info.legs[0]!.arrivalPrice, '60000');
  assert.equal(info.legs[0]!.averagePrice, '60005');
  assert.equal(info.legs[0]!.slippageBps, -0.83);
});
