import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { ApiError } from './errors.ts';
import { HttpClient } from './http-client.ts';

/** Answers every request with the status and body registered for its path. */
const answers = new Map<string, { status: number; body: string }>([
  ['/flat-ok', { status: 200, body: '{"succ":true,"code":0,"message":"","value":{"portfolioId":7}}' }],
  [
    '/flat-error',
    {
      status: 200,
      body: '{"succ":false,"code":20001,"message":"portfolio 9 not found","value":null,"data":{"field":"portfolioId"}}',
    },
  ],
  ['/envelope-error', { status: 413, body: '{"rid":null,"error":{"code":-32600,"message":"too large"}}' }],
  ['/not-json', { status: 502, body: '<html>bad gateway</html>' }],
  [
    '/api/public/time',
    { status: 503, body: '{"error":"Service Unavailable","message":"Service Unavailable","statusCode":503}' },
  ],
]);

describe('HttpClient.flat', () => {
  let server: Server;
  let client: HttpClient;

  before(async () => {
    server = createServer((request, response) => {
      const answer = answers.get(request.url ?? '') ?? { status: 404, body: '' };
      response.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    client = new HttpClient({ baseUrl: `http://127.0.0.1:${port}` });
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('resolves with value on success', async () => {
    assert.deepEqual(await client.flat('GET', '/flat-ok'), { portfolioId: 7 });
  });

  test('a flat refusal throws its code, message and data', async () => {
    await assert.rejects(client.flat('POST', '/flat-error', {}), (error: unknown) => {
      assert.ok(error instanceof ApiError);
      assert.equal(error.code, 20001);
      assert.equal(error.message, 'portfolio 9 not found');
      assert.deepEqual(error.data, { field: 'portfolioId' });
      return true;
    });
  });

  test('an envelope-shaped refusal still reports its real code and HTTP status', async () => {
    await assert.rejects(
      client.flat('POST', '/envelope-error', {}),
      (error: unknown) => error instanceof ApiError && error.code === -32600 && error.httpStatus === 413,
    );
  });

  test('an answer that is not JSON is code -1 with the status and text', async () => {
    await assert.rejects(
      client.flat('GET', '/not-json'),
      (error: unknown) =>
        error instanceof ApiError && error.code === -1 && /HTTP 502.*bad gateway/.test(error.message),
    );
  });
});

test("call: an error that is not an error object (a server's own 503) is code -1 with the status and text", async () => {
  const server = createServer((request, response) => {
    const answer = answers.get(request.url ?? '') ?? { status: 404, body: '' };
    response.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const client = new HttpClient({ baseUrl: `http://127.0.0.1:${port}` });
    await assert.rejects(client.call('public/time'), (error: unknown) => {
      assert.ok(error instanceof ApiError);
      assert.equal(error.code, -1);
      assert.equal(error.httpStatus, 503);
      assert.match(error.message, /HTTP 503.*Service Unavailable/);
      return true;
    });
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test('ApiError names the catalogue entry of its code', () => {
  const error = new ApiError({ code: 10009, message: 'not enough funds', data: { field: 'amount' } }, 200);
  assert.equal(error.errorName, 'not_enough_funds');
  assert.equal(error.code, 10009);
  assert.deepEqual(error.data, { field: 'amount' });
  assert.equal(new ApiError({ code: 424242, message: 'from a newer service' }, 200).errorName, null);
});
