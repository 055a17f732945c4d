/**
 * WebSocket session features over the real engine and sequencer, through the sdk:
 * cancel-on-disconnect (which orders, however the connection ends), re-authentication with
 * another key, heartbeats against a peer that stopped reading, and the rate limit of
 * unauthenticated connections.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { ApiError } from '../../sdk/errors.ts';
import { signWs } from '../../sdk/index.ts';
import type { SubscriptionPush } from '../../sdk/types.ts';
import { WsClient } from '../../sdk/ws-client.ts';
import { SecretBox } from '../../src/api/auth/secret-box.ts';
import { SqliteKeyStore } from '../../src/api/auth/sqlite-key-store.ts';
import type { UnstampedCommand } from '../../src/core/commands.ts';
import { type EngineVenue, startEngineVenue } from '../support/engine-venue.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { startTestService, type TestService } from '../support/service-harness.ts';
import { until } from '../support/until.ts';

const PERP = 'BTC-PERPETUAL';

describe('WebSocket sessions over the real engine', () => {
  let harness: Harness;
  let engine: EngineVenue;
  before(async () => {
    engine = await startEngineVenue();
    harness = await startHarness({ venue: engine, clock: engine.clock });
  });
  after(() => harness.close());

  const state = (orderId: string) => engine.reads.order(orderId)!;
  const buy = (client: Pick<WsClient, 'call'>, price: string) =>
    client.call('private/buy', { instrumentName: PERP, quantity: '10', price }).then((r) => r.order.orderId);
  /** public/auth on a connection already authenticated, with the given demo user's key. */
  const authAs = (client: WsClient, index: number) => {
    const credential = harness.credentials[index]!;
    const timestamp = engine.now();
    const nonce = randomUUID();
    return client.call('public/auth', {
      apiKey: credential.apiKey,
      timestamp,
      nonce,
      signature: signWs(credential.apiSecret, String(timestamp), nonce),
    });
  };

  test('cancel-on-disconnect cancels the orders this connection placed, not those of other connections', async () => {
    const dropped = harness.ws(0);
    await dropped.connect();
    await dropped.auth();
    const sibling = harness.ws(0);
    await sibling.connect();
    await sibling.auth();
    const http = harness.http(0);

    const own = [await buy(dropped, '30000'), await buy(dropped, '30010')];
    const siblings = await buy(sibling, '30020');
    const overHttp = (
      await http.call('private/buy', { instrumentName: PERP, quantity: '10', price: '30030' })
    ).order.orderId;
    // An OTO placed on the connection: its secondary is the connection's too.
    const oto = await dropped.call('private/buy', {
      instrumentName: PERP,
      quantity: '10',
      price: '30040',
      linkedOrderType: 'one_triggers_other',
      otocoConfig: [{ side: 'sell', quantity: '10', price: '90000' }],
    });
    const secondary = oto.order.otoOrderIds![0]!;

    assert.equal(await dropped.call('private/enable_cancel_on_disconnect', { scope: 'connection' }), 'ok');
    assert.deepEqual(await dropped.call('private/get_cancel_on_disconnect', {}), {
      scope: 'connection',
      enabled: true,
    });
    assert.deepEqual(await sibling.call('private/get_cancel_on_disconnect', {}), {
      scope: 'connection',
      enabled: false,
    });

    dropped.dropConnection(); // the TCP connection goes without a close handshake
    await until(() => state(own[0]!).orderState === 'cancelled');
    for (const orderId of [...own, oto.order.orderId, secondary]) {
      assert.equal(state(orderId).orderState, 'cancelled', orderId);
      assert.equal(state(orderId).cancelReason, 'cancel_on_disconnect', orderId);
    }
    for (const orderId of [siblings, overHttp]) assert.equal(state(orderId).orderState, 'open', orderId);
    await dropped.close();
    await sibling.close();
    await http.call('private/cancel_all', {});
  });

  test('the core knows the connection’s orders: enabling journals them, later ones carry the session, disabling lets go', async () => {
    const client = harness.ws(0);
    await client.connect();
    await client.auth();
    const sessionOf = (orderId: string) =>
      [...engine.venue.codSessionOrders()].find(([, orders]) => orders.includes(orderId));
    const early = await buy(client, '30000');
    assert.equal(sessionOf(early), undefined, 'nothing while it is off');
    await client.call('private/enable_cancel_on_disconnect', {});
    const late = await buy(client, '30010');
    const overHttp = (
      await harness.http(0).call('private/buy', { instrumentName: PERP, quantity: '10', price: '30020' })
    ).order.orderId;
    const [session, orders] = sessionOf(early)!;
    assert.match(session, /^\d+\.\d+\.1$/);
    assert.deepEqual([...orders].sort(), [early, late].sort());
    assert.equal(sessionOf(overHttp), undefined);

    await client.call('private/disable_cancel_on_disconnect', {});
    assert.equal(sessionOf(early), undefined);
    await client.call('private/enable_cancel_on_disconnect', {});
    const [again, orders2] = sessionOf(early)!;
    assert.notEqual(again, session, 'a new session id');
    assert.deepEqual([...orders2].sort(), [early, late].sort());

    await client.close();
    await until(() => state(late).orderState === 'cancelled');
    assert.equal(state(early).cancelReason, 'cancel_on_disconnect');
    assert.equal(sessionOf(early), undefined);
    assert.equal(state(overHttp).orderState, 'open');
    await harness.http(0).call('private/cancel_all', {});
  });

  test('the sdk’s reconnect restores the connection’s cancel-on-disconnect and heartbeat', async () => {
    const client = harness.ws(0);
    await client.connect();
    await client.auth();
    await client.call('private/enable_cancel_on_disconnect', {});
    await client.call('public/set_heartbeat', { interval: 10 });
    const reconnected = () =>
      new Promise<void>((resolve) => {
        client.onReconnected = resolve;
      });
    let again = reconnected();
    client.dropConnection();
    await again;
    assert.deepEqual(await client.call('private/get_cancel_on_disconnect', {}), {
      scope: 'connection',
      enabled: true,
    });
    const answered = client.heartbeatsAnswered.count;
    engine.clock.advance(10_000);
    await until(() => client.heartbeatsAnswered.count === answered + 1);

    // The new connection's orders are protected: they go when it drops.
    const order = await buy(client, '30000');
    again = reconnected();
    client.dropConnection();
    await until(() => state(order).orderState === 'cancelled');
    assert.equal(state(order).cancelReason, 'cancel_on_disconnect');
    await again;

    // Turned off, it stays off across a reconnect.
    await client.call('private/disable_cancel_on_disconnect', {});
    await client.call('public/disable_heartbeat', {});
    again = reconnected();
    client.dropConnection();
    await again;
    assert.deepEqual(await client.call('private/get_cancel_on_disconnect', {}), {
      scope: 'connection',
      enabled: false,
    });
    await client.close();
  });

  test('after a crash restart the sdk’s auth, refused as signed too early, is signed again past that time', async () => {
    harness.gateway.authenticator.refuseSignedUntil(engine.now() + 10_000);
    try {
      const client = harness.ws(0);
      await client.connect();
      await client.auth();
      assert.deepEqual(await client.call('private/get_open_orders', {}), []);
      await client.close();
    } finally {
      harness.gateway.authenticator.refuseSignedUntil(0);
    }
  });

  test('public/auth with another key ends the first key’s session on the connection', async () => {
    const client = harness.ws(0);
    await client.connect();
    await client.auth();
    const pushes: SubscriptionPush[] = [];
    client.onAnyPush((push) => pushes.push(push));
    await client.call('private/subscribe', { channels: ['user.orders.any.any'] });
    await until(() => pushes.length === 1);
    const first = await buy(client, '30000');
    await until(() => pushes.length === 2);
    await client.call('private/enable_cancel_on_disconnect', {});

    await authAs(client, 3);
    await until(() => state(first).orderState === 'cancelled');
    assert.equal(state(first).cancelReason, 'cancel_on_disconnect');
    // The first key's channels went with its session: neither that cancellation nor a later order
    // of the first user is pushed here (a push would have left before the HTTP answer).
    const laterOfFirst = (
      await harness.http(0).call('private/buy', { instrumentName: PERP, quantity: '10', price: '30000' })
    ).order.orderId;
    await client.call('public/test', {});
    assert.deepEqual(
      pushes.map((push) => push.channel),
      ['user.orders.any.any', 'user.orders.any.any'],
      'only the snapshot and the first order, both before the switch',
    );
    await harness.http(0).call('private/cancel', { orderId: laterOfFirst });
    // The new key did not ask for cancel-on-disconnect: its orders stay when the connection goes.
    assert.deepEqual(await client.call('private/get_cancel_on_disconnect', {}), {
      scope: 'connection',
      enabled: false,
    });
    const second = await buy(client, '30000');
    const overHttp = (
      await harness.http(3).call('private/buy', { instrumentName: PERP, quantity: '10', price: '30000' })
    ).order.orderId;
    const open = harness.gateway.wsConnections();
    await client.close();
    // The session has ended (its cancel-on-disconnect would have been applied by now).
    await until(() => harness.gateway.wsConnections() === open - 1);
    assert.equal(state(second).orderState, 'open');
    assert.equal(state(overHttp).orderState, 'open');
    await harness.http(3).call('private/cancel_all', {});
  });

  test('public/auth again with the same key changes nothing: subscriptions, cancel-on-disconnect and orders stay', async () => {
    const client = harness.ws(0);
    await client.connect();
    await client.auth();
    const pushes: SubscriptionPush[] = [];
    await client.subscribe(['user.orders.any.any'], (push) => pushes.push(push));
    await until(() => pushes.length === 1);
    await client.call('private/enable_cancel_on_disconnect', {});
    const order = await buy(client, '30000');
    await until(() => pushes.length === 2);

    await authAs(client, 0);
    assert.deepEqual(await client.call('private/get_cancel_on_disconnect', {}), {
      scope: 'connection',
      enabled: true,
    });
    assert.equal(state(order).orderState, 'open');
    // Still subscribed: an order of the user placed elsewhere is pushed here.
    await harness.http(0).call('private/buy', { instrumentName: PERP, quantity: '10', price: '30010' });
    await until(() => pushes.length === 3);
    assert.equal(pushes[2]!.channel, 'user.orders.any.any');
    // And the connection's session is the one from before: its order goes when the connection does.
    await client.close();
    await until(() => state(order).orderState === 'cancelled');
    assert.equal(state(order).cancelReason, 'cancel_on_disconnect');
    await harness.http(0).call('private/cancel_all', {});
  });

  test('an order in flight when the key switches goes with the first key’s cancel-on-disconnect', async () => {
    const client = harness.ws(0);
    await client.connect();
    await client.auth();
    await client.call('private/enable_cancel_on_disconnect', {});
    const other = harness.credentials[3]!;
    const timestamp = engine.now();
    const nonce = randomUUID();
    // Sent back to back: the switch is handled before the order is answered (known placed).
    const inFlight = client.call('private/buy', { instrumentName: PERP, quantity: '10', price: '30000' });
    const switched = client.call('public/auth', {
      apiKey: other.apiKey,
      timestamp,
      nonce,
      signature: signWs(other.apiSecret, String(timestamp), nonce),
    });
    const { order } = await inFlight;
    await switched;
    await until(() => state(order.orderId).orderState === 'cancelled');
    assert.equal(state(order.orderId).cancelReason, 'cancel_on_disconnect');
    await client.close();
  });

  test('an unanswered test_request ends the session at once, though the peer never completes the close', async () => {
    const credential = harness.credentials[0]!;
    const socket = new WebSocket(harness.wsUrl);
    const answers = new Map<number, { result?: unknown; error?: unknown }>();
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString()) as { rid?: number; result?: unknown; error?: unknown };
      if (typeof message.rid === 'number') answers.set(message.rid, message);
    });
    await new Promise((resolve) => socket.on('open', resolve));
    let rid = 0;
    const call = async (method: string, params: object) => {
      const id = ++rid;
      socket.send(JSON.stringify({ rid: id, method, params }));
      await until(() => answers.has(id));
      const answer = answers.get(id)!;
      assert.equal(answer.error, undefined, JSON.stringify(answer.error));
      return answer.result;
    };
    const timestamp = engine.now();
    const nonce = randomUUID();
    await call('public/auth', {
      apiKey: credential.apiKey,
      timestamp,
      nonce,
      signature: signWs(credential.apiSecret, String(timestamp), nonce),
    });
    const order = (
      (await call('private/buy', { instrumentName: PERP, quantity: '10', price: '30000' })) as {
        order: { orderId: string };
      }
    ).order.orderId;
    await call('private/enable_cancel_on_disconnect', {});
    await call('public/set_heartbeat', { interval: 10 });
    // The peer stops reading: it will neither answer the test_request nor the close frame.
    (socket as unknown as { _socket: { pause(): void } })._socket.pause();
    engine.clock.advance(10_000);
    engine.clock.advance(10_000);
    await until(() => state(order).orderState === 'cancelled', 1000);
    assert.equal(state(order).cancelReason, 'cancel_on_disconnect');
    socket.terminate();
  });
});

describe('cancel-on-disconnect of an order in flight when it is enabled', () => {
  /** Appends wait here while `holding` says so, until the test releases them. */
  const held: Array<{ command: UnstampedCommand; release: () => void }> = [];
  let holding: (command: UnstampedCommand) => boolean = () => false;
  let harness: Harness;
  let engine: EngineVenue;
  before(async () => {
    engine = await startEngineVenue(undefined, {}, (entry) =>
      holding(entry.command)
        ? new Promise<void>((release) => held.push({ command: entry.command, release }))
        : Promise.resolve(),
    );
    harness = await startHarness({ venue: engine, clock: engine.clock });
  });
  after(() => harness.close());

  const releaseAll = () => {
    for (const { release } of held.splice(0)) release();
  };

  test('the order joins the session before it is answered, and enable is answered after that join', async () => {
    const client = harness.ws(0);
    await client.connect();
    await client.auth();
    const answered: string[] = [];
    // The order and the enable are both applied before either is durable: the order is placed
    // without the session, so it has to join it in a second command.
    holding = () => true;
    const order = client
      .call('private/buy', { instrumentName: PERP, quantity: '10', price: '30000' })
      .then((r) => {
        answered.push('buy');
        return r.order.orderId;
      });
    const enabled = client
      .call('private/enable_cancel_on_disconnect', {})
      .then(() => answered.push('enable'));
    await until(() => held.length === 2);
    assert.deepEqual(
      held.map(({ command }) => command.type),
      ['place_order', 'set_cancel_on_disconnect'],
    );
    holding = (command) => command.type === 'set_cancel_on_disconnect';
    releaseAll();
    await until(() => held.length === 1);
    const join = held[0]!.command as Extract<UnstampedCommand, { type: 'set_cancel_on_disconnect' }>;
    assert.equal(join.orderIds?.length, 1, 'the order joins in its own command');

    // While the join is not durable, neither answer goes out (a later request is answered first).
    assert.equal(await client.call('public/test', {}).then(() => 'test'), 'test');
    assert.deepEqual(answered, []);
    holding = () => false;
    releaseAll();
    const orderId = await order;
    await enabled;
    assert.deepEqual(answered.sort(), ['buy', 'enable']);
    assert.equal(join.orderIds![0], orderId);

    await client.close();
    await until(() => engine.reads.order(orderId)!.orderState === 'cancelled');
    assert.equal(engine.reads.order(orderId)!.cancelReason, 'cancel_on_disconnect');
  });
});

describe('cancel-on-disconnect’s account scope: the account’s default for new connections', () => {
  /** Every command, as journaled. */
  const journaled: UnstampedCommand[] = [];
  /** Appends wait here while `holding` says so, until the test releases them. */
  const held: Array<{ command: UnstampedCommand; release: () => void }> = [];
  let holding: (command: UnstampedCommand) => boolean = () => false;
  let harness: Harness;
  let engine: EngineVenue;
  before(async () => {
    engine = await startEngineVenue(undefined, {}, (entry) => {
      journaled.push(entry.command);
      return holding(entry.command)
        ? new Promise<void>((release) => held.push({ command: entry.command, release }))
        : Promise.resolve();
    });
    harness = await startHarness({ venue: engine, clock: engine.clock });
  });
  after(() => harness.close());

  const state = (orderId: string) => engine.reads.order(orderId)!;
  const buy = (client: Pick<WsClient, 'call'>, price: string) =>
    client.call('private/buy', { instrumentName: PERP, quantity: '10', price }).then((r) => r.order.orderId);
  const sessionOf = (orderId: string) =>
    [...engine.venue.codSessionOrders()].find(([, orders]) => orders.includes(orderId))?.[0];
  /** The session the order's place_order command carried (not a later join). */
  const placedWith = (price: string) =>
    journaled
      .filter((c): c is Extract<UnstampedCommand, { type: 'place_order' }> => c.type === 'place_order')
      .findLast((c) => c.price === engine.venue.instrument(PERP)!.instrument.parsePrice(price))?.codSession;
  const connection = async (index = 0) => {
    const client = harness.ws(index);
    await client.connect();
    await client.auth();
    return client;
  };

  test('enable with account scope: new connections of the account start with it on, open ones keep theirs', async () => {
    const asking = await connection(0);
    const alreadyOpen = await connection(0);
    assert.deepEqual(await asking.call('private/get_cancel_on_disconnect', { scope: 'account' }), {
      scope: 'account',
      enabled: false,
    });
    assert.equal(await asking.call('private/enable_cancel_on_disconnect', { scope: 'account' }), 'ok');
    assert.deepEqual(journaled.at(-2), {
      type: 'set_account_cancel_on_disconnect',
      accountId: harness.credentials[0]!.accountIds[0],
      enabled: true,
    });
    assert.deepEqual(await asking.call('private/get_cancel_on_disconnect', { scope: 'account' }), {
      scope: 'account',
      enabled: true,
    });
    // The connection it was asked on is protected as well; a connection already open is not.
    assert.deepEqual(await asking.call('private/get_cancel_on_disconnect', {}), {
      scope: 'connection',
      enabled: true,
    });
    assert.deepEqual(await alreadyOpen.call('private/get_cancel_on_disconnect', {}), {
      scope: 'connection',
      enabled: false,
    });

    const fresh = await connection(0);
    assert.deepEqual(await fresh.call('private/get_cancel_on_disconnect', {}), {
      scope: 'connection',
      enabled: true,
    });
    const freshOrder = await buy(fresh, '30000');
    const session = placedWith('30000');
    assert.ok(session !== undefined && session !== null, 'placed with the session from the first order on');
    assert.equal(sessionOf(freshOrder), session);
    const askingOrder = await buy(asking, '30010');
    const openOrder = await buy(alreadyOpen, '30020');
    assert.equal(sessionOf(openOrder), undefined);
    const overHttp = (
      await harness.http(0).call('private/buy', { instrumentName: PERP, quantity: '10', price: '30030' })
    ).order.orderId;

    fresh.dropConnection();
    await until(() => state(freshOrder).orderState === 'cancelled');
    assert.equal(state(freshOrder).cancelReason, 'cancel_on_disconnect');
    for (const orderId of [askingOrder, openOrder, overHttp]) assert.equal(state(orderId).orderState, 'open');
    asking.dropConnection();
    await until(() => state(askingOrder).orderState === 'cancelled');
    assert.equal(state(openOrder).orderState, 'open');
    assert.equal(state(overHttp).orderState, 'open');

    // Another account (key 3) is not affected.
    const otherAccount = await connection(3);
    assert.deepEqual(await otherAccount.call('private/get_cancel_on_disconnect', {}), {
      scope: 'connection',
      enabled: false,
    });
    await otherAccount.close();
    await alreadyOpen.close();
    await fresh.close();
    await asking.close();
    await harness.http(0).call('private/cancel_all', {});
  });

  test('disable with account scope: new connections start with it off; the asking one keeps its own', async () => {
    const asking = await connection(0);
    assert.deepEqual(await asking.call('private/get_cancel_on_disconnect', {}), {
      scope: 'connection',
      enabled: true,
    });
    assert.equal(await asking.call('private/disable_cancel_on_disconnect', { scope: 'account' }), 'ok');
    assert.deepEqual(await asking.call('private/get_cancel_on_disconnect', { scope: 'account' }), {
      scope: 'account',
      enabled: false,
    });
    assert.deepEqual(await asking.call('private/get_cancel_on_disconnect', {}), {
      scope: 'connection',
      enabled: true,
    });
    const fresh = await connection(0);
    assert.deepEqual(await fresh.call('private/get_cancel_on_disconnect', {}), {
      scope: 'connection',
      enabled: false,
    });
    const freshOrder = await buy(fresh, '30000');
    assert.equal(placedWith('30000'), undefined);
    assert.equal(sessionOf(freshOrder), undefined);
    const open = harness.gateway.wsConnections();
    await fresh.close();
    await until(() => harness.gateway.wsConnections() === open - 1);
    assert.equal(state(freshOrder).orderState, 'open');
    await asking.close();
    await harness.http(0).call('private/cancel_all', {});
  });

  test('over HTTP: the account scope is served, the connection scope refused naming scope', async () => {
    const http = harness.http(3);
    assert.equal(await http.call('private/enable_cancel_on_disconnect', { scope: 'account' }), 'ok');
    assert.deepEqual(await http.call('private/get_cancel_on_disconnect', { scope: 'account' }), {
      scope: 'account',
      enabled: true,
    });
    for (const params of [{}, { scope: 'connection' as const }]) {
      await assert.rejects(
        http.call('private/get_cancel_on_disconnect', params),
        (e) => e instanceof ApiError && e.code === -32602 && e.data?.field === 'scope',
      );
      await assert.rejects(
        http.call('private/enable_cancel_on_disconnect', params),
        (e) => e instanceof ApiError && e.code === -32602 && e.data?.field === 'scope',
      );
    }
    // A connection that re-authenticates with key 3 starts that key's session with it on.
    const client = await connection(0);
    const first = await buy(client, '30000');
    const timestamp = engine.now();
    const nonce = randomUUID();
    const other = harness.credentials[3]!;
    await client.call('public/auth', {
      apiKey: other.apiKey,
      timestamp,
      nonce,
      signature: signWs(other.apiSecret, String(timestamp), nonce),
    });
    assert.deepEqual(await client.call('private/get_cancel_on_disconnect', {}), {
      scope: 'connection',
      enabled: true,
    });
    const second = await buy(client, '30010');
    assert.ok(sessionOf(second) !== undefined);
    client.dropConnection();
    await until(() => state(second).orderState === 'cancelled');
    assert.equal(state(first).orderState, 'open', 'key 0 had it off');
    assert.equal(await http.call('private/disable_cancel_on_disconnect', { scope: 'account' }), 'ok');
    await client.close();
    await harness.http(0).call('private/cancel_all', {});
  });

  test('public/auth is answered only once the connection’s session is durable', async () => {
    await harness.http(0).call('private/enable_cancel_on_disconnect', { scope: 'account' });
    const client = harness.ws(0);
    await client.connect();
    let authed = false;
    holding = (command) => command.type === 'set_cancel_on_disconnect';
    const auth = client.auth().then(() => {
      authed = true;
    });
    await until(() => held.length === 1);
    // A later request on the socket is answered first: the auth answer waits for the session.
    assert.equal(await client.call('public/test', {}).then(() => 'test'), 'test');
    assert.equal(authed, false);
    holding = () => false;
    for (const { release } of held.splice(0)) release();
    await auth;
    assert.deepEqual(await client.call('private/get_cancel_on_disconnect', {}), {
      scope: 'connection',
      enabled: true,
    });
    await harness.http(0).call('private/disable_cancel_on_disconnect', { scope: 'account' });
    await client.close();
  });
});

describe('cancel-on-disconnect’s account scope across a restart of the service', () => {
  let running: TestService;
  before(async () => {
    running = await startTestService();
  });
  after(async () => {
    await running.close();
    rmSync(running.dataDir, { recursive: true, force: true });
  });

  test('the account’s default survives the restart; new connections and new keys of the account start with it on', async () => {
    const asking = running.ws(0);
    await asking.connect();
    await asking.auth();
    assert.equal(await asking.call('private/enable_cancel_on_disconnect', { scope: 'account' }), 'ok');
    await asking.close();
    running = await running.restart();

    const http = running.http(0);
    assert.deepEqual(await http.call('private/get_cancel_on_disconnect', { scope: 'account' }), {
      scope: 'account',
      enabled: true,
    });
    // A key created after the restart, on the same account.
    const keys = new SqliteKeyStore(join(running.dataDir, 'keys.db'), SecretBox.load(null, running.dataDir));
    const sameAccount = keys.createApiKey({ userId: running.credentials[0]!.userId, roles: ['trade'] }, 0);
    keys.close();
    const clients = {
      sameKey: running.ws(0),
      sameAccount: new WsClient({
        url: running.wsUrl,
        credentials: { apiKey: sameAccount.record.apiKey, apiSecret: sameAccount.apiSecret },
        now: () => running.service.core.now(),
        reconnect: false,
      }),
      otherAccount: running.ws(3),
    };
    const orders: Record<string, string> = {};
    for (const [name, client] of Object.entries(clients)) {
      await client.connect();
      await client.auth();
      const expected = name !== 'otherAccount';
      assert.deepEqual(
        await client.call('private/get_cancel_on_disconnect', {}),
        { scope: 'connection', enabled: expected },
        name,
      );
      orders[name] = (
        await client.call('private/buy', { instrumentName: PERP, quantity: '10', price: '40000' })
      ).order.orderId;
      client.dropConnection();
    }
    const stateOf = (name: string) => running.service.core.order(orders[name]!)?.orderState;
    await until(() => stateOf('sameKey') === 'cancelled' && stateOf('sameAccount') === 'cancelled');
    assert.equal(running.service.core.order(orders.sameKey!)!.cancelReason, 'cancel_on_disconnect');
    assert.equal(stateOf('otherAccount'), 'open', 'another account has it off');
    await clients.sameAccount.close();
  });
});

describe('rate limits of unauthenticated WebSocket connections', () => {
  let harness: Harness;
  before(async () => {
    harness = await startHarness({
      config: {
        rateLimits: {
          enabled: true,
          matching: { perSecond: 0.001, burst: 3 },
          nonMatching: { perSecond: 0.001, burst: 3 },
        },
      },
    });
  });
  after(() => harness.close());

  test('are counted by client address, so a new connection brings no new credit', async () => {
    let refused: ApiError | null = null;
    for (let i = 0; i < 4 && refused === null; i++) {
      const client = harness.ws(0);
      await client.connect();
      await client.call('public/time', {}).catch((e: unknown) => {
        if (e instanceof ApiError) refused = e;
        else throw e;
      });
    }
    assert.ok(refused !== null, 'the fourth connection from the address was refused');
    assert.equal((refused as ApiError).code, 10028);
    assert.equal((refused as ApiError).data?.bucket, 'non_matching');
  });
});
