/**
 * History and listing params through the whole service (real SQLite read store, engine, gateway,
 * typed sdk), on the virtual clock: the handlers in src/api/methods/trading.ts pass `offset`,
 * `kind`, `endTimestamp` and the `includeOld` default on to the history queries, and `kind:
 * "combo"` (src/api/methods/context.ts, kindMatches) finds an option_combo order among the open
 * orders.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiError } from '../../sdk/errors.ts';
import type { HttpClient } from '../../sdk/http-client.ts';
import { callSpread } from '../support/combo-picks.ts';
import { startTestService, type TestService } from '../support/service-harness.ts';

const DAY = 86_400_000;
const OPTION_TICK = 0.0005;

/** A post-only buy that rests, cancelled at once: history with `includeUnfilled`. */
async function cancelledBuy(client: HttpClient, instrumentName: string, price: string): Promise<string> {
  // Perpetuals trade in multiples of 10 USD, options in coin.
  const quantity = instrumentName.endsWith('-PERPETUAL') ? '10' : '1';
  const placed = await client.call('private/buy', { instrumentName, quantity, price, postOnly: true });
  assert.equal(placed.order.orderState, 'open', `${instrumentName} at ${price} rests`);
  const cancelled = await client.call('private/cancel', { orderId: placed.order.orderId });
  assert.equal(cancelled.orderState, 'cancelled', 'cancelled');
  return placed.order.orderId;
}

async function markOf(client: HttpClient, instrumentName: string): Promise<number> {
  return Number((await client.call('public/ticker', { instrumentName })).markPrice);
}

/** A price on the option tick grid well under the option's mark (inside the band). */
async function optionBid(client: HttpClient, instrumentName: string): Promise<string> {
  const mark = await markOf(client, instrumentName);
  const price = Math.floor((mark * 0.8) / OPTION_TICK) * OPTION_TICK;
  assert.ok(price > 0, `${instrumentName}: mark ${mark} leaves room for a bid`);
  return price.toFixed(4);
}

async function orderIds(
  client: HttpClient,
  params: {
    currency: string;
    kind?: 'future' | 'option';
    count?: number;
    offset?: number;
    historical?: boolean;
    includeOld?: boolean;
  },
): Promise<string[]> {
  const orders = await client.call('private/get_order_history_by_currency', {
    includeUnfilled: true,
    ...params,
  });
  assert.ok(Array.isArray(orders), 'without withContinuation the answer is a list');
  return orders.map((order) => order.orderId);
}

describe('history params through the API', () => {
  let running: TestService;
  before(async () => {
    running = await startTestService({ config: { simulator: false } });
  });
  after(() => running.close());

  test('order history: offset skips that many rows of the same query', async () => {
    const client = running.http(2);
    const placed: string[] = [];
    for (let i = 0; i < 4; i++) placed.push(await cancelledBuy(client, 'ETH-PERPETUAL', String(1500 + i)));
    const whole = await orderIds(client, { currency: 'ETH', count: 4 });
    assert.deepEqual(whole, [...placed].reverse(), 'newest first');
    const skipped = await orderIds(client, { currency: 'ETH', count: 4, offset: 2 });
    assert.deepEqual(skipped, whole.slice(2), 'offset 2 leaves out the two newest');
    const zero = await orderIds(client, { currency: 'ETH', count: 4, offset: 0 });
    assert.deepEqual(zero, whole, 'offset 0 skips nothing');
  });

  test('order history: kind keeps the orders on instruments of that kind', async () => {
    const client = running.http(0);
    const { long } = await callSpread(client);
    const future = await cancelledBuy(client, 'BTC-PERPETUAL', '40000');
    const option = await cancelledBuy(client, long, await optionBid(client, long));
    const all = await orderIds(client, { currency: 'BTC' });
    assert.ok(all.includes(future) && all.includes(option), 'without kind: both');
    const futures = await orderIds(client, { currency: 'BTC', kind: 'future' });
    assert.ok(futures.includes(future), 'kind future: the perpetual order');
    assert.ok(!futures.includes(option), 'kind future: not the option order');
    const options = await orderIds(client, { currency: 'BTC', kind: 'option' });
    assert.ok(options.includes(option), 'kind option: the option order');
    assert.ok(!options.includes(future), 'kind option: not the perpetual order');
  });

  test('order history by instrument: that instrument’s orders only, paged as by currency', async () => {
    const client = running.http(3);
    const perp: string[] = [];
    for (let i = 0; i < 3; i++) perp.push(await cancelledBuy(client, 'BTC-PERPETUAL', String(41000 + i)));
    // A linear product is filed under BTC and USDC; its rows come by its own name.
    const linear = await cancelledBuy(client, 'BTC_USDC-PERPETUAL', '41000');
    const other = await cancelledBuy(client, 'ETH-PERPETUAL', '1500');
    const ids = async (instrumentName: string, extra: Record<string, unknown> = {}) => {
      const orders = await client.call('private/get_order_history_by_instrument', {
        instrumentName,
        includeUnfilled: true,
        ...extra,
      });
      assert.ok(Array.isArray(orders));
      return orders.map((order) => order.orderId);
    };
    assert.deepEqual(await ids('BTC-PERPETUAL'), [...perp].reverse());
    assert.deepEqual(await ids('BTC_USDC-PERPETUAL'), [linear]);
    assert.deepEqual(await ids('ETH-PERPETUAL'), [other]);
    assert.deepEqual(await ids('BTC-PERPETUAL', { count: 2, offset: 1 }), [perp[1], perp[0]]);
    assert.deepEqual(await ids('BTC-PERPETUAL', { includeUnfilled: false }), [], 'nothing filled');
    // Walking with continuation tokens sees each order once.
    const first = await client.call('private/get_order_history_by_instrument', {
      instrumentName: 'BTC-PERPETUAL',
      includeUnfilled: true,
      count: 2,
      withContinuation: true,
    });
    assert.ok(!Array.isArray(first) && first.continuation !== null);
    const second = await client.call('private/get_order_history_by_instrument', {
      instrumentName: 'BTC-PERPETUAL',
      includeUnfilled: true,
      count: 2,
      withContinuation: true,
      continuation: first.continuation,
    });
    assert.ok(!Array.isArray(second));
    assert.deepEqual(
      [...first.orders, ...second.orders].map((o) => o.orderId),
      [...perp].reverse(),
    );
    assert.equal(second.continuation, null);
    await assert.rejects(
      client.call('private/get_order_history_by_instrument', { instrumentName: 'BTC-NOPE' }),
      (error: unknown) =>
        error instanceof ApiError &&
        error.errorName === 'invalid_instrument' &&
        (error.data as { field?: string }).field === 'instrumentName',
    );
  });

  test('user trades by order: that order’s fills only, newest first (asc reverses); another user’s order is not found', async () => {
    const taker = running.http(0);
    const maker = running.http(1);
    const instrumentName = 'ETH-PERPETUAL';
    const price = String(Math.round(await markOf(taker, instrumentName)));
    const resting = await maker.call('private/sell', {
      instrumentName,
      quantity: '30',
      price,
      postOnly: true,
    });
    const taken: string[] = [];
    for (let i = 0; i < 3; i++) {
      const bought = await taker.call('private/buy', {
        instrumentName,
        quantity: '10',
        price,
        timeInforce: 'immediate_or_cancel',
      });
      taken.push(...bought.trades.map((t) => t.tradeId));
      // Another order of the maker trades between the fills: a bid the taker sells into.
      const bid = String(Number(price) - 1);
      await maker.call('private/buy', { instrumentName, quantity: '1', price: bid, postOnly: true });
      await taker.call('private/sell', { instrumentName, quantity: '1', type: 'market' });
    }
    assert.equal(taken.length, 3);
    const byOrder = await maker.call('private/get_user_trades_by_order', { orderId: resting.order.orderId });
    assert.deepEqual(
      byOrder.map((t) => [t.tradeId, t.orderId, t.liquidity]),
      [...taken].reverse().map((id) => [id, resting.order.orderId, 'M']),
    );
    const ascending = await maker.call('private/get_user_trades_by_order', {
      orderId: resting.order.orderId,
      sorting: 'asc',
    });
    assert.deepEqual(
      ascending.map((t) => t.tradeId),
      taken,
    );
    const unfilled = await maker.call('private/sell', {
      instrumentName,
      quantity: '1',
      price: String(Number(price) * 1.01),
      postOnly: true,
    });
    assert.deepEqual(
      await maker.call('private/get_user_trades_by_order', { orderId: unfilled.order.orderId }),
      [],
    );
    await assert.rejects(
      taker.call('private/get_user_trades_by_order', { orderId: resting.order.orderId }),
      (error: unknown) => error instanceof ApiError && error.errorName === 'order_not_found',
    );
  });

  test('user trades: endTimestamp leaves out the trades after it', async () => {
    const taker = running.http(0);
    const maker = running.http(1);
    const instrumentName = 'BTC-PERPETUAL';
    const price = String(Math.round(await markOf(taker, instrumentName)));
    const trade = async () => {
      await maker.call('private/sell', { instrumentName, quantity: '10', price, postOnly: true });
      const bought = await taker.call('private/buy', {
        instrumentName,
        quantity: '10',
        price,
        timeInforce: 'immediate_or_cancel',
      });
      assert.equal(bought.trades.length, 1, 'one trade');
      return bought.trades[0]!;
    };
    const first = await trade();
    running.clock.advance(10_000);
    const second = await trade();
    assert.ok(second.timestamp > first.timestamp, `distinct times: ${first.timestamp}, ${second.timestamp}`);

    const byCurrency = async (endTimestamp?: number) =>
      (
        await taker.call('private/get_user_trades_by_currency', {
          currency: 'BTC',
          count: 1000,
          ...(endTimestamp === undefined ? {} : { endTimestamp }),
        })
      ).trades.map((t) => t.tradeId);
    const byInstrument = async (endTimestamp?: number) =>
      (
        await taker.call('private/get_user_trades_by_instrument', {
          instrumentName,
          count: 1000,
          ...(endTimestamp === undefined ? {} : { endTimestamp }),
        })
      ).trades.map((t) => t.tradeId);
    for (const [name, list] of [
      ['by currency', byCurrency],
      ['by instrument', byInstrument],
    ] as const) {
      const all = await list();
      assert.ok(all.includes(first.tradeId) && all.includes(second.tradeId), `${name}: both without end`);
      const early = await list(first.timestamp);
      assert.ok(early.includes(first.tradeId), `${name}: the trade at endTimestamp is in (inclusive)`);
      assert.ok(!early.includes(second.tradeId), `${name}: the later trade is left out`);
      const late = await list(second.timestamp);
      assert.ok(late.includes(second.tradeId), `${name}: both up to the later trade's time`);
    }
  });

  test("open orders: kind combo finds an option_combo order, kind option doesn't", async () => {
    const client = running.http(2);
    const { combo, long, short } = await callSpread(client);
    // A sell well above the spread's value: it rests.
    const net = (await markOf(client, long)) - (await markOf(client, short));
    const price = (Math.max(1, Math.round((net * 1.2) / 0.0001)) * 0.0001).toFixed(4);
    const placed = await client.call('private/sell', {
      instrumentName: combo,
      quantity: '1',
      price,
      postOnly: true,
    });
    assert.equal(placed.order.orderState, 'open', 'the combo order rests');
    const id = placed.order.orderId;
    const open = async (kind: 'combo' | 'option_combo' | 'option' | 'future_combo') =>
      (await client.call('private/get_open_orders', { kind })).map((o) => o.orderId);
    assert.ok((await open('combo')).includes(id), 'kind combo: the option_combo order');
    assert.ok((await open('option_combo')).includes(id), 'kind option_combo: the order');
    assert.ok(!(await open('option')).includes(id), 'kind option: not a combo order');
    assert.ok(!(await open('future_combo')).includes(id), 'kind future_combo: not an option combo');
    const byCurrency = (
      await client.call('private/get_open_orders_by_currency', { currency: 'BTC', kind: 'combo' })
    ).map((o) => o.orderId);
    assert.ok(byCurrency.includes(id), 'by currency, kind combo: the option_combo order');
    await client.call('private/cancel', { orderId: id });
  });
});

test('order history: includeOld defaults to false (historical, older than 2 days)', async () => {
  const running = await startTestService({ config: { simulator: false } });
  try {
    const client = running.http(0);
    const old = await cancelledBuy(client, 'BTC-PERPETUAL', '40000');
    running.clock.advance(3 * DAY);
    const recent = await cancelledBuy(client, 'BTC-PERPETUAL', '40001');
    running.clock.advance(2_000); // past the 1 s indexing delay of historical queries
    const byDefault = await orderIds(client, { currency: 'BTC', historical: true });
    assert.ok(byDefault.includes(recent), 'the order closed 2 s ago is historical');
    assert.ok(!byDefault.includes(old), 'closed 3 days ago: left out without includeOld');
    const explicit = await orderIds(client, { currency: 'BTC', historical: true, includeOld: false });
    assert.deepEqual(explicit, byDefault, 'the default is includeOld: false');
    const withOld = await orderIds(client, { currency: 'BTC', historical: true, includeOld: true });
    assert.ok(withOld.includes(old) && withOld.includes(recent), 'includeOld: true lists both');
  } finally {
    await running.close();
  }
});
