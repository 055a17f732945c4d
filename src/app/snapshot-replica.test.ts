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
import type { CoreCommand } from '../core/commands.ts';
import type { MachineCommand } from '../core/machine.ts';
import { T0 } from '../engine/testkit.ts';
import { SQLITE_FILES } from '../store/open-stores.ts';
import { SqliteJournal } from '../store/sqlite/sqlite-journal.ts';
import { SqliteSnapshotStore } from '../store/sqlite/sqlite-snapshots.ts';
import { createCoreMachine } from './core-factory.ts';
import { stampInPlace } from './sequencer.ts';
import { type ReplicaHooks, type ReplicaSettings, SnapshotReplica } from './snapshot-replica.ts';

const COMMANDS: readonly MachineCommand[] = [
  { type: 'create_account', accountId: 1 },
  { type: 'deposit', accountId: 1, currency: 'BTC', amount: 1_000 },
  { type: 'create_account', accountId: 2 },
  { type: 'deposit', accountId: 2, currency: 'BTC', amount: 2_000 },
  { type: 'deposit', accountId: 1, currency: 'BTC', amount: 3_000 },
] as unknown as CoreCommand[];

/**
 * The live side: every command journaled, and with `snapshotEvery` a snapshot at each multiple
 * of it; returns the live machine.
 */
async function journalCommands(dataDir: string, snapshotEvery = 0) {
  const journal = SqliteJournal.open<MachineCommand>({ path: join(dataDir, SQLITE_FILES.journal) });
  const snapshots = new SqliteSnapshotStore({ path: join(dataDir, SQLITE_FILES.snapshots) });
  const machine = createCoreMachine();
  for (const [i, command] of COMMANDS.entries()) {
    const entry = { seq: i + 1, ts: T0 + i, command };
    await journal.append(entry);
    machine.execute(stampInPlace(structuredClone(command), entry));
    if (snapshotEvery > 0 && entry.seq % snapshotEvery === 0) {
      await snapshots.saveSnapshot({
        seq: entry.seq,
        ts: entry.ts,
        stateHash: machine.stateHash(),
        state: machine.snapshot(),
      });
    }
  }
  await journal.close();
  await snapshots.close();
  return machine;
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
    const machine = await journalCommands(dataDir, 2);
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
  const dataDir = mkdtempSync(join(tmpdir(), 'replica-'));
  try {
    await journalCommands(dataDir);
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
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
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
  const dataDir = mkdtempSync(join(tmpdir(), 'replica-'));
  try {
    await journalCommands(dataDir);
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
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
