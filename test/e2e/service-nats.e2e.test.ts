/**
 * The whole service with its journal on NATS JetStream (JOURNAL_URL) and snapshots and the read
 * store in SQLite under DATA_DIR: an acknowledged order survives a restart with the same state
 * hash, the snapshot replica follows the stream, and a second service on the same stream (from
 * another DATA_DIR) is refused. Skips when nats-server is not installed (fails under CI=true).
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import pino from 'pino';
import { StoreOpenError } from '../../src/store/data-dir-lock.ts';
import { NatsJournalStream } from '../../src/store/nats/nats-journal.ts';
import { startNats } from '../support/nats.ts';
import { startTestService } from '../support/service-harness.ts';

const server = await startNats({ jetstream: true });

test('the service journals on NATS JetStream and recovers from it', {
  skip: server === null && 'nats-server is not installed',
}, async () => {
  const stream = `SERVICE_${process.pid}`;
  const config = { journalUrl: server!.url, journalStream: stream, simulator: false };
  const logs: Array<{ level: number; msg: string; journalReplicas?: number }> = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void logs.push(JSON.parse(line)) });
  let running = await startTestService({ config, logger });
  // One replica: the operator is told that an ack is not an fsync there.
  assert.ok(
    logs.some((entry) => entry.level === 40 && entry.journalReplicas === 1),
    JSON.stringify(logs),
  );
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
    await running.service.core.drain();
    // The replica read the journal from the stream at its start and follows it since.
    assert.deepEqual(await running.service.snapshotReplica!.status(), {
      seq: running.service.core.sequence,
      stateHash: hash,
    });
    const lastSeq = running.service.core.sequence;

    // The commands are in the stream, not in a journal.sqlite.
    const conn = await NatsJournalStream.connect({ servers: server!.url, stream }, 'test check');
    const last = await conn.lastFrame();
    await conn.close();
    assert.ok(last !== null);
    const lastFrameEnd =
      Number(last.header.get('Journal-First-Seq')) + Number(last.header.get('Journal-Count')) - 1;
    assert.equal(lastFrameEnd, lastSeq);

    // A second service on the same stream is refused before it reads it.
    await assert.rejects(
      startTestService({ config }),
      (error: unknown) =>
        error instanceof StoreOpenError && /in use by another running service/.test(error.message),
    );

    running = await running.restart();
    assert.equal(running.service.recovery.finalStateHash, hash);
    assert.equal(running.service.recovery.lastSeq, lastSeq);
    const state = await running.http(0).call('private/get_order_state', { orderId: placed.order.orderId });
    assert.equal(state.orderState, 'open');
    assert.equal(state.quantity, '30');
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
