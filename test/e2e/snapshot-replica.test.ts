/**
 * The snapshot replica in the real service: it follows the journal on its worker thread to the
 * live core's exact state, records checkpoints that a full replay verifies, saves the snapshots a
 * restart starts from, writes the read store (queries still see every acknowledged command, and a
 * restart re-feeds what the store lost), and when it fails the service goes back to snapshotting
 * inline and queries stop waiting for it.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { buildFrame } from '../../src/store/record-format.ts';
import { SqliteJournal } from '../../src/store/sqlite/sqlite-journal.ts';
import { SqliteSnapshotStore } from '../../src/store/sqlite/sqlite-snapshots.ts';
import { startTestService, type TestService } from '../support/service-harness.ts';

const POLICY = { everyCommands: 40, everyMs: 0, checkpointEveryCommands: 25 };

/** Resting orders far from the market: one command each. */
async function placeOrders(running: TestService, count: number): Promise<void> {
  const client = running.http(0);
  for (let i = 0; i < count; i++) {
    await client.call('private/buy', {
      instrumentName: 'BTC-PERPETUAL',
      quantity: '10',
      price: String(1000 + i),
      postOnly: true,
    });
  }
}

/** Cancels the resting orders of `placeOrders`: each is then history (with `includeUnfilled`). */
async function cancelAll(running: TestService): Promise<number> {
  const count = await running.http(0).call('private/cancel_all_by_currency', { currency: 'BTC' });
  assert.equal(typeof count, 'number');
  return count as number;
}

async function historyCount(running: TestService): Promise<number> {
  const orders = await running.http(0).call('private/get_order_history_by_currency', {
    currency: 'BTC',
    count: 1000,
    includeUnfilled: true,
  });
  assert.ok(Array.isArray(orders));
  return orders.length;
}

/**
 * Once every command is journaled, the replica is at the live core's seq with its state hash;
 * returns that seq.
 */
async function replicaFollowsCore(running: TestService): Promise<number> {
  await running.service.core.drain();
  const core = running.service.core;
  assert.deepEqual(await running.service.snapshotReplica!.status(), {
    seq: core.sequence,
    stateHash: core.machine.stateHash(),
  });
  return core.sequence;
}

/** The read store of a stopped service loses its order rows and its position. */
function loseReadStore(dataDir: string): void {
  const read = new Database(join(dataDir, 'read.sqlite'));
  read.exec("DELETE FROM orders; UPDATE read_meta SET value = 0 WHERE key = 'last_applied_seq'");
  read.close();
}

async function storedCheckpoints(dataDir: string): Promise<number[]> {
  const journal = SqliteJournal.open({ path: join(dataDir, 'journal.sqlite') });
  try {
    const last = await journal.lastSeq();
    return (await journal.checkpoints(1, last)).map((checkpoint) => checkpoint.seq);
  } finally {
    await journal.close();
  }
}

describe('the snapshot replica', () => {
  test('follows the live core exactly; its checkpoints and snapshots serve the next start', async () => {
    let running = await startTestService({ snapshotPolicy: POLICY, config: { simulator: false } });
    try {
      const replica = running.service.snapshotReplica;
      assert.ok(replica !== null, 'on by default');
      await placeOrders(running, 120);
      const lastSeq = await replicaFollowsCore(running);

      running = await running.restart();
      const recovery = running.service.recovery;
      assert.equal(recovery.snapshotSeq, lastSeq, 'the replica saved a last snapshot at shutdown');
      assert.equal(recovery.replayed, 0);

      const checkpoints = await storedCheckpoints(running.dataDir);
      assert.ok(checkpoints.length >= 4, `checkpoints recorded: ${checkpoints}`);
      assert.ok(checkpoints.every((seq) => seq % POLICY.checkpointEveryCommands === 0));
    } finally {
      await running.close();
    }

    // Without snapshots, a restart replays everything and checks each recorded checkpoint.
    const snapshots = new SqliteSnapshotStore({ path: join(running.dataDir, 'snapshots.sqlite') });
    const periodic = (await snapshots.listSnapshots()).map((info) => info.seq);
    assert.ok(periodic.length >= 2, `snapshots: ${periodic}`);
    await snapshots.discardAfter(0);
    await snapshots.close();
    const replayed = await startTestService({
      dataDir: running.dataDir,
      clock: running.clock,
      snapshotPolicy: POLICY,
      config: { simulator: false },
    });
    try {
      assert.equal(replayed.service.recovery.snapshotSeq, null);
      assert.ok(replayed.service.recovery.checkpointsVerified >= 4);
      assert.ok(replayed.service.recovery.ok);
    } finally {
      await replayed.close();
    }
  });

  test('writes the read store: queries see every acknowledged command; a restart re-feeds what it lost', async () => {
    let running = await startTestService({ snapshotPolicy: POLICY, config: { simulator: false } });
    try {
      for (let round = 1; round <= 3; round++) {
        await placeOrders(running, 10);
        assert.equal(await cancelAll(running), 10);
        // Asked at once: the query waits for the replica to write what was acknowledged.
        assert.equal(await historyCount(running), 10 * round);
      }
      assert.equal(running.service.readStore.lastAppliedSeq, running.service.core.sequence);
      await running.close();

      // The store loses its rows and its position; the last snapshot is newer than what it holds.
      loseReadStore(running.dataDir);
      running = await running.restart();
      assert.equal(running.service.recovery.replayed, 0, 'the live core starts from the last snapshot');
      assert.equal(await historyCount(running), 30, 'the replica re-fed the store from the start');
    } finally {
      await running.close();
    }
  });

  test("a history query waits only for its own account's last command", async () => {
    const running = await startTestService({ snapshotPolicy: POLICY, config: { simulator: false } });
    try {
      const supervisor = running.service.snapshotReplica!;
      const asked: (number | undefined)[] = [];
      const caughtUp = supervisor.caughtUp.bind(supervisor);
      supervisor.caughtUp = (throughSeq?: number) => {
        asked.push(throughSeq);
        return caughtUp(throughSeq);
      };
      const history = async (index: number) => {
        const orders = await running.http(index).call('private/get_order_history_by_currency', {
          currency: 'BTC',
          includeUnfilled: true,
        });
        assert.ok(Array.isArray(orders));
        return orders;
      };
      await placeOrders(running, 10);
      await cancelAll(running);
      const tradersLast = running.service.core.sequence;
      // The other account has no command since start: nothing to wait for.
      assert.deepEqual(await history(1), []);
      assert.deepEqual(asked, [running.service.recovery.lastSeq]);
      assert.equal((await history(0)).length, 10);
      assert.deepEqual(asked.at(-1), tradersLast);

      // Its own command, acknowledged, is then what it waits for, and sees.
      const placed = await running.http(1).call('private/sell', {
        instrumentName: 'BTC-PERPETUAL',
        quantity: '10',
        price: '900000',
        postOnly: true,
      });
      await running.http(1).call('private/cancel', { orderId: placed.order.orderId });
      const othersLast = running.service.core.sequence;
      const others = await history(1);
      assert.deepEqual(
        others.map((order) => order.orderId),
        [placed.order.orderId],
      );
      assert.equal(asked.at(-1), othersLast);
    } finally {
      await running.close();
    }
  });

  test('with READ_STORE_ON_REPLICA off the live core writes the read store and re-feeds it at start', async () => {
    let running = await startTestService({
      snapshotPolicy: POLICY,
      config: { simulator: false, readStoreOnReplica: false },
    });
    try {
      await placeOrders(running, 10);
      assert.equal(await cancelAll(running), 10);
      assert.equal(await historyCount(running), 10);
      const lastSeq = await replicaFollowsCore(running);
      await running.close();

      loseReadStore(running.dataDir);
      running = await running.restart();
      assert.equal(running.service.recovery.snapshotSeq, null, 'replayed from the start for the store');
      assert.equal(running.service.recovery.replayed, lastSeq);
      assert.equal(await historyCount(running), 10);
    } finally {
      await running.close();
    }
  });

  test('with SNAPSHOT_REPLICA off the live core snapshots and writes the read store itself', async () => {
    let running = await startTestService({
      snapshotPolicy: POLICY,
      config: { simulator: false, snapshotReplica: false },
    });
    try {
      assert.equal(running.service.snapshotReplica, null);
      await placeOrders(running, 50);
      assert.equal(await cancelAll(running), 50);
      assert.equal(await historyCount(running), 50);
      await running.service.core.drain();
      const lastSeq = running.service.core.sequence;
      running = await running.restart();
      assert.equal(running.service.recovery.snapshotSeq, lastSeq, 'the inline snapshot at shutdown');
      assert.ok(running.service.recovery.ok);
      assert.equal(await historyCount(running), 50);
    } finally {
      await running.close();
    }
  });

  test('a failed replica hands snapshots back to the live core until it is started again', async () => {
    let running = await startTestService({
      snapshotPolicy: POLICY,
      config: { simulator: false },
      replicaRestart: NO_RESTART,
    });
    try {
      const replica = running.service.snapshotReplica!;
      await placeOrders(running, 5);
      await running.service.core.drain();
      await failReplica(running);
      assert.ok(replica.failed);
      assert.equal(replica.current, null);
      await placeOrders(running, 60);
      assert.equal(await cancelAll(running), 65);
      // Nothing writes the store any more: queries answer from what was written, without waiting.
      assert.ok((await historyCount(running)) < 65);
      assert.ok(running.service.readStore.failure !== null);
      await running.service.core.drain();
      const lastSeq = running.service.core.sequence;
      running = await running.restart();
      assert.equal(running.service.recovery.snapshotSeq, lastSeq, 'the inline snapshot at shutdown');
      assert.ok(running.service.recovery.ok);
      assert.equal(await historyCount(running), 65, 'the restarted replica re-fed the store');
    } finally {
      await running.close();
    }
  });

  test('a failed replica is started again, catches up and re-feeds the history', async () => {
    let running = await startTestService({
      snapshotPolicy: POLICY,
      config: { simulator: false },
      replicaRestart: { firstDelayMs: 0, maxDelayMs: 0, healthyAfterMs: 0 },
    });
    try {
      const replica = running.service.snapshotReplica!;
      for (let failure = 1; failure <= 2; failure++) {
        await placeOrders(running, 20);
        // Queries waiting on the replica when it fails are answered all the same.
        const waiting = Promise.all([1, 2, 3].map(() => historyCount(running)));
        await failReplica(running);
        assert.equal((await waiting).length, 3);
        await placeOrders(running, 10);
        await replica.running();
        assert.equal(await cancelAll(running), 30);
        assert.equal(await historyCount(running), 30 * failure, 'the new replica re-fed the store');
      }
      const lastSeq = await replicaFollowsCore(running);
      running = await running.restart();
      assert.equal(running.service.recovery.snapshotSeq, lastSeq);
      assert.ok(running.service.recovery.ok);
    } finally {
      await running.close();
    }
  });
});

/** A replica restart only when the test has long finished. */
const NO_RESTART = { firstDelayMs: 3_600_000, maxDelayMs: 3_600_000, healthyAfterMs: 3_600_000 };

/** Hands the running replica a frame out of sequence: it must stop rather than apply it. */
async function failReplica(running: TestService): Promise<void> {
  const replica = running.service.snapshotReplica!.current!;
  const ts = running.service.core.now();
  replica.feed(buildFrame([{ seq: 1_000_000, ts, command: { type: 'cancel_all', accountId: 1 } }]));
  await assert.rejects(replica.status(), /snapshot replica: .*expected seq/s);
  assert.ok(replica.failed);
}
