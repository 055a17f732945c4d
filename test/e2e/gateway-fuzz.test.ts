/**
 * Fuzz: every registered method, over HTTP (signed) and WebSocket, with random params (shaped
 * after the method's schema and plain garbage) and random raw bodies. No input may produce a 5xx,
 * a malformed answer, or take the server down.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import WebSocket from 'ws';
import { signWs } from '../../src/api/auth/signature.ts';
import { type EngineVenue, startEngineVenue } from '../support/engine-venue.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';

const leaf = fc.oneof(
  fc.constantFrom(
    'BTC-PERPETUAL',
    'BTC',
    'ETH',
    'any',
    'option',
    'limit',
    'market',
    'good_til_cancelled',
    'buy',
    'sell',
  ),
  fc.constantFrom('10', '0', '-1', '60000', '0.0001', '1e5', '', ' 1', '99999999999999999999.9', 'NaN'),
  fc.string({ maxLength: 20 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
);
const value = fc.oneof(
  leaf,
  fc.array(leaf, { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), leaf, { maxKeys: 3 }),
);

function paramsFor(schema: { properties?: Record<string, unknown> }) {
  const keys = Object.keys(schema.properties ?? {});
  const shaped =
    keys.length === 0
      ? fc.constant({})
      : fc.record(Object.fromEntries(keys.map((key) => [key, value])), { requiredKeys: [] });
  return fc.oneof(shaped, fc.dictionary(fc.string({ maxLength: 8 }), value, { maxKeys: 4 }));
}

function isEnvelopeAnswer(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const record = body as Record<string, unknown>;
  const hasResult = 'result' in record;
  const hasError = 'error' in record;
  if (hasResult === hasError) return false;
  if (hasError) {
    const error = record.error as { code?: unknown; message?: unknown };
    return typeof error.code === 'number' && typeof error.message === 'string';
  }
  return true;
}

describe('fuzz', () => {
  let harness: Harness;
  let engine: EngineVenue;
  before(async () => {
    engine = await startEngineVenue();
    harness = await startHarness({
      venue: engine,
      config: { rateLimits: { enabled: false } },
    });
  });
  after(() => harness.close());

  test('every method over HTTP: never 5xx, always an envelope answer', async () => {
    const client = harness.http(0);
    for (const method of harness.gateway.methods.list()) {
      await fc.assert(
        fc.asyncProperty(paramsFor(method.params as never), fc.integer(), async (params, rid) => {
          const body = JSON.stringify({ rid, method: method.name, params });
          const answer = await client.send(client.sign('POST', `/api/${method.name}`, body));
          assert.ok(answer.status < 500, `${method.name} → ${answer.status}`);
          assert.ok(isEnvelopeAnswer(answer.body), `${method.name}: ${answer.text}`);
        }),
        { numRuns: 15 },
      );
    }
  });

  test('random raw bodies over HTTP: 4xx or an envelope answer, never 5xx', async () => {
    const client = harness.http(0);
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string({ maxLength: 60 }), fc.json()), async (raw) => {
        const answer = await client.send(client.sign('POST', '/api/private/buy', raw));
        assert.ok(answer.status < 500);
        assert.ok(typeof answer.body === 'object' && answer.body !== null && 'error' in answer.body);
      }),
      { numRuns: 100 },
    );
  });

  test('every method over WebSocket: one answer per frame, the session survives', async () => {
    const socket = new WebSocket(harness.wsUrl);
    await new Promise((resolve) => socket.on('open', resolve));
    const answers = new Map<number, unknown>();
    const waiters = new Map<number, () => void>();
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString()) as { rid?: number; method?: string };
      if (typeof message.rid === 'number') {
        answers.set(message.rid, message);
        waiters.get(message.rid)?.();
      }
    });
    let rid = 0;
    const call = (method: string, params: unknown) =>
      new Promise<unknown>((resolve) => {
        const id = ++rid;
        waiters.set(id, () => resolve(answers.get(id)));
        socket.send(JSON.stringify({ rid: id, method, params }));
      });
    const credential = harness.credentials[0]!;
    const ts = engine.now();
    const auth = (await call('public/auth', {
      apiKey: credential.apiKey,
      timestamp: ts,
      nonce: '00000000-0000-4000-8000-0000000f0220',
      signature: signWs(credential.apiSecret, String(ts), '00000000-0000-4000-8000-0000000f0220'),
    })) as { result?: unknown };
    assert.ok(auth.result);
    for (const method of harness.gateway.methods.list()) {
      if (method.name === 'public/auth' || method.name === 'public/set_heartbeat') continue;
      await fc.assert(
        fc.asyncProperty(paramsFor(method.params as never), async (params) => {
          const answer = await call(method.name, params);
          assert.ok(isEnvelopeAnswer(answer), `${method.name}: ${JSON.stringify(answer)}`);
        }),
        { numRuns: 15 },
      );
    }
    socket.close();
  });

  test('the server still answers after the fuzzing', async () => {
    assert.equal(typeof (await harness.http(0).call('public/time', {})), 'number');
  });
});
