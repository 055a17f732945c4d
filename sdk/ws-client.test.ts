import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { WebSocketServer } from 'ws';
import { WsClient } from './ws-client.ts';

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
