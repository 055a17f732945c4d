import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FakeVenue } from '../../test/support/fake-venue.ts';
import { VirtualClock } from '../app/clock.ts';
import { loadConfig } from '../app/config.ts';
import { SecretBox } from './auth/secret-box.ts';
import { SqliteKeyStore } from './auth/sqlite-key-store.ts';
import { bootstrapDemo } from './bootstrap.ts';
import { createGateway, type Gateway } from './gateway.ts';
import type { ReadPort } from './ports.ts';

describe('HTTP answer shapes', () => {
  const problem: string | null = null;
  let venue: FakeVenue;
  let gateway: Gateway;
  let keyStore: SqliteKeyStore;
  before(async () => {
    venue = new FakeVenue();
    const dataDir = mkdtempSync(join(tmpdir(), 'audit-'));
    const config = loadConfig({
      env: {},
      overrides: {
        port: 0,
        host: '127.0.0.1',
        logLevel: 'silent',
        dataDir,
        rateLimits: { nonMatching: { perSecond: 1, burst: 3 } },
      },
    });
    keyStore = new SqliteKeyStore(':memory:', SecretBox.fromText('33'.repeat(32)));
    await bootstrapDemo({ keyStore, commands: venue, dataDir });
    gateway = createGateway({
      config,
      commands: venue,
      reads: venue as unknown as ReadPort,
      history: venue.history,
      events: venue,
      keyStore,
      clock: new VirtualClock(venue.now()),
      health: () => problem,
    });
    gateway.registerFlatRoute({
      method: 'GET',
      url: '/flat/audit/info',
      summary: 'test',
      handler: () => 'ok',
    });
  });
  after(async () => {
    await gateway.close();
    keyStore.close();
  });

  // H28 -> target src/api/unauthenticated-limits.test.ts (or any file with a flat route registered)
  test('an unknown method on the bare folder of a flat route is answered flat', async () => {
    const response = await gateway.fastify.inject({
      method: 'GET',
      url: '/flat/audit',
      remoteAddress: '10.9.0.1',
    });
    assert.equal(response.statusCode, 404);
    assert.deepEqual(
      { succ: response.json().succ, value: response.json().value },
      { succ: false, value: null },
    );
  });

  // H20 -> target test/e2e/gateway-http.test.ts
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
