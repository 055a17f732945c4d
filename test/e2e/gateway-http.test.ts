/** The gateway over HTTP, through the sdk, against a real server on a free port (fake venue). */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ApiError } from '../../sdk/errors.ts';
import { METHOD_NAMES } from '../../sdk/types.ts';
import { FakeVenue } from '../support/fake-venue.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';

const OPTION = 'BTC-PERPETUAL';

async function rejects(promise: Promise<unknown>, code: number, field?: string, httpStatus?: number) {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof ApiError, String(error));
    assert.equal(error.code, code, `${error.code} ${error.message}`);
    if (field !== undefined) assert.equal(error.data?.field, field);
    if (httpStatus !== undefined) assert.equal(error.httpStatus, httpStatus);
    return true;
  });
}

const JSON_BODY = { 'content-type': 'application/json' };
describe('gateway over HTTP', () => {
  let harness: Harness;
  let venue: FakeVenue;
  before(async () => {
    venue = new FakeVenue();
    harness = await startHarness({
      venue,
      config: { rateLimits: { nonMatching: { perSecond: 1000, burst: 1000 } } },
    });
  });
  after(() => harness.close());

  test('demo bootstrap: credentials.json (0600) with a taker, MAKER1, MAKER2 and a two-account user', () => {
    const path = join(harness.dataDir, 'credentials.json');
    assert.equal(statSync(path).mode & 0o777, 0o600);
    const creds = harness.credentials;
    assert.ok(creds.some((c) => c.roles.includes('taker')));
    assert.deepEqual(
      creds.filter((c) => c.roles.includes('maker')).map((c) => c.deskName),
      ['MAKER1', 'MAKER2'],
    );
    assert.ok(creds.some((c) => c.accountIds.length === 2));
    assert.equal(venue.submitted.filter((c) => c.type === 'create_account').length, 5);
  });

  test('public methods need no signature', async () => {
    const client = harness.http();
    assert.equal(await client.call('public/time', {}), venue.now());
    assert.deepEqual(await client.call('public/test', {}), { version: '1.0.0' });
    const instruments = await client.call('public/get_instruments', { currency: 'BTC', kind: 'future' });
    assert.ok(instruments.some((i) => i.instrumentName === OPTION));
    await rejects(client.call('public/test', { expectedResult: 'exception' }), 10001);
  });

  test('buy → open order with spec 2.6 fields; get_order_state, edit, cancel', async () => {
    const client = harness.http();
    const { order, trades } = await client.call('private/buy', {
      instrumentName: OPTION,
      quantity: '100',
      price: '50000',
      label: 'mine',
      timeInForce: 'good_til_cancelled',
    });
    assert.deepEqual(trades, []);
    assert.equal(order.orderState, 'open');
    assert.equal(order.quantity, '100');
    assert.equal(order.filledQuantity, '0');
    assert.equal(order.price, '50000');
    assert.equal(order.timeInforce, 'good_til_cancelled');
    assert.equal(order.api, true);
    assert.equal(order.replaced, false);
    assert.deepEqual(await client.call('private/get_order_state', { orderId: order.orderId }), order);
    const edited = await client.call('private/edit', {
      orderId: order.orderId,
      quantity: '200',
      price: '50500',
    });
    assert.equal(edited.order.replaced, true);
    assert.equal(edited.order.quantity, '200');
    const cancelled = await client.call('private/cancel', { orderId: order.orderId });
    assert.equal(cancelled.orderState, 'cancelled');
    assert.equal(cancelled.cancelReason, 'user_request');
  });

  test('a key cannot see or touch another user’s orders', async () => {
    const { order } = await harness
      .http(0)
      .call('private/sell', { instrumentName: OPTION, quantity: '10', price: '70000' });
    await rejects(
      harness.http(1).call('private/get_order_state', { orderId: order.orderId }),
      10004,
      'orderId',
    );
    await rejects(harness.http(1).call('private/cancel', { orderId: order.orderId }), 10004, 'orderId');
  });

  test('params rules: unknown field, wrong type, quantity vs contracts, timeInForce spellings, grids', async () => {
    const client = harness.http();
    await rejects(
      client.call('private/buy', {
        instrumentName: OPTION,
        quantity: '10',
        price: '1',
        colour: 'red',
      } as never),
      -32602,
      'colour',
      200,
    );
    await rejects(
      client.call('private/buy', { instrumentName: OPTION, quantity: 10, price: '1' } as never),
      -32602,
      'quantity',
    );
    await rejects(client.call('private/buy', { instrumentName: OPTION, price: '50000' }), -32000, 'quantity');
    await rejects(
      client.call('private/buy', { instrumentName: OPTION, quantity: '10', contracts: '2', price: '50000' }),
      -32602,
      'contracts',
    );
    const both = await client.call('private/buy', {
      instrumentName: OPTION,
      quantity: '20',
      contracts: '2',
      price: '50000',
    });
    assert.equal(both.order.contracts, '2');
    await rejects(
      client.call('private/buy', {
        instrumentName: OPTION,
        quantity: '10',
        price: '50000',
        timeInforce: 'fill_or_kill',
        timeInForce: 'good_til_day',
      }),
      -32602,
      'timeInForce',
    );
    // A value outside a fixed set is answered with the set.
    await assert.rejects(
      client.call('private/buy', {
        instrumentName: OPTION,
        quantity: '10',
        price: '1',
        type: 'iceberg',
      } as never),
      (error: Error) => /^type must be one of limit, stop_limit, .*trailing_stop$/.test(error.message),
    );
    const lower = await client.call('private/buy', {
      instrumentName: OPTION,
      quantity: '10',
      price: '50000',
      timeInforce: 'good_til_day',
    });
    assert.equal(lower.order.timeInforce, 'good_til_day');
    await rejects(
      client.call('private/buy', { instrumentName: OPTION, quantity: '10', price: '50000.3' }),
      10043,
      'price',
    );
    await rejects(
      client.call('private/buy', { instrumentName: 'NOPE-PERPETUAL', quantity: '10', price: '1' }),
      10020,
      'instrumentName',
    );
    await rejects(
      client.call('private/buy', {
        instrumentName: OPTION,
        quantity: '10',
        price: '50000',
        label: 'x'.repeat(65),
      }),
      -32602,
      'label',
    );
    await rejects(
      client.call('private/get_order_history_by_currency', { currency: 'BTC', count: 1001 }),
      -32602,
      'count',
    );
  });

  test('validUntil in the past → timed_out', async () => {
    await rejects(
      harness.http().call('private/sell', {
        instrumentName: OPTION,
        quantity: '10',
        price: '70000',
        validUntil: venue.now() - 1,
      }),
      13888,
    );
  });

  test('order history with continuation and account summary', async () => {
    const client = harness.http(2);
    for (let i = 0; i < 3; i++)
      await client.call('private/buy', { instrumentName: OPTION, quantity: '10', price: '40000' });
    assert.equal(await client.call('private/cancel_all_by_currency', { currency: 'BTC' }), 3);
    const query = { currency: 'BTC', count: 2, withContinuation: true, includeUnfilled: true };
    const first = await client.call('private/get_order_history_by_currency', query);
    assert.ok(!Array.isArray(first));
    assert.equal(first.orders.length, 2);
    assert.ok(first.continuation);
    const second = await client.call('private/get_order_history_by_currency', {
      ...query,
      continuation: first.continuation,
    });
    assert.ok(!Array.isArray(second));
    assert.equal(second.orders.length, 1);
    assert.equal(second.continuation, null);
    // Unfilled cancelled orders are history only with includeUnfilled; without withContinuation it is a list.
    assert.deepEqual(await client.call('private/get_order_history_by_currency', { currency: 'BTC' }), []);
    await rejects(
      client.call('private/get_order_history_by_currency', { currency: 'BTC', continuation: 'garbage' }),
      -32602,
      'continuation',
    );
    // A token says where the page starts: an offset on top of it is refused (0 is no offset).
    await rejects(
      client.call('private/get_order_history_by_currency', {
        ...query,
        continuation: first.continuation,
        offset: 1,
      }),
      -32602,
      'offset',
    );
    const fromToken = await client.call('private/get_order_history_by_currency', {
      ...query,
      continuation: first.continuation,
      offset: 0,
    });
    assert.deepEqual(fromToken, second);
    // Control characters never reach the read store's SQL (PostgreSQL refuses a NUL outright).
    await rejects(
      client.call('private/get_order_history_by_currency', { currency: 'BTC', continuation: '1:BTC-\u0000' }),
      -32602,
      'continuation',
    );
    await rejects(client.call('private/get_order_state', { orderId: 'BTC-\u0000' }), -32602, 'orderId');
    const summary = await client.call('private/get_account_summary', { currency: 'BTC' });
    assert.equal(summary.balance, '100');
    // A currency the venue holds nothing in is a typo, not an account of zeros.
    await rejects(client.call('private/get_account_summary', { currency: 'XYZ' }), -32602, 'currency');
  });

  test('authentication: statuses, skew with server time, tampering, replay and nonce reuse', async () => {
    const client = harness.http();
    const retryNonce = randomUUID();
    const body = JSON.stringify({ rid: 7, method: 'private/get_open_orders', params: {} });
    // No signature on a private method: 401.
    const unsigned = await fetch(`${harness.baseUrl}/api/private/get_open_orders`, {
      method: 'POST',
      headers: JSON_BODY,
      body,
    });
    assert.equal(unsigned.status, 401);
    assert.equal(
      ((await unsigned.json()) as { rid: unknown }).rid,
      7,
      'a refusal before the body is read still echoes its rid',
    );
    // Skew: 401 with serverTime.
    const skewed = await client.send(
      client.sign('POST', '/api/private/get_open_orders', body, randomUUID(), venue.now() - 20_000),
    );
    assert.equal(skewed.status, 401);
    assert.equal(
      (skewed.body as { error: { data: { serverTime: number } } }).error.data.serverTime,
      venue.now(),
    );
    // Tampered body: 401.
    const signed = client.sign('POST', '/api/private/get_open_orders', body, randomUUID());
    const tampered = await client.send({ ...signed, body: body.replace('7', '8') });
    assert.equal(tampered.status, 401);
    // A byte-identical retry returns the original answer and does not execute twice.
    const placeBody = JSON.stringify({
      rid: 9,
      method: 'private/buy',
      params: { instrumentName: OPTION, quantity: '10', price: '30000' },
    });
    const request = client.sign('POST', '/api/private/buy', placeBody, retryNonce);
    const before = venue.submitted.length;
    const first = await client.send(request);
    const retry = await client.send(request);
    assert.equal(first.status, 200);
    assert.equal(retry.text, first.text);
    assert.equal(venue.submitted.length, before + 1);
    // The same nonce on a different request: refused.
    const reused = await client.send(client.sign('POST', '/api/private/get_open_orders', body, retryNonce));
    assert.equal(reused.status, 401);
    assert.equal((reused.body as { error: { code: number } }).error.code, 13012);
    // A nonce that is not in UUID form (spec §5): 401 naming the header.
    const loose = await client.send(client.sign('POST', '/api/private/get_open_orders', body, 'n-1'));
    assert.equal(loose.status, 401);
    assert.equal(
      (loose.body as { error: { data: { field: string } } }).error.data.field,
      'Service-API-Nonce',
    );
  });

  test('a signed public call is checked as any signed call: a bad signature is 401 invalid_credentials', async () => {
    const client = harness.http();
    const body = JSON.stringify({ rid: 11, method: 'public/time', params: {} });
    const signed = client.sign('POST', '/api/public/time', body);
    // Signed, then tampered: the signature is of another body.
    const tampered = await client.send({ ...signed, body: body.replace('11', '12') });
    assert.equal(tampered.status, 401);
    assert.equal((tampered.body as { error: { code: number } }).error.code, 13004);
    // A signature that is no signature of this request at all.
    const forged = await client.send({
      ...signed,
      headers: { ...signed.headers, 'service-api-nonce': randomUUID(), 'service-api-signature': 'AAAA' },
    });
    assert.equal(forged.status, 401);
    assert.deepEqual(
      {
        rid: (forged.body as { rid: unknown }).rid,
        code: (forged.body as { error: { code: number } }).error.code,
      },
      { rid: 11, code: 13004 },
    );
    // Unsigned, the same call answers.
    const unsigned = await fetch(`${harness.baseUrl}/api/public/time`, {
      method: 'POST',
      headers: JSON_BODY,
      body,
    });
    assert.equal(unsigned.status, 200);
    assert.equal(((await unsigned.json()) as { result: number }).result, venue.now());
  });

  test('transport errors: not JSON 400, not an envelope 400, method mismatch, unknown method, body limit 413', async () => {
    const post = (path: string, body: string, headers: Record<string, string> = JSON_BODY) =>
      fetch(`${harness.baseUrl}${path}`, { method: 'POST', headers, body });
    // Spec §5: the body is JSON and says so.
    for (const type of [
      {} as Record<string, string>,
      { 'content-type': 'text/plain' },
      { 'content-type': 'application/x-www-form-urlencoded' },
    ]) {
      const wrong = await post(
        '/api/public/time',
        JSON.stringify({ rid: 1, method: 'public/time', params: {} }),
        type,
      );
      assert.equal(wrong.status, 400);
      const answer = (await wrong.json()) as { error: { data: { field: string } } };
      assert.equal(answer.error.data.field, 'Content-Type');
    }
    const notJson = await post('/api/public/time', '{');
    assert.equal(notJson.status, 400);
    const notJsonError = ((await notJson.json()) as { error: { code: number; data: unknown } }).error;
    assert.deepEqual([notJsonError.code, notJsonError.data], [-32700, { field: 'body' }]);
    // A body that is no object at all: 400, naming the body (SEMANTICS: every refusal names its field).
    const array = await post('/api/public/time', '[{"rid":1,"method":"public/time","params":{}}]');
    assert.equal(array.status, 400);
    const arrayError = ((await array.json()) as { error: { code: number; data: unknown } }).error;
    assert.deepEqual([arrayError.code, arrayError.data], [11050, { field: 'body' }]);
    assert.equal(
      (await post('/api/public/time', JSON.stringify({ rid: 'x', method: 'public/time' }))).status,
      400,
    );
    assert.equal(
      (await post('/api/public/time', JSON.stringify({ rid: 1, method: 'public/test', params: {} }))).status,
      400,
    );
    const unknown = await post(
      '/api/public/nope',
      JSON.stringify({ rid: 1, method: 'public/nope', params: {} }),
    );
    assert.equal(unknown.status, 200);
    assert.deepEqual(((await unknown.json()) as { rid: number; error: { code: number } }).error.code, -32601);
    // No route for the path and HTTP method: 404, naming the path.
    const unrouted = await fetch(`${harness.baseUrl}/api/public/time`);
    assert.equal(unrouted.status, 404);
    assert.deepEqual((await unrouted.json()) as unknown, {
      rid: null,
      error: { code: -32601, message: 'no route GET /api/public/time', data: { field: 'path' } },
    });
    const wsOnly = await post(
      '/api/public/set_heartbeat',
      JSON.stringify({ rid: 2, method: 'public/set_heartbeat', params: { interval: 30 } }),
    );
    const wsOnlyError = ((await wsOnly.json()) as { error: { code: number; message: string } }).error;
    assert.equal(wsOnlyError.code, -32601);
    assert.match(wsOnlyError.message, /public\/set_heartbeat is served over ws only/);
    const big = await post(
      '/api/public/time',
      JSON.stringify({ rid: 1, method: 'public/time', params: { x: 'y'.repeat(300_000) } }),
    );
    assert.equal(big.status, 413);
    // The refusal names what was exceeded and the limit.
    assert.deepEqual(((await big.json()) as { error: { data?: unknown } }).error.data, {
      field: 'body',
      maxBytes: 262_144,
    });
  });

  /** Sends `request` as raw bytes on a new connection; the status and body once the server closes it. */
  const raw = (request: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const { hostname, port } = new URL(harness.baseUrl);
      const socket = createConnection({ host: hostname, port: Number(port) });
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString('latin1');
      });
      socket.on('error', reject);
      socket.on('close', () => {
        const [head = '', body = ''] = text.split('\r\n\r\n');
        resolve({ status: Number(head.split(' ')[1]), body });
      });
      socket.end(request);
    });

  test('malformed HTTP is answered in the API shape, not with the server framework’s own body', async () => {
    const envelope = (body: string) => JSON.parse(body) as { rid: null; error: { code: number } };
    // A path that is no valid percent-encoding: bad_request in the path's shape.
    const badUrl = await raw(
      `POST /api/private/%ZZ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
    );
    assert.equal(badUrl.status, 400);
    assert.equal(envelope(badUrl.body).error.code, 11050);
    // What Node's parser refuses: an envelope, and the connection closes.
    const conflicting = await raw(
      `POST /api/public/time HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}`,
    );
    assert.equal(conflicting.status, 400);
    assert.deepEqual(envelope(conflicting.body), {
      rid: null,
      error: { code: 11050, message: 'the request is not valid HTTP', data: { field: 'request' } },
    });
    const garbage = await raw('\u0001\u0002 nonsense\r\n\r\n');
    assert.equal(garbage.status, 400);
    assert.equal(envelope(garbage.body).error.code, 11050);
  });

  test('headers over the size limit are answered 431 with a bad_request envelope, and the connection closes', async () => {
    // Node's default header limit is 16 KiB.
    const answer = await raw(
      `POST /api/public/time HTTP/1.1\r\nHost: x\r\nX-Filler: ${'a'.repeat(20_000)}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
    );
    assert.equal(answer.status, 431);
    assert.deepEqual(JSON.parse(answer.body), {
      rid: null,
      error: { code: 11050, message: 'the request headers are too large', data: { field: 'headers' } },
    });
  });

  test('docs: OpenAPI 3.1 lists every HTTP method; AsyncAPI lists the channels', async () => {
    const openapi = (await (await fetch(`${harness.baseUrl}/docs/openapi.json`)).json()) as {
      openapi: string;
      paths: Record<string, unknown>;
    };
    assert.equal(openapi.openapi, '3.1.0');
    for (const method of harness.gateway.methods.list()) {
      if (!method.transports || method.transports.includes('http'))
        assert.ok(openapi.paths[`/api/${method.name}`], method.name);
    }
    const asyncapi = (await (await fetch(`${harness.baseUrl}/docs/asyncapi.json`)).json()) as {
      channels: Record<string, unknown>;
    };
    assert.ok(asyncapi.channels['user.orders.{kind}.{currency}']);
    // Built once: later requests get the same bytes, as JSON.
    for (const path of ['/docs/openapi.json', '/docs/asyncapi.json']) {
      const [first, second] = await Promise.all([
        fetch(`${harness.baseUrl}${path}`),
        fetch(`${harness.baseUrl}${path}`),
      ]);
      assert.equal(second.headers.get('content-type'), 'application/json; charset=utf-8', path);
      assert.equal(await second.text(), await first.text(), path);
    }
  });

  test('the sdk knows every method the gateway registers (exact parity is checked on the whole service)', () => {
    const known = new Set<string>(METHOD_NAMES);
    const unknown = harness.gateway.methods
      .list()
      .map((m) => m.name)
      .filter((name) => !known.has(name));
    assert.deepEqual(unknown, []);
  });
});

describe('rate limits', () => {
  test('matching methods over the bucket get 429 with too_many_requests', async () => {
    const harness = await startHarness({
      config: { rateLimits: { matching: { perSecond: 0.001, burst: 2 } } },
    });
    try {
      const client = harness.http();
      await client.call('private/cancel_all', {});
      await client.call('private/cancel_all', {});
      await rejects(client.call('private/cancel_all', {}), 10028, undefined, 429);
      // Non-matching methods draw from their own bucket.
      await client.call('private/get_open_orders', {});
    } finally {
      await harness.close();
    }
  });
});
