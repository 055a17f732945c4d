/**
 * Pushes across a WebSocket reconnect of the typed client (stop 45), over the real engine: while
 * the client is away, orders are placed, cancelled and filled. The client hears the drop
 * (`onDisconnected`) and the return (`onReconnected`); after it every channel counts from seq 1
 * again with no gap reported. A channel with a snapshot (user.orders, book, user.portfolio)
 * starts with one showing what happened meanwhile; one without (user.trades, user.changes) does
 * not replay it: the history methods have it (docs/decisions.md, "What a reconnect restores").
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { SubscriptionPush } from '../../sdk/types.ts';
import { WsClient } from '../../sdk/ws-client.ts';
import { type EngineVenue, startEngineVenue } from '../support/engine-venue.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { until } from '../support/until.ts';

const PERP = 'BTC-PERPETUAL';
const CHANNELS = [
  'user.orders.any.BTC',
  'user.trades.future.BTC',
  'user.changes.future.BTC',
  `book.${PERP}`,
  'user.portfolio.BTC',
];

describe('pushes across a reconnect of the sdk client', () => {
  let harness: Harness;
  let engine: EngineVenue;
  before(async () => {
    engine = await startEngineVenue();
    harness = await startHarness({ venue: engine, clock: engine.clock });
  });
  after(() => harness.close());

  test('what changed while away: a fresh snapshot where the channel has one, nothing replayed where not, seq from 1, no gap', async () => {
    const credential = harness.credentials[2]!;
    // Long enough that the commands below run while it is away (checked: not connected after them).
    const ws = new WsClient({
      url: harness.wsUrl,
      credentials: { apiKey: credential.apiKey, apiSecret: credential.apiSecret },
      now: () => engine.now(),
      reconnectDelayMs: 400,
    });
    const http = harness.http(2);
    const maker = harness.http(3);
    const events: string[] = [];
    const gaps: unknown[] = [];
    /** Pushes per channel, in connection order: [connection number, push]. */
    const pushes: Array<[number, SubscriptionPush]> = [];
    let connection = 1;
    ws.onDisconnected = ({ code }) => events.push(`disconnected ${code}`);
    ws.onGap = (gap) => gaps.push(gap);
    const back = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no reconnect: ${events.join(', ')}`)), 5_000);
      ws.onReconnected = () => {
        clearTimeout(timer);
        events.push('reconnected');
        resolve();
      };
    });
    ws.onReconnectError = (error) => events.push(`${error.kind}: ${error.message}`);
    try {
      await ws.connect();
      await ws.auth();
      await ws.subscribe(CHANNELS, (push) => pushes.push([connection, push]));
      const on = (channel: string, which: number) =>
        pushes.filter(([n, p]) => n === which && p.channel === channel).map(([, p]) => p);

      const before = await http.call('private/buy', { instrumentName: PERP, quantity: '10', price: '59000' });
      await maker.call('private/sell', {
        instrumentName: PERP,
        quantity: '20',
        price: '60100',
        postOnly: true,
      });
      await ws.call('public/test', {});
      const trades1 = await http.call('private/buy', {
        instrumentName: PERP,
        quantity: '10',
        type: 'market',
      });
      await until(() => on('user.trades.future.BTC', 1).length === 1);

      ws.dropConnection();
      await until(() => events.length === 1);
      connection = 2;
      // While away: a new order, the first one cancelled, a fill.
      const placed = await http.call('private/buy', { instrumentName: PERP, quantity: '10', price: '59100' });
      const stop = await http.call('private/sell', {
        instrumentName: PERP,
        quantity: '10',
        type: 'stop_market',
        trigger: 'mark_price',
        triggerPrice: '58000',
      });
      await http.call('private/cancel', { orderId: before.order.orderId });
      const away = await http.call('private/buy', { instrumentName: PERP, quantity: '10', type: 'market' });
      assert.equal(away.trades.length, 1);
      assert.equal(ws.connected, false, 'the commands ran while the client was away');
      await back;
      await ws.call('public/test', {});
      assert.deepEqual(events, ['disconnected 1006', 'reconnected']);

      // Channels with a snapshot start again at seq 1 with one, showing what happened meanwhile.
      const [orders] = on('user.orders.any.BTC', 2);
      assert.deepEqual([orders?.seq, orders?.snapshot], [1, true]);
      assert.deepEqual(
        orders!.data,
        await http.call('private/get_open_orders_by_currency', { currency: 'BTC' }),
      );
      assert.deepEqual(
        (orders!.data as Array<{ orderId: string }>).map((o) => o.orderId),
        [placed.order.orderId, stop.order.orderId],
      );
      const [book] = on(`book.${PERP}`, 2);
      assert.deepEqual([book?.seq, book?.snapshot], [1, true]);
      assert.deepEqual(
        (book!.data as { bids: Array<[string, string]> }).bids.map(([price]) => price),
        ['59100'],
      );
      const [summary] = on('user.portfolio.BTC', 2);
      assert.deepEqual([summary?.seq, summary?.snapshot], [1, true]);
      assert.deepEqual(summary!.data, await http.call('private/get_account_summary', { currency: 'BTC' }));
      // Channels without one replay nothing: the fill made while away is in the history only.
      assert.deepEqual(on('user.trades.future.BTC', 2), []);
      assert.deepEqual(on('user.changes.future.BTC', 2), []);
      const history = await http.call('private/get_user_trades_by_currency', {
        currency: 'BTC',
        startTimestamp: trades1.trades[0]!.timestamp,
        sorting: 'asc',
      });
      assert.deepEqual(
        history.trades.map((t) => t.tradeId),
        [...trades1.trades, ...away.trades].map((t) => t.tradeId),
        'the history has what the pushes missed',
      );

      // Later changes push from seq 1 (after the snapshot, 2) on the new connection.
      await maker.call('private/sell', {
        instrumentName: PERP,
        quantity: '10',
        price: '60100',
        postOnly: true,
      });
      const filled = await http.call('private/buy', { instrumentName: PERP, quantity: '10', type: 'market' });
      await until(() => on('user.trades.future.BTC', 2).length === 1);
      await ws.call('public/test', {});
      const [trade] = on('user.trades.future.BTC', 2);
      assert.deepEqual([trade?.seq, trade?.snapshot], [1, undefined]);
      assert.deepEqual(trade!.data, filled.trades);
      assert.equal(on('user.changes.future.BTC', 2)[0]?.seq, 1);
      for (const channel of CHANNELS) {
        for (const which of [1, 2]) {
          const seqs = on(channel, which).map((p) => p.seq);
          assert.deepEqual(
            seqs,
            seqs.map((_, i) => i + 1),
            `${channel} on connection ${which}`,
          );
        }
      }
      assert.deepEqual(gaps, []);
    } finally {
      await ws.close();
    }
  });
});
