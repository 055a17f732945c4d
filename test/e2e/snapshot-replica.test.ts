/**
 * The snapshot replica in the real service: it follows the journal on its worker thread to the
 * live core's exact state, records checkpoints that a full replay verifies, saves the snapshots a
 * restart starts from, writes the read store (queries still see every acknowledged command, and a
 * restart re-feeds what the store lost), and when it fails the service goes back to snapshotting
 * inline, and a history query that needs what the store has not written waits for the next replica
 * up to `historyWaitMs`, then is refused as behind (never answered stale).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { ApiError } from '../../sdk/errors.ts';
import { DEFAULT_CONFIG } from '../../src/app/config.ts';
import type { ReadDb } from '../../src/store/read/read-db.ts';
import { buildFrame } from '../../src/store/record-format.ts';
import { SqliteJournal } from '../../src/store/sqlite/sqlite-journal.ts';
import { SqliteSnapshotStore } from '../../src/store/sqlite/sqlite-snapshots.ts';
import { startTestService, type TestService } from '../support/service-harness.ts';
import { until } from '../support/until.ts';

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

async function historyCount(running: TestService, index = 0): Promise<number> {
  const orders = await running.http(index).call('private/get_order_history_by_currency', {
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
      // Called only when the store has not written what the query needs (else it answers at once).
      supervisor.caughtUp = (throughSeq?: number, signal?: AbortSignal) => {
        asked.push(throughSeq);
        return caughtUp(throughSeq, signal);
      };
      const askedSince = (from: number) => asked.slice(from);
      const history = async (index: number) => {
        const orders = await running.http(index).call('private/get_order_history_by_currency', {
          currency: 'BTC',
          includeUnfilled: true,
        });
        assert.ok(Array.isArray(orders));
        return orders;
      };
      // The accounts' own last commands so far: the demo deposits (their transaction log rows).
      const beforeTrading = running.service.core.sequence;
      await placeOrders(running, 10);
      await cancelAll(running);
      const tradersLast = running.service.core.sequence;
      // The other account has no command since: nothing to wait for past its deposits.
      assert.deepEqual(await history(1), []);
      for (const seq of asked)
        assert.ok(seq !== undefined && seq <= beforeTrading, `${seq} ≤ ${beforeTrading}`);
      let from = asked.length;
      assert.equal((await history(0)).length, 10);
      for (const seq of askedSince(from)) assert.equal(seq, tradersLast);

      // Its own command, acknowledged, is then what it waits for, and sees.
      const placed = await running.http(1).call('private/sell', {
        instrumentName: 'BTC-PERPETUAL',
        quantity: '10',
        price: '900000',
        postOnly: true,
      });
      await running.http(1).call('private/cancel', { orderId: placed.order.orderId });
      const othersLast = running.service.core.sequence;
      from = asked.length;
      const others = await history(1);
      assert.deepEqual(
        others.map((order) => order.orderId),
        [placed.order.orderId],
      );
      for (const seq of askedSince(from)) assert.equal(seq, othersLast);
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

  test('with READ_STORE_ON_REPLICA off a failed store write is tried again; meanwhile history is refused as behind', async () => {
    const running = await startTestService({
      snapshotPolicy: POLICY,
      config: { simulator: false, readStoreOnReplica: false },
    });
    try {
      const readStore = running.service.readStore;
      // Fault injection: the store's database refuses its commits while `failing` is set.
      const db = (readStore as unknown as { options: { db: ReadDb } }).options.db;
      const commit = db.commit.bind(db);
      let failing = false;
      db.commit = (statements, lastSeq) =>
        failing
          ? Promise.reject(Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' }))
          : commit(statements, lastSeq);
      await placeOrders(running, 5);
      assert.equal(await cancelAll(running), 5);
      assert.equal(await historyCount(running), 5);

      failing = true;
      await placeOrders(running, 5);
      assert.equal(await cancelAll(running), 5);
      await running.service.core.drain();
      const cancelledAt = running.service.core.sequence;
      await until(() => readStore.failure !== null);
      assert.ok(readStore.lastAppliedSeq < cancelledAt);
      // The lag metric shows the store behind the commands.
      assert.ok((await readStoreLag(running)) >= cancelledAt - readStore.lastAppliedSeq);
      // Rows all written (no command since start): at once. Its own newest commands missing: refused.
      assert.equal(await historyCount(running, 1), 0);
      await refusedAsBehind(running);

      // The database answers again: the next retry (on the service's clock) writes what was lost.
      failing = false;
      for (let step = 0; step < 20 && readStore.lastAppliedSeq < cancelledAt; step++) {
        running.clock.advance(1_000);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      assert.ok(readStore.lastAppliedSeq >= cancelledAt, 'the store caught up without a restart');
      assert.equal(readStore.failure, null);
      assert.equal(await historyCount(running), 10);
      await running.service.core.drain();
      await readStore.flush();
      assert.equal(await readStoreLag(running), 0, 'and the metric shows it caught up');
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
      // Everything so far written (the other account's deposits are rows of its transaction log).
      await running.service.readStore.flush();
      await failReplica(running);
      assert.ok(replica.failed);
      assert.equal(replica.current, null);
      await placeOrders(running, 60);
      assert.equal(await cancelAll(running), 65);
      assert.ok(running.service.readStore.failure !== null);
      // Nothing writes the store until a replica runs again. An account whose rows are all written
      // (its deposits, before the failure) is answered at once; the trading account's newest commands are not in
      // the store: its query waits up to the bound and is refused, never answered stale.
      assert.equal(await historyCount(running, 1), 0);
      const refused = await refusedAsBehind(running);
      assert.ok(Number(refused.data?.behindCommands) > 0);
      running = await running.restart();
      // The clock moved (the market stepped): the journal's last seq is read at the restart.
      assert.equal(
        running.service.recovery.snapshotSeq,
        running.service.recovery.lastSeq,
        'the inline snapshot at shutdown',
      );
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
      // Started again after 200 ms of real time: long enough to ask while none runs.
      replicaRestart: { firstDelayMs: 200, maxDelayMs: 200, healthyAfterMs: 0 },
    });
    try {
      const replica = running.service.snapshotReplica!;
      for (let failure = 1; failure <= 2; failure++) {
        await placeOrders(running, 20);
        // Queries waiting on the replica when it fails are answered all the same.
        const waiting = Promise.all([1, 2, 3].map(() => historyCount(running)));
        await failReplica(running);
        assert.equal(replica.current, null, 'not started again yet');
        // Asked while no replica runs, with its newest command not written: it waits for the new
        // replica, which re-feeds the store, instead of answering from what was written.
        assert.equal(await cancelAll(running), 20);
        const asked = historyCount(running);
        assert.equal((await waiting).length, 3);
        assert.equal(await asked, 30 * failure - 10, 'answered with the cancels acknowledged before it');
        await placeOrders(running, 10);
        await replica.running();
        assert.equal(await cancelAll(running), 10);
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

  test('once a replica runs again, the last failure is no longer reported and the read store flushes', async () => {
    const running = await startTestService({
      snapshotPolicy: POLICY,
      config: { simulator: false },
      replicaRestart: { firstDelayMs: 200, maxDelayMs: 200, healthyAfterMs: 0 },
    });
    try {
      const supervisor = running.service.snapshotReplica!;
      await placeOrders(running, 3);
      await failReplica(running);
      assert.ok(supervisor.failure !== null, 'the failure is reported while none runs');
      await supervisor.running();
      assert.equal(supervisor.failure, null);
      assert.equal(running.service.readStore.failure, null);
      await running.service.readStore.flush();
    } finally {
      await running.close();
    }
  });

  test('what a failed replica had written stays known: history answers at once while none runs', async () => {
    const running = await startTestService({
      snapshotPolicy: POLICY,
      config: { simulator: false },
      replicaRestart: NO_RESTART,
    });
    try {
      const supervisor = running.service.snapshotReplica!;
      await placeOrders(running, 5);
      assert.equal(await cancelAll(running), 5);
      await running.service.core.drain();
      const replica = supervisor.current!;
      await replica.readCaughtUp();
      assert.equal(replica.readAppliedSeq, running.service.core.sequence);
      await failReplica(running);
      assert.equal(supervisor.lastAppliedSeq, running.service.core.sequence, 'kept from the failed replica');
      assert.equal(await historyCount(running), 5);
    } finally {
      await running.close();
    }
  });
});

/** `venue_read_store_lag_commands` as `/metrics` shows it. */
async function readStoreLag(running: TestService): Promise<number> {
  const { body } = await running.service.metrics!.render();
  const line = body.split('\n').find((l) => l.startsWith('venue_read_store_lag_commands '));
  assert.ok(line !== undefined, 'the metric is rendered');
  return Number(line.split(' ')[1]);
}

/**
 * The first demo account's history query, asked while the store lacks its newest commands: it
 * waits for the store (a timer on the service's clock), and once `historyWaitMs` passed it is
 * refused with `unavailable`, saying the history store is behind and a retry is safe.
 */
async function refusedAsBehind(running: TestService): Promise<ApiError> {
  const timers = running.clock.pendingTimers();
  let answered: number | null = null;
  const outcome = historyCount(running).then(
    (count) => {
      answered = count;
      return count;
    },
    (error: unknown) => error,
  );
  await until(() => answered !== null || running.clock.pendingTimers() > timers);
  assert.equal(answered, null, 'the query waits for the store: it is not answered from what was written');
  running.clock.advance(DEFAULT_CONFIG.historyWaitMs);
  const error = await outcome;
  assert.ok(error instanceof ApiError, `refused, not answered from what was written: ${String(error)}`);
  assert.equal(error.errorName, 'unavailable');
  assert.equal(error.data?.field, 'history');
  assert.equal(error.data?.reason, 'history_behind');
  assert.equal(error.data?.safeToRetry, true);
  return error;
}

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
