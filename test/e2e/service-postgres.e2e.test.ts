/**
 * The whole service on PostgreSQL (DATABASE_URL): journal, snapshots and read store in a real
 * throwaway server; an acknowledged order survives a restart with the same state hash, from the
 * snapshot the replica saved, and its cancel is in the history the replica writes.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { startPostgres } from '../support/postgres.ts';
import { startTestService } from '../support/service-harness.ts';

const server = await startPostgres();

test('the service runs on PostgreSQL and recovers from it', {
  skip: server === null && 'PostgreSQL is not installed',
}, async () => {
  let running = await startTestService({ config: { databaseUrl: server!.url, simulator: false } });
  try {
    const client = running.http(0);
    const ticker = await client.call('public/ticker', { instrumentName: 'BTC-PERPETUAL' });
    const price = String(Math.floor(Number(ticker.markPrice) * 0.98));
    const placed = await client.call('private/buy', {
      instrumentName: 'BTC-PERPETUAL',
      quantity: '30',
      price,
    });
    assert.equal(placed.order.orderState, 'open');
    const hash = running.service.core.machine.stateHash();
    // The snapshot replica follows the PostgreSQL journal too, and saves the last snapshot.
    await running.service.core.drain();
    assert.deepEqual(await running.service.snapshotReplica!.status(), {
      seq: running.service.core.sequence,
      stateHash: hash,
    });
    const lastSeq = running.service.core.sequence;
    running = await running.restart();
    assert.equal(running.service.recovery.finalStateHash, hash);
    assert.equal(running.service.recovery.snapshotSeq, lastSeq);
    const state = await running.http(0).call('private/get_order_state', { orderId: placed.order.orderId });
    assert.equal(state.orderState, 'open');
    assert.equal(state.quantity, '30');
    // The replica writes the read store in PostgreSQL too; a query sees the cancel at once.
    await running.http(0).call('private/cancel', { orderId: placed.order.orderId });
    const history = await running.http(0).call('private/get_order_history_by_currency', {
      currency: 'BTC',
      includeUnfilled: true,
    });
    assert.ok(Array.isArray(history));
    assert.deepEqual(
      history.map((order) => [order.orderId, order.orderState]),
      [[placed.order.orderId, 'cancelled']],
    );
  } finally {
    await running.close();
  }
});

after(async () => {
  await server?.stop();
});
