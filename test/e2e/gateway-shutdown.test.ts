/**
 * A request that reaches the gateway while it shuts down is refused with an error envelope
 * (`unavailable`, HTTP 503), which every client of the envelope reads, not Fastify's own 503 body;
 * so is one written to an idle keep-alive connection as the stop begins (not cut with a reset).
 * `GET /health` keeps its own shape (`{status: 'unavailable', reason, time}`), as while running.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { test } from 'node:test';
import { ERROR_CATALOGUE } from '../../src/domain/errors.ts';
import { startHarness } from '../support/gateway-harness.ts';

test('a request arriving during shutdown gets an unavailable envelope, not a bare 503', async () => {
  const harness = await startHarness();
  const closing = harness.gateway.close();
  try {
    const answer = await harness.gateway.fastify.inject({
      method: 'POST',
      url: '/api/public/time',
      payload: JSON.stringify({ rid: 1, method: 'public/time', params: {} }),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(answer.statusCode, 503);
    assert.equal(answer.headers.connection, 'close');
    const body = JSON.parse(answer.body) as { rid: null; error: { code: number; message: string } };
    assert.equal(body.rid, null);
    assert.equal(body.error.code, ERROR_CATALOGUE.unavailable.code);
    assert.match(body.error.message, /shutting down/);
  } finally {
    await closing;
    await harness.close().catch(() => undefined);
  }
});

test('GET /health during shutdown answers 503 in its own shape, naming the reason, as a balancer reads it', async () => {
  const harness = await startHarness();
  const closing = harness.gateway.close();
  try {
    const answer = await harness.gateway.fastify.inject({ method: 'GET', url: '/health' });
    assert.equal(answer.statusCode, 503);
    assert.equal(answer.headers.connection, 'close');
    const body = JSON.parse(answer.body) as { status: string; reason: string; time: number };
    assert.equal(body.status, 'unavailable');
    assert.match(body.reason, /shutting down/);
    assert.equal(typeof body.time, 'number');
  } finally {
    await closing;
    await harness.close().catch(() => undefined);
  }
});

/** Writes `request` on `socket` and resolves with what comes back until the server closes it. */
function exchange(socket: Socket, request: string, untilText: string | null): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      if (untilText !== null && text.includes(untilText)) done();
    };
    const done = () => {
      socket.off('data', onData);
      socket.off('close', done);
      resolve(text);
    };
    socket.on('data', onData);
    socket.on('close', done);
    socket.on('error', () => undefined);
    socket.write(request);
  });
}

test('a request written to an idle keep-alive connection as the stop begins is refused with 503, not cut', async () => {
  const harness = await startHarness();
  const { port } = new URL(harness.baseUrl);
  const socket = connect(Number(port), '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  try {
    const first = await exchange(socket, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n', '}');
    assert.match(first, /^HTTP\/1\.1 200/);
    // The connection is idle and kept alive; the stop begins, and a request is already on its way.
    const closing = harness.gateway.close();
    const body = JSON.stringify({ rid: 7, method: 'public/time', params: {} });
    const answer = await exchange(
      socket,
      `POST /api/public/time HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      null,
    );
    assert.match(answer, /^HTTP\/1\.1 503/, `answered, not cut: ${JSON.stringify(answer)}`);
    assert.match(answer, /connection: close/i);
    assert.match(answer, new RegExp(`"code":${ERROR_CATALOGUE.unavailable.code}`));
    await closing;
  } finally {
    socket.destroy();
    await harness.close().catch(() => undefined);
  }
});
