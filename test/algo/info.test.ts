import assert from 'node:assert/strict';
import { test } from 'node:test';
import { validatePortfolioBody } from '../../src/api/portfolios/validate.ts';
import { portfolioInfoToWire, tradeNewsToWire } from '../../src/api/portfolios/wire.ts';
import { AlgoHarness, leg, MIRROR, PERP, PERP_60K, portfolio, T0, TRADER } from './harness.ts';

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

const lookupOf = (h: AlgoHarness) => (name: string) => h.venue.instrument(name)?.instrument;

test('averages are exact and printed alike in info and in ORDER_FILLED', () => {
  const h = AlgoHarness.withMarket();
  h.maker('sell', 2, PERP_60K);
  h.maker('sell', 1, PERP_60K + 1);
  const id = h.submit(
    portfolio({ legs: [leg({ amount: 3, pricing: { ...leg().pricing, price: 60_001 } })] }),
  );
  const lookup = lookupOf(h);
  const fill = h.news.find((e) => e.portfolioId === id && e.messageType === 'ORDER_FILLED')!;
  const average = portfolioInfoToWire(h.machine.portfolio(id)!, lookup).legs[0]!.averagePrice;
  // (2 × 60,000 + 60,000.5) / 3 = 60,000.1666…: 8 decimals beyond the 0.5 tick, cut, never float noise.
  assert.equal(average, '60000.166666666');
  assert.equal(tradeNewsToWire(fill, lookup).price, average);
});

test('TWAP parts report cumulative targets, like their filled quantities and like BALANCE', () => {
  const h = AlgoHarness.withMarket();
  h.maker('sell', 10, PERP_60K);
  const id = h.submit(
    portfolio({
      portfolioType: 'TWAP',
      twap: { startTimestamp: null, durationMs: 10_000, frequencyMs: 2_000 },
      legs: [leg({ amount: 100 })],
    }),
  );
  h.runUntil(T0 + 2_000);
  const lookup = lookupOf(h);
  const qty = (lots: number) => lookup(PERP)!.formatQuantity(lots);
  const parts = portfolioInfoToWire(h.machine.portfolio(id)!, lookup).parts;
  assert.deepEqual(
    parts.map((part) => [part.targetQuantities[0], part.filledQuantities[0]]),
    [
      [qty(20), qty(10)],
      [qty(10 + 22), qty(10)],
    ],
    'slice 1 works floor(90 / 4) = 22 lots on top of the 10 filled',
  );
});

test('info echoes price and dynamicPriceOffset in the type they were sent', () => {
  const h = AlgoHarness.withMarket();
  const lookup = lookupOf(h);
  const body = (price: unknown, portfolioType: string, block: Record<string, unknown>) => ({
    accountId: TRADER,
    portfolioType,
    ...block,
    legs: [
      {
        instrument: PERP,
        instrumentType: 'PERPETUAL',
        side: 1,
        quantity: '100',
        priceOptions: {
          priceType: 'DYNAMIC',
          price,
          priceIn: 'USD',
          dynamicPriceStrategy: 'BID',
          dynamicPriceOffset: '-1.50',
          dynamicMs: 1000,
        },
      },
    ],
  });
  const context = { accountIds: new Set([TRADER]), instrument: lookup, now: h.ts };
  const balance = validatePortfolioBody(
    body('59000.50', 'BALANCE', {
      balanceTrade: { parts: 2, eachLimitMs: 10_000, totalLimitMs: 0, totalEndAction: 1 },
    }),
    context,
  );
  const twap = validatePortfolioBody(
    body(59000.5, 'TWAP', { twapTrade: { durationSec: 10, frequencySec: 2 } }),
    context,
  );
  const options = (spec: typeof balance) =>
    portfolioInfoToWire(h.machine.portfolio(h.submit(spec))!, lookup).legs[0]!.priceOptions;
  assert.deepEqual([options(balance).price, options(balance).dynamicPriceOffset], ['59000.50', '-1.50']);
  assert.deepEqual([options(twap).price, options(twap).dynamicPriceOffset], [59000.5, '-1.50']);
});

test('info echoes balanceTrade.totalEndAction as the code sent: 1 CANCEL_REMAINING, 2 FILL_BY_MARKET', () => {
  const h = AlgoHarness.withMarket();
  const lookup = lookupOf(h);
  const context = { accountIds: new Set([TRADER]), instrument: lookup, now: h.ts };
  for (const [code, action] of [
    [1, 'CANCEL_REMAINING'],
    [2, 'FILL_BY_MARKET'],
  ] as const) {
    const spec = validatePortfolioBody(
      {
        accountId: TRADER,
        portfolioType: 'BALANCE',
        balanceTrade: { parts: 2, eachLimitMs: 10_000, totalLimitMs: 60_000, totalEndAction: code },
        legs: [
          {
            instrument: PERP,
            instrumentType: 'PERPETUAL',
            side: 1,
            quantity: '100',
            priceOptions: { priceType: 'LIMIT', price: '59000', priceIn: 'USD' },
          },
        ],
      },
      context,
    );
    assert.equal(spec.balance!.totalEndAction, action, `code ${code}`);
    const info = portfolioInfoToWire(h.machine.portfolio(h.submit(spec))!, lookup);
    assert.equal(info.balanceTrade!.totalEndAction, code, `${action} is echoed as ${code}`);
  }
});

test('PORTFOLIO_FAILED carries the endMessage info has', () => {
  const h = AlgoHarness.withMarket();
  h.core({ type: 'create_account', accountId: 9 });
  const id = h.submit(portfolio({ accountId: 9, legs: [leg({ amount: 100_000_000 })] }));
  const lookup = lookupOf(h);
  const info = portfolioInfoToWire(h.machine.portfolio(id)!, lookup);
  const failed = h.news.find((e) => e.portfolioId === id && e.messageType === 'PORTFOLIO_FAILED')!;
  const wire = tradeNewsToWire(failed, lookup);
  assert.match(info.endMessage ?? '', /not_enough_funds/);
  assert.equal(wire.endMessage, info.endMessage);
  assert.equal(wire.endReason, 'child_rejected');
});

test('info: leg sides come back as the spec codes they were sent as (1 = BUY, 2 = SELL)', () => {
  const h = AlgoHarness.withMarket();
  const lookup = (name: string) => h.venue.instrument(name)?.instrument;
  const buy = h.submit(portfolio({ legs: [leg({ side: 'buy', amount: 10 })] }));
  const sell = h.submit(portfolio({ legs: [leg({ side: 'sell', amount: 10 })] }));
  assert.equal(portfolioInfoToWire(h.machine.portfolio(buy)!, lookup).legs[0]!.side, 1);
  assert.equal(portfolioInfoToWire(h.machine.portfolio(sell)!, lookup).legs[0]!.side, 2);
});

test('info: twapTrade echoes durationSec and frequencySec as sent', () => {
  const h = AlgoHarness.withMarket();
  const lookup = (name: string) => h.venue.instrument(name)?.instrument;
  const id = h.submit(
    portfolio({
      portfolioType: 'TWAP',
      twap: { startTimestamp: null, durationMs: 600_000, frequencyMs: 60_000 },
      legs: [leg({ amount: 10 })],
    }),
  );
  const twap = portfolioInfoToWire(h.machine.portfolio(id)!, lookup).twapTrade;
  assert.equal(twap?.durationSec, 600);
  assert.equal(twap?.frequencySec, 60);
});

test('info and trade-news: a mirror names its original; a TWAP in its first slice has currentPart 0; a limit child is orderType limit', () => {
  const h = AlgoHarness.withMarket();
  const lookup = lookupOf(h);
  // Nothing to trade against: the first slice's child rests.
  const id = h.submit(
    portfolio({
      portfolioType: 'TWAP',
      twap: { startTimestamp: null, durationMs: 10_000, frequencyMs: 2_000 },
      mirrorAccountIds: [MIRROR],
      legs: [leg({ amount: 100 })],
    }),
  );
  const original = portfolioInfoToWire(h.machine.portfolio(id)!, lookup);
  assert.equal(original.portfolioStatus, 'WORKING');
  assert.equal(original.currentPart, 0, 'working in slice 0: currentPart is 0, not null');
  assert.equal(original.linkedPortfolioId, null);
  assert.ok(original.childOrders.length > 0, 'a child order rests');
  assert.equal(original.childOrders[0]!.orderType, 'limit');
  assert.equal(original.mirrorPortfolioIds.length, 1);
  const mirrorId = original.mirrorPortfolioIds[0]!;
  const mirror = portfolioInfoToWire(h.machine.portfolio(mirrorId)!, lookup);
  assert.equal(mirror.accountId, MIRROR);
  assert.equal(mirror.linkedPortfolioId, id, 'the mirror names its original');
  const submitted = h.news.find(
    (e) => e.portfolioId === mirrorId && e.messageType === 'PORTFOLIO_SUBMITTED',
  )!;
  assert.equal(
    tradeNewsToWire(submitted, lookup).linkedPortfolioId,
    id,
    'and so does its PORTFOLIO_SUBMITTED',
  );
});

test('info: a TWAP waiting for its startTimestamp echoes it in twapTrade; an ICEBERG without refreshQuantity echoes null', () => {
  const h = AlgoHarness.withMarket();
  const lookup = lookupOf(h);
  const start = T0 + 60_000;
  const waiting = h.submit(
    portfolio({
      portfolioType: 'TWAP',
      twap: { startTimestamp: start, durationMs: 10_000, frequencyMs: 2_000 },
      legs: [leg({ amount: 100 })],
    }),
  );
  const twap = portfolioInfoToWire(h.machine.portfolio(waiting)!, lookup);
  assert.equal(twap.startTimestamp, null, 'not started yet');
  assert.equal(twap.twapTrade!.startTimestamp, start, 'the startTimestamp sent');

  const iceberg = h.submit(
    portfolio({
      portfolioType: 'ICEBERG',
      iceberg: { displayAmount: 10, refreshAmount: null },
      legs: [leg({ amount: 100 })],
    }),
  );
  const info = portfolioInfoToWire(h.machine.portfolio(iceberg)!, lookup);
  assert.deepEqual(info.icebergTrade, {
    displayQuantity: lookup(PERP)!.formatQuantity(10),
    refreshQuantity: null,
  });
});
