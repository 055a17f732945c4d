import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { WebSocketServer } from 'ws';
import { ChannelsParams } from '../src/api/schemas/methods.ts';
import { until } from '../test/support/until.ts';
import { SUBSCRIBE_CHANNELS_PER_CALL, WsClient } from './ws-client.ts';

/**
 * A server that drops the first FLAKY connections as soon as they try to authenticate, then
 * answers auth and subscribe: each drop lands inside the client's reconnect loop.
 */
const FLAKY = 6;
let server: WebSocketServer;
let url = '';
let connections = 0;

before(async () => {
  server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  server.on('connection', (socket) => {
    const number = ++connections;
    socket.on('message', (data) => {
      const { rid, method, params } = JSON.parse(data.toString()) as {
        rid: number;
        method: string;
        params: { channels?: string[] };
      };
      if (method === 'public/auth' && number > 1 && number <= FLAKY + 1) {
        socket.terminate();
        return;
      }
      const result = method.endsWith('subscribe') ? params.channels : { accessToken: 'x' };
      socket.send(JSON.stringify({ rid, result }));
    });
  });
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

test('connections dropped during a reconnect are retried by one loop, not one loop per drop', async () => {
  const client = new WsClient({
    url,
    credentials: { apiKey: 'k', apiSecret: 's' },
    reconnectDelayMs: 1,
  });
  await client.connect();
  await client.auth();
  await client.subscribe(['ticker.BTC-PERPETUAL']);
  const reconnected = new Promise<void>((resolve) => {
    client.onReconnected = resolve;
  });
  client.dropConnection();
  await reconnected;
  // The first connection, FLAKY dropped during re-auth, and the one that succeeded.
  assert.equal(connections, FLAKY + 2);
  assert.ok(client.connected);
  await client.close();
  assert.equal(connections, FLAKY + 2, 'no loop left running after close');
});

test('a connect() that fails rejects and leaves no reconnect loop behind (the process can exit)', async () => {
  const closed = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((resolve) => closed.once('listening', () => resolve()));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const client = new WsClient({ url: `ws://127.0.0.1:${port}`, reconnectDelayMs: 1 });
  await assert.rejects(client.connect(), /ECONNREFUSED/);
  // The socket's close follows its error within a turn or two of the event loop.
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
  assert.equal((client as unknown as { reconnecting: boolean }).reconnecting, false);
  assert.equal(client.connected, false);
  await client.close();
});

test('a call with no answer rejects after timeoutMs (virtual timers), and a late answer is ignored', async (t) => {
  const silent = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((resolve) => silent.once('listening', () => resolve()));
  const client = new WsClient({
    url: `ws://127.0.0.1:${(silent.address() as AddressInfo).port}`,
    reconnect: false,
    timeoutMs: 5_000,
  });
  try {
    await client.connect();
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const call = client.call('public/time');
    t.mock.timers.tick(4_999);
    let settled = false;
    void call.then(
      () => {
        settled = true;
      },
      () => {
        settled = true;
      },
    );
    await Promise.resolve();
    assert.equal(settled, false, 'still waiting before the timeout');
    t.mock.timers.tick(1);
    await assert.rejects(call, /public\/time: no answer within 5000 ms/);
  } finally {
    t.mock.timers.reset();
    await client.close();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  }
});

test('the channels a reconnect resubscribes per call are at most what the service takes in one', () => {
  assert.equal(SUBSCRIBE_CHANNELS_PER_CALL, ChannelsParams.properties.channels.maxItems);
});

test('a reconnect due when the client is closed and connected again does not replace the new connection', async (t) => {
  const client = new WsClient({ url, reconnectDelayMs: 1_000 });
  await client.connect();
  t.mock.timers.enable({ apis: ['setTimeout'] });
  try {
    client.dropConnection();
    // The drop's reconnect waits for its delay (virtual) ...
    while ((client as unknown as { reconnecting: boolean }).reconnecting === false) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    await client.close();
    await client.connect();
    const opened = connections;
    // ... which comes due on the new session: that loop is over, it opens nothing.
    t.mock.timers.tick(1_000);
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    assert.ok(client.connected);
    // Had the loop opened a socket, it would be the client's by now and carry this call.
    assert.deepEqual(await client.call('public/test', {}), { accessToken: 'x' });
    assert.equal(connections, opened);
  } finally {
    t.mock.timers.reset();
    await client.close();
  }
});

test('onDisconnected gets the code and reason of a close by the server, not of close() or connect()', async () => {
  const closing = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((resolve) => closing.once('listening', () => resolve()));
  closing.on('connection', (socket) => {
    socket.on('message', (data) => {
      const { rid, method } = JSON.parse(data.toString()) as { rid: number; method: string };
      if (method === 'public/test') socket.close(1008, 'slow consumer');
      else socket.send(JSON.stringify({ rid, result: {} }));
    });
  });
  const client = new WsClient({
    url: `ws://127.0.0.1:${(closing.address() as AddressInfo).port}`,
    credentials: { apiKey: 'k', apiSecret: 's' },
    reconnect: false,
  });
  const seen: { code: number; reason: string }[] = [];
  client.onDisconnected = (close) => seen.push(close);
  try {
    await client.connect();
    await assert.rejects(client.call('public/test', {}), /connection closed/);
    assert.deepEqual(seen, [{ code: 1008, reason: 'slow consumer' }]);
    await client.connect();
    await client.connect();
    await client.close();
    assert.equal(seen.length, 1, 'a close or a new connect() by the caller is not reported');
  } finally {
    await client.close();
    await new Promise<void>((resolve) => closing.close(() => resolve()));
  }
});

test('a push that does not follow its channel’s last one is reported as a gap, before the listeners get it', async () => {
  const pushing = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((resolve) => pushing.once('listening', () => resolve()));
  const push = (socket: import('ws').WebSocket, channel: string, seq: number, snapshot = false) =>
    socket.send(
      JSON.stringify({
        method: 'subscription',
        params: snapshot ? { channel, seq, snapshot: true, data: [] } : { channel, seq, data: [] },
      }),
    );
  pushing.on('connection', (socket) => {
    socket.on('message', (data) => {
      const { rid, params } = JSON.parse(data.toString()) as { rid: number; params: { channels: string[] } };
      socket.send(JSON.stringify({ rid, result: params.channels }));
      // Channel a: a snapshot, then 2, then 4 (3 went missing); channel b: 1, 2 (no gap).
      push(socket, 'a', 1, true);
      push(socket, 'b', 1);
      push(socket, 'a', 2);
      push(socket, 'b', 2);
      push(socket, 'a', 4);
      // A fresh snapshot starts the count again: no gap.
      push(socket, 'a', 1, true);
      push(socket, 'a', 2);
    });
  });
  const client = new WsClient({
    url: `ws://127.0.0.1:${(pushing.address() as AddressInfo).port}`,
    reconnect: false,
  });
  const events: string[] = [];
  client.onGap = (gap) => events.push(`gap ${gap.channel} expected ${gap.expectedSeq} got ${gap.seq}`);
  try {
    await client.connect();
    await client.subscribe(['a', 'b'], (p) => events.push(`${p.channel} ${p.seq}`));
    await until(() => events.length === 8);
    assert.deepEqual(events, ['a 1', 'b 1', 'a 2', 'b 2', 'gap a expected 3 got 4', 'a 4', 'a 1', 'a 2']);
  } finally {
    await client.close();
    await new Promise<void>((resolve) => pushing.close(() => resolve()));
  }
});
