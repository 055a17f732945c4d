/**
 * Method handlers act on the key's user's accounts only (src/api/methods/context.ts, trading.ts):
 * envelope writes land on the key's default account, a key of the same user may act on orders of
 * the user's other accounts, and another user's order is indistinguishable from a missing one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiError } from '../../sdk/errors.ts';
import { HttpClient } from '../../sdk/http-client.ts';
import { type EngineVenue, startEngineVenue } from '../support/engine-venue.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';

const PERP = 'BTC-PERPETUAL';
const TAKER = 0;
const MULTI = 3;

async function notFound(promise: Promise<unknown>): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof ApiError, String(error));
    assert.equal(error.errorName, 'order_not_found', error.message);
    return true;
  });
}

describe('method handlers: ownership of accounts and orders', () => {
  let harness: Harness;
  let engine: EngineVenue;
  before(async () => {
    engine = await startEngineVenue();
    harness = await startHarness({ venue: engine });
  });
  after(() => harness.close());

  /** A second key of the two-account user, whose default is that user's second account. */
  function secondAccountKey(): { client: HttpClient; accountId: number } {
    const multi = harness.credentials[MULTI]!;
    assert.equal(multi.accountIds.length, 2);
    const accountId = multi.accountIds[1]!;
    const { record, apiSecret } = harness.keyStore.createApiKey(
      { userId: multi.userId, roles: ['trade', 'taker'], defaultAccountId: accountId },
      engine.now(),
    );
    const client = new HttpClient({
      baseUrl: harness.baseUrl,
      credentials: { apiKey: record.apiKey, apiSecret },
      now: () => engine.now(),
    });
    return { client, accountId };
  }

  test("an order lands on the key's default account; the user's other key can read and cancel it", async () => {
    const first = harness.http(MULTI); // default: the user's first account
    const { client: second } = secondAccountKey();
    const placed = await second.call('private/buy', {
      instrumentName: PERP,
      quantity: '100',
      price: '40000',
      postOnly: true,
      label: 'second-account',
    });
    assert.equal(placed.order.orderState, 'open');
    const id = placed.order.orderId;

    // Only the second account's open orders list it.
    const secondOpen = await second.call('private/get_open_orders', {});
    assert.deepEqual(
      secondOpen.map((o) => o.orderId),
      [id],
    );
    const firstOpen = await first.call('private/get_open_orders', {});
    assert.ok(!firstOpen.some((o) => o.orderId === id), 'not on the first account');

    // The same user's other key acts on it: the cancel goes to the order's own account.
    assert.equal((await first.call('private/get_order_state', { orderId: id })).orderState, 'open');
    const cancelled = await first.call('private/cancel', { orderId: id });
    assert.equal(cancelled.orderState, 'cancelled');
    assert.equal(cancelled.cancelReason, 'user_request');
  });

  test("another user's order cannot be cancelled, edited or read: order_not_found", async () => {
    const owner = harness.http(TAKER);
    const stranger = harness.http(MULTI);
    const placed = await owner.call('private/sell', {
      instrumentName: PERP,
      quantity: '100',
      price: '90000',
      postOnly: true,
    });
    const id = placed.order.orderId;
    await notFound(stranger.call('private/get_order_state', { orderId: id }));
    await notFound(stranger.call('private/cancel', { orderId: id }));
    await notFound(stranger.call('private/edit', { orderId: id, quantity: '200', price: '90000' }));
    const still = await owner.call('private/get_order_state', { orderId: id });
    assert.equal(still.orderState, 'open');
    assert.equal(still.quantity, '100');
    await owner.call('private/cancel', { orderId: id });
  });

  test('get_order_book without depth answers up to 20 levels', async () => {
    const maker = harness.http(1);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const placed = await maker.call('private/buy', {
        instrumentName: PERP,
        quantity: '10',
        price: String(30_000 + i * 10),
        postOnly: true,
      });
      ids.push(placed.order.orderId);
    }
    const book = await harness.http(TAKER).call('public/get_order_book', { instrumentName: PERP });
    assert.ok(book.bids.length >= 12 && book.bids.length <= 20, `bids: ${book.bids.length}`);
    const shallow = await harness
      .http(TAKER)
      .call('public/get_order_book', { instrumentName: PERP, depth: 5 });
    assert.equal(shallow.bids.length, 5);
    for (const orderId of ids) await maker.call('private/cancel', { orderId });
  });

  test('get_last_trades_by_instrument: 10 trades by default; hasMore only when more match', async () => {
    const maker = harness.http(1);
    const taker = harness.http(TAKER);
    const resting = await maker.call('private/sell', {
      instrumentName: PERP,
      quantity: '120',
      price: '61000',
      postOnly: true,
    });
    for (let i = 0; i < 12; i++) {
      await taker.call('private/buy', {
        instrumentName: PERP,
        quantity: '10',
        price: '61000',
        timeInforce: 'immediate_or_cancel',
      });
    }
    const all = await taker.call('public/get_last_trades_by_instrument', {
      instrumentName: PERP,
      count: 100,
    });
    const total = all.trades.length;
    assert.ok(total >= 12 && total < 100, `trades: ${total}`);
    assert.equal(all.hasMore, false);
    const byDefault = await taker.call('public/get_last_trades_by_instrument', { instrumentName: PERP });
    assert.equal(byDefault.trades.length, 10);
    assert.equal(byDefault.hasMore, true);
    const exact = await taker.call('public/get_last_trades_by_instrument', {
      instrumentName: PERP,
      count: total,
    });
    assert.equal(exact.trades.length, total);
    assert.equal(exact.hasMore, false, 'every matching trade is on the page');
    const newest = byDefault.trades[0]!;
    const one = await taker.call('public/get_last_trades_by_instrument', {
      instrumentName: PERP,
      startSeq: newest.tradeSeq,
      endSeq: newest.tradeSeq,
    });
    assert.deepEqual(
      one.trades.map((t) => t.tradeSeq),
      [newest.tradeSeq],
      'endSeq is inclusive',
    );
    const state = await maker.call('private/get_order_state', { orderId: resting.order.orderId });
    assert.equal(state.orderState, 'filled');
  });

  test('cancel_all_by_instrument cancels on that instrument only', async () => {
    const client = harness.http(TAKER);
    const btc = await client.call('private/buy', {
      instrumentName: PERP,
      quantity: '100',
      price: '35000',
      postOnly: true,
    });
    const eth = await client.call('private/buy', {
      instrumentName: 'ETH-PERPETUAL',
      quantity: '100',
      price: '1500',
      postOnly: true,
    });
    const count = await client.call('private/cancel_all_by_instrument', { instrumentName: PERP });
    assert.equal(count, 1);
    assert.equal(
      (await client.call('private/get_order_state', { orderId: btc.order.orderId })).orderState,
      'cancelled',
    );
    assert.equal(
      (await client.call('private/get_order_state', { orderId: eth.order.orderId })).orderState,
      'open',
    );
    await client.call('private/cancel', { orderId: eth.order.orderId });
  });

  test('get_open_orders filters by kind', async () => {
    const client = harness.http(TAKER);
    const placed = await client.call('private/buy', {
      instrumentName: PERP,
      quantity: '100',
      price: '36000',
      postOnly: true,
    });
    const ids = async (kind: 'future' | 'option') =>
      (await client.call('private/get_open_orders', { kind })).map((o) => o.orderId);
    assert.ok((await ids('future')).includes(placed.order.orderId));
    assert.deepEqual(await ids('option'), []);
    const anyKind = (await client.call('private/get_open_orders', { kind: 'any' })).map((o) => o.orderId);
    assert.ok(anyKind.includes(placed.order.orderId), 'kind any lists every kind');
    const triggers = await client.call('private/get_open_orders', { type: 'trigger_all' });
    assert.deepEqual(
      triggers.map((o) => o.orderId),
      [],
      'a limit order is not a trigger order',
    );
    await client.call('private/cancel', { orderId: placed.order.orderId });
  });

  test('get_positions filters by kind', async () => {
    // The taker holds a BTC-PERPETUAL position from the trades above.
    const client = harness.http(TAKER);
    const names = async (kind: 'future' | 'option') =>
      (await client.call('private/get_positions', { currency: 'BTC', kind })).map((p) => p.instrumentName);
    assert.ok((await names('future')).includes(PERP));
    assert.deepEqual(await names('option'), []);
  });

  test('an edit that crosses answers the trades it made', async () => {
    const maker = harness.http(1);
    const taker = harness.http(TAKER);
    const ask = await maker.call('private/sell', {
      instrumentName: PERP,
      quantity: '10',
      price: '62000',
      postOnly: true,
    });
    const bid = await taker.call('private/buy', { instrumentName: PERP, quantity: '10', price: '50000' });
    const edited = await taker.call('private/edit', {
      orderId: bid.order.orderId,
      quantity: '10',
      price: '62000',
    });
    assert.equal(edited.order.orderState, 'filled');
    assert.equal(edited.trades.length, 1);
    assert.equal(edited.trades[0]!.price, '62000');
    assert.equal(
      (await maker.call('private/get_order_state', { orderId: ask.order.orderId })).orderState,
      'filled',
    );
  });
});
