/** The gateway over WebSocket, through the sdk, against a real server (fake venue). */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { ApiError } from '../../sdk/errors.ts';
import type { SubscriptionPush } from '../../sdk/types.ts';
import { VirtualClock } from '../../src/app/clock.ts';
import { FakeVenue } from '../support/fake-venue.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { until } from '../support/until.ts';

const PERP = 'BTC-PERPETUAL';

describe('gateway over WebSocket', () => {
  let harness: Harness;
  let venue: FakeVenue;
  let clock: VirtualClock;
  before(async () => {
    venue = new FakeVenue();
    clock = new VirtualClock(venue.now());
    harness = await startHarness({ venue, clock });
  });
  after(() => harness.close());

  test('only public methods before public/auth; private ones after', async () => {
    const client = harness.ws(0);
    await client.connect();
    assert.equal(await client.call('public/time', {}), venue.now());
    await assert.rejects(
      client.call('private/get_open_orders', {}),
      (e) => e instanceof ApiError && e.code === 10000,
    );
    const auth = await client.auth();
    assert.equal(auth.userId, harness.credentials[0]!.userId);
    assert.deepEqual(await client.call('private/get_open_orders', {}), []);
    await client.close();
  });

  test('bad frames get error answers and the session lives on', async () => {
    const client = harness.ws(0);
    await client.connect();
    const raw = new Promise<unknown>((resolve) => {
      const socket = new WebSocket(harness.wsUrl);
      socket.on('open', () => socket.send('not json'));
      socket.on('message', (data) => {
        resolve(JSON.parse(data.toString()));
        socket.close();
      });
    });
    const notJson = (await raw) as { error: { code: number; data: unknown } };
    assert.deepEqual([notJson.error.code, notJson.error.data], [-32700, { field: 'message' }]);
    await assert.rejects(
      (client.call as (m: string, p: object) => Promise<unknown>)('public/nope', {}),
      (e) => e instanceof ApiError && e.code === -32601,
    );
    assert.equal(typeof (await client.call('public/time', {})), 'number');
    await client.close();
  });

  test('user.orders: snapshot first, then every change, with per-channel seq', async () => {
    const client = harness.ws(1);
    await client.connect();
    await client.auth();
    const http = harness.http(1);
    const resting = await http.call('private/buy', { instrumentName: PERP, quantity: '10', price: '40000' });
    const pushes: SubscriptionPush[] = [];
    const channel = 'user.orders.future.BTC';
    assert.deepEqual(await client.subscribe([channel], (push) => pushes.push(push)), [channel]);
    await until(() => pushes.length === 1);
    assert.equal(pushes[0]!.seq, 1);
    assert.equal(pushes[0]!.snapshot, true);
    assert.deepEqual(
      (pushes[0]!.data as Array<{ orderId: string }>).map((o) => o.orderId),
      [resting.order.orderId],
    );
    await http.call('private/cancel', { orderId: resting.order.orderId });
    await http.call('private/buy', { instrumentName: PERP, quantity: '10', price: '41000' });
    await until(() => pushes.length === 3);
    assert.deepEqual(
      pushes.map((p) => p.seq),
      [1, 2, 3],
    );
    assert.equal((pushes[1]!.data as { orderState: string }).orderState, 'cancelled');
    // Another user's orders never arrive on this channel.
    await harness.http(0).call('private/buy', { instrumentName: PERP, quantity: '10', price: '39000' });
    // A push of that order would have left before the HTTP answer, so before this one's answer.
    await client.call('public/test', {});
    assert.equal(pushes.length, 3);
    assert.deepEqual(await client.unsubscribe([channel]), [channel]);
    // A currency the venue lists nothing in is refused, as the order methods refuse it.
    for (const [index, bad] of ['user.orders.future.XYZ', 'user.trades.any.USDT'].entries()) {
      await assert.rejects(
        client.subscribe(['user.orders.any.btc', bad].slice(index)),
        (e) => e instanceof ApiError && e.code === -32602 && e.data?.field === `channels[${1 - index}]`,
      );
    }
    // So is a kind the venue does not have (a perpetual is a future), though the currency is listed.
    await assert.rejects(
      client.subscribe(['user.orders.perpetual.BTC']),
      (e) => e instanceof ApiError && e.code === -32602 && e.data?.field === 'channels[0]',
    );
    // A refusal from inside a channel family (an unknown instrument) names the index too.
    await assert.rejects(
      client.subscribe(['user.orders.any.btc', 'book.NOPE-1']),
      (e) => e instanceof ApiError && e.data?.field === 'channels[1]',
    );
    await client.close();
  });

  test('a currency in another letter case is the channel already held: one subscription, one push per change', async () => {
    const client = harness.ws(1);
    await client.connect();
    await client.auth();
    const pushes: SubscriptionPush[] = [];
    client.onAnyPush((push) => pushes.push(push));
    const subscribe = (channels: string[]) => client.call('private/subscribe', { channels });
    assert.deepEqual(await subscribe(['user.orders.option.btc']), ['user.orders.option.btc']);
    // Answered with the name the pushes carry, once; no second snapshot.
    assert.deepEqual(await subscribe(['user.orders.option.BTC', 'user.orders.option.Btc']), [
      'user.orders.option.btc',
    ]);
    await harness.http(1).call('private/buy', { instrumentName: PERP, quantity: '10', price: '30000' });
    const option = venue.instruments(false).find((i) => i.kind === 'option')!.name;
    await harness.http(1).call('private/buy', { instrumentName: option, quantity: '1', price: '0.01' });
    await client.call('public/test', {});
    assert.deepEqual(
      pushes.map((p) => [p.channel, p.seq, p.snapshot ?? false]),
      [
        ['user.orders.option.btc', 1, true],
        ['user.orders.option.btc', 2, false],
      ],
    );
    // Unsubscribed in a third spelling, neither the name held nor the canonical one: the channel
    // goes, answered under the name held, and pushes no more.
    assert.deepEqual(await client.call('private/unsubscribe', { channels: ['user.orders.option.Btc'] }), [
      'user.orders.option.btc',
    ]);
    await harness.http(1).call('private/buy', { instrumentName: option, quantity: '1', price: '0.01' });
    await client.call('public/test', {});
    assert.equal(pushes.length, 2);
    await client.close();
  });

  test('a user.orders snapshot keeps to the channel’s kind and currency', async () => {
    const http = harness.http(2);
    await http.call('private/cancel_all', {}); // what earlier tests left open
    const option = venue.instruments(false).find((i) => i.kind === 'option' && i.currencies.includes('BTC'))!;
    const buy = (instrumentName: string, price: string) =>
      http.call('private/buy', { instrumentName, quantity: '10', price }).then((r) => r.order.orderId);
    const future = await buy(PERP, '40000');
    const optionOrder = await buy(option.name, '0.01');
    await buy('ETH-PERPETUAL', '2000');
    const client = harness.ws(2);
    await client.connect();
    await client.auth();
    const pushes: SubscriptionPush[] = [];
    client.onAnyPush((push) => pushes.push(push));
    await client.subscribe(['user.orders.future.BTC', 'user.orders.option.BTC']);
    await until(() => pushes.length === 2);
    const snapshot = (channel: string) => {
      const push = pushes.find((p) => p.channel === channel && p.snapshot);
      assert.ok(push, `a snapshot of ${channel}`);
      return (push.data as Array<{ orderId: string }>).map((o) => o.orderId);
    };
    // Not the ETH future (another currency), not the option (another kind), and the other way round.
    assert.deepEqual(snapshot('user.orders.future.BTC'), [future]);
    assert.deepEqual(snapshot('user.orders.option.BTC'), [optionOrder]);
    await client.close();
    await http.call('private/cancel_all', {});
  });

  test("Deribit's spellings: an instrument's own user channels, and interval suffixes naming the same channel", async () => {
    const http = harness.http(2);
    await http.call('private/cancel_all', {});
    const buy = (instrumentName: string, price: string) =>
      http.call('private/buy', { instrumentName, quantity: '10', price }).then((r) => r.order.orderId);
    const resting = await buy(PERP, '40000');
    const otherFuture = venue
      .instruments(false)
      .find((i) => i.kind === 'future' && i.name !== PERP && i.currencies.includes('BTC'))!.name;
    const elsewhere = await buy(otherFuture, '40000');
    const client = harness.ws(2);
    await client.connect();
    await client.auth();
    const pushes: SubscriptionPush[] = [];
    client.onAnyPush((push) => pushes.push(push));
    const channels = [`user.orders.${PERP}.raw`, `user.trades.${PERP}.100ms`, 'user.orders.future.BTC.raw'];
    assert.deepEqual(await client.subscribe(channels), channels);
    // The kind channel in another spelling is the one already held.
    assert.deepEqual(await client.subscribe(['user.orders.future.btc', `book.${PERP}.100ms`]), [
      'user.orders.future.BTC.raw',
      `book.${PERP}.100ms`,
    ]);
    await until(() => pushes.length === 3);
    const ids = (push: SubscriptionPush | undefined) =>
      ((push?.data ?? []) as Array<{ orderId: string }>).map((o) => o.orderId).sort();
    assert.deepEqual(ids(pushes.find((p) => p.channel === `user.orders.${PERP}.raw`)), [resting]);
    assert.deepEqual(
      ids(pushes.find((p) => p.channel === 'user.orders.future.BTC.raw')),
      [resting, elsewhere].sort(),
    );
    pushes.length = 0;
    await http.call('private/cancel', { orderId: elsewhere });
    await http.call('private/cancel', { orderId: resting });
    // Another user's order on the instrument never arrives.
    const other = await harness
      .http(1)
      .call('private/sell', { instrumentName: PERP, quantity: '10', price: '90000' });
    await client.call('public/test', {});
    await until(() => pushes.filter((p) => p.channel.startsWith('user.')).length === 3);
    const shown = pushes
      .filter((p) => p.channel.startsWith('user.'))
      .map((p) => [p.channel, p.seq, (p.data as { orderId: string }).orderId]);
    // The other future's cancel on the kind channel only; the instrument's on both.
    assert.deepEqual(shown, [
      ['user.orders.future.BTC.raw', 2, elsewhere],
      [`user.orders.${PERP}.raw`, 2, resting],
      ['user.orders.future.BTC.raw', 3, resting],
    ]);
    // Unsubscribed by the name without the suffix, answered under the name held.
    assert.deepEqual(await client.unsubscribe([`user.orders.${PERP}`]), [`user.orders.${PERP}.raw`]);
    // user.orders pushes one order each: an aggregated interval, whose pushes are arrays, is refused.
    await assert.rejects(
      client.subscribe([`book.${PERP}`, 'user.orders.any.any.100ms']),
      (e) =>
        e instanceof ApiError &&
        e.code === -32602 &&
        e.data?.field === 'channels[1]' &&
        /subscribe user\.orders\.any\.any\.raw/.test(e.message),
    );
    await assert.rejects(
      client.subscribe([`user.orders.${PERP}-NOPE.raw`]),
      (e) =>
        e instanceof ApiError &&
        e.data?.field === 'channels[0]' &&
        e.data?.channel === `user.orders.${PERP}-NOPE.raw` &&
        e.message === `unknown instrument in user.orders.${PERP}-NOPE.raw`,
    );
    await client.close();
    await http.call('private/cancel_all', {});
    await harness.http(1).call('private/cancel', { orderId: other.order.orderId });
  });

  test('book and ticker channels are public and push on changes', async () => {
    const client = harness.ws(0);
    await client.connect();
    const books: SubscriptionPush[] = [];
    await client.subscribe([`book.${PERP}`, `ticker.${PERP}`], (push) => books.push(push));
    await until(() => books.length === 2);
    await harness.http(2).call('private/sell', { instrumentName: PERP, quantity: '10', price: '90000' });
    await until(() => books.length === 4);
    const book = books.find((p) => p.channel === `book.${PERP}` && !p.snapshot)!.data as { asks: string[][] };
    assert.ok(book.asks.some(([price]) => price === '90000'));
    await assert.rejects(
      client.subscribe(['user.orders.any.any']),
      (e) => e instanceof ApiError && e.code === 10000,
    );
    await assert.rejects(
      client.subscribe(['nope.channel']),
      (e) => e instanceof ApiError && e.code === -32602,
    );
    await client.close();
  });

  test('subscribe answers before its snapshots, and subscribes nothing when one channel is bad', async () => {
    const socket = new WebSocket(harness.wsUrl);
    const messages: Array<{ rid?: number; method?: string; params?: { channel: string }; error?: unknown }> =
      [];
    socket.on('message', (data) => messages.push(JSON.parse(data.toString())));
    await new Promise((resolve) => socket.on('open', resolve));
    const send = (rid: number, channels: string[]) =>
      socket.send(JSON.stringify({ rid, method: 'public/subscribe', params: { channels } }));
    send(1, [`book.${PERP}`, 'nope.channel']);
    await until(() => messages.some((m) => m.rid === 1));
    send(2, [`ticker.${PERP}`]);
    await until(() => messages.filter((m) => m.method === 'subscription').length === 1);
    assert.ok(messages[0]!.error, 'the bad list is refused');
    assert.deepEqual(
      messages.slice(1).map((m) => m.rid ?? m.params?.channel),
      [2, `ticker.${PERP}`],
      'no book snapshot from the refused list; the answer precedes the snapshot',
    );
    await harness.http(2).call('private/sell', { instrumentName: PERP, quantity: '10', price: '91000' });
    // A book push would have left before the HTTP answer, so before this request's answer.
    socket.send(JSON.stringify({ rid: 3, method: 'public/test', params: {} }));
    await until(() => messages.some((m) => m.rid === 3));
    assert.ok(!messages.some((m) => m.params?.channel === `book.${PERP}`), 'book was never subscribed');
    socket.close();
  });

  test('cancel-on-disconnect cancels the account’s open orders when the socket closes', async () => {
    const client = harness.ws(3);
    await client.connect();
    await client.auth();
    await client.call('private/buy', { instrumentName: PERP, quantity: '10', price: '30000' });
    assert.equal(await client.call('private/enable_cancel_on_disconnect', {}), 'ok');
    assert.deepEqual(await client.call('private/get_cancel_on_disconnect', {}), {
      scope: 'connection',
      enabled: true,
    });
    await client.close();
    await until(() =>
      venue.submitted.some((c) => c.type === 'cancel_all' && c.cancelReason === 'cancel_on_disconnect'),
    );
    const http = harness.http(3);
    assert.deepEqual(await http.call('private/get_open_orders', {}), []);
  });

  test('heartbeats: test_requests every interval; the sdk answers; silence closes the connection', async () => {
    const client = harness.ws(0);
    await client.connect();
    await client.call('public/set_heartbeat', { interval: 10 });
    clock.advance(10_000);
    await until(() => client.heartbeatsAnswered.count === 1);
    // The answer has reached the server once a later request on the socket is answered.
    await client.call('public/time', {});
    clock.advance(10_000);
    await until(() => client.heartbeatsAnswered.count === 2);
    await client.close();

    const silent = new WebSocket(harness.wsUrl);
    let closed = false;
    silent.on('close', () => {
      closed = true;
    });
    await new Promise((resolve) => silent.on('open', resolve));
    silent.send(JSON.stringify({ rid: 1, method: 'public/set_heartbeat', params: { interval: 10 } }));
    await new Promise((resolve) => silent.once('message', resolve));
    clock.advance(10_000);
    clock.advance(10_000);
    // Bounded: a server that never closes a silent connection fails here instead of hanging the run.
    await until(() => closed, 10_000);
  });

  test('reconnect: the sdk re-authenticates and resubscribes', async () => {
    const client = harness.ws(2);
    await client.connect();
    await client.auth();
    const pushes: SubscriptionPush[] = [];
    await client.subscribe(['user.orders.any.any'], (push) => pushes.push(push));
    await until(() => pushes.length === 1);
    const reconnected = new Promise<void>((resolve) => {
      client.onReconnected = resolve;
    });
    client.dropConnection();
    await reconnected;
    await until(() => pushes.length === 2);
    assert.equal(pushes[1]!.seq, 1);
    assert.equal(pushes[1]!.snapshot, true);
    await harness.http(2).call('private/buy', { instrumentName: PERP, quantity: '10', price: '30000' });
    await until(() => pushes.length === 3);
    assert.equal(pushes[2]!.seq, 2);
    await client.close();
  });

  test('frames over the size limit close the connection', async () => {
    const socket = new WebSocket(harness.wsUrl);
    await new Promise((resolve) => socket.on('open', resolve));
    const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
    socket.send('x'.repeat(70_000));
    assert.equal(await closed, 1009);
  });
});
