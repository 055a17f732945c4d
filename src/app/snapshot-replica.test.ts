/**
 * The snapshot replica's start over a damaged snapshot: it passes over it to an older one, as
 * recovery does, and says so through `onSnapshotSkipped` (its worker's stores are its own, so
 * nothing else would tell).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { until } from '../../test/support/until.ts';
import type { MachineCommand } from '../core/machine.ts';
import { T0 } from '../engine/testkit.ts';
import type { BatchListener, Journal, JournalEntry } from '../store/journal.ts';
import { SQLITE_FILES } from '../store/open-stores.ts';
import { buildFrame } from '../store/record-format.ts';
import { SqliteJournal } from '../store/sqlite/sqlite-journal.ts';
import { SqliteSnapshotStore } from '../store/sqlite/sqlite-snapshots.ts';
import { type Clock, VirtualClock } from './clock.ts';
import { createCoreMachine } from './core-factory.ts';
import { COMMANDS, journalCommands } from './journal-testkit.ts';
import { ReplicaSupervisor, type SupervisorHooks } from './replica-supervisor.ts';
import { stampInPlace } from './sequencer.ts';
import { type ReplicaHooks, type ReplicaSettings, SnapshotReplica } from './snapshot-replica.ts';

/** Runs `body` on a new data directory holding the journaled COMMANDS, then removes it. */
async function inJournaledDir(body: (dataDir: string) => Promise<void>): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'replica-'));
  try {
    await journalCommands(dataDir);
    await body(dataDir);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A replica of `dataDir` (SQLite) from the last journaled command, taking no snapshots unless told. */
const localReplica = (dataDir: string, hooks: ReplicaHooks, settings: Partial<ReplicaSettings> = {}) =>
  new SnapshotReplica(
    {
      dataDir,
      databaseUrl: null,
      natsJournal: null,
      startSeq: COMMANDS.length,
      policy: { everyCommands: 0, everyMs: 0, checkpointEveryCommands: 0 },
      ...settings,
    },
    hooks,
  );

test('a replica starting over a snapshot whose checksum fails tells onSnapshotSkipped its seq', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'replica-'));
  const snapshotsPath = join(dataDir, SQLITE_FILES.snapshots);
  try {
    // The live side: every command journaled, snapshots at seq 2 and 4.
    const machine = await journalCommands(dataDir, [2, 4]);
    const db = new Database(snapshotsPath);
    db.prepare('UPDATE snapshots SET checksum = checksum + 1 WHERE seq = 4').run();
    db.close();

    const skipped: number[] = [];
    const failures: Error[] = [];
    const replica = localReplica(dataDir, {
      onCheckpoint: () => undefined,
      onFailed: (error) => failures.push(error),
      onSnapshotSkipped: (seq) => skipped.push(seq),
    });
    try {
      // From the snapshot at 2 and the journal after it, the live state.
      assert.deepEqual(await replica.status(), { seq: COMMANDS.length, stateHash: machine.stateHash() });
      assert.deepEqual(skipped, [4]);
    } finally {
      await replica.stop(false);
    }
    assert.deepEqual(failures, []);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

/** Whether `promise` settles within `ms` (a deadline for a wait that must not hang, not a sleep). */
const settlesWithin = (promise: Promise<unknown>, ms: number) =>
  Promise.race([
    promise.then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref()),
  ]);

test('readCaughtUp(seq) resolves once the read store has written exactly that seq', async () => {
  await inJournaledDir(async (dataDir) => {
    const failures: Error[] = [];
    const replica = localReplica(
      dataDir,
      { onCheckpoint: () => undefined, onFailed: (error) => failures.push(error) },
      { writesReadStore: true },
    );
    try {
      assert.equal(
        await settlesWithin(replica.readCaughtUp(COMMANDS.length), 20_000),
        true,
        'resolved at the last seq written',
      );
      assert.equal(replica.readAppliedSeq, COMMANDS.length);
    } finally {
      await replica.stop(false);
    }
    assert.deepEqual(failures, []);
  });
});

test('a stop right after the start waits for the worker to catch up and save, not killed early', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'replica-'));
  try {
    const machine = await journalCommands(dataDir);
    const saved: number[] = [];
    const failures: Error[] = [];
    const replica = localReplica(dataDir, {
      onCheckpoint: () => undefined,
      onFailed: (error) => failures.push(error),
      onSaved: (info) => saved.push(info.seq),
    });
    // The worker still has to start and replay the journal: the stop waits for all of it.
    await replica.stop(true);
    assert.equal(replica.failed, false, 'stopped in time, not killed');
    assert.deepEqual(saved, [COMMANDS.length], 'the final snapshot');
    assert.deepEqual(failures, []);
    const snapshots = new SqliteSnapshotStore({ path: join(dataDir, SQLITE_FILES.snapshots) });
    try {
      const latest = await snapshots.latestSnapshot();
      assert.equal(latest?.stateHash, machine.stateHash(), 'the saved snapshot is the live state');
    } finally {
      await snapshots.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a worker that exits unasked is reported as failed', async () => {
  await inJournaledDir(async (dataDir) => {
    const failures: Error[] = [];
    const replica = localReplica(dataDir, {
      onCheckpoint: () => undefined,
      onFailed: (error) => failures.push(error),
    });
    try {
      await replica.status();
      await (replica as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
      await until(() => failures.length > 0).catch(() => undefined);
      assert.equal(replica.failed, true, 'an exit nobody asked for is a failure');
      assert.equal(failures.length, 1);
      assert.match(failures[0]!.message, /exited/);
    } finally {
      await replica.stop(false);
    }
  });
});

// ---- added: durability of the replica's feed, its stop and failure, and the supervisor ----

/** The live machine's state hash after the first `count` commands. */
function stateHashAt(count: number): string {
  const machine = createCoreMachine();
  for (const [i, command] of COMMANDS.slice(0, count).entries()) {
    machine.execute(stampInPlace(structuredClone(command), { seq: i + 1, ts: T0 + i }));
  }
  return machine.stateHash();
}

/** A frame holding one command at `seq` (a deposit to account 1). */
const depositFrame = (seq: number) =>
  buildFrame([
    { seq, ts: T0 + seq, command: { type: 'deposit', accountId: 1, currency: 'BTC', amount: seq } },
  ]);

test('a frame the replica has applied already is refused, not applied twice', async () => {
  await inJournaledDir(async (dataDir) => {
    const failures: Error[] = [];
    const replica = localReplica(dataDir, {
      onCheckpoint: () => undefined,
      onFailed: (e) => failures.push(e),
    });
    try {
      await replica.status();
      replica.feed(buildFrame([{ seq: COMMANDS.length, ts: T0, command: structuredClone(COMMANDS[4]!) }]));
      await assert.rejects(replica.status(), /expected seq 6, got 5/, 'a re-fed seq stops the replica');
      assert.equal(failures.length, 1, 'reported once through onFailed');
    } finally {
      await replica.stop(false);
    }
  });
});

test('a frame past the next seq (a gap) stops the replica', async () => {
  await inJournaledDir(async (dataDir) => {
    const failures: Error[] = [];
    const replica = localReplica(dataDir, {
      onCheckpoint: () => undefined,
      onFailed: (e) => failures.push(e),
    });
    try {
      await replica.status();
      replica.feed(depositFrame(COMMANDS.length + 2));
      await assert.rejects(replica.status(), /expected seq 6, got 7/, 'a skipped seq stops the replica');
    } finally {
      await replica.stop(false);
    }
  });
});

test('the catch-up stops at startSeq even when the journal holds more', async () => {
  await inJournaledDir(async (dataDir) => {
    const failures: Error[] = [];
    const replica = localReplica(
      dataDir,
      { onCheckpoint: () => undefined, onFailed: (e) => failures.push(e) },
      { startSeq: 3 },
    );
    try {
      assert.deepEqual(
        await replica.status(),
        { seq: 3, stateHash: stateHashAt(3) },
        'the live core was at 3: later records come as frames',
      );
    } finally {
      await replica.stop(false);
    }
    assert.deepEqual(failures, [], 'no failure');
  });
});

test('a journal that ends before startSeq fails the replica at its start', async () => {
  await inJournaledDir(async (dataDir) => {
    const failures: Error[] = [];
    const replica = localReplica(
      dataDir,
      { onCheckpoint: () => undefined, onFailed: (e) => failures.push(e) },
      { startSeq: COMMANDS.length + 2 },
    );
    try {
      await assert.rejects(
        replica.status(),
        /the journal ends at seq 5, the live core at 7/,
        'a replica behind the live core never reports ready',
      );
      // The worker posts its failure, then ends: that exit is the same failure, not a second one.
      await (replica as unknown as { exited: Promise<void> }).exited;
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(failures.length, 1, 'onFailed is told once');
    } finally {
      await replica.stop(false);
    }
  });
});

test('checkpoints and snapshots come from live frames only, at multiples of the interval', async () => {
  await inJournaledDir(async (dataDir) => {
    const checkpoints: number[] = [];
    const saved: number[] = [];
    const failures: Error[] = [];
    const replica = localReplica(
      dataDir,
      {
        onCheckpoint: (checkpoint) => checkpoints.push(checkpoint.seq),
        onSaved: (info) => saved.push(info.seq),
        onFailed: (e) => failures.push(e),
      },
      { policy: { everyCommands: 1, everyMs: 0, checkpointEveryCommands: 2 } },
    );
    try {
      await replica.status();
      assert.deepEqual(checkpoints, [], 'the catch-up takes no checkpoint (the journal has them)');
      assert.deepEqual(saved, [], 'nor a snapshot');
      replica.feed(depositFrame(6));
      replica.feed(depositFrame(7));
      assert.equal((await replica.status()).seq, 7, 'both frames applied');
      assert.deepEqual(checkpoints, [6], 'a checkpoint at the multiple of 2 only');
      await until(() => saved.length > 0, 10_000);
      assert.ok(
        saved.every((seq) => seq > COMMANDS.length),
        `snapshots of live seqs only: ${saved}`,
      );
    } finally {
      await replica.stop(false);
    }
    assert.deepEqual(failures, [], 'no failure');
  });
});

test('readCaughtUp past every fed seq resolves once what was fed is written', async () => {
  await inJournaledDir(async (dataDir) => {
    const failures: Error[] = [];
    const replica = localReplica(
      dataDir,
      { onCheckpoint: () => undefined, onFailed: (e) => failures.push(e) },
      { writesReadStore: true },
    );
    try {
      assert.equal(
        await settlesWithin(replica.readCaughtUp(1_000), 20_000),
        true,
        'a seq past the fed frames waits only for those',
      );
      assert.equal(replica.readAppliedSeq, COMMANDS.length, 'written through the last fed seq');
    } finally {
      await replica.stop(false);
    }
    assert.deepEqual(failures, [], 'no failure');
  });
});

test('a stop past its deadline counts as failed and ends the read waits', async () => {
  await inJournaledDir(async (dataDir) => {
    const replica = localReplica(
      dataDir,
      { onCheckpoint: () => undefined, onFailed: () => undefined },
      { writesReadStore: true },
    );
    // The worker is still starting: the read store has written nothing yet.
    const wait = replica.readCaughtUp();
    await replica.stop(true, 1);
    assert.equal(replica.failed, true, 'a replica killed at its deadline did not take the final snapshot');
    assert.equal(await settlesWithin(wait, 5_000), true, 'a read wait ends with the replica');
  });
});

test('terminate counts as failed: no more status answers', async () => {
  await inJournaledDir(async (dataDir) => {
    const replica = localReplica(dataDir, { onCheckpoint: () => undefined, onFailed: () => undefined });
    await replica.status();
    await replica.terminate();
    assert.equal(replica.failed, true, 'a terminated replica is failed');
    await assert.rejects(replica.status(), /terminated/, 'status refuses at once');
  });
});

/** A supervisor of `dataDir`'s replica, on a journal whose batches the test announces. */
function supervise(dataDir: string, hooks: SupervisorHooks, clock?: Clock) {
  let observer: BatchListener = () => undefined;
  const journal = { observeBatches: (listener: BatchListener) => (observer = listener) };
  const supervisor = new ReplicaSupervisor(
    journal as unknown as Journal<MachineCommand>,
    {
      dataDir,
      databaseUrl: null,
      natsJournal: null,
      startSeq: COMMANDS.length,
      policy: { everyCommands: 0, everyMs: 0, checkpointEveryCommands: 0 },
      writesReadStore: true,
    },
    0,
    hooks,
    { firstDelayMs: 200, maxDelayMs: 1_000, healthyAfterMs: 100 },
    ...(clock === undefined ? [] : [clock]),
  );
  /** Journals a deposit at `seq` durably, then tells the supervisor, as the live journal does. */
  const commit = async (seq: number) => {
    const entry = {
      seq,
      ts: T0 + seq,
      command: { type: 'deposit', accountId: 1, currency: 'BTC', amount: seq },
    };
    const journal = SqliteJournal.open<MachineCommand>({ path: join(dataDir, SQLITE_FILES.journal) });
    await journal.append(entry as unknown as JournalEntry<MachineCommand>);
    await journal.close();
    observer(1, 0, buildFrame([entry]), null);
  };
  /** Ends the running replica's thread unasked (a crash). */
  const crash = async () => {
    const replica = supervisor.current!;
    await replica.status();
    await (replica as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
  };
  return { supervisor, commit, crash };
}

test('the supervisor restarts a failed replica after the last durable frame, backing off, and starting over after a healthy run', async () => {
  await inJournaledDir(async (dataDir) => {
    // The restart delays pass on a virtual clock, only when the test moves it.
    const clock = new VirtualClock(0);
    const delays: number[] = [];
    let restarts = 0;
    // The worker is unreferenced (the service's server keeps the process alive).
    const keepAlive = setInterval(() => undefined, 1_000);
    const { supervisor, commit, crash } = supervise(
      dataDir,
      {
        onCheckpoint: () => undefined,
        onFailed: (_error, restartInMs) => delays.push(restartInMs),
        onRestarted: () => restarts++,
      },
      clock,
    );
    try {
      assert.equal(
        await settlesWithin(supervisor.caughtUp(1_000), 20_000),
        true,
        'caughtUp past the journal ends',
      );
      assert.equal(supervisor.lastAppliedSeq, COMMANDS.length, 'the store holds the journal');
      // A crash, then a command made durable while no replica runs: the next one starts after it.
      await crash();
      await until(() => delays.length === 1, 10_000);
      assert.equal(supervisor.current, null, 'none runs until the delay passes');
      await commit(COMMANDS.length + 1);
      assert.equal(supervisor.current, null, 'the command was made durable while none ran');
      clock.advance(199);
      assert.equal(supervisor.current, null, 'not before its delay');
      clock.advance(1);
      assert.equal(restarts, 1, 'restarted once its delay passed');
      assert.equal(
        await settlesWithin(supervisor.caughtUp(), 20_000),
        true,
        'a read wait lasts until the next replica wrote it',
      );
      assert.equal(supervisor.lastAppliedSeq, COMMANDS.length + 1, 'the restarted replica wrote the command');
      assert.equal((await supervisor.status()).seq, COMMANDS.length + 1, 'the restarted replica applied it');
      await crash();
      await until(() => delays.length === 2, 10_000);
      clock.advance(400);
      assert.equal(restarts, 2);
      assert.equal((await supervisor.status()).seq, COMMANDS.length + 1, 'the next one starts there too');
      clock.advance(100); // this replica ran for healthyAfterMs
      await crash();
      await until(() => delays.length === 3, 10_000);
      clock.advance(200);
      assert.equal(restarts, 3);
      assert.deepEqual(delays, [200, 400, 200], 'doubling, then the first delay again after a healthy run');
      // A read wait while none runs ends with the supervisor's stop.
      await crash();
      await until(() => delays.length === 4, 10_000);
      await commit(COMMANDS.length + 2);
      const waiting = supervisor.caughtUp();
      await supervisor.stop(false);
      assert.equal(await settlesWithin(waiting, 5_000), true, 'stop ends the waits for a replica');
    } finally {
      await supervisor.stop(false);
      clearInterval(keepAlive);
    }
  });
});

test('a supervisor whose replica was terminated counts as failed (the caller takes the final snapshot)', async () => {
  await inJournaledDir(async (dataDir) => {
    const { supervisor } = supervise(dataDir, { onCheckpoint: () => undefined, onFailed: () => undefined });
    try {
      await supervisor.status();
      assert.equal(supervisor.failed, false, 'a running replica');
      await supervisor.terminate();
      assert.equal(supervisor.failed, true, 'a terminated replica cannot take the final snapshot');
    } finally {
      await supervisor.stop(false);
    }
  });
});

test('readCaughtUp() waits for the last seq of the last frame, not its first', async () => {
  await inJournaledDir(async (dataDir) => {
    const failures: Error[] = [];
    const replica = localReplica(
      dataDir,
      { onCheckpoint: () => undefined, onFailed: (e) => failures.push(e) },
      { writesReadStore: true },
    );
    try {
      await replica.readCaughtUp(COMMANDS.length);
      // 9,999 commands, then a frame of 3: the read store writes a batch at 10,000 commands,
      // which ends at the first command of the last frame.
      const deposit = (seq: number) => ({
        seq,
        ts: T0 + seq,
        command: { type: 'deposit', accountId: 1, currency: 'BTC', amount: 1 },
      });
      const first = COMMANDS.length + 1;
      replica.feed(buildFrame(Array.from({ length: 9_999 }, (_, i) => deposit(first + i))));
      const last = first + 9_999 + 2;
      replica.feed(buildFrame([deposit(last - 2), deposit(last - 1), deposit(last)]));
      await replica.readCaughtUp();
      assert.equal(replica.readAppliedSeq, last, 'every command handed over is written when the wait ends');
    } finally {
      await replica.stop(false);
    }
    assert.deepEqual(failures, [], 'no failure');
  });
});

test('after a stop, readCaughtUp resolves (nothing more will be written)', async () => {
  await inJournaledDir(async (dataDir) => {
    const hooks = { onCheckpoint: () => undefined, onFailed: () => undefined };
    // A first replica writes the read store through the last seq.
    const first = localReplica(dataDir, hooks, { writesReadStore: true });
    await first.readCaughtUp(COMMANDS.length);
    await first.stop(false);
    // The next one is told the store is at 0: it writes nothing (the store has it all).
    const replica = localReplica(dataDir, hooks, { writesReadStore: true });
    await replica.status();
    await replica.stop(false);
    assert.equal(
      await settlesWithin(replica.readCaughtUp(), 5_000),
      true,
      'a stopped replica never holds a wait',
    );
  });
});

test('a status() asked before a stop that passes its deadline settles (rejects) with the failure', async () => {
  await inJournaledDir(async (dataDir) => {
    const replica = localReplica(dataDir, { onCheckpoint: () => undefined, onFailed: () => undefined });
    // The worker is still starting: the status answer is not there when the 1 ms deadline passes.
    const status = replica.status().then(
      () => 'resolved',
      (error: Error) => `rejected: ${error.message}`,
    );
    await replica.stop(false, 1);
    assert.equal(replica.failed, true, 'the stop passed its deadline');
    assert.equal(await settlesWithin(status, 5_000), true, 'status() settles once the thread is gone');
    assert.match(
      await status,
      /^rejected: snapshot replica did not stop within 1 ms$/,
      'it rejects with the failure of the stop',
    );
  });
});
