/**
 * The gateway's own defences against one client holding the process's descriptors, over real
 * sockets on a free port: every TCP connection (HTTP, WebSocket, upgrading) counts against the
 * per-address and total caps, one over them is answered and closed at once, a closed one frees
 * its place; a request whose body never finishes is cut with 408 at the request timeout. And a
 * WebSocket dropped as a slow consumer is logged and counted.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { createConnection, type Socket } from 'node:net';
import { test } from 'node:test';
import { WebSocket } from 'ws';
import { SecretBox } from '../../src/api/auth/secret-box.ts';
import { SqliteKeyStore } from '../../src/api/auth/sqlite-key-store.ts';
import { createGateway, type Gateway, REFUSED_LINGER_MS } from '../../src/api/gateway.ts';
import { SLOW_CONSUMER_GRACE_MS } from '../../src/api/ws-session.ts';
import { VirtualClock } from '../../src/app/clock.ts';
import { type Config, type DeepPartial, loadConfig } from '../../src/app/config.ts';
import { ERROR_CATALOGUE } from '../../src/domain/errors.ts';
import { FakeVenue } from '../support/fake-venue.ts';
import { tempDir } from '../support/temp-dir.ts';
import { until } from '../support/until.ts';

interface Started {
  readonly gateway: Gateway;
  readonly port: number;
  readonly clock: VirtualClock;
  /** The reasons of the refusals the gateway counted, in order. */
  readonly refused: string[];
  readonly slow: string[];
  close(): Promise<void>;
}

async function start(http: DeepPartial<Config['http']>): Promise<Started> {
  const venue = new FakeVenue();
  const config = loadConfig({
    env: {},
    overrides: {
      port: 0,
      host: '127.0.0.1',
      logLevel: 'silent',
      dataDir: tempDir('gateway-limits-'),
      http,
    },
  });
  const keyStore = new SqliteKeyStore(':memory:', SecretBox.fromText('33'.repeat(32)));
  const clock = new VirtualClock(venue.now());
  const refused: string[] = [];
  const slow: string[] = [];
  const gateway = createGateway({
    config,
    commands: venue,
    reads: venue,
    history: venue.history,
    events: venue,
    keyStore,
    clock,
    metrics: {
      request: () => {},
      render: async () => ({ contentType: 'text/plain', body: '' }),
      connectionRefused: (reason) => refused.push(reason),
      slowConsumerDisconnect: (reason) => slow.push(reason),
    },
  });
  const { port } = await gateway.listen();
  return {
    gateway,
    port,
    clock,
    refused,
    slow,
    async close() {
      await gateway.close();
      keyStore.close();
    },
  };
}

/** A raw TCP connection, once connected (from `localAddress` when given). */
function connect(port: number, localAddress?: string, allowHalfOpen = false): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({
      port,
      host: '127.0.0.1',
      allowHalfOpen,
      ...(localAddress ? { localAddress } : {}),
    });
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Everything the server sends until the connection closes. */
function readToClose(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
    socket.on('error', () => {});
    socket.once('close', () => resolve(text));
  });
}

/** `GET /health` on a kept-alive connection: resolves with the status once the whole answer is in. */
function health(socket: Socket): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/content-length: (\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
      if (Buffer.byteLength(text) - end - 4 < length) return;
      socket.off('data', onData);
      socket.off('close', onClose);
      resolve(Number(text.split(' ')[1]));
    };
    const onClose = () => reject(new Error(`closed before an answer: ${JSON.stringify(text)}`));
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
  });
}

/** A connection over the caps: what it was answered (status and envelope) before it closed. */
async function refusedAnswer(port: number, localAddress?: string) {
  const socket = await connect(port, localAddress);
  const closed = readToClose(socket);
  // It may have sent its request already: the answer still comes, and nothing of it runs.
  socket.write('GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  const text = await closed;
  const body = text.slice(text.indexOf('\r\n\r\n') + 4);
  return {
    status: Number(text.split(' ')[1]),
    envelope: JSON.parse(body) as {
      rid: null;
      error: { code: number; message: string; data?: { field?: string } };
    },
  };
}

/** The sockets the server holds, refused ones included. */
function accepted(gateway: Gateway): Promise<number> {
  return new Promise((resolve, reject) =>
    gateway.fastify.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
  );
}

/** A WebSocket whose peer stopped reading: `bufferedAmount` stays where it was put. */
class PausedPeer extends EventEmitter {
  readonly closes: number[] = [];
  terminated = false;

  constructor(readonly bufferedAmount: number) {
    super();
  }

  send(): void {
    throw new Error('nothing is sent past the limit');
  }

  close(code: number): void {
    this.closes.push(code);
  }

  terminate(): void {
    this.terminated = true;
    this.emit('close');
  }
}

function openWs(port: number): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

test('one address: connections over its cap are answered 429 and closed; a closed one frees its place', {
  timeout: 10_000,
}, async () => {
  const s = await start({ maxConnectionsPerAddress: 2 });
  try {
    const first = await connect(s.port);
    const second = await connect(s.port);
    assert.equal(await health(first), 200);
    assert.equal(await health(second), 200);
    const over = await refusedAnswer(s.port);
    assert.equal(over.status, 429);
    assert.equal(over.envelope.rid, null);
    assert.equal(over.envelope.error.code, ERROR_CATALOGUE.too_many_requests.code);
    assert.match(over.envelope.error.message, /too many connections from this address/);
    assert.equal(over.envelope.error.data?.field, 'connection');
    assert.deepEqual(s.refused, ['address']);
    // Another address has its own places.
    const elsewhere = await connect(s.port, '127.0.0.2');
    assert.equal(await health(elsewhere), 200);
    assert.equal(s.gateway.connections(), 3);
    first.destroy();
    await until(() => s.gateway.connections() === 2);
    const third = await connect(s.port);
    assert.equal(await health(third), 200, 'the closed connection freed its place');
    for (const socket of [second, third, elsewhere]) socket.destroy();
    await until(() => s.gateway.connections() === 0);
  } finally {
    await s.close();
  }
});

test('one cap for connections of any kind: WebSockets and HTTP count together', {
  timeout: 10_000,
}, async () => {
  const s = await start({ maxConnectionsPerAddress: 2 });
  try {
    const ws = await openWs(s.port);
    const http = await connect(s.port);
    assert.equal(await health(http), 200);
    const refused = await new Promise<number>((resolve, reject) => {
      const over = new WebSocket(`ws://127.0.0.1:${s.port}/ws`);
      over.once('open', () => reject(new Error('a WebSocket over the cap was accepted')));
      over.once('error', () => {});
      over.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
    });
    assert.equal(refused, 429);
    assert.equal((await refusedAnswer(s.port)).status, 429);
    assert.deepEqual(s.refused, ['address', 'address']);
    ws.terminate();
    await until(() => s.gateway.connections() === 1);
    const again = await openWs(s.port);
    again.terminate();
    http.destroy();
    await until(() => s.gateway.connections() === 0);
  } finally {
    await s.close();
  }
});

test('the total cap counts every address: 503 unavailable past it', { timeout: 10_000 }, async () => {
  const s = await start({ maxConnections: 1, maxConnectionsPerAddress: 10 });
  try {
    const only = await connect(s.port);
    assert.equal(await health(only), 200);
    const over = await refusedAnswer(s.port, '127.0.0.3');
    assert.equal(over.status, 503);
    assert.equal(over.envelope.error.code, ERROR_CATALOGUE.unavailable.code);
    assert.deepEqual(s.refused, ['total']);
    only.destroy();
    await until(() => s.gateway.connections() === 0);
    const next = await connect(s.port, '127.0.0.3');
    assert.equal(await health(next), 200);
    next.destroy();
  } finally {
    await s.close();
  }
});

test('a refused client that never closes its side is cut after the linger, on the service clock', {
  timeout: 10_000,
}, async () => {
  const s = await start({ maxConnectionsPerAddress: 1 });
  try {
    const only = await connect(s.port);
    assert.equal(await health(only), 200);
    const stubborn = await connect(s.port, undefined, true);
    const closed = readToClose(stubborn);
    await new Promise<void>((resolve) => stubborn.once('end', resolve));
    assert.equal(stubborn.destroyed, false, 'the answer came with a FIN; the socket is still open');
    // The server still holds it (the refused socket counts among its accepted ones, not the caps').
    assert.equal(await accepted(s.gateway), 2);
    assert.equal(s.gateway.connections(), 1);
    s.clock.advance(REFUSED_LINGER_MS);
    assert.equal(await accepted(s.gateway), 1, 'cut when the linger is over');
    stubborn.destroy();
    assert.match(await closed, /^HTTP\/1.1 429/);
    only.destroy();
    await until(() => s.gateway.connections() === 0);
  } finally {
    await s.close();
  }
});

test('a body that never finishes is cut with 408 at the request timeout, and frees its place', {
  timeout: 10_000,
}, async () => {
  const s = await start({ requestTimeoutMs: 200 });
  try {
    const socket = await connect(s.port);
    const answer = readToClose(socket);
    socket.write(
      'POST /api/public/time HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{',
    );
    const text = await answer;
    assert.match(text, /^HTTP\/1.1 408 /);
    assert.match(text, /the request did not arrive in time/);
    assert.match(text, /"data":\{"field":"request"\}/);
    await until(() => s.gateway.connections() === 0);
  } finally {
    await s.close();
  }
});

test('a WebSocket dropped as a slow consumer is logged and counted', { timeout: 10_000 }, async () => {
  const s = await start({ wsMaxBufferedBytes: 1024 });
  try {
    // A socket whose peer stopped reading: 2 KiB already queued.
    const socket = new PausedPeer(2048);
    const warned: Array<[unknown, unknown]> = [];
    s.gateway.fastify.log.warn = ((fields: unknown, message: unknown) => {
      warned.push([fields, message]);
    }) as typeof s.gateway.fastify.log.warn;
    s.gateway.serveWebSocket(socket as unknown as WebSocket);
    socket.emit('message', Buffer.from('{"rid":1,"method":"public/time"}'), false);
    await until(() => s.slow.length > 0);
    assert.deepEqual(s.slow, ['connection']);
    assert.deepEqual(socket.closes, [1008]);
    assert.equal(warned.length, 1);
    assert.deepEqual(warned[0]![0], {
      connection: 1,
      address: null,
      bufferedBytes: 2048,
      reason: 'connection',
    });
    assert.match(String(warned[0]![1]), /slow consumer/);
    s.clock.advance(SLOW_CONSUMER_GRACE_MS);
    assert.equal(socket.terminated, true);
  } finally {
    await s.close();
  }
});

test('closing the gateway cuts a refused connection still kept for its client, without waiting for the linger', {
  timeout: 10_000,
}, async () => {
  const s = await start({ maxConnectionsPerAddress: 1 });
  const only = await connect(s.port);
  assert.equal(await health(only), 200);
  const stubborn = await connect(s.port, undefined, true);
  const closed = readToClose(stubborn);
  await new Promise<void>((resolve) => stubborn.once('end', resolve));
  assert.equal(stubborn.destroyed, false, 'the refused socket is kept for its client');
  only.destroy();
  // The service clock does not move: only close() itself can cut the refused socket.
  const outcome = await Promise.race([
    s.close().then(() => 'closed'),
    new Promise((resolve) => setTimeout(() => resolve('still waiting'), 2_000)),
  ]);
  stubborn.destroy(); // lets a close that waits for it finish, so a failure does not hang the run
  assert.equal(outcome, 'closed');
  assert.match(await closed, /^HTTP\/1.1 429/);
});
