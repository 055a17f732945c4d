/**
 * The whole service with its journal on a 3-replica stream of a real 3-server NATS cluster
 * (test/support/nats.ts): the server leading the stream is killed while signed orders stream in.
 * Requests wait out the failover instead of the service stopping; every order placed is answered,
 * and after a restart each one is there in the state it was left in, with the same state hash.
 * Skips when nats-server is not installed (fails under CI=true).
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { NatsJournalStream } from '../../src/store/nats/nats-journal.ts';
import { startNatsCluster } from '../support/nats.ts';
import { startTestService } from '../support/service-harness.ts';

const cluster = await startNatsCluster(3);
after(() => cluster?.stop());

test('the service rides through the loss of the NATS server leading its journal stream', {
  skip: cluster === null && 'nats-server is not installed',
  timeout: 180_000,
}, async () => {
  const stream = `SERVICE_R3_${process.pid}`;
  const config = { journalUrl: cluster!.url, journalStream: stream, journalReplicas: 3, simulator: false };
  let running = await startTestService({ config });
  const probe = await NatsJournalStream.connect({ servers: cluster!.url, stream }, 'test probe');
  try {
    // Workers place a resting order and cancel every other one, until told to stop.
    const placed = new Map<string, { key: number; state: 'open' | 'cancelled' }>();
    let stop = false;
    const worker = async (index: number) => {
      const key = index % running.credentials.length;
      const client = running.http(key);
      for (let n = 0; !stop; n++) {
        const order = await client.call('private/buy', {
          instrumentName: 'BTC-PERPETUAL',
          quantity: '10',
          price: String(1000 + ((index * 97 + n) % 400)),
          postOnly: true,
        });
        placed.set(order.order.orderId, { key, state: 'open' });
        if (n % 2 === 1) {
          await client.call('private/cancel', { orderId: order.order.orderId });
          placed.set(order.order.orderId, { key, state: 'cancelled' });
        }
      }
    };
    // The first failure stops them all (a stopped service would fail every later call).
    const workers = Array.from({ length: 4 }, (_, index) =>
      worker(index).catch((error: unknown) => {
        stop = true;
        throw error;
      }),
    );
    const placedAtLeast = async (count: number) => {
      while (placed.size < count && !stop) await new Promise((r) => setTimeout(r, 20));
    };

    await placedAtLeast(100);
    let leader: string | undefined;
    while (leader === undefined || leader === '') {
      leader = (await probe.jsm.streams.info(stream)).cluster?.leader;
    }
    await cluster!.member(leader).kill();
    const before = placed.size;
    await placedAtLeast(before + 100);
    stop = true;
    await Promise.all(workers);
    await cluster!.member(leader).restart();

    await running.service.core.drain();
    const hash = running.service.core.machine.stateHash();
    const lastSeq = running.service.core.sequence;
    running = await running.restart();
    assert.equal(running.service.recovery.lastSeq, lastSeq);
    assert.equal(running.service.recovery.finalStateHash, hash);
    for (const [orderId, { key, state }] of placed) {
      const found = await running.http(key).call('private/get_order_state', { orderId });
      assert.equal(found.orderState, state, orderId);
    }
  } finally {
    await probe.close();
    await running.close();
  }
});
