import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PositionView } from '../../core/events.ts';
import { Instrument } from '../../domain/instrument.ts';
import { Harness, perpetualSpec } from '../../engine/testkit.ts';
import { DEFAULT_PRODUCTS, inverseOptionSpec } from '../../market/products.ts';
import { createVenueReadPort } from '../venue-read-port.ts';
import {
  accountSummaryToWire,
  decimalText,
  formatFractionalTicks,
  orderBookToWire,
  positionToWire,
  tickerToWire,
} from './market.ts';

const EXPIRY = Date.UTC(2026, 10, 21, 8);
const OPTION = new Instrument(1, inverseOptionSpec(DEFAULT_PRODUCTS.BTC!, EXPIRY, 'day', 61_000, 'call', 0));

test('decimal text is never in exponent form', () => {
  assert.equal(decimalText(1.9777185663055924e-8), '0.00000001977718566306');
  assert.equal(decimalText(-1e-7), '-0.0000001');
  assert.equal(decimalText(1e-30), '0');
  assert.equal(decimalText(-1e-30), '0');
  assert.equal(decimalText(64985.88093446307), '64985.88093446307');
  assert.equal(decimalText(0.313107062692502), '0.313107062692502');
  // From 1e21 up, toFixed writes exponent form too: such a double is an integer, written out.
  assert.equal(decimalText(1e21), '1000000000000000000000');
  assert.equal(decimalText(-2.5e22), '-25000000000000000000000');
});

test('near-expiry greeks go out as plain decimals', () => {
  const wire = tickerToWire(
    {
      instrumentName: OPTION.name,
      timestamp: EXPIRY - 60_000,
      state: 'open',
      bestBidPrice: 465,
      bestBidAmount: 5,
      bestAskPrice: 500,
      bestAskAmount: 5,
      lastPrice: null,
      markPrice: 482,
      indexPrice: 64090.24033749619,
      markIv: 102.22189599515681,
      bidIv: null,
      askIv: 360.91856631319723,
      underlyingPrice: 64090.5328250798,
      greeks: {
        delta: 0.9517757079835687,
        gamma: 1.9777185663055924e-8,
        vega: 9.4e-7,
        theta: -0.116,
        rho: 0,
      },
    },
    OPTION,
  ) as Record<string, unknown>;
  assert.deepEqual(wire.greeks, {
    delta: '0.9517757079835687',
    gamma: '0.00000001977718566306',
    vega: '0.00000094',
    theta: '-0.116',
    rho: '0',
  });
  assert.equal(wire.markPrice, '0.0482');
});

test('minPrice and maxPrice are prices an order may be sent at (positive, on the tick at their level)', () => {
  const spec = inverseOptionSpec(DEFAULT_PRODUCTS.BTC!, Date.UTC(2026, 10, 28, 8), 'month', 61_000, 'put', 0);
  assert.equal(spec.name, 'BTC-28NOV26-61000-P');
  const h = new Harness();
  h.list(spec);
  const reads = createVenueReadPort(h.venue);
  const put = reads.instrument(spec.name)!;
  const shown = () => {
    const ticker = tickerToWire(reads.ticker(spec.name)!, put);
    const book = orderBookToWire(reads.orderBook(spec.name, 1)!, put);
    assert.equal(book.minPrice, ticker.minPrice);
    assert.equal(book.maxPrice, ticker.maxPrice);
    return [ticker.minPrice, ticker.maxPrice];
  };
  h.ok({ type: 'update_prices', markPrices: [{ instrumentName: spec.name, markPrice: 4 }] });
  assert.deepEqual(shown(), ['0.0001', '0.0014'], 'was -0.0006 to 0.0014');
  h.ok({ type: 'update_prices', markPrices: [{ instrumentName: spec.name, markPrice: 2_018 }] });
  assert.deepEqual(shown(), ['0.101', '0.3025'], 'was 0.1009 to 0.3027, off the 0.0005 tick');
  for (const price of shown()) assert.equal(put.formatPrice(put.parsePrice(price!)), price);
});

const perp = new Instrument(1, perpetualSpec()); // tick 0.5 USD, lot 10 USD

function position(overrides: Partial<PositionView> = {}): PositionView {
  return {
    accountId: 1,
    instrumentName: perp.name,
    size: -3,
    openCost: 0,
    averagePrice: 100_000,
    realisedPnl: 150,
    settlementCurrency: 'BTC',
    markPrice: 100_002,
    floatingPnl: -50,
    ...overrides,
  };
}

test('a short position has a negative size and direction sell', () => {
  const wire = positionToWire(position(), perp);
  assert.deepEqual([wire.direction, wire.size], ['sell', '-30']);
  assert.deepEqual([positionToWire(position({ size: 3 }), perp).size], ['30']);
});

test('totalProfitLoss is realised plus floating; null without a mark', () => {
  const wire = positionToWire(position(), perp);
  assert.deepEqual(
    [wire.realizedProfitLoss, wire.floatingProfitLoss, wire.totalProfitLoss, wire.markPrice],
    ['0.0000015', '-0.0000005', '0.000001', '50001'],
  );
  const unmarked = positionToWire(position({ markPrice: null, floatingPnl: null }), perp);
  assert.deepEqual(
    [unmarked.markPrice, unmarked.floatingProfitLoss, unmarked.totalProfitLoss],
    [null, null, null],
  );
});

test('a fractional average price is rounded, not truncated, at 8 extra tick places', () => {
  // 100000 + 2/3 ticks = 50000.3333… USD; 2/3 tick rounds to 0.66666667 tick = 0.333333335 USD.
  assert.equal(formatFractionalTicks(100_000 + 2 / 3, perp), '50000.333333335');
});

test('account summary: each money field is its own value', () => {
  const wire = accountSummaryToWire({
    accountId: 1,
    currency: 'BTC',
    selfTradeMode: 'reject_taker',
    balance: 100,
    equity: 200,
    marginBalance: 300,
    availableFunds: 400,
    initialMargin: 500,
    maintenanceMargin: 600,
    futuresPl: 700,
    optionsPl: -800,
    optionsValue: 900,
  } as Parameters<typeof accountSummaryToWire>[0]);
  assert.deepEqual(
    [
      wire.balance,
      wire.equity,
      wire.marginBalance,
      wire.availableFunds,
      wire.initialMargin,
      wire.maintenanceMargin,
      wire.futuresPl,
      wire.optionsPl,
      wire.optionsValue,
      wire.totalPl,
    ],
    [
      '0.000001',
      '0.000002',
      '0.000003',
      '0.000004',
      '0.000005',
      '0.000006',
      '0.000007',
      '-0.000008',
      '0.000009',
      '-0.000001',
    ],
  );
});
