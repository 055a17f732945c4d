/** The gateway over the real engine and sequencer, through the sdk (HTTP + WS). */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiError } from '../../sdk/errors.ts';
import type { SubscriptionPush } from '../../sdk/types.ts';
import { type EngineVenue, startEngineVenue } from '../support/engine-venue.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { until } from '../support/until.ts';

const PERP = 'BTC-PERPETUAL';
const TAKER = 0;
const MAKER1 = 1;

describe('gateway over the real engine', () => {
  let harness: Harness;
  let engine: EngineVenue;
  before(async () => {
    engine = await startEngineVenue();
    harness = await startHarness({ venue: engine });
  });
  after(() => harness.close());

  test('a maker rests, a taker crosses: trades, positions, pushes, history', async () => {
    const ws = harness.ws(TAKER);
    await ws.connect();
    await ws.auth();
    const pushes: SubscriptionPush[] = [];
    await ws.subscribe(['user.trades.future.BTC', 'user.orders.any.any'], (push) => pushes.push(push));

    const maker = harness.http(MAKER1);
    const taker = harness.http(TAKER);
    const resting = await maker.call('private/sell', {
      instrumentName: PERP,
      quantity: '1000',
      price: '60500',
      postOnly: true,
      label: 'ask',
    });
    assert.equal(resting.order.orderState, 'open');
    assert.equal(resting.order.rejectPostOnly, false);

    const taken = await taker.call('private/buy', {
      instrumentName: PERP,
      contracts: '40',
      price: '60500',
      timeInforce: 'immediate_or_cancel',
    });
    assert.equal(taken.order.orderState, 'filled');
    assert.equal(taken.order.filledQuantity, '400');
    assert.equal(taken.order.averagePrice, '60500');
    assert.equal(taken.trades.length, 1);
    const trade = taken.trades[0]!;
    assert.equal(trade.liquidity, 'T');
    assert.equal(trade.side, 'buy');
    assert.equal(trade.price, '60500');
    assert.equal(trade.quantity, '400');
    assert.equal(trade.orderId, taken.order.orderId);
    assert.equal(trade.matchingId, null);

    const makerOrder = await maker.call('private/get_order_state', { orderId: resting.order.orderId });
    assert.equal(makerOrder.filledQuantity, '400');
    assert.equal(makerOrder.orderState, 'open');

    const positions = await taker.call('private/get_positions', { currency: 'BTC' });
    assert.deepEqual(
      positions.map((p) => [p.instrumentName, p.direction, p.size]),
      [[PERP, 'buy', '400']],
    );
    const trades = await taker.call('private/get_user_trades_by_currency', { currency: 'BTC' });
    assert.equal(trades.trades[0]?.tradeId, trade.tradeId);
    const history = await taker.call('private/get_order_history_by_currency', { currency: 'BTC' });
    assert.ok(Array.isArray(history) && history.some((o) => o.orderId === taken.order.orderId));

    await until(() => pushes.some((p) => p.channel === 'user.trades.future.BTC'));
    const tradePush = pushes.find((p) => p.channel === 'user.trades.future.BTC')!;
    assert.equal((tradePush.data as Array<{ tradeId: string }>)[0]!.tradeId, trade.tradeId);
    assert.ok(pushes.some((p) => p.channel === 'user.orders.any.any' && !p.snapshot));

    const book = await taker.call('public/get_order_book', { instrumentName: PERP });
    assert.deepEqual(book.asks[0], ['60500', '600']);
    const ticker = await taker.call('public/ticker', { instrumentName: PERP });
    assert.equal(ticker.lastPrice, '60500');
    assert.equal(ticker.bestAskPrice, '60500');
    await ws.close();
  });

  test('engine refusals travel as catalogue errors naming the field', async () => {
    const taker = harness.http(TAKER);
    await assert.rejects(
      taker.call('private/buy', {
        instrumentName: PERP,
        quantity: '10',
        price: '60000',
        validUntil: engine.now() - 1,
      }),
      (error) => error instanceof ApiError && error.code === 13888,
    );
    await assert.rejects(
      taker.call('private/cancel', { orderId: 'nope' }),
      (error) => error instanceof ApiError && error.code === 10004 && error.data?.field === 'orderId',
    );
    const summary = await taker.call('private/get_account_summary', { currency: 'BTC' });
    assert.ok(Number(summary.balance) > 0);
  });

  test('an unknown currency or instrument is an error naming the field, not an empty answer', async () => {
    const taker = harness.http(TAKER);
    const namesField = (field: string) => (error: unknown) =>
      error instanceof ApiError && error.data?.field === field;
    await assert.rejects(
      taker.call('private/get_order_history_by_currency', { currency: 'XYZ' }),
      namesField('currency'),
    );
    await assert.rejects(
      taker.call('private/cancel_all_by_currency', { currency: 'XYZ' }),
      namesField('currency'),
    );
    await assert.rejects(
      taker.call('private/get_open_orders_by_currency', { currency: 'any' }),
      namesField('currency'),
    );
    await assert.rejects(
      taker.call('private/get_open_orders_by_instrument', { instrumentName: 'NOPE' }),
      namesField('instrumentName'),
    );
    assert.deepEqual(await taker.call('private/get_open_orders_by_currency', { currency: 'btc' }), []);
  });

  test('errors speak wire units: band limits are prices, funds are decimals of the currency', async () => {
    const taker = harness.http(TAKER);
    await assert.rejects(
      taker.call('private/buy', { instrumentName: PERP, quantity: '10', price: '1000000' }),
      (error) =>
        error instanceof ApiError &&
        error.data?.field === 'price' &&
        typeof error.data.maxPrice === 'string' &&
        error.message.endsWith(String(error.data.maxPrice)),
    );
  });
});

describe('order state beyond the closed orders the engine keeps', () => {
  let harness: Harness;
  before(async () => {
    const engine = await startEngineVenue(undefined, { recentClosedOrders: 2 });
    harness = await startHarness({ venue: engine });
  });
  after(() => harness.close());

  test('an order closed long ago comes from the order history, still only for its owner', async () => {
    const taker = harness.http(TAKER);
    const placed = [];
    for (let i = 0; i < 4; i++) {
      // Far below the book and immediate-or-cancel: closed at once, unfilled.
      const answer = await taker.call('private/buy', {
        instrumentName: PERP,
        quantity: '10',
        price: '59000',
        timeInForce: 'immediate_or_cancel',
      });
      assert.equal(answer.order.orderState, 'cancelled');
      placed.push(answer.order.orderId);
    }
    const oldest = await taker.call('private/get_order_state', { orderId: placed[0]! });
    assert.equal(oldest.orderId, placed[0]);
    assert.equal(oldest.orderState, 'cancelled');
    assert.equal(oldest.filledQuantity, '0');
    await assert.rejects(
      harness.http(MAKER1).call('private/get_order_state', { orderId: placed[0]! }),
      (error) => error instanceof ApiError && error.code === 10004 && error.data?.field === 'orderId',
    );
  });
});
