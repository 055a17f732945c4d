import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { FakeVenue } from '../support/fake-venue.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';

let harness: Harness | null = null;
afterEach(async () => {
  await harness?.close();
  harness = null;
});
const body = (rid: number, method: string, params: object = {}) => JSON.stringify({ rid, method, params });

test('a signed public call keeps no answer: its byte-identical retry runs again', async () => {
  const venue = new FakeVenue();
  harness = await startHarness({ venue });
  const client = harness.http(0);
  const time = client.sign('POST', '/api/public/time', body(6, 'public/time'));
  const first = await client.send(time);
  assert.equal(first.status, 200);
  assert.equal((first.body as { result: number }).result, venue.now());
  assert.equal(harness.gateway.authenticator.rememberedAnswerBytes, 0, 'the public answer is not kept');
  venue.time += 1_000;
  const again = await client.send(time);
  assert.equal(again.status, 200);
  assert.equal((again.body as { result: number }).result, venue.now(), 'the retry ran again');
});

test('a public call carrying only a signature header (no Authorization) is checked: 401', async () => {
  harness = await startHarness({ venue: new FakeVenue() });
  const answer = await fetch(`${harness.baseUrl}/api/public/time`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'service-api-signature': 'AAAA' },
    body: body(7, 'public/time'),
  });
  assert.equal(answer.status, 401);
  const parsed = (await answer.json()) as { rid: unknown; error?: { code: number } };
  assert.equal(parsed.rid, 7);
  assert.ok(parsed.error !== undefined, 'refused, not answered');
});

test('an unsigned call to a block/* method is refused 401 like any non-public method', async () => {
  harness = await startHarness({ venue: new FakeVenue() });
  for (const method of ['block/rfqs/get_rfqs', 'block/rfqs/create_rfq', 'private/get_positions']) {
    const answer = await fetch(`${harness.baseUrl}/api/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: body(8, method),
    });
    assert.equal(answer.status, 401, method);
    const parsed = (await answer.json()) as { rid: unknown; error?: { code: number } };
    assert.equal(parsed.rid, 8);
    assert.ok(parsed.error !== undefined, method);
  }
});
