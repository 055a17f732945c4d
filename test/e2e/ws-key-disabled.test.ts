/**
 * A key disabled while a WebSocket is authenticated with it stops there as over HTTP, within the
 * key cache's TTL: a private request is refused with the HTTP refusal and the session ends as on
 * a disconnect (subscriptions, cancel-on-disconnect) with close code 1008; a connection that only
 * listens is ended by the periodic check. A failed re-auth keeps the connection's session.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, test } from 'node:test';
import WebSocket from 'ws';
import { signWs } from '../../sdk/index.ts';
import { DEFAULT_KEY_CACHE_TTL_MS } from '../../src/api/auth/authenticator.ts';
import { openKeyStore } from '../../src/api/auth/open-key-store.ts';
import { type EngineVenue, startEngineVenue } from '../support/engine-venue.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { until } from '../support/until.ts';

const PERP = 'BTC-PERPETUAL';

interface Answer {
  readonly rid?: number;
  readonly result?: unknown;
  readonly error?: { readonly code: number; readonly message: string; readonly data?: unknown };
  readonly method?: string;
  readonly params?: { readonly channel?: string };
}

/** A raw connection: answers by rid, pushes, and how it closed. */
class Connection {
  readonly answers = new Map<number, Answer>();
  readonly pushes: Answer[] = [];
  closed: { code: number; reason: string } | null = null;
  private rid = 0;

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString()) as Answer;
      if (typeof message.rid === 'number') this.answers.set(message.rid, message);
      else this.pushes.push(message);
    });
    socket.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
    });
  }

  static async open(url: string): Promise<Connection> {
    const socket = new WebSocket(url);
    await new Promise((resolve) => socket.on('open', resolve));
    return new Connection(socket);
  }

  async request(method: string, params: object): Promise<Answer> {
    const rid = ++this.rid;
    this.socket.send(JSON.stringify({ rid, method, params }));
    await until(() => this.answers.has(rid));
    return this.answers.get(rid)!;
  }

  async call(method: string, params: object): Promise<unknown> {
    const answer = await this.request(method, params);
    assert.equal(answer.error, undefined, JSON.stringify(answer.error));
    return answer.result;
  }

  auth(credential: { apiKey: string; apiSecret: string }, timestamp: number, signature?: string) {
    const nonce = randomUUID();
    return this.request('public/auth', {
      apiKey: credential.apiKey,
      timestamp,
      nonce,
      signature: signature ?? signWs(credential.apiSecret, String(timestamp), nonce),
    });
  }

  close(): void {
    this.socket.terminate();
  }
}

let engine: EngineVenue;
let harness: Harness;
const connections: Connection[] = [];

beforeEach(async () => {
  engine = await startEngineVenue();
  harness = await startHarness({ venue: engine, clock: engine.clock, fileKeyStore: true });
});
afterEach(async () => {
  for (const connection of connections.splice(0)) connection.close();
  await harness.close();
});

async function connect(): Promise<Connection> {
  const connection = await Connection.open(harness.wsUrl);
  connections.push(connection);
  return connection;
}

/** Disables the key in the store, as the CLI does from another process (the gateway's cache holds on). */
function disableKey(apiKey: string): void {
  const store = openKeyStore({ dataDir: harness.dataDir, secretEncryptionKey: null });
  try {
    assert.equal(store.disableKey(apiKey), true);
  } finally {
    store.close();
  }
}

const orderState = (orderId: string) => engine.reads.order(orderId)!;

test('a private request on a connection whose key was disabled is refused as over HTTP, and the session ends with 1008', async () => {
  const credential = harness.credentials[0]!;
  // The key's cache entry is made now; the connection authenticates later, so the periodic
  // check (due a TTL after that) comes after the cache entry expired: the request finds it first.
  await harness.http(0).call('private/get_open_orders', {});
  engine.clock.advance(10_000);
  const connection = await connect();
  assert.equal((await connection.auth(credential, engine.now())).error, undefined);
  const placed = (await connection.call('private/buy', {
    instrumentName: PERP,
    quantity: '10',
    price: '30000',
  })) as {
    order: { orderId: string };
  };
  await connection.call('private/enable_cancel_on_disconnect', {});
  await connection.call('private/subscribe', { channels: ['user.orders.any.any'] });

  disableKey(credential.apiKey);
  engine.clock.advance(DEFAULT_KEY_CACHE_TTL_MS - 10_000);
  assert.equal(connection.closed, null, 'the periodic check is not due yet');
  const overHttp = await harness
    .http(0)
    .call('private/get_open_orders', {})
    .then(
      () => assert.fail('HTTP still answers the disabled key'),
      (error: { errorName?: string; code?: number; message: string }) => error,
    );
  assert.equal(overHttp.errorName, 'invalid_credentials');

  const refused = await connection.request('private/get_open_orders', {});
  assert.equal(refused.result, undefined, 'the disabled key still works on the connection');
  assert.equal(refused.error?.code, 13004);
  // HTTP cannot tell an unknown key from a bad signature (it names neither); the session knows.
  assert.match(refused.error?.message ?? '', /disabled/);
  await until(() => connection.closed !== null);
  assert.equal(connection.closed!.code, 1008);
  assert.match(connection.closed!.reason, /disabled/);
  // Ended as on a disconnect: its cancel-on-disconnect ran.
  await until(() => orderState(placed.order.orderId).orderState === 'cancelled');
  assert.equal(orderState(placed.order.orderId).cancelReason, 'cancel_on_disconnect');
});

/**
 * A connection authenticated with `credential` that subscribes to its orders, rests one and turns
 * cancel-on-disconnect on.
 */
async function listeningWithOrder(credential: Harness['credentials'][number]) {
  const connection = await connect();
  assert.equal((await connection.auth(credential, engine.now())).error, undefined);
  await connection.call('private/subscribe', { channels: ['user.orders.any.any'] });
  const placed = (await connection.call('private/buy', {
    instrumentName: PERP,
    quantity: '10',
    price: '30000',
  })) as {
    order: { orderId: string };
  };
  await connection.call('private/enable_cancel_on_disconnect', {});
  return { connection, placed };
}

test('a connection that only listens is ended by the periodic check within the key cache’s TTL', async () => {
  const credential = harness.credentials[0]!;
  const { connection, placed } = await listeningWithOrder(credential);
  const pushed = connection.pushes.length;

  disableKey(credential.apiKey);
  engine.clock.advance(DEFAULT_KEY_CACHE_TTL_MS);
  await until(() => connection.closed !== null).catch(() =>
    assert.fail('the connection of a disabled key is still open'),
  );
  assert.equal(connection.closed!.code, 1008);
  await until(() => orderState(placed.order.orderId).orderState === 'cancelled');
  assert.equal(orderState(placed.order.orderId).cancelReason, 'cancel_on_disconnect');
  // The cancel's push did not reach it: the subscriptions went with the session.
  assert.equal(
    connection.pushes.slice(pushed).filter((push) => push.params?.channel === 'user.orders.any.any').length,
    0,
  );
  // A new connection cannot authenticate with the key either.
  const again = await connect();
  assert.equal((await again.auth(credential, engine.now())).error?.code, 13004);
});

test('a key disabled after the first periodic check is ended by a later one', async () => {
  const credential = harness.credentials[0]!;
  const { connection, placed } = await listeningWithOrder(credential);

  // The first periodic check finds the key working: the connection stays, and the check re-arms.
  engine.clock.advance(DEFAULT_KEY_CACHE_TTL_MS);
  assert.equal(((await connection.call('private/get_open_orders', {})) as unknown[]).length, 1);
  assert.equal(connection.closed, null);

  disableKey(credential.apiKey);
  engine.clock.advance(DEFAULT_KEY_CACHE_TTL_MS);
  await until(() => connection.closed !== null).catch(() =>
    assert.fail('the connection of a key disabled after the first check is still open'),
  );
  assert.equal(connection.closed!.code, 1008);
  await until(() => orderState(placed.order.orderId).orderState === 'cancelled');
  assert.equal(orderState(placed.order.orderId).cancelReason, 'cancel_on_disconnect');
});

test('connections whose key still works are left alone by the periodic check', async () => {
  const connection = await connect();
  assert.equal((await connection.auth(harness.credentials[1]!, engine.now())).error, undefined);
  engine.clock.advance(3 * DEFAULT_KEY_CACHE_TTL_MS);
  assert.deepEqual(await connection.call('private/get_open_orders', {}), []);
  assert.equal(connection.closed, null);
});

test('a failed public/auth is answered with its error and keeps the connection’s key and session', async () => {
  const [first, second] = [harness.credentials[0]!, harness.credentials[1]!];
  const connection = await connect();
  const accepted = await connection.auth(first, engine.now());
  const firstUser = (accepted.result as { userId: number }).userId;
  await connection.call('private/enable_cancel_on_disconnect', {});
  await connection.call('private/subscribe', { channels: ['user.orders.any.any'] });

  const refused = await connection.auth(second, engine.now(), 'AAAA');
  assert.equal(refused.error?.code, 13004, 'the failure is answered');
  // Still the first key's session: its orders, its cancel-on-disconnect, its subscription.
  const placed = (await connection.call('private/buy', {
    instrumentName: PERP,
    quantity: '10',
    price: '30000',
  })) as {
    order: { orderId: string };
  };
  assert.equal(engine.reads.order(placed.order.orderId)?.accountId, first.accountIds[0]);
  assert.notEqual(firstUser, undefined);
  assert.deepEqual(await connection.call('private/get_cancel_on_disconnect', {}), {
    scope: 'connection',
    enabled: true,
  });
  await until(() =>
    connection.pushes.some(
      (push) =>
        push.params?.channel === 'user.orders.any.any' && JSON.stringify(push).includes(placed.order.orderId),
    ),
  );
});
