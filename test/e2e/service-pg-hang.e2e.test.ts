/**
 * The service when its PostgreSQL stops answering (every process of this file's own server
 * stopped with SIGSTOP, then resumed):
 * - with the journal on NATS (so the core goes on), history for an account whose rows are written
 *   is answered `unavailable` naming history within the read store's deadline, not never;
 * - a close after the core failed ends once its deadline passed on the service's (virtual) clock,
 *   leaving behind what still waits on the server (the replica's final snapshot, the stores'
 *   closing), instead of waiting up to the replica's 120 s or for ever;
 * - so does a plain stop of a healthy core (journal on NATS), each step on the stores bounded by
 *   `shutdownStepMs`, the data directory staying locked until the stores' close left behind ends,
 *   and the next start has every acknowledged command.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, test } from 'node:test';
import pino from 'pino';
import { ApiError } from '../../sdk/errors.ts';
import { lockDataDir, StoreOpenError } from '../../src/store/data-dir-lock.ts';
import { freezePostgres } from '../support/pg-freeze.ts';
import { restingBuy, startTestService, type TestService } from '../support/service-harness.ts';
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

/** Error logs of a service, parsed. */
function errorLog(): { logger: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'error' }, sink), lines };
}

test('journal on NATS, PostgreSQL hung: a plain stop of a healthy core ends within its step deadlines, losing nothing acknowledged', {
  skip: (postgres === null || nats === null) && 'PostgreSQL or nats-server is not installed',
}, async () => {
  const databaseUrl = await postgres!.createDatabase(`hang_stop_${process.pid}`);
  const config = {
    databaseUrl,
    journalUrl: nats!.url,
    journalStream: `HANG_STOP_${process.pid}`,
    simulator: false,
    shutdownStepMs: 20_000,
  };
  const { logger, lines } = errorLog();
  const running = await startTestService({ config, logger });
  let frozen: { resume(): void } | null = null;
  let restarted: TestService | null = null;
  try {
    const resting = await restingBuy(running, '1000', 'hang');
    await running.service.core.drain();
    frozen = await freezePostgres(databaseUrl);
    let closed = false;
    const closing = running.close().finally(() => {
      closed = true;
    });
    // Service time passes (a second every 20 ms) while the close waits on the hung server: each
    // step on the stores gets 20 s of it, a few steps wait on the server.
    const started = Date.now();
    while (!closed && Date.now() - started < 15_000) {
      running.clock.advance(1_000);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.ok(closed, 'the close ended');
    await closing;
    assert.equal(running.service.core.failed, null, 'the core stayed healthy');
    const late = lines.filter((line) => /left behind/.test(String(line.msg))).map((line) => line.step);
    assert.ok(late.includes('snapshot replica stop'), `late steps: ${late.join(', ')}`);
    assert.ok(late.includes('stores close'), `late steps: ${late.join(', ')}`);
    // The stores' close left behind may still write: the data directory stays locked meanwhile.
    assert.throws(
      () => lockDataDir(running.dataDir).release(),
      (error: unknown) =>
        error instanceof StoreOpenError && /in use by another running service/.test(error.message),
    );
    // The server comes back; what was left behind ends (the journal's NATS connection among it).
    frozen.resume();
    const again = Date.now();
    for (;;) {
      try {
        restarted = await startTestService({ config, dataDir: running.dataDir, clock: running.clock });
        break;
      } catch (error) {
        // The stream's writer of the stopped run, until its leftover close ends.
        if (!/in use by another running service/.test(String(error)) || Date.now() - again > 10_000)
          throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    assert.equal(restarted.service.recovery.ok, true);
    running.clock.advance(20_000);
    const state = await restarted.http(0).call('private/get_order_state', { orderId: resting });
    assert.equal(state.orderState, 'open');
  } finally {
    frozen?.resume();
    await restarted?.close();
  }
});
