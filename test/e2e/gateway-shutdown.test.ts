/**
 * A request that reaches the gateway while it shuts down is refused with an error envelope
 * (`unavailable`, HTTP 503), which every client of the envelope reads, not Fastify's own 503 body.
 */
import assert from 'node:assert/strict';
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
