import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { ERROR_CATALOGUE } from '../src/domain/errors.ts';
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

describe('HttpClient resends and re-signing on the flat routes', () => {
  /** A server whose `handle` sees each request with its signed headers; closed after `body`. */
  async function withServer(
    handle: (request: IncomingMessage, response: ServerResponse) => void,
    body: (baseUrl: string) => Promise<void>,
  ): Promise<void> {
    const server = createServer(handle);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      await body(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }
  const credentials = { apiKey: 'k', apiSecret: 's' };

  test('a flat call refused as signed before a crash is signed again past signedNotAfter, and so are the calls after it', async () => {
    const NOT_AFTER = 1_000_000;
    const seen: { ts: number; nonce: string }[] = [];
    await withServer(
      (request, response) => {
        const ts = Number(request.headers['service-api-timestamp']);
        seen.push({ ts, nonce: String(request.headers['service-api-nonce']) });
        const answer =
          ts <= NOT_AFTER
            ? {
                succ: false,
                code: ERROR_CATALOGUE.unavailable.code,
                message: 'restarted after a crash',
                value: null,
                data: { field: 'service-api-timestamp', signedNotAfter: NOT_AFTER },
              }
            : { succ: true, code: 0, message: '', value: { portfolioId: 5 } };
        request.resume();
        request.on('end', () => response.writeHead(200).end(JSON.stringify(answer)));
      },
      async (baseUrl) => {
        // The client's clock is still before the refused time.
        const client = new HttpClient({ baseUrl, credentials, now: () => NOT_AFTER - 5_000 });
        assert.deepEqual(await client.flat('POST', '/tt/core-broker/openapi/portfolios/submit', {}), {
          portfolioId: 5,
        });
        assert.equal(seen.length, 2, 'refused, then signed again');
        assert.equal(seen[0]!.ts, NOT_AFTER - 5_000);
        assert.equal(seen[1]!.ts, NOT_AFTER + 1);
        assert.notEqual(seen[1]!.nonce, seen[0]!.nonce, 'a new signature, not a resend');
        // The next call is signed past the refused time straight away.
        assert.deepEqual(await client.portfolioInfo(5), { portfolioId: 5 });
        assert.equal(seen.length, 3, 'one sending');
        assert.equal(seen[2]!.ts, NOT_AFTER + 1);
      },
    );
  });

  test('an answer that does not come within timeoutMs is waited for no longer: the same bytes are sent again', async () => {
    const seen: string[] = [];
    await withServer(
      (request, response) => {
        seen.push(String(request.headers['service-api-signature']));
        // The first request is never answered.
        if (seen.length === 1) return;
        response.writeHead(200).end('{"succ":true,"code":0,"message":"","value":{"portfolioId":9}}');
      },
      async (baseUrl) => {
        const client = new HttpClient({ baseUrl, credentials, retries: 1, timeoutMs: 200 });
        let timer: NodeJS.Timeout | undefined;
        const hung = new Promise((_, reject) => {
          timer = setTimeout(
            () => reject(new Error('no answer after 5 s: the attempt never timed out')),
            5_000,
          );
        });
        try {
          assert.deepEqual(await Promise.race([client.portfolioInfo(9), hung]), { portfolioId: 9 });
        } finally {
          clearTimeout(timer);
        }
        assert.equal(seen.length, 2);
        assert.equal(seen[1], seen[0], 'the very same signed request');
      },
    );
  });

  test('the last sending waits out answerDeadlineMs: an answer held by a stalled journal still arrives', async () => {
    const held: ServerResponse[] = [];
    let first = 0;
    await withServer(
      (request, response) => {
        request.resume();
        held.push(response);
        // The service answers once its journal is back, 500 ms after the first sending.
        if (held.length === 1) {
          first = Date.now();
          setTimeout(() => {
            for (const each of held)
              each.writeHead(200).end('{"succ":true,"code":0,"message":"","value":{"portfolioId":4}}');
          }, 500);
        }
      },
      async (baseUrl) => {
        // Attempts of 100 ms: the resend at about 200 ms would time out at 300 without the deadline.
        const client = new HttpClient({
          baseUrl,
          credentials,
          retries: 1,
          timeoutMs: 100,
          answerDeadlineMs: 2_000,
        });
        assert.deepEqual(await client.portfolioInfo(4), { portfolioId: 4 });
        assert.equal(held.length, 2, 'sent twice, the same bytes');
        assert.ok(Date.now() - first >= 450);
        // A timeoutMs of its own, without a deadline, bounds every sending as it says.
        const bounded = new HttpClient({ baseUrl, credentials, retries: 0, timeoutMs: 100 });
        held.length = 0;
        const startedAt = Date.now();
        await assert.rejects(
          bounded.portfolioInfo(4),
          (error: unknown) => error instanceof Error && error.name === 'TimeoutError',
        );
        assert.ok(Date.now() - startedAt < 400, 'not held to the 35 s deadline');
      },
    );
  });

  test('no resend once 12 s have passed since the first sending: the timestamp would be stale', async () => {
    let requests = 0;
    const realNow = Date.now;
    let skew = 0;
    Date.now = () => realNow() + skew;
    try {
      await withServer(
        (request) => {
          requests++;
          // The answer is lost, and the clock moves on 12.5 s meanwhile.
          skew += 12_500;
          request.socket.destroy();
        },
        async (baseUrl) => {
          const client = new HttpClient({ baseUrl, credentials, retries: 3 });
          await assert.rejects(client.portfolioInfo(1), (error: unknown) => error instanceof TypeError);
          assert.equal(requests, 1, 'not sent again');
        },
      );
    } finally {
      Date.now = realNow;
    }
  });
});

test('flat GET refuses a body it would sign and never send, before any request', async () => {
  let requests = 0;
  const server = createServer((_request, response) => {
    requests++;
    response.writeHead(200).end('{"succ":true,"code":0,"message":"","value":null}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const client = new HttpClient({ baseUrl, credentials: { apiKey: 'k', apiSecret: 's' } });
    await assert.rejects(
      client.flat('GET', '/tt/core-broker/openapi/portfolios/info', { portfolioId: 1 }),
      (error: unknown) => error instanceof TypeError && /sends no body/.test(error.message),
    );
    assert.equal(requests, 0, 'nothing sent');
    assert.equal(await client.flat('GET', '/tt/core-broker/openapi/portfolios/info?portfolioId=1'), null);
    assert.equal(requests, 1);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
