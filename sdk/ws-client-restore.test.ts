/**
 * What a reconnect of the typed WebSocket client restores, and when it stops: against a local
 * server scripted per connection. Waits between attempts run on mocked timers.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { WebSocketServer } from 'ws';
import { until } from '../test/support/until.ts';
import { ApiError } from './errors.ts';
import { type ReconnectError, WsClient } from './ws-client.ts';

type Reply =
  | { result: unknown }
  | { error: { code: number; message: string; data?: Record<string, unknown> } }
  | 'drop'
  | 'hold';

/**
 * A server scripted per connection (numbered from 1): `reply` answers each request, drops the
 * connection, or holds the answer in `held` until the test sends it. Logs `n method` per request.
 */
async function scriptedServer(reply: (connection: number, method: string) => Reply) {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const log: string[] = [];
  const held: Array<() => void> = [];
  let connections = 0;
  server.on('connection', (socket) => {
    const number = ++connections;
    socket.on('message', (data) => {
      const { rid, method, params } = JSON.parse(data.toString()) as {
        rid: number;
        method: string;
        params: { channels?: string[] };
      };
      log.push(`${number} ${method}`);
      const answer = reply(number, method);
      if (answer === 'drop') {
        socket.terminate();
        return;
      }
      const send = () =>
        socket.send(
          JSON.stringify(
            answer === 'hold' || 'result' in answer
              ? { rid, result: method.endsWith('subscribe') ? params.channels : { accessToken: 'x' } }
              : { rid, error: answer.error },
          ),
        );
      if (answer === 'hold') held.push(send);
      else send();
    });
  });
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    log,
    held,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      }),
  };
}

const OK: Reply = { result: null };
const credentials = { apiKey: 'k', apiSecret: 's' };
const turns = async (count: number) => {
  for (let turn = 0; turn < count; turn++) await new Promise((resolve) => setImmediate(resolve));
};

test('a reconnect restores auth, heartbeat and channels, cancel-on-disconnect last; calls are refused until it is all back', async () => {
  const server = await scriptedServer((connection, method) =>
    connection === 2 && method === 'private/enable_cancel_on_disconnect' ? 'hold' : OK,
  );
  const client = new WsClient({ url: server.url, credentials, reconnectDelayMs: 1 });
  try {
    await client.connect();
    await client.auth();
    await client.call('public/set_heartbeat', { interval: 10 });
    await client.subscribe(['ticker.BTC-PERPETUAL']);
    await client.call('private/enable_cancel_on_disconnect', { scope: 'connection' });
    const reconnected = new Promise<void>((resolve) => {
      client.onReconnected = resolve;
    });
    client.dropConnection();
    await until(() => server.held.length === 1, 5_000);
    assert.equal(client.connected, false, 'not connected while cancel-on-disconnect is being restored');
    await assert.rejects(
      client.call('public/test', {}),
      /not connected/,
      'a call during the restore is refused, not sent before cancel-on-disconnect is back on',
    );
    server.held[0]!();
    await reconnected;
    assert.deepEqual(
      server.log.filter((line) => line.startsWith('2 ')),
      [
        '2 public/auth',
        '2 public/set_heartbeat',
        '2 private/subscribe',
        '2 private/enable_cancel_on_disconnect',
      ],
      'the restore re-authenticates, sets the heartbeat, resubscribes, and turns cancel-on-disconnect on last',
    );
    assert.equal(client.connected, true, 'connected once restored');
  } finally {
    await client.close();
    await server.close();
  }
});

test("a sign-in through call('public/auth') is restored with the client's credentials, as auth()'s is", async () => {
  const server = await scriptedServer(() => OK);
  const client = new WsClient({ url: server.url, credentials, reconnectDelayMs: 1 });
  try {
    await client.connect();
    await client.call('public/auth', { apiKey: 'k', timestamp: Date.now(), nonce: 'n-1', signature: 'x' });
    await client.subscribe(['user.orders.any.any']);
    await client.call('private/enable_cancel_on_disconnect', {});
    const reconnected = new Promise<void>((resolve) => {
      client.onReconnected = resolve;
    });
    client.dropConnection();
    await reconnected;
    assert.deepEqual(
      server.log.filter((line) => line.startsWith('2 ')),
      ['2 public/auth', '2 private/subscribe', '2 private/enable_cancel_on_disconnect'],
      'signed in again, its channels private, and cancel-on-disconnect back on',
    );
  } finally {
    await client.close();
    await server.close();
  }
});

test("a client without credentials signed in through call('public/auth'): the reconnect gives up instead of going on signed out", async () => {
  const server = await scriptedServer(() => OK);
  const client = new WsClient({ url: server.url, reconnectDelayMs: 1 });
  const errors: ReconnectError[] = [];
  client.onReconnectError = (error) => errors.push(error);
  let reconnects = 0;
  client.onReconnected = () => reconnects++;
  try {
    await client.connect();
    await client.call('public/auth', {
      apiKey: 'other',
      timestamp: Date.now(),
      nonce: 'n-2',
      signature: 'x',
    });
    await client.call('private/enable_cancel_on_disconnect', {});
    client.dropConnection();
    await until(() => errors.length > 0, 5_000);
    assert.deepEqual(
      errors.map((error) => error.kind),
      ['gave_up'],
      'the client says it cannot sign in again',
    );
    assert.match(errors[0]!.message, /credentials/, 'and why');
    assert.equal(reconnects, 0, 'it never reports a reconnect');
    assert.equal(server.connections(), 1, 'no connection was opened to carry on signed out');
    await assert.rejects(client.call('public/test', {}), /not connected/, 'calls are refused');
  } finally {
    await client.close();
    await server.close();
  }
});

test("signed in through call('public/auth') as another key: the first key's channels and listeners go, and a reconnect gives up", async () => {
  const server = await scriptedServer(() => OK);
  const client = new WsClient({ url: server.url, credentials, reconnectDelayMs: 1 });
  const errors: ReconnectError[] = [];
  client.onReconnectError = (error) => errors.push(error);
  try {
    await client.connect();
    await client.auth();
    await client.subscribe(['user.orders.any.any'], () => {});
    await client.call('private/enable_cancel_on_disconnect', {});
    await client.call('public/auth', {
      apiKey: 'other',
      timestamp: Date.now(),
      nonce: 'n-3',
      signature: 'x',
    });
    const inside = client as unknown as { subscribed: Set<string>; listeners: Map<string, unknown> };
    assert.deepEqual([...inside.subscribed], [], 'the service dropped them with the first key’s session');
    assert.equal(inside.listeners.size, 0);
    client.dropConnection();
    await until(() => errors.length > 0, 5_000);
    assert.deepEqual(
      errors.map((error) => error.kind),
      ['gave_up'],
    );
    assert.equal(server.connections(), 1, 'it never signs in as the first key, another account');
  } finally {
    await client.close();
    await server.close();
  }
});

test('a channel the service refuses on a resubscribe is dropped and reported; the others are resubscribed', async () => {
  let refused = false;
  const server = await scriptedServer((connection, method) => {
    if (connection !== 2 || method !== 'private/subscribe' || refused) return OK;
    refused = true;
    return { error: { code: 11042, message: 'permission denied', data: { field: 'channels[1]' } } };
  });
  const client = new WsClient({ url: server.url, credentials, reconnectDelayMs: 1 });
  const errors: ReconnectError[] = [];
  client.onReconnectError = (error) => errors.push(error);
  try {
    await client.connect();
    await client.auth();
    const held = ['ticker.BTC-PERPETUAL', 'block_rfq.maker.BTC', 'user.orders.any.any'];
    await client.subscribe(held, () => {});
    let reconnected = new Promise<void>((resolve) => {
      client.onReconnected = resolve;
    });
    client.dropConnection();
    await reconnected;
    assert.deepEqual(
      errors.map((error) => error.kind),
      ['channels_refused'],
    );
    assert.deepEqual([...errors[0]!.refusedChannels.keys()], ['block_rfq.maker.BTC']);
    assert.ok(errors[0]!.refusedChannels.get('block_rfq.maker.BTC')?.errorName === 'permission_denied');
    assert.deepEqual(
      server.log.filter((line) => line.startsWith('2 ')),
      ['2 public/auth', '2 private/subscribe', '2 private/subscribe'],
      'sent again without the refused channel',
    );
    // No longer held: the next reconnect has nothing to report.
    errors.length = 0;
    reconnected = new Promise<void>((resolve) => {
      client.onReconnected = resolve;
    });
    client.dropConnection();
    await reconnected;
    assert.deepEqual(errors, []);
    assert.deepEqual(
      server.log.filter((line) => line.startsWith('3 ')),
      ['3 public/auth', '3 private/subscribe'],
    );
  } finally {
    await client.close();
    await server.close();
  }
});

test('a resubscribe refused for a reason other than a channel fails the attempt, which is retried', async () => {
  const server = await scriptedServer((connection, method) =>
    connection === 2 && method === 'private/subscribe'
      ? { error: { code: 10028, message: 'too many requests' } }
      : OK,
  );
  const client = new WsClient({ url: server.url, credentials, reconnectDelayMs: 1 });
  try {
    await client.connect();
    await client.auth();
    await client.subscribe(['ticker.BTC-PERPETUAL']);
    const errors: ReconnectError[] = [];
    client.onReconnectError = (error) => errors.push(error);
    const reconnected = new Promise<void>((resolve) => {
      client.onReconnected = resolve;
    });
    client.dropConnection();
    await reconnected;
    assert.deepEqual(
      errors.map((error) => error.kind),
      ['retrying'],
      'the refused resubscribe failed that attempt and was reported as retrying',
    );
    assert.ok(
      errors[0]!.cause instanceof ApiError && errors[0]!.cause.errorName === 'too_many_requests',
      `the cause is the refusal: ${String(errors[0]?.cause)}`,
    );
    assert.deepEqual(
      server.log.filter((line) => line.startsWith('3 ')),
      ['3 public/auth', '3 private/subscribe'],
      'the next attempt resubscribed the channel',
    );
  } finally {
    await client.close();
    await server.close();
  }
});

test('reconnect: false: a dropped connection is not reconnected, however long one waits (virtual)', async (t) => {
  const server = await scriptedServer(() => OK);
  const client = new WsClient({ url: server.url, reconnect: false, reconnectDelayMs: 1 });
  let reconnects = 0;
  client.onReconnected = () => reconnects++;
  try {
    await client.connect();
    t.mock.timers.enable({ apis: ['setTimeout'] });
    client.dropConnection();
    await turns(5);
    t.mock.timers.tick(60_000);
    await turns(20);
    assert.equal(server.connections(), 1, 'no second connection was opened');
    assert.equal(reconnects, 0, 'onReconnected was not called');
    await assert.rejects(client.call('public/test', {}), /not connected/, 'calls are refused');
  } finally {
    t.mock.timers.reset();
    await client.close();
    await server.close();
  }
});

test('failed reconnect attempts back off: 20, 40, 80 ms of (virtual) wait before attempts 1 to 3', async (t) => {
  // The first connection works; every later one is dropped at its re-auth.
  const server = await scriptedServer((connection) => (connection > 1 ? 'drop' : OK));
  const client = new WsClient({ url: server.url, credentials, reconnectDelayMs: 20 });
  try {
    await client.connect();
    await client.auth();
    const failures: ReconnectError[] = [];
    client.onReconnectError = (error) => failures.push(error);
    t.mock.timers.enable({ apis: ['setTimeout'] });
    client.dropConnection();
    for (const [attempt, wait] of [
      [1, 20],
      [2, 40],
      [3, 80],
    ] as const) {
      // The wait before this attempt is armed once the loop runs (attempt 1) or the attempt
      // before it failed and was reported.
      await until(() => (client as unknown as { reconnecting: boolean }).reconnecting, 5_000);
      await until(() => failures.length === attempt - 1, 5_000);
      t.mock.timers.tick(wait - 1);
      await turns(20);
      assert.equal(server.connections(), attempt, `attempt ${attempt} waits its full ${wait} ms`);
      t.mock.timers.tick(1);
      await until(() => server.connections() === attempt + 1, 5_000);
    }
  } finally {
    t.mock.timers.reset();
    await client.close();
    await server.close();
  }
});
