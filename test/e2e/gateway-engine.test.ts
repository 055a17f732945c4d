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
    // Deribit's floating and total PnL at the mark: 400 USD bought at 60,500, inverse.
    const { markPrice } = await taker.call('public/ticker', { instrumentName: PERP });
    const position = positions[0]!;
    assert.equal(position.markPrice, markPrice);
    const expected = 400 / 60_500 - 400 / Number(markPrice);
    assert.ok(
      Math.abs(Number(position.floatingProfitLoss) - expected) < 2e-8,
      `${position.floatingProfitLoss} vs ${expected}`,
    );
    assert.equal(
      Number(position.totalProfitLoss),
      Number(position.realizedProfitLoss) + Number(position.floatingProfitLoss),
    );
    const trades = await taker.call('private/get_user_trades_by_currency', { currency: 'BTC' });
    assert.equal(trades.trades[0]?.tradeId, trade.tradeId);
    // The maker sees the same trade from its own side: its order, side, label and liquidity.
    const makerTrades = await maker.call('private/get_user_trades_by_currency', { currency: 'BTC' });
    const made = makerTrades.trades.find((t) => t.tradeId === trade.tradeId);
    assert.ok(made !== undefined, `the maker's trades hold ${trade.tradeId}`);
    assert.deepEqual(
      [made.liquidity, made.orderId, made.side, made.label, made.quantity],
      ['M', resting.order.orderId, 'sell', 'ask', '400'],
    );
    const history = await taker.call('private/get_order_history_by_currency', { currency: 'BTC' });
    assert.ok(
      Array.isArray(history) && history.some((o) => o.orderId === taken.order.orderId),
      'the taker order is in its history',
    );

    await until(() => pushes.some((p) => p.channel === 'user.trades.future.BTC'));
    const tradePush = pushes.find((p) => p.channel === 'user.trades.future.BTC')!;
    assert.equal((tradePush.data as Array<{ tradeId: string }>)[0]!.tradeId, trade.tradeId);
    assert.ok(
      pushes.some((p) => p.channel === 'user.orders.any.any' && !p.snapshot),
      'an order change was pushed',
    );

    const book = await taker.call('public/get_order_book', { instrumentName: PERP });
    assert.deepEqual(book.asks[0], ['60500', '600']);
    const ticker = await taker.call('public/ticker', { instrumentName: PERP });
    assert.equal(ticker.lastPrice, '60500');
    assert.equal(ticker.bestAskPrice, '60500');
    await ws.close();
  });

  test('the public tape: recent trades by instrument and the trades channel, without orders or accounts', async () => {
    const ws = harness.ws(MAKER1);
    await ws.connect();
    const tape: SubscriptionPush[] = [];
    await ws.subscribe([`trades.${PERP}`], (push) => tape.push(push));
    const maker = harness.http(MAKER1);
    const taker = harness.http(TAKER);
    await maker.call('private/sell', {
      instrumentName: PERP,
      quantity: '30',
      price: '60500',
      postOnly: true,
    });
    const taken = await taker.call('private/buy', {
      instrumentName: PERP,
      quantity: '30',
      price: '60500',
      timeInforce: 'immediate_or_cancel',
    });
    const own = taken.trades[0]!;

    const { trades, hasMore } = await taker.call('public/get_last_trades_by_instrument', {
      instrumentName: PERP,
      count: 1,
    });
    assert.equal(hasMore, true, 'the first test traded on the perpetual too');
    assert.deepEqual(trades, [
      {
        tradeId: own.tradeId,
        tradeSeq: own.tradeSeq,
        timestamp: own.timestamp,
        tickDirection: own.tickDirection,
        instrumentName: PERP,
        direction: 'buy',
        price: '60500',
        quantity: '30',
        contracts: own.contracts,
        indexPrice: own.indexPrice,
        markPrice: own.markPrice,
      },
    ]);
    const ascending = await taker.call('public/get_last_trades_by_instrument', {
      instrumentName: PERP,
      sorting: 'asc',
      startSeq: own.tradeSeq - 1,
    });
    assert.deepEqual(
      ascending.trades.map((t) => t.tradeSeq),
      [own.tradeSeq - 1, own.tradeSeq],
    );
    assert.equal(ascending.hasMore, false);

    await until(() => tape.length > 0);
    assert.equal(tape[0]!.channel, `trades.${PERP}`);
    assert.deepEqual(tape[0]!.data, trades);
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
    assert.ok(Number(summary.balance) > 0, `balance ${summary.balance}`);
  });

  test('a refusal names the time-in-force key as the client spelled it', async () => {
    const taker = harness.http(TAKER);
    const market = { instrumentName: PERP, quantity: '10', type: 'market' as const };
    for (const key of ['timeInforce', 'timeInForce'] as const) {
      await assert.rejects(
        taker.call('private/sell', { ...market, [key]: 'good_til_day' }),
        (error) => error instanceof ApiError && error.code === 11029 && error.data?.field === key,
      );
    }
    // In an otocoConfig entry too.
    for (const key of ['timeInforce', 'timeInForce'] as const) {
      await assert.rejects(
        taker.call('private/buy', {
          instrumentName: PERP,
          quantity: '10',
          price: '50000',
          linkedOrderType: 'one_triggers_other',
          otocoConfig: [{ side: 'sell', type: 'market', [key]: 'good_til_day' }],
        }),
        (error) => error instanceof ApiError && error.data?.field === `otocoConfig[0].${key}`,
      );
    }
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

  test('cancel_all* filter by order type and, detailed, return the orders grouped by currency, type and instrument', async () => {
    const user = harness.http(3);
    const rest = await user.call('private/buy', {
      instrumentName: PERP,
      quantity: '10',
      price: '40000',
      postOnly: true,
    });
    const stop = await user.call('private/sell', {
      instrumentName: PERP,
      quantity: '10',
      type: 'stop_market',
      trigger: 'mark_price',
      triggerPrice: '40000',
    });
    assert.equal(stop.order.orderState, 'untriggered');
    await assert.rejects(
      user.call('private/cancel_all_by_currency', { currency: 'BTC', type: 'stop_all' as never }),
      (error) => error instanceof ApiError && error.data?.field === 'type',
    );

    const triggers = await user.call('private/cancel_all_by_currency', {
      currency: 'BTC',
      type: 'trigger_all',
      detailed: true,
    });
    assert.ok(Array.isArray(triggers), 'a list of trigger orders');
    assert.deepEqual(
      triggers.map((g) => [
        g.currency,
        g.type,
        g.instrumentName,
        g.result.map((o) => [o.orderId, o.orderState]),
      ]),
      [['BTC', 'trigger', PERP, [[stop.order.orderId, 'cancelled']]]],
    );
    assert.equal(
      (await user.call('private/get_order_state', { orderId: rest.order.orderId })).orderState,
      'open',
    );

    assert.equal(
      await user.call('private/cancel_all_by_instrument', { instrumentName: PERP, type: 'take' }),
      0,
    );
    const all = await user.call('private/cancel_all', { detailed: true });
    assert.ok(Array.isArray(all), 'a list of orders');
    assert.deepEqual(
      all.map((g) => [g.type, g.instrumentName, g.result.map((o) => o.orderId)]),
      [['limit', PERP, [rest.order.orderId]]],
    );
    assert.equal(all[0]!.result[0]!.cancelReason, 'user_request');
    assert.deepEqual(await user.call('private/cancel_all', { detailed: true }), []);
  });

  test('by label: open orders and cancel; user trades by instrument', async () => {
    const user = harness.http(3);
    const place = (label: string) =>
      user.call('private/buy', {
        instrumentName: PERP,
        quantity: '10',
        price: '40000',
        postOnly: true,
        label,
      });
    const [a, , c] = [await place('grid'), await place('other'), await place('grid')];
    const byLabel = await user.call('private/get_open_orders_by_label', { currency: 'BTC', label: 'grid' });
    assert.deepEqual(byLabel.map((o) => o.orderId).sort(), [a.order.orderId, c.order.orderId].sort());
    assert.equal(await user.call('private/cancel_by_label', { label: 'grid', currency: 'ETH' }), 0);
    assert.equal(await user.call('private/cancel_by_label', { label: 'grid' }), 2);
    assert.deepEqual(
      await user.call('private/get_open_orders_by_label', { currency: 'BTC', label: 'grid' }),
      [],
    );
    assert.equal(
      (await user.call('private/get_open_orders_by_label', { currency: 'BTC', label: 'other' })).length,
      1,
    );
    assert.equal(await user.call('private/cancel_all', {}), 1);

    // The first test's taker traded on the perpetual: the same trades by instrument as by currency.
    const taker = harness.http(TAKER);
    const byInstrument = await taker.call('private/get_user_trades_by_instrument', { instrumentName: PERP });
    const byCurrency = await taker.call('private/get_user_trades_by_currency', {
      currency: 'BTC',
      kind: 'future',
    });
    assert.ok(byInstrument.trades.length > 0, 'the taker has trades on the perpetual');
    assert.deepEqual(byInstrument, byCurrency);
    await assert.rejects(
      taker.call('private/get_user_trades_by_instrument', { instrumentName: 'NOPE' }),
      (error) => error instanceof ApiError && error.data?.field === 'instrumentName',
    );
  });

  test('errors speak wire units: band limits are prices, funds are decimals of the currency', async () => {
    const taker = harness.http(TAKER);
    // The ticker and the book show the band before an order is refused for it.
    const ticker = await taker.call('public/ticker', { instrumentName: PERP });
    const book = await taker.call('public/get_order_book', { instrumentName: PERP });
    assert.ok(ticker.minPrice !== null && ticker.maxPrice !== null, 'the ticker shows the band');
    assert.ok(
      Number(ticker.minPrice) < Number(ticker.markPrice) &&
        Number(ticker.markPrice) < Number(ticker.maxPrice),
      `band ${ticker.minPrice}..${ticker.maxPrice} around mark ${ticker.markPrice}`,
    );
    assert.deepEqual([book.minPrice, book.maxPrice], [ticker.minPrice, ticker.maxPrice]);
    await assert.rejects(
      taker.call('private/buy', { instrumentName: PERP, quantity: '10', price: '1000000' }),
      (error) =>
        error instanceof ApiError &&
        error.data?.field === 'price' &&
        error.data.maxPrice === ticker.maxPrice &&
        error.message.endsWith(String(error.data.maxPrice)),
    );
    const atEdge = await taker.call('private/buy', {
      instrumentName: PERP,
      quantity: '10',
      price: ticker.minPrice!,
      postOnly: true,
    });
    assert.equal(atEdge.order.orderState, 'open', 'the band edge itself is inside the band');
    await taker.call('private/cancel', { orderId: atEdge.order.orderId });
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

describe('ticker open interest and 24 h stats over the real engine', () => {
  const START = Date.UTC(2026, 10, 20, 12);
  let harness: Harness;
  let engine: EngineVenue;
  before(async () => {
    engine = await startEngineVenue(START);
    harness = await startHarness({ venue: engine });
  });
  after(() => harness.close());

  test('fills move them, the ticker channel pushes them, and trades leave the window on the virtual clock', async () => {
    const maker = harness.http(MAKER1);
    const taker = harness.http(TAKER);
    const ws = harness.ws(TAKER);
    await ws.connect();
    type Ticker = {
      openInterest?: string;
      stats?: { volume: string; high: string | null; low: string | null };
    };
    const pushes: Ticker[] = [];
    await ws.subscribe([`ticker.${PERP}`], (push) => pushes.push(push.data as Ticker));
    await until(() => pushes.length === 1);
    assert.equal(pushes[0]!.openInterest, '0');
    assert.deepEqual(pushes[0]!.stats, { volume: '0', high: null, low: null });

    await maker.call('private/sell', {
      instrumentName: PERP,
      quantity: '400',
      price: '60500',
      postOnly: true,
    });
    await taker.call('private/buy', {
      instrumentName: PERP,
      quantity: '400',
      price: '60500',
      timeInForce: 'immediate_or_cancel',
    });
    engine.clock.advance(30_000);
    await maker.call('private/buy', {
      instrumentName: PERP,
      quantity: '100',
      price: '60000',
      postOnly: true,
    });
    await taker.call('private/sell', {
      instrumentName: PERP,
      quantity: '100',
      price: '60000',
      timeInForce: 'immediate_or_cancel',
    });
    // The taker is long 300, the maker short 300; 500 traded between 60000 and 60500.
    const expected = { openInterest: '300', stats: { volume: '500', high: '60500', low: '60000' } };
    await until(() => pushes.at(-1)?.stats?.volume === '500');
    const traded = pushes.at(-1)!;
    assert.deepEqual({ openInterest: traded.openInterest, stats: traded.stats }, expected);
    const ticker = await taker.call('public/ticker', { instrumentName: PERP });
    assert.deepEqual({ openInterest: ticker.openInterest, stats: ticker.stats }, expected);

    // Both trades were in the first minute: they leave the window 24 h after its start, when the
    // engine asks to be woken (a `timer`, as the core service submits it).
    const leaves = START + 86_400_000;
    assert.equal(engine.venue.nextWakeup(), leaves);
    const before = pushes.length;
    engine.clock.set(leaves - 1);
    await engine.submit({ type: 'timer' });
    assert.equal((await taker.call('public/ticker', { instrumentName: PERP })).stats?.volume, '500');
    engine.clock.set(leaves);
    await engine.submit({ type: 'timer' });
    await until(() => pushes.at(-1)?.stats?.volume === '0');
    assert.equal(pushes.length, before + 1, 'one push when the trades leave, none before');
    assert.deepEqual(pushes.at(-1)!.stats, { volume: '0', high: null, low: null });
    assert.equal(pushes.at(-1)!.openInterest, '300', 'positions stay open');

    const spot = await taker.call('public/ticker', { instrumentName: 'BTC_USDC' });
    assert.equal(spot.openInterest, undefined, 'spot has no open interest');
    assert.deepEqual(spot.stats, { volume: '0', high: null, low: null });
    await ws.close();
  });
});
