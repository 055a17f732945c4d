/**
 * WebSocket connection limits over real sockets: an upgrade beyond the per-address (or total)
 * limit is answered 429 with the error envelope, and a closed connection frees its slot.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { WebSocket } from 'ws';
import { ChannelRegistry, Fanout } from '../../src/api/channels.ts';
import type { Dispatcher } from '../../src/api/dispatcher.ts';
import type { CommandPort } from '../../src/api/ports.ts';
import { WsGateway } from '../../src/api/ws-gateway.ts';
import { VirtualClock } from '../../src/app/clock.ts';
import { until } from '../support/until.ts';

function gatewayWith(limits: { maxConnections?: number; maxConnectionsPerAddress?: number }) {
  const channels = new ChannelRegistry();
  return new WsGateway(
    {
      dispatcher: {} as Dispatcher,
      channels,
      fanout: new Fanout(channels),
      commands: {} as CommandPort,
      reads: { openOrders: () => [], accountCancelOnDisconnect: () => false },
      clock: new VirtualClock(0),
      onUnexpected: (error) => {
        throw error;
      },
    },
    { maxMessageBytes: 65_536, ...limits },
  );
}

async function serve(gateway: WsGateway) {
  const server = createServer();
  server.on('upgrade', (request, socket, head) => gateway.handleUpgrade(request, socket, head));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws`;
  const open = (): Promise<WebSocket> =>
    new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      ws.once('open', () => resolve(ws));
      ws.once('error', reject);
    });
  const refused = (): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      ws.once('open', () => reject(new Error('an upgrade over the limit was accepted')));
      ws.once('error', () => {});
      ws.once('unexpected-response', (_request, response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      });
    });
  const close = async () => {
    await gateway.close(0);
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { open, refused, close };
}

test('over the per-address limit: 429 with the error envelope; a closed connection frees its slot', async () => {
  const gateway = gatewayWith({ maxConnectionsPerAddress: 2 });
  const { open, refused, close } = await serve(gateway);
  try {
    const first = await open();
    const second = await open();
    const over = await refused();
    assert.equal(over.status, 429);
    const envelope = JSON.parse(over.body) as { rid: null; error: { code: number; message: string } };
    assert.equal(envelope.rid, null);
    assert.equal(envelope.error.code, 10028);
    assert.match(envelope.error.message, /too many WebSocket connections/);
    assert.equal(gateway.connectionCount, 2);
    first.close();
    await until(() => gateway.connectionCount === 1);
    const third = await open();
    second.terminate();
    third.terminate();
    await until(() => gateway.connectionCount === 0);
  } finally {
    await close();
  }
});

test('the total limit counts every address', async () => {
  const gateway = gatewayWith({ maxConnections: 1, maxConnectionsPerAddress: 10 });
  const { open, refused, close } = await serve(gateway);
  try {
    const only = await open();
    assert.equal((await refused()).status, 429);
    only.terminate();
    await until(() => gateway.connectionCount === 0);
    (await open()).terminate();
  } finally {
    await close();
  }
});

test('only /ws is upgraded: another path (even one starting with /ws) is cut; a query string is fine', async () => {
  const gateway = gatewayWith({});
  const server = createServer();
  server.on('upgrade', (request, socket, head) => gateway.handleUpgrade(request, socket, head));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const attempt = (path: string): Promise<'open' | 'refused'> =>
    new Promise((resolve) => {
      const ws = new WebSocket(`${base}${path}`);
      ws.once('open', () => {
        ws.terminate();
        resolve('open');
      });
      ws.once('error', () => resolve('refused'));
    });
  try {
    assert.equal(await attempt('/wsx'), 'refused');
    assert.equal(await attempt('/ws/admin'), 'refused');
    assert.equal(await attempt('/'), 'refused');
    assert.equal(await attempt('/ws?client=sdk'), 'open');
    await until(() => gateway.connectionCount === 0);
  } finally {
    await gateway.close(0);
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
