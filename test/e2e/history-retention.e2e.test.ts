/**
 * `HISTORY_RETENTION_DAYS` through the service: closed orders older than the horizon leave order
 * history and the read store once it writes again, open orders stay whatever their age,
 * and recent history stays. With the snapshot replica writing the store (the default) and without.
 * Without retention, `includeOld` reaches the orders older than two days.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { VirtualClock } from '../../src/app/clock.ts';
import { restingBuy, SERVICE_T0, startTestService, type TestService } from '../support/service-harness.ts';

const DAY = 86_400_000;

async function historyLabels(running: TestService): Promise<string[]> {
  const orders = await running.http(0).call('private/get_order_history_by_currency', {
    currency: 'BTC',
    count: 1000,
    includeUnfilled: true,
    historical: true,
    includeOld: true,
  });
  assert.ok(Array.isArray(orders), 'without withContinuation the answer is a list');
  return orders.map((order) => order.label).sort();
}

for (const snapshotReplica of [true, false]) {
  describe(`history retention (snapshot replica ${snapshotReplica ? 'on' : 'off'})`, () => {
    test('closed orders past the horizon leave history; open ones and recent ones stay', async () => {
      const options = { config: { simulator: false, snapshotReplica, historyRetentionDays: 2 } };
      let running = await startTestService(options);
      try {
        const old = await restingBuy(running, '1000', 'old');
        await running.http(0).call('private/cancel', { orderId: old });
        const resting = await restingBuy(running, '1001', 'resting');
        running.clock.advance(2_000);
        assert.deepEqual(await historyLabels(running), ['old']);
        await running.close();

        // Three days later: the first writes sweep what is older than two days.
        const clock = new VirtualClock(SERVICE_T0 + 3 * DAY);
        running = await startTestService({ ...options, dataDir: running.dataDir, clock });
        const recent = await restingBuy(running, '1002', 'recent');
        await running.http(0).call('private/cancel', { orderId: recent });
        running.clock.advance(2_000);
        assert.deepEqual(await historyLabels(running), ['recent']);
        // Gone from the store. (`get_order_state` still answers for it from the engine's memory
        // of its last 10,000 closed orders, which retention does not touch.)
        assert.equal(await running.service.readStore.order(old), null);
        assert.notEqual(await running.service.readStore.order(recent), null);
        const state = await running.http(0).call('private/get_order_state', { orderId: resting });
        assert.equal(state.orderState, 'open');
      } finally {
        await running.close();
      }
    });
  });
}

test('includeOld through the API: an order closed 3 days ago is historical only with includeOld', async () => {
  const options = { config: { simulator: false } };
  let running = await startTestService(options);
  try {
    const old = await restingBuy(running, '1000', 'old');
    await running.http(0).call('private/cancel', { orderId: old });
    await running.close();
    // Restarted three days later (no retention: the order stays in the store).
    const clock = new VirtualClock(SERVICE_T0 + 3 * DAY);
    running = await startTestService({ ...options, dataDir: running.dataDir, clock });
    const labels = async (includeOld: boolean) => {
      const orders = await running.http(0).call('private/get_order_history_by_currency', {
        currency: 'BTC',
        includeUnfilled: true,
        historical: true,
        includeOld,
      });
      assert.ok(Array.isArray(orders), 'without withContinuation the answer is a list');
      return orders.map((order) => order.label);
    };
    assert.deepEqual(await labels(false), [], 'older than 2 days: not without includeOld');
    assert.deepEqual(await labels(true), ['old']);
    assert.notEqual(await running.service.readStore.order(old), null);
  } finally {
    await running.close();
  }
});
