/** The throwaway PostgreSQL and NATS servers used by tests start, answer and stop cleanly. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connect } from 'nats';
import pg from 'pg';
import { startNats } from '../support/nats.ts';
import { startPostgres } from '../support/postgres.ts';

test('a throwaway PostgreSQL answers queries and leaves nothing behind', async (t) => {
  const server = await startPostgres();
  if (server === null) return t.skip('PostgreSQL is not installed (run scripts/ensure-system-deps.sh)');
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  const result = await client.query('SELECT 41 + 1 AS answer');
  await client.end();
  assert.equal(result.rows[0].answer, 42);
  await server.stop();
});

test('a throwaway NATS server carries a message', async (t) => {
  const server = await startNats();
  if (server === null) return t.skip('nats-server is not installed (run scripts/ensure-system-deps.sh)');
  try {
    const nc = await connect({ servers: server.url });
    const sub = nc.subscribe('ping', { max: 1 });
    nc.publish('ping', new TextEncoder().encode('pong'));
    for await (const message of sub) assert.equal(new TextDecoder().decode(message.data), 'pong');
    await nc.close();
  } finally {
    await server.stop();
  }
});
