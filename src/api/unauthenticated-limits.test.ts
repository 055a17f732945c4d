/**
 * Requests refused before a key's bucket is charged (failed authentication, unknown methods,
 * `authorization_required`, `forbidden`, bodies that are no envelope) still cost credit: the
 * client address's non-matching bucket, or the key's when one authenticated. Once it is empty
 * the answer is the usual 429 `too_many_requests`, over HTTP and the WebSocket alike.
 * Time is the gateway's virtual clock: no bucket refills unless the test advances it.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { WebSocket } from 'ws';
import { FakeVenue } from '../../test/support/fake-venue.ts';
import { tempDir } from '../../test/support/temp-dir.ts';
import { until } from '../../test/support/until.ts';
import { VirtualClock } from '../app/clock.ts';
import { loadConfig } from '../app/config.ts';
import { SecretBox } from './auth/secret-box.ts';
import { HEADER_NONCE, HEADER_SIGNATURE, HEADER_TIMESTAMP, signHttp, signWs } from './auth/signature.ts';
import { SqliteKeyStore } from './auth/sqlite-key-store.ts';
import { bootstrapDemo, type DemoCredential } from './bootstrap.ts';
import { createGateway, type Gateway } from './gateway.ts';
import type { ReadPort } from './ports.ts';

const BURST = 5;
const TOO_MANY = 10028;
const FLAT_URL = '/flat/limits/info';
/** A flat route that reaches the matching engine (as a portfolio submit could be declared). */
const FLAT_MATCHING_URL = '/flat/limits/place';
/** A flat route only keys with the `trade` role may call. */
const FLAT_TRADE_URL = '/flat/limits/trade';

interface Key {
  readonly apiKey: string;
  readonly apiSecret: string;
}

interface Answer {
  readonly status: number;
  readonly body: {
    rid?: number | null;
    error?: { code: number };
    result?: unknown;
    succ?: boolean;
    code?: number;
  };
}

describe('requests refused before a key bucket is charged', () => {
  let venue: FakeVenue;
  let clock: VirtualClock;
  let gateway: Gateway;
  let keyStore: SqliteKeyStore;
  let credentials: DemoCredential[];
  let takerOnly: Key;
  let port: number;

  before(async () => {
    venue = new FakeVenue();
    clock = new VirtualClock(venue.now());
    const dataDir = tempDir('limits-');
    const config = loadConfig({
      env: {},
      overrides: {
        port: 0,
        host: '127.0.0.1',
        logLevel: 'silent',
        dataDir,
        rateLimits: { nonMatching: { perSecond: 1, burst: BURST } },
      },
    });
    keyStore = new SqliteKeyStore(':memory:', SecretBox.fromText('33'.repeat(32)));
    credentials = (await bootstrapDemo({ keyStore, commands: venue, dataDir }))!;
    const user = credentials[0]!.userId;
    const created = keyStore.createApiKey({ userId: user, roles: ['taker'] }, venue.now());
    takerOnly = { apiKey: created.record.apiKey, apiSecret: created.apiSecret };
    gateway = createGateway({
      config,
      commands: venue,
      reads: venue as unknown as ReadPort,
      history: venue.history,
      events: venue,
      keyStore,
      clock,
      metrics: {
        request: () => undefined,
        render: async () => ({ contentType: 'text/plain; version=0.0.4', body: 'venue_up 1\n' }),
      },
    });
    gateway.registerFlatRoute({ method: 'GET', url: FLAT_URL, summary: 'test route', handler: () => 'ok' });
    gateway.registerFlatRoute({
      method: 'POST',
      url: FLAT_MATCHING_URL,
      summary: 'test matching route',
      matching: true,
      handler: () => 'placed',
    });
    gateway.registerFlatRoute({
      method: 'POST',
      url: FLAT_TRADE_URL,
      summary: 'test trading route',
      roles: ['trade'],
      handler: () => 'traded',
    });
    port = (await gateway.listen()).port;
  });
  after(async () => {
    await gateway.close();
    keyStore.close();
  });

  const key = (index: number): Key => credentials[index]!;

  /** POSTs an envelope to /api/<method> from `address`, signed by `signer` when given. */
  async function call(
    address: string,
    method: string,
    options: { signer?: Key; badSignature?: boolean; raw?: string; authorization?: string } = {},
  ): Promise<Answer> {
    const raw = options.raw ?? JSON.stringify({ rid: 7, method, params: {} });
    const url = `/api/${method}`;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (options.signer !== undefined) {
      const ts = String(venue.now());
      const nonce = randomUUID();
      const signature = options.badSignature
        ? 'bm90IHRoZSBzaWduYXR1cmUgb2YgdGhpcyByZXF1ZXN0IGF0IGFsbA=='
        : signHttp(options.signer.apiSecret, ts, nonce, 'POST', url, raw);
      headers.authorization = `Bearer ${options.signer.apiKey}`;
      headers[HEADER_TIMESTAMP] = ts;
      headers[HEADER_NONCE] = nonce;
      headers[HEADER_SIGNATURE] = signature;
    }
    if (options.authorization !== undefined) headers.authorization = options.authorization;
    const response = await gateway.fastify.inject({
      method: 'POST',
      url,
      headers,
      payload: raw,
      remoteAddress: address,
    });
    return { status: response.statusCode, body: response.json() };
  }

  const code = (answer: Answer) => answer.body.error?.code;

  /** Sends `count` requests, answering the list of (status, error code) pairs. */
  async function flood(count: number, send: () => Promise<Answer>): Promise<string[]> {
    const seen: string[] = [];
    for (let i = 0; i < count; i++) {
      const answer = await send();
      seen.push(`${answer.status}:${code(answer) ?? answer.body.code ?? 'ok'}`);
    }
    return seen;
  }

  const times = (n: number, value: string) => Array.from({ length: n }, () => value);

  /** An open WebSocket to the gateway (from `localAddress`, when given), collecting what it is sent. */
  async function collectingSocket(localAddress?: string) {
    const socket = new WebSocket(
      `ws://127.0.0.1:${port}/ws`,
      localAddress === undefined ? {} : { localAddress },
    );
    const answers: { rid: number | null; error?: { code: number } }[] = [];
    socket.on('message', (data) => answers.push(JSON.parse(String(data))));
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    return { socket, answers };
  }

  test('the API documents and /metrics cost their address a credit each, as a public method does; /health stays free', async () => {
    const scraper = '10.0.9.1';
    const get = async (url: string) => {
      const response = await gateway.fastify.inject({ method: 'GET', url, remoteAddress: scraper });
      return `${response.statusCode}:${response.statusCode === 429 ? response.json().error.code : 'ok'}`;
    };
    const urls = ['/docs', '/docs/openapi.json', '/docs/asyncapi.json', '/docs/errors.json', '/metrics'];
    const seen: string[] = [];
    for (const url of urls) seen.push(await get(url));
    assert.deepEqual(seen, times(BURST, '200:ok'), 'the burst pays for one of each');
    for (const url of urls)
      assert.equal(await get(url), `429:${TOO_MANY}`, `${url} once the address has no credit`);
    assert.equal((await call(scraper, 'public/time')).status, 429, 'the same bucket as its public methods');
    assert.equal(await get('/health'), '200:ok', 'a balancer polls /health: never charged');
    assert.equal(await get('/health'), '200:ok', 'a balancer polls /health: never charged');
    const other = await gateway.fastify.inject({ method: 'GET', url: '/metrics', remoteAddress: '10.0.9.2' });
    assert.equal(other.statusCode, 200, 'another address has its own credit');
    assert.equal(other.body, 'venue_up 1\n');
    clock.advance(1000);
    assert.equal(await get('/metrics'), '200:ok', 'one second refills one credit');
    assert.equal(await get('/metrics'), `429:${TOO_MANY}`, 'and only one');
  });

  test('bad signatures from one address: 401 for the burst, then 429; another address and good keys are unaffected', async () => {
    const attacker = '10.0.0.1';
    const seen = await flood(BURST + 3, () =>
      call(attacker, 'private/get_open_orders', { signer: key(0), badSignature: true }),
    );
    assert.deepEqual(seen, [...times(BURST, '401:13004'), ...times(3, `429:${TOO_MANY}`)]);
    const refused = await call(attacker, 'private/get_open_orders', { signer: key(0), badSignature: true });
    assert.equal(refused.body.rid, 7);
    const refusedData = (refused.body.error as { data?: { bucket?: string; field?: string } }).data;
    assert.equal(refusedData?.bucket, 'non_matching');
    assert.equal(refusedData?.field, 'method', 'the 429 names the field at fault (stop 43)');
    // The address's bucket is the one its unsigned public requests draw from.
    assert.equal((await call(attacker, 'public/time')).status, 429);
    // The key whose name the attacker used keeps its own credit, from anywhere.
    const good = await call('10.0.0.2', 'private/get_open_orders', { signer: key(0) });
    assert.equal(good.status, 200);
    assert.ok(Array.isArray(good.body.result));
    assert.equal((await call('10.0.0.2', 'public/time')).status, 200);
    // A signed request with a good key from the throttled address is charged to its key only.
    assert.equal((await call(attacker, 'private/get_open_orders', { signer: key(1) })).status, 200);
    // The bucket refills as usual: one second, one more credit.
    clock.advance(1000);
    assert.equal(
      (await call(attacker, 'private/get_open_orders', { signer: key(0), badSignature: true })).status,
      401,
    );
    assert.equal(
      (await call(attacker, 'private/get_open_orders', { signer: key(0), badSignature: true })).status,
      429,
    );
  });

  test('unknown keys and requests without Authorization draw from the address too', async () => {
    const address = '10.0.0.3';
    const unknown = { apiKey: 'no-such-key', apiSecret: 'x' };
    const seen = [
      ...(await flood(3, () => call(address, 'private/get_open_orders', { signer: unknown }))),
      ...(await flood(3, () => call(address, 'private/get_open_orders'))),
    ];
    assert.deepEqual(seen, [
      '401:13004',
      '401:13004',
      '401:13004',
      '401:10000',
      '401:10000',
      `429:${TOO_MANY}`,
    ]);
  });

  test('unknown methods from one address: method_not_found for the burst, then 429', async () => {
    const address = '10.0.0.4';
    const seen = await flood(BURST + 2, () => call(address, 'public/nope'));
    assert.deepEqual(seen, [...times(BURST, '200:-32601'), ...times(2, `429:${TOO_MANY}`)]);
    assert.equal((await call('10.0.0.5', 'public/nope')).status, 200);
    assert.equal((await call('10.0.0.5', 'public/time')).status, 200);
  });

  test('bodies that are no envelope from one address are charged as well', async () => {
    const address = '10.0.0.6';
    const seen = await flood(BURST + 1, () => call(address, 'public/time', { raw: '{"rid": 1, "method"' }));
    assert.deepEqual(seen, [...times(BURST, '400:-32700'), `429:${TOO_MANY}`]);
  });

  test('a key refused forbidden or calling an unknown method is charged on its own bucket, not its address', async () => {
    const address = '10.0.0.7';
    const seen = [
      ...(await flood(3, () => call(address, 'private/enable_cancel_on_disconnect', { signer: takerOnly }))),
      ...(await flood(3, () => call(address, 'private/nope', { signer: takerOnly }))),
    ];
    assert.deepEqual(seen, [
      '200:13021',
      '200:13021',
      '200:13021',
      '200:-32601',
      '200:-32601',
      `429:${TOO_MANY}`,
    ]);
    // The key's bucket is empty for everything it calls; the address's is untouched.
    assert.equal((await call(address, 'private/get_open_orders', { signer: takerOnly })).status, 429);
    assert.equal((await call(address, 'public/time')).status, 200);
    assert.equal((await call(address, 'private/get_open_orders', { signer: key(2) })).status, 200);
  });

  test('a flat route refuses failed authentication with 429 once the address has no credit', async () => {
    const address = '10.0.0.8';
    const seen: string[] = [];
    for (let i = 0; i < BURST + 1; i++) {
      const response = await gateway.fastify.inject({ method: 'GET', url: FLAT_URL, remoteAddress: address });
      const body = response.json() as { code: number };
      seen.push(`${response.statusCode}:${body.code}`);
    }
    assert.deepEqual(seen, [...times(BURST, '401:10000'), `429:${TOO_MANY}`]);
  });

  /** A signed request to a flat route from `address`: (status, flat code) and the body. */
  async function flat(address: string, signer: Key, method: 'GET' | 'POST', url: string) {
    const raw = method === 'POST' ? '{}' : '';
    const ts = String(venue.now());
    const nonce = randomUUID();
    const response = await gateway.fastify.inject({
      method,
      url,
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${signer.apiKey}`,
        [HEADER_TIMESTAMP]: ts,
        [HEADER_NONCE]: nonce,
        [HEADER_SIGNATURE]: signHttp(signer.apiSecret, ts, nonce, method, url, raw),
      },
      ...(method === 'POST' ? { payload: raw } : {}),
      remoteAddress: address,
    });
    const body = response.json() as {
      succ: boolean;
      code: number;
      value: unknown;
      data?: { bucket?: string; field?: string };
    };
    return { seen: `${response.statusCode}:${body.code}`, body };
  }

  test("a key's signed requests to a flat route draw from its own bucket", async () => {
    // A key of its own, so no other test has drawn on its buckets; its matching bucket holds 2.
    const created = keyStore.createApiKey(
      {
        userId: credentials[0]!.userId,
        roles: ['trade'],
        rateLimits: { matching: { perSecond: 1, burst: 2 } },
      },
      venue.now(),
    );
    const signer = { apiKey: created.record.apiKey, apiSecret: created.apiSecret };
    const seen: string[] = [];
    let last: Awaited<ReturnType<typeof flat>> | undefined;
    // From a new address each time: only the key's bucket can run out.
    for (let i = 0; i < BURST + 1; i++) {
      last = await flat(`10.1.0.${i}`, signer, 'GET', FLAT_URL);
      seen.push(last.seen);
    }
    assert.deepEqual(seen, [...times(BURST, '200:0'), `429:${TOO_MANY}`]);
    // In the flat shape.
    assert.equal(last!.body.succ, false);
    assert.equal(last!.body.value, null);
    assert.equal(last!.body.data?.bucket, 'non_matching');
    assert.equal(last!.body.data?.field, 'method', 'the flat 429 names the field at fault (stop 43)');
    // A matching route draws from the key's matching bucket: untouched so far, then empty.
    const matching: string[] = [];
    for (let i = 0; i < 3; i++)
      matching.push((await flat('10.1.1.0', signer, 'POST', FLAT_MATCHING_URL)).seen);
    assert.deepEqual(matching, ['200:0', '200:0', `429:${TOO_MANY}`]);
    const refused = await flat('10.1.1.0', signer, 'POST', FLAT_MATCHING_URL);
    assert.equal(refused.body.data?.bucket, 'matching');
  });

  test('over the WebSocket, messages that are not envelopes are charged to the address too', async () => {
    const { socket, answers } = await collectingSocket('127.0.0.3');
    try {
      for (let i = 0; i < 7; i++) socket.send(i % 2 === 0 ? 'not json' : JSON.stringify({ rid: i }));
      await until(() => answers.length === 7);
      const codes = answers.map((answer) => answer.error?.code);
      assert.ok(
        codes.slice(0, 5).every((code) => code !== TOO_MANY),
        `the burst answered: ${codes}`,
      );
      assert.deepEqual(codes.slice(5), [TOO_MANY, TOO_MANY]);
    } finally {
      socket.close();
    }
  });

  test('over the WebSocket, binary frames are charged to the address like any other message that is not an envelope', async () => {
    const { socket, answers } = await collectingSocket('127.0.0.5');
    try {
      for (let i = 0; i < BURST + 2; i++) socket.send(Buffer.from('not an envelope'), { binary: true });
      await until(() => answers.length === BURST + 2);
      assert.deepEqual(
        answers.slice(BURST).map((answer) => answer.error?.code),
        [TOO_MANY, TOO_MANY],
        'past the burst, a flood of binary frames is throttled',
      );
      // The address has nothing left for a request either.
      assert.equal((await call('127.0.0.5', 'public/time')).status, 429);
    } finally {
      socket.close();
    }
  });

  test('over the WebSocket, refused messages draw from the address shared with HTTP', async () => {
    // The socket comes from 127.0.0.1, the address no other test here uses.
    const { socket, answers } = await collectingSocket();
    try {
      const messages = [
        { rid: 1, method: 'public/nope', params: {} },
        { rid: 2, method: 'private/get_open_orders', params: {} },
        { rid: 3, method: 'public/time', params: {} },
        { rid: 4, method: 'private/nope', params: {} },
        { rid: 5, method: 'public/nope', params: {} },
        { rid: 6, method: 'public/nope', params: {} },
        { rid: 7, method: 'private/get_open_orders', params: {} },
      ];
      for (const message of messages) socket.send(JSON.stringify(message));
      await until(() => answers.length === messages.length);
      answers.sort((a, b) => (a.rid ?? 0) - (b.rid ?? 0));
      const codes = answers.map((answer) => answer.error?.code ?? 'ok');
      assert.equal(codes[0], -32601);
      assert.equal(codes[1], 10000);
      assert.equal(codes[2], 'ok');
      assert.equal(codes[3], -32601);
      assert.equal(codes[4], -32601);
      // Five credits: the sixth and seventh are refused for the rate, whatever they ask.
      assert.deepEqual(codes.slice(5), [TOO_MANY, TOO_MANY]);
      // One bucket per address for HTTP and every WebSocket from it.
      assert.equal((await call('127.0.0.1', 'public/time')).status, 429);
    } finally {
      socket.close();
    }
  });
  /** A new key of the first demo user, with its own non-matching bucket of 2 (1/s). */
  function keyWithSmallBucket(roles: ('trade' | 'taker' | 'maker')[] = ['trade']): Key {
    const created = keyStore.createApiKey(
      {
        userId: credentials[0]!.userId,
        roles,
        rateLimits: { nonMatching: { perSecond: 1, burst: 2 } },
      },
      venue.now(),
    );
    return { apiKey: created.record.apiKey, apiSecret: created.apiSecret };
  }

  test("a key's own non-matching limits apply to its calls, its refusals and its signed public calls", async () => {
    // A new address for every request: only the key's bucket can run out.
    let next = 0;
    const fresh = () => `10.2.0.${next++}`;
    const reads = keyWithSmallBucket();
    assert.deepEqual(await flood(3, () => call(fresh(), 'private/get_open_orders', { signer: reads })), [
      '200:ok',
      '200:ok',
      `429:${TOO_MANY}`,
    ]);
    const unknown = keyWithSmallBucket();
    assert.deepEqual(await flood(3, () => call(fresh(), 'private/nope', { signer: unknown })), [
      '200:-32601',
      '200:-32601',
      `429:${TOO_MANY}`,
    ]);
    const publicCalls = keyWithSmallBucket();
    assert.deepEqual(await flood(3, () => call(fresh(), 'public/time', { signer: publicCalls })), [
      '200:ok',
      '200:ok',
      `429:${TOO_MANY}`,
    ]);
  });

  test('a method served over the other transport only, or called with invalid params, costs a credit', async () => {
    const wsOnly = await flood(BURST + 1, () => call('10.0.0.9', 'public/set_heartbeat'));
    assert.deepEqual(wsOnly, [...times(BURST, '200:-32601'), `429:${TOO_MANY}`]);
    const raw = JSON.stringify({ rid: 7, method: 'public/time', params: { extra: 1 } });
    const invalid = await flood(BURST + 1, () => call('10.0.0.10', 'public/time', { raw }));
    assert.deepEqual(invalid, [...times(BURST, '200:-32602'), `429:${TOO_MANY}`]);
  });

  test('a signed body that is no envelope is charged to the key, not its address', async () => {
    const address = '10.0.0.11';
    const signer = keyWithSmallBucket();
    const seen = await flood(3, () =>
      call(address, 'private/get_open_orders', { signer, raw: '{"rid": 1, "method"' }),
    );
    assert.deepEqual(seen, ['400:-32700', '400:-32700', `429:${TOO_MANY}`]);
    // The address's own bucket is untouched.
    assert.deepEqual(await flood(BURST, () => call(address, 'public/time')), times(BURST, '200:ok'));
  });

  test('a flat route refusing a key forbidden still charges the key', async () => {
    const takerKey = keyWithSmallBucket(['taker']);
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) seen.push((await flat(`10.3.0.${i}`, takerKey, 'POST', FLAT_TRADE_URL)).seen);
    assert.deepEqual(seen, ['200:13021', '200:13021', `429:${TOO_MANY}`]);
  });

  test('over an authenticated WebSocket, messages that are not envelopes are charged to the key', async () => {
    const signer = keyWithSmallBucket();
    const { socket, answers } = await collectingSocket('127.0.0.4');
    try {
      const timestamp = venue.now();
      const nonce = randomUUID();
      const signature = signWs(signer.apiSecret, String(timestamp), nonce);
      socket.send(
        JSON.stringify({
          rid: 1,
          method: 'public/auth',
          params: { apiKey: signer.apiKey, timestamp, nonce, signature },
        }),
      );
      await until(() => answers.length === 1);
      assert.equal(answers[0]!.error, undefined, JSON.stringify(answers[0]));
      for (let i = 0; i < 4; i++) socket.send('not json');
      await until(() => answers.length === 5);
      assert.deepEqual(
        answers.slice(1).map((answer) => answer.error?.code),
        [-32700, -32700, TOO_MANY, TOO_MANY],
      );
      // The address paid only for public/auth.
      assert.equal((await call('127.0.0.4', 'public/time')).status, 200);
    } finally {
      socket.close();
    }
  });

  test('an unknown method on the bare folder of a flat route is answered flat', async () => {
    const response = await gateway.fastify.inject({
      method: 'GET',
      url: '/flat/limits',
      remoteAddress: '10.9.0.1',
    });
    assert.equal(response.statusCode, 404);
    assert.deepEqual(
      { succ: response.json().succ, value: response.json().value },
      { succ: false, value: null },
    );
  });

  test('a body naming another method than its path is refused 400 with its own rid', async () => {
    const response = await gateway.fastify.inject({
      method: 'POST',
      url: '/api/public/time',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ rid: 42, method: 'public/test', params: {} }),
      remoteAddress: '10.9.0.2',
    });
    assert.equal(response.statusCode, 400);
    assert.equal(response.json().rid, 42);
    assert.equal(response.json().error.data.field, 'method');
  });
});
