import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import {
  COMBO,
  comboInstruments,
  comboTradeView,
  LONG_LEG,
  SHORT_LEG,
} from '../../../test/support/combo-trade.ts';
import type { OrderView, TradeParty, TradeView } from '../../core/events.ts';
import { Instrument } from '../../domain/instrument.ts';
import { Harness, optionSpec, perpetualSpec, spotSpec, tradeParty } from '../../engine/testkit.ts';
import { yearsBetween } from '../../market/black76.ts';
import { quotePriceFromVolatility } from '../../market/conversions.ts';
import { PublicTradeSchema, TradeSchema } from '../schemas/objects.ts';
import {
  cancelReports,
  formatAveragePrice,
  type InstrumentLookup,
  orderToWire,
  tradesToWire,
  tradeToWire,
} from './orders.ts';

const option = new Instrument(1, optionSpec());
const none: InstrumentLookup = () => undefined;

function party(overrides: Partial<TradeParty> = {}): TradeParty {
  return tradeParty({ accountId: 1, orderId: 'BTC-1', side: 'buy', liquidity: 'T', ...overrides });
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
  const wire = tradeToWire(optionTrade(ticks, index, timestamp), party(), option, none);
  assert.equal(wire.underlyingPrice, '65000');
  // The price is rounded to a tick, so the volatility it implies is near, not at, 55%.
  assert.ok(Math.abs(Number(wire.iv) - 55) < 0.2, `iv ${wire.iv}`);
  assert.match(wire.iv!, /^\d+\.\d\d$/);
});

test('no iv for a price below intrinsic value, and no option fields without an index', () => {
  const timestamp = Date.UTC(2026, 10, 25, 8);
  const deepInTheMoney = tradeToWire(optionTrade(1, 90_000, timestamp), party(), option, none);
  assert.equal(deepInTheMoney.underlyingPrice, '90000');
  assert.equal(deepInTheMoney.iv, undefined);
  const noIndex = tradeToWire(optionTrade(100, null, timestamp), party(), option, none);
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

test('a combo trade lists its leg trades, each in its leg instrument and from the same liquidity', () => {
  const instruments = comboInstruments();
  const lookup: InstrumentLookup = (name) => instruments.get(name);
  const trade = comboTradeView({ tradeId: 'BTC-10', taker: 1, maker: 2 });
  const taker = tradeToWire(trade, trade.taker, instruments.get(COMBO)!, lookup);
  assert.ok(
    Value.Check(TradeSchema, taker),
    [...Value.Errors(TradeSchema, taker)].map((e) => e.message).join(),
  );
  assert.deepEqual(
    [taker.instrumentName, taker.side, taker.price, taker.quantity, taker.fee, taker.profitLoss],
    [COMBO, 'buy', '0.005', '1', '0.00000005', '-0.00000014'],
  );
  assert.equal('comboId' in taker, false);
  assert.equal('comboTradeId' in taker, false);
  assert.equal('iv' in taker, false, 'a combo is no option: no iv of its own');
  assert.deepEqual(
    taker.legs!.map((leg) => [
      leg.tradeId,
      leg.instrumentName,
      leg.orderId,
      leg.side,
      leg.liquidity,
      leg.price,
      leg.quantity,
      leg.fee,
      leg.label,
      leg.comboId,
      leg.comboTradeId,
    ]),
    [
      ['BTC-10-L1', LONG_LEG, 'TBTC-10', 'buy', 'T', '0.03', '1', '0.00000003', 'spread', COMBO, 'BTC-10'],
      ['BTC-10-L2', SHORT_LEG, 'TBTC-10', 'sell', 'T', '0.025', '1', '0.00000002', 'spread', COMBO, 'BTC-10'],
    ],
  );
  for (const leg of taker.legs!) {
    assert.equal(leg.underlyingPrice, '65000', 'option fields from the leg instrument');
    assert.match(leg.iv ?? '', /^\d+\.\d\d$/);
    assert.equal('legs' in leg, false);
  }
  const maker = tradeToWire(trade, trade.maker, instruments.get(COMBO)!, lookup);
  assert.deepEqual(
    maker.legs!.map((leg) => [leg.orderId, leg.side, leg.liquidity, leg.profitLoss]),
    [
      ['MBTC-10', 'sell', 'M', '0.00000007'],
      ['MBTC-10', 'buy', 'M', '0.00000007'],
    ],
  );
  // A leg whose instrument is unknown is left out; a trade without legs has no `legs`.
  const partial = tradeToWire(trade, trade.taker, instruments.get(COMBO)!, (name) =>
    name === SHORT_LEG ? undefined : instruments.get(name),
  );
  assert.deepEqual(
    partial.legs!.map((leg) => leg.instrumentName),
    [LONG_LEG],
  );
  const plain = tradeToWire(trade.legs![0]!, trade.legs![0]!.taker, instruments.get(LONG_LEG)!, lookup);
  assert.equal('legs' in plain, false);
  assert.deepEqual([plain.comboId, plain.comboTradeId], [COMBO, 'BTC-10']);
});

test('a self-trade on a combo book: one entry per own side, each with the legs of its liquidity', () => {
  const instruments = comboInstruments();
  const trade = comboTradeView({ taker: 4, maker: 4 });
  const wire = tradesToWire([trade], 4, (name) => instruments.get(name));
  assert.deepEqual(
    wire.map((own) => [own.liquidity, own.legs!.map((leg) => `${leg.liquidity}:${leg.side}`)]),
    [
      ['T', ['T:buy', 'T:sell']],
      ['M', ['M:sell', 'M:buy']],
    ],
  );
});

test('a trade before any index or mark says null, and the schemas say when', () => {
  const trade = { ...optionTrade(100, null, Date.UTC(2026, 10, 25, 8)), markPrice: null };
  const [wire] = tradesToWire([trade], 1, () => option);
  assert.equal(wire!.indexPrice, null, 'no index yet: not a substitute');
  assert.equal(wire!.markPrice, null, 'no mark yet: not the trade price');
  assert.ok(
    Value.Check(TradeSchema, wire),
    [...Value.Errors(TradeSchema, wire)].map((e) => e.message).join(),
  );
  for (const field of ['indexPrice', 'markPrice'] as const) {
    for (const schema of [TradeSchema, PublicTradeSchema]) {
      assert.match(String(schema.properties[field].description), /null when/, `${schema.$id}.${field}`);
    }
  }
});

const perp = new Instrument(1, perpetualSpec());

function restingPerpOrder(more: Parameters<Harness['order']>[4] = {}): OrderView {
  const h = new Harness();
  h.list(perpetualSpec());
  h.account(1);
  const result = h.order(1, 'buy', 10, 100_000, more);
  assert.ok(result.ok, JSON.stringify(result));
  return result.order!;
}

test('an order without a price says market_price', () => {
  assert.equal(orderToWire({ ...restingPerpOrder(), price: null }, perp).price, 'market_price');
});

test('rejectPostOnly appears only on post-only orders', () => {
  assert.equal('rejectPostOnly' in orderToWire(restingPerpOrder(), perp), false);
  const postOnly = orderToWire(restingPerpOrder({ postOnly: true, rejectPostOnly: true }), perp);
  assert.equal(postOnly.rejectPostOnly, true);
});

test('autoReplaced appears only on advanced option orders (spec 2.6: options, advanced orders only)', () => {
  const base = { ...restingPerpOrder(), instrumentName: option.name };
  assert.equal('autoReplaced' in orderToWire(base, option), false);
  assert.equal('autoReplaced' in orderToWire({ ...base, autoReplaced: true }, perp), false);
  const usd = orderToWire({ ...base, advanced: 'usd', usd: 2_500, autoReplaced: true }, option);
  assert.equal(usd.autoReplaced, true);
  const implv = orderToWire({ ...base, advanced: 'implv', implv: 60 }, option);
  assert.equal(implv.autoReplaced, false);
});

test('a trailing order shows its triggerOffset as a price decimal', () => {
  const wire = orderToWire({ ...restingPerpOrder(), trigger: 'last_price', triggerOffset: 201 }, perp);
  assert.equal(wire.triggerOffset, '100.5');
});

test('a market_limit order trades as market when it takes and as limit when it makes', () => {
  const trade: TradeView = {
    ...optionTrade(100, null, Date.UTC(2026, 10, 25, 8)),
    taker: party({ orderType: 'market_limit' }),
    maker: party({ accountId: 2, orderId: 'BTC-2', side: 'sell', liquidity: 'M', orderType: 'market_limit' }),
  };
  assert.equal(tradeToWire(trade, trade.taker, option, none).orderType, 'market');
  assert.equal(tradeToWire(trade, trade.maker, option, none).orderType, 'limit');
});

test('cancel reports: a triggered trigger order groups under limit, an untriggered one under trigger', () => {
  const base = restingPerpOrder();
  const reports = cancelReports(
    [
      { ...base, orderId: 'a', trigger: 'last_price', triggered: true },
      { ...base, orderId: 'b', trigger: 'last_price', triggered: false },
    ],
    () => perp,
  );
  assert.deepEqual(
    reports.map((r) => [r.type, r.result.map((o) => o.orderId)]),
    [
      ['limit', ['a']],
      ['trigger', ['b']],
    ],
  );
});

test('audit: an average price keeps 8 places beyond the tick, never fewer', () => {
  // BTC-PERPETUAL ticks are 0.5: one tick over three lots averages 0.1666… .
  assert.equal(perp.formatPrice(1), '0.5');
  assert.equal(formatAveragePrice(perp, 1, 3), '0.166666666');
  assert.equal(formatAveragePrice(perp, 120_001, 2), '30000.25');
  assert.equal(formatAveragePrice(perp, 0, 0), '0');
});
