/**
 * The replay memory over HTTP and the WebSocket: one key cannot fill it for the others, private
 * reads keep no answers (a retry runs again) while methods with effects keep theirs, and a nonce
 * is one nonce in either case.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterEach, test } from 'node:test';
import { FakeVenue } from '../support/fake-venue.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { rawWsAuth } from '../support/ws-auth.ts';

let harness: Harness | null = null;
afterEach(async () => {
  await harness?.close();
  harness = null;
});

const body = (rid: number, method: string, params: object = {}) => JSON.stringify({ rid, method, params });

/** `public/auth` on a new connection: the answer's error, or null once authenticated. */
async function wsAuthError(
  running: Harness,
  venue: FakeVenue,
  index: number,
): Promise<{ code: number } | null> {
  return (await rawWsAuth(running.wsUrl, running.credentials[index]!, venue.now())) ?? null;
}

test('a key that fills its share of the replay memory gets 429; other keys still sign requests and authenticate', async () => {
  const venue = new FakeVenue();
  // 64 nonces in all: each key's share is 4, enforced once 32 are held.
  harness = await startHarness({
    venue,
    config: {
      auth: { replayMaxEntries: 64 },
      rateLimits: { enabled: false },
    },
  });
  const hog = harness.http(0);
  let admitted = 0;
  let refusal: { status: number; body: unknown } | null = null;
  while (admitted < 100) {
    const answer = await hog.send(
      hog.sign('POST', '/api/private/get_open_orders', body(1, 'private/get_open_orders')),
    );
    if (answer.status !== 200) {
      refusal = answer;
      break;
    }
    admitted++;
  }
  assert.equal(admitted, 32, 'the key is refused once it holds half of the memory');
  if (refusal === null) assert.fail('never refused');
  assert.equal(refusal.status, 429);
  const error = (refusal.body as { error: { code: number; data: { field: string; retryAfterMs: number } } })
    .error;
  assert.equal(error.data.field, 'Service-API-Nonce');
  assert.ok(error.data.retryAfterMs > 0);

  // The other keys are within their share: signed requests and WebSocket auth go through.
  const other = harness.http(1);
  const answered = await other.send(
    other.sign('POST', '/api/private/get_open_orders', body(2, 'private/get_open_orders')),
  );
  assert.equal(answered.status, 200, JSON.stringify(answered.body));
  assert.equal(await wsAuthError(harness, venue, 1), null);
  assert.equal(await wsAuthError(harness, venue, 2), null);
  // The hog's WebSocket auth is refused too (its share), with the same 429 error.
  assert.equal((await wsAuthError(harness, venue, 0))?.code, error.code);
});

test('a private read keeps no answer: its byte-identical retry runs again; an order’s retry gets the original answer', async () => {
  const venue = new FakeVenue();
  harness = await startHarness({ venue });
  const client = harness.http(0);
  const authenticator = harness.gateway.authenticator;
  const read = client.sign('POST', '/api/private/get_open_orders', body(3, 'private/get_open_orders'));
  const first = await client.send(read);
  assert.deepEqual((first.body as { result: unknown[] }).result, []);
  assert.equal(authenticator.rememberedAnswerBytes, 0, 'the read’s answer is not kept');

  const placeBody = body(4, 'private/buy', {
    instrumentName: 'BTC-PERPETUAL',
    quantity: '10',
    price: '30000',
  });
  const place = client.sign('POST', '/api/private/buy', placeBody);
  const placed = await client.send(place);
  assert.equal(placed.status, 200);
  const kept = authenticator.rememberedAnswerBytes;
  assert.ok(kept > 0, 'the order’s answer is kept');

  // The read again, byte for byte: run again, so it shows the order now.
  const again = await client.send(read);
  assert.equal(again.status, 200);
  assert.equal((again.body as { result: unknown[] }).result.length, 1);
  assert.equal(authenticator.rememberedAnswerBytes, kept);
  // Its nonce with another body is still refused.
  const reused = await client.send(
    client.sign(
      'POST',
      '/api/private/get_open_orders',
      body(5, 'private/get_open_orders'),
      read.headers['service-api-nonce'],
    ),
  );
  assert.equal(reused.status, 401);
  // The order's retry gets the original answer and places nothing.
  const submitted = venue.submitted.length;
  const retried = await client.send(place);
  assert.equal(retried.text, placed.text);
  assert.equal(venue.submitted.length, submitted);
});

test('a request re-signed with its nonce upper-cased is refused as a reused nonce, not run twice', async () => {
  const venue = new FakeVenue();
  harness = await startHarness({ venue });
  const client = harness.http(0);
  // Hex letters in it, so its upper-cased form differs.
  const nonce = `abcdef01${randomUUID().slice(8)}`;
  const placeBody = body(6, 'private/buy', {
    instrumentName: 'BTC-PERPETUAL',
    quantity: '10',
    price: '30000',
  });
  const first = await client.send(client.sign('POST', '/api/private/buy', placeBody, nonce));
  assert.equal(first.status, 200);
  const submitted = venue.submitted.length;
  const upper = await client.send(client.sign('POST', '/api/private/buy', placeBody, nonce.toUpperCase()));
  assert.equal(upper.status, 401);
  assert.equal((upper.body as { error: { code: number } }).error.code, 13012);
  assert.equal(venue.submitted.length, submitted, 'placed once');
});
