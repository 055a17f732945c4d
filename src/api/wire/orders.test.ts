import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TradeParty, TradeView } from '../../core/events.ts';
import { Instrument } from '../../domain/instrument.ts';
import { Harness, optionSpec, spotSpec } from '../../engine/testkit.ts';
import { yearsBetween } from '../../market/black76.ts';
import { quotePriceFromVolatility } from '../../market/conversions.ts';
import { orderToWire, tradeToWire } from './orders.ts';

const option = new Instrument(1, optionSpec());

function party(overrides: Partial<TradeParty> = {}): TradeParty {
  return {
    accountId: 1,
    orderId: 'BTC-1',
    orderType: 'limit',
    side: 'buy',
    liquidity: 'T',
    state: 'filled',
    fee: 0,
    feeCurrency: 'BTC',
    profitLoss: 0,
    label: '',
    owner: null,
    api: true,
    postOnly: false,
    mmp: false,
    reduceOnly: false,
    riskReducing: false,
    advanced: null,
    ...overrides,
  };
}

function optionTrade(priceTicks: number, indexPrice: number | null, timestamp: number): TradeView {
  return {
    tradeId: 'BTC-1',
    tradeSeq: 1,
    instrumentName: option.name,
    currency: 'BTC',
    timestamp,
    price: priceTicks,
    amount: 10,
    tickDirection: 0,
    indexPrice,
    markPrice: priceTicks,
    taker: party(),
    maker: party({ accountId: 2, orderId: 'BTC-2', side: 'sell', liquidity: 'M' }),
    blockTradeId: null,
    blockRfqId: null,
    blockRfqQuoteId: null,
  };
}

test('an option trade carries the underlying price and the implied volatility of its price', () => {
  const timestamp = Date.UTC(2026, 10, 25, 8);
  const index = 65_000;
  const quote = quotePriceFromVolatility(
    {
      optionType: 'call',
      marginKind: 'inverse',
      strike: 70_000,
      forward: index,
      index,
      timeToExpiry: yearsBetween(timestamp, option.spec.expiration!),
    },
    0.55,
  );
  const ticks = option.priceGrid.fromNumber(quote);
  const wire = tradeToWire(optionTrade(ticks, index, timestamp), party(), option);
  assert.equal(wire.underlyingPrice, '65000');
  // The price is rounded to a tick, so the volatility it implies is near, not at, 55%.
  assert.ok(Math.abs(Number(wire.iv) - 55) < 0.2, `iv ${wire.iv}`);
  assert.match(wire.iv!, /^\d+\.\d\d$/);
});

test('no iv for a price below intrinsic value, and no option fields without an index', () => {
  const timestamp = Date.UTC(2026, 10, 25, 8);
  const deepInTheMoney = tradeToWire(optionTrade(1, 90_000, timestamp), party(), option);
  assert.equal(deepInTheMoney.underlyingPrice, '90000');
  assert.equal(deepInTheMoney.iv, undefined);
  const noIndex = tradeToWire(optionTrade(100, null, timestamp), party(), option);
  assert.equal(noIndex.underlyingPrice, undefined);
  assert.equal(noIndex.iv, undefined);
});

test('spot orders carry no reduceOnly; other orders do', () => {
  const h = new Harness();
  h.list(spotSpec());
  h.list(optionSpec());
  h.account(1, { BTC: 100_000_000_000, USDC: 1_000_000_000_000 });
  const spot = new Instrument(2, spotSpec());
  const spotOrder = h.order(1, 'buy', 10, 1000, { instrumentName: spot.name }).order!;
  assert.equal('reduceOnly' in orderToWire(spotOrder, spot), false);
  const optionOrder = h.order(1, 'buy', 1, 10, { instrumentName: option.name }).order!;
  assert.equal(orderToWire(optionOrder, option).reduceOnly, false);
});
