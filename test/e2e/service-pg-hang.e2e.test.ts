/**
 * The service when its PostgreSQL stops answering (every process of this file's own server
 * stopped with SIGSTOP, then resumed):
 * - with the journal on NATS (so the core goes on), history for an account whose rows are written
 *   is answered `unavailable` naming history within the read store's deadline, not never;
 * - a close after the core failed ends once its deadline passed on the service's (virtual) clock,
 *   leaving behind what still waits on the server (the replica's final snapshot, the stores'
 *   closing), instead of waiting up to the replica's 120 s or for ever.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { ApiError } from '../../sdk/errors.ts';
import { freezePostgres } from '../support/pg-freeze.ts';
import { restingBuy, startTestService } from '../support/service-harness.ts';
import { startStoreServers } from '../support/store-servers.ts';

const servers = await startStoreServers();
after(() => servers.stop());
const { postgres, nats } = servers;

/** `promise`'s outcome, or a failure when it has none within `ms` (the test's own bound). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no outcome within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

test('journal on NATS, PostgreSQL hung: history with written rows answers unavailable within the deadline', {
  skip: (postgres === null || nats === null) && 'PostgreSQL or nats-server is not installed',
}, async () => {
  const databaseUrl = await postgres!.createDatabase(`hang_history_${process.pid}`);
  const running = await startTestService({
    config: { databaseUrl, journalUrl: nats!.url, journalStream: `HANG_${process.pid}`, simulator: false },
  });
  let frozen: { resume(): void } | null = null;
  try {
    await restingBuy(running, '1000', 'hang');
    const history = () => running.http(0).call('private/get_order_history_by_currency', { currency: 'BTC' });
    // Written: the query reads the store without waiting for a write.
    await history();
    frozen = await freezePostgres(databaseUrl);
    const started = Date.now();
    await assert.rejects(within(history(), 15_000, 'history'), (error: unknown) => {
      assert.ok(error instanceof ApiError, String(error));
      assert.equal(error.errorName, 'unavailable');
      assert.equal(error.data?.field, 'history');
      return true;
    });
    assert.ok(Date.now() - started < 10_000, `answered after ${Date.now() - started} ms`);
    frozen.resume();
    assert.ok(Array.isArray(await history()), 'answered again once the server is back');
  } finally {
    frozen?.resume();
    await running.close();
  }
});

test('PostgreSQL hung after the core failed: close ends at its deadline on the service clock', {
  skip: postgres === null && 'PostgreSQL is not installed',
}, async () => {
  const databaseUrl = await postgres!.createDatabase(`hang_close_${process.pid}`);
  const running = await startTestService({ config: { databaseUrl, simulator: false } });
  let frozen: { resume(): void } | null = null;
  try {
    await restingBuy(running, '1000', 'hang');
    await running.service.core.drain();
    // The core fails (as on a bug): a command no part of it handles.
    await assert.rejects(running.service.core.submitMachine({ type: 'no_such_command' } as never));
    assert.ok(running.service.core.failed !== null);
    frozen = await freezePostgres(databaseUrl);
    let closed = false;
    const closing = running.close().finally(() => {
      closed = true;
    });
    // Service time passes (a second every 20 ms) while the close waits on the hung server.
    const started = Date.now();
    while (!closed && Date.now() - started < 15_000) {
      running.clock.advance(1_000);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.ok(closed, 'the close ended');
    await closing;
  } finally {
    frozen?.resume();
  }
});
