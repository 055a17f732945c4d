/**
 * What `user.orders` and `user.trades` push, through the sdk over the real engine (review of
 * stop 43): a linked order's pushes carry its links; each command's trades are one array.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { SubscriptionPush } from '../../sdk/types.ts';
import { type EngineVenue, startEngineVenue } from '../support/engine-venue.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { until } from '../support/until.ts';

const PERP = 'BTC-PERPETUAL';
const ORDERS = 'user.orders.any.BTC';

describe('user pushes over the real engine', () => {
  let harness: Harness;
  let engine: EngineVenue;
  before(async () => {
    engine = await startEngineVenue();
    harness = await startHarness({ venue: engine });
  });
  after(() => harness.close());

  test('OCO: each member’s last push equals get_order_state, ocoRef and triggerFillCondition included', async () => {
    const ws = harness.ws(0);
    await ws.connect();
    await ws.auth();
    const pushes: SubscriptionPush[] = [];
    await ws.subscribe([ORDERS], (push) => pushes.push(push));
    const client = harness.http(0);
    const placed = await client.call('private/sell', {
      instrumentName: PERP,
      quantity: '100',
      price: '61000',
      linkedOrderType: 'one_cancels_other',
      otocoConfig: [
        { side: 'sell', quantity: '100', type: 'stop_market', trigger: 'mark_price', triggerPrice: '59000' },
      ],
    });
    const ocoRef = placed.order.ocoRef;
    assert.ok(ocoRef);
    const last = new Map<string, Record<string, unknown>>();
    await until(() => {
      for (const push of pushes.filter((p) => !p.snapshot))
        last.set((push.data as { orderId: string }).orderId, push.data as Record<string, unknown>);
      return last.size === 2;
    });
    for (const [orderId, pushed] of last) {
      const state = await client.call('private/get_order_state', { orderId });
      assert.deepEqual(pushed, state, `${orderId}: its push is its state`);
      assert.equal(state.ocoRef, ocoRef);
      assert.equal(state.triggerFillCondition, 'first_hit');
    }
    await client.call('private/cancel', { orderId: placed.order.orderId });
    await ws.close();
  });

  test('a market buy that sweeps three levels: one user.trades push of three trades, as the tape', async () => {
    const ws = harness.ws(0);
    await ws.connect();
    await ws.auth();
    const pushes: SubscriptionPush[] = [];
    const channels = ['user.trades.future.BTC', 'user.trades.any.any', `trades.${PERP}`];
    await ws.subscribe(channels, (push) => pushes.push(push));
    const maker = harness.http(1);
    for (const price of ['60500', '60510', '60520'])
      await maker.call('private/sell', { instrumentName: PERP, quantity: '10', price, postOnly: true });
    const taken = await harness.http(0).call('private/buy', {
      instrumentName: PERP,
      quantity: '30',
      type: 'market',
    });
    const ids = taken.trades.map((t) => t.tradeId);
    assert.equal(ids.length, 3);
    await until(() => channels.every((channel) => pushes.some((p) => p.channel === channel)));
    for (const channel of channels) {
      const own = pushes.filter((p) => p.channel === channel);
      assert.deepEqual(
        own.map((p) => [p.seq, (p.data as Array<{ tradeId: string }>).map((t) => t.tradeId)]),
        [[1, ids]],
        channel,
      );
    }
    assert.deepEqual(
      pushes.find((p) => p.channel === 'user.trades.any.any')!.data,
      taken.trades,
      'the push is the answer’s trades',
    );
    await ws.close();
  });

  test('user.changes: per command and instrument, the orders as it left them, its trades and the position', async () => {
    const [takerWs, makerWs] = [harness.ws(2), harness.ws(3)];
    const pushes: SubscriptionPush[] = [];
    for (const ws of [takerWs, makerWs]) {
      await ws.connect();
      await ws.auth();
    }
    await takerWs.subscribe([`user.changes.${PERP}.100ms`], (push) => pushes.push(push));
    await makerWs.subscribe(['user.changes.future.BTC.raw'], (push) => pushes.push(push));
    const maker = harness.http(3);
    const resting = [];
    for (const price of ['60500', '60510'])
      resting.push(
        (await maker.call('private/sell', { instrumentName: PERP, quantity: '10', price, postOnly: true }))
          .order,
      );
    const taker = harness.http(2);
    const taken = await taker.call('private/buy', { instrumentName: PERP, quantity: '20', type: 'market' });
    await until(() => pushes.filter((p) => p.channel === `user.changes.${PERP}.100ms`).length === 1);
    await until(() => pushes.filter((p) => p.channel === 'user.changes.future.BTC.raw').length === 3);
    type Changes = {
      instrumentName: string;
      orders: Array<{ orderId: string; orderState: string }>;
      trades: Array<{ tradeId: string }>;
      positions: Array<Record<string, unknown>>;
    };
    const [takers] = pushes
      .filter((p) => p.channel === `user.changes.${PERP}.100ms`)
      .map((p) => p.data as Changes);
    assert.equal(takers!.instrumentName, PERP);
    assert.deepEqual(takers!.orders, [taken.order], 'the order as the command left it: filled');
    assert.deepEqual(takers!.trades, taken.trades);
    // As get_positions lists it (which values the account's positions by another path).
    const listed = async (client: typeof taker) =>
      (await client.call('private/get_positions', {})).find((p) => p.instrumentName === PERP);
    assert.deepEqual(takers!.positions, [await listed(taker)]);
    // The maker: each resting order's own push, then the taker's command in one push with both
    // orders filled, both trades and the position after them.
    const makers = pushes
      .filter((p) => p.channel === 'user.changes.future.BTC.raw')
      .map((p) => p.data as Changes);
    assert.deepEqual(
      makers.map((c) => [
        c.orders.map((o) => [o.orderId, o.orderState]),
        c.trades.length,
        c.positions.length,
      ]),
      [
        [[[resting[0]!.orderId, 'open']], 0, 0],
        [[[resting[1]!.orderId, 'open']], 0, 0],
        [
          [
            [resting[0]!.orderId, 'filled'],
            [resting[1]!.orderId, 'filled'],
          ],
          2,
          1,
        ],
      ],
    );
    const makerPosition = makers[2]!.positions[0]!;
    assert.deepEqual([makerPosition.direction, makerPosition.size], ['sell', '-20']);
    assert.deepEqual(makerPosition, await listed(maker));
    await takerWs.close();
    await makerWs.close();
  });

  test('user.portfolio: the snapshot and each push are what get_account_summary answers then', async () => {
    const ws = harness.ws(2);
    await ws.connect();
    await ws.auth();
    const pushes: SubscriptionPush[] = [];
    await ws.subscribe(['user.portfolio.btc'], (push) => pushes.push(push));
    const http = harness.http(2);
    const summary = () => http.call('private/get_account_summary', { currency: 'BTC' });
    await until(() => pushes.length === 1);
    assert.equal(pushes[0]!.snapshot, true);
    assert.deepEqual(pushes[0]!.data, await summary());
    // A resting order claims margin: one push, the summary after it.
    const order = await http.call('private/buy', { instrumentName: PERP, quantity: '10', price: '50000' });
    await until(() => pushes.length === 2);
    assert.deepEqual(pushes[1]!.data, await summary());
    assert.notDeepEqual(pushes[1]!.data, pushes[0]!.data);
    await http.call('private/cancel', { orderId: order.order.orderId });
    await until(() => pushes.length === 3);
    assert.deepEqual(pushes[2]!.data, pushes[0]!.data, 'the order margin released');
    // Another user's order changes nothing here.
    await harness.http(1).call('private/buy', { instrumentName: PERP, quantity: '10', price: '50000' });
    await ws.call('public/test', {});
    assert.equal(pushes.length, 3);
    await ws.close();
  });
});
