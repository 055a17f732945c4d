/** Recovery (snapshot + replay + hash checks) and the snapshot policy, on the SQLite backend. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import type { Journal, JournalEntry, SnapshotStore } from '../../src/store/journal.ts';
import { JournalTrimmedError, RecoveryMismatchError, recover } from '../../src/store/recovery.ts';
import { Snapshotter } from '../../src/store/snapshotter.ts';
import { SqliteJournal } from '../../src/store/sqlite/sqlite-journal.ts';
import { SqliteSnapshotStore } from '../../src/store/sqlite/sqlite-snapshots.ts';

type Cmd = { readonly type: 'add'; readonly n: number };

/** A tiny deterministic core: order-sensitive accumulator. */
class ToyCore {
  seq = 0;
  acc = 17;
  static from(state: unknown | null): ToyCore {
    const core = new ToyCore();
    if (state !== null) Object.assign(core, state as { seq: number; acc: number });
    return core;
  }
  apply(entry: JournalEntry<Cmd>): void {
    this.seq = entry.seq;
    this.acc = (this.acc * 31 + entry.command.n) % 1_000_000_007;
  }
  stateHash(): string {
    return `${this.seq}:${this.acc}`;
  }
  snapshot(): unknown {
    return { seq: this.seq, acc: this.acc };
  }
}

interface Fixture {
  dir: string;
  journal: Journal<Cmd>;
  snapshots: SnapshotStore;
  reopen(): Promise<void>;
  dispose(): Promise<void>;
}

async function fixture(): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), 'recovery-test-'));
  const open = () => ({
    journal: SqliteJournal.open<Cmd>({ path: join(dir, 'journal.sqlite') }),
    snapshots: new SqliteSnapshotStore({ path: join(dir, 'snapshots.sqlite') }),
  });
  const f: Fixture = {
    dir,
    ...open(),
    async reopen() {
      await f.journal.close();
      await f.snapshots.close();
      Object.assign(f, open());
    },
    async dispose() {
      await f.journal.close();
      await f.snapshots.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return f;
}

/** Drives `count` commands through a live core + journal, like the sequencer does. */
async function runLive(f: Fixture, core: ToyCore, from: number, count: number, snapshotter?: Snapshotter) {
  const pending: Promise<void>[] = [];
  for (let seq = from; seq < from + count; seq++) {
    const entry = { seq, ts: 1000 + seq, command: { type: 'add' as const, n: (seq * 7919) % 1013 } };
    core.apply(entry);
    pending.push(f.journal.append(entry).then(() => snapshotter?.onCommitted(entry.ts)));
  }
  await Promise.all(pending);
}

test('replays the whole journal when there is no snapshot and rebuilds the live hash', async () => {
  const f = await fixture();
  try {
    const live = new ToyCore();
    await runLive(f, live, 1, 300);
    await f.reopen();
    const { core, report } = await recover({
      journal: f.journal,
      snapshots: f.snapshots,
      createCore: ToyCore.from,
    });
    assert.equal(core.stateHash(), live.stateHash());
    assert.equal(report.snapshotSeq, null);
    assert.equal(report.replayed, 300);
    assert.equal(report.lastSeq, 300);
    assert.equal(report.lastTs, 1300);
    assert.equal(report.ok, true);
  } finally {
    await f.dispose();
  }
});

test('starts from the snapshot, replays only after it, and verifies checkpoints', async () => {
  const f = await fixture();
  try {
    const live = new ToyCore();
    const snapshotter = new Snapshotter(
      { everyCommands: 100, everyMs: 0, checkpointEveryCommands: 30 },
      {
        journal: f.journal,
        snapshots: f.snapshots,
        capture: () => ({
          seq: live.seq,
          ts: 1000 + live.seq,
          stateHash: live.stateHash(),
          state: live.snapshot(),
        }),
        currentHash: () => ({ seq: live.seq, stateHash: live.stateHash() }),
      },
    );
    for (let i = 0; i < 5; i++) await runLive(f, live, i * 50 + 1, 50, snapshotter);
    await snapshotter.idle();
    await f.journal.flush();
    const saved = await f.snapshots.listSnapshots();
    assert.deepEqual(
      saved.map((s) => s.seq),
      [200, 100],
    );
    await f.reopen();
    const { core, report } = await recover({
      journal: f.journal,
      snapshots: f.snapshots,
      createCore: ToyCore.from,
    });
    assert.equal(report.snapshotSeq, 200);
    assert.equal(report.replayedFrom, 201);
    assert.equal(report.replayed, 50);
    // Checkpoints carry the APPLIED seq when a commit is seen: here the end of each run of 50.
    assert.deepEqual(
      (await f.journal.checkpoints(201, 250)).map((c) => c.seq),
      [250],
    );
    assert.equal(report.checkpointsVerified, 1);
    assert.equal(report.ok, true);
    assert.equal(core.stateHash(), live.stateHash());
    // A lagging read store (applied up to 150) makes recovery start from the older snapshot.
    const lagging = await recover({
      journal: f.journal,
      snapshots: f.snapshots,
      createCore: ToyCore.from,
      maxSnapshotSeq: 150,
    });
    assert.equal(lagging.report.snapshotSeq, 100);
    assert.equal(lagging.report.replayed, 150);
    assert.equal(lagging.core.stateHash(), live.stateHash());
  } finally {
    await f.dispose();
  }
});

test('a trimmed journal recovers from the snapshot it starts after, and refuses without one', async () => {
  const f = await fixture();
  try {
    const live = new ToyCore();
    await runLive(f, live, 1, 100);
    await f.snapshots.saveSnapshot({
      seq: 100,
      ts: 1100,
      stateHash: live.stateHash(),
      state: live.snapshot(),
    });
    await runLive(f, live, 101, 100);
    // Records are batches: everything through 100 goes, whatever straddles it stays.
    for (;;) if ((await f.journal.trimThrough(100, 4)).done) break;
    const firstSeq = await f.journal.firstSeq();
    assert.ok(firstSeq > 1 && firstSeq <= 101, `first seq ${firstSeq}`);
    await f.reopen();
    const { core, report } = await recover({
      journal: f.journal,
      snapshots: f.snapshots,
      createCore: ToyCore.from,
    });
    assert.equal(report.snapshotSeq, 100);
    assert.equal(report.replayed, 100);
    assert.equal(core.stateHash(), live.stateHash());
    // A read store behind the trimmed journal (maxSnapshotSeq) cannot be re-fed from it.
    await assert.rejects(
      recover({ journal: f.journal, snapshots: f.snapshots, createCore: ToyCore.from, maxSnapshotSeq: 50 }),
      (error: unknown) =>
        error instanceof JournalTrimmedError &&
        error.firstSeq === firstSeq &&
        error.snapshotSeq === null &&
        /the journal starts at seq \d+ \(trimmed\)/.test(error.message),
    );
  } finally {
    await f.dispose();
  }
});

test('a snapshot ahead of the durable journal is ignored (its last commands were never acknowledged)', async () => {
  const f = await fixture();
  try {
    const live = new ToyCore();
    await runLive(f, live, 1, 40);
    await f.snapshots.saveSnapshot({
      seq: 40,
      ts: 1040,
      stateHash: live.stateHash(),
      state: live.snapshot(),
    });
    const ahead = ToyCore.from(live.snapshot());
    ahead.apply({ seq: 41, ts: 1041, command: { type: 'add', n: 5 } });
    await f.snapshots.saveSnapshot({
      seq: 41,
      ts: 1041,
      stateHash: ahead.stateHash(),
      state: ahead.snapshot(),
    });
    await f.reopen();
    const { core, report } = await recover({
      journal: f.journal,
      snapshots: f.snapshots,
      createCore: ToyCore.from,
    });
    assert.equal(report.snapshotSeq, 40);
    assert.equal(report.replayed, 0);
    assert.equal(report.discardedSnapshots, 1);
    assert.equal(core.stateHash(), live.stateHash());
    // The journal now reuses seq 41 for another command; the stale snapshot must never return.
    const other = { seq: 41, ts: 1041, command: { type: 'add' as const, n: 999 } };
    live.apply(other);
    await f.journal.append(other);
    f.journal.recordCheckpoint({ seq: 41, stateHash: live.stateHash() });
    await f.journal.flush();
    await f.reopen();
    const again = await recover({
      journal: f.journal,
      snapshots: f.snapshots,
      createCore: ToyCore.from,
      strict: true,
    });
    assert.equal(again.report.snapshotSeq, 40);
    assert.equal(again.core.stateHash(), live.stateHash());
  } finally {
    await f.dispose();
  }
});

test('checkpoints beyond the durable journal are dropped when it opens', async () => {
  const f = await fixture();
  try {
    const live = new ToyCore();
    await runLive(f, live, 1, 5);
    f.journal.recordCheckpoint({ seq: 7, stateHash: 'of-a-lost-future' });
    await f.journal.flush();
    await f.reopen();
    assert.deepEqual(await f.journal.checkpoints(0, 100), []);
    await runLive(f, live, 6, 5);
    f.journal.recordCheckpoint({ seq: 10, stateHash: live.stateHash() });
    await f.journal.flush();
    await f.reopen();
    const { report } = await recover({
      journal: f.journal,
      snapshots: f.snapshots,
      createCore: ToyCore.from,
    });
    assert.equal(report.checkpointsVerified, 1);
    assert.equal(report.ok, true);
  } finally {
    await f.dispose();
  }
});

test('a hash mismatch is reported, and thrown in strict mode', async () => {
  const f = await fixture();
  try {
    const live = new ToyCore();
    await runLive(f, live, 1, 20);
    f.journal.recordCheckpoint({ seq: 10, stateHash: 'not-the-hash' });
    await f.journal.flush();
    await f.reopen();
    const { report } = await recover({
      journal: f.journal,
      snapshots: f.snapshots,
      createCore: ToyCore.from,
    });
    assert.equal(report.ok, false);
    assert.deepEqual(
      report.mismatches.map((m) => [m.seq, m.where, m.expected]),
      [[10, 'checkpoint', 'not-the-hash']],
    );
    await assert.rejects(
      recover({ journal: f.journal, snapshots: f.snapshots, createCore: ToyCore.from, strict: true }),
      RecoveryMismatchError,
    );
  } finally {
    await f.dispose();
  }
});

test('a snapshot whose restored state does not hash to its recorded hash is reported, and thrown in strict mode', async () => {
  const f = await fixture();
  try {
    const live = new ToyCore();
    await runLive(f, live, 1, 40);
    // The recorded hash is the live one; the stored state lost something (restores to another hash).
    const recorded = live.stateHash();
    const damaged = { seq: 40, acc: (live.acc + 1) % 1_000_000_007 };
    await f.snapshots.saveSnapshot({ seq: 40, ts: 1040, stateHash: recorded, state: damaged });
    await runLive(f, live, 41, 5);
    await f.reopen();
    const { report } = await recover({
      journal: f.journal,
      snapshots: f.snapshots,
      createCore: ToyCore.from,
    });
    assert.equal(report.snapshotSeq, 40);
    assert.equal(report.ok, false);
    assert.deepEqual(
      report.mismatches.map((m) => [m.seq, m.where, m.expected]),
      [[40, 'snapshot', recorded]],
    );
    assert.equal(report.mismatches[0]!.actual, ToyCore.from(damaged).stateHash());
    await assert.rejects(
      recover({ journal: f.journal, snapshots: f.snapshots, createCore: ToyCore.from, strict: true }),
      (error: unknown) =>
        error instanceof RecoveryMismatchError &&
        error.report.mismatches[0]?.where === 'snapshot' &&
        /state hash mismatch at seq 40 \(snapshot\)/.test(error.message),
    );
  } finally {
    await f.dispose();
  }
});

test('a torn last record is dropped and reported; recovery rebuilds the state before it', async () => {
  const f = await fixture();
  try {
    const live = new ToyCore();
    await runLive(f, live, 1, 10);
    const before = live.stateHash();
    await runLive(f, live, 11, 5);
    await f.journal.close();
    const db = new Database(join(f.dir, 'journal.sqlite'));
    db.prepare(
      'UPDATE journal SET payload = substr(payload, 1, length(payload) - 3) WHERE first_seq = 11',
    ).run();
    db.close();
    await f.reopen();
    const { core, report } = await recover({
      journal: f.journal,
      snapshots: f.snapshots,
      createCore: ToyCore.from,
    });
    assert.equal(report.droppedTailRecords, 1);
    assert.equal(report.droppedTailEntries, 5);
    assert.equal(report.lastSeq, 10);
    assert.equal(core.stateHash(), before);
  } finally {
    await f.dispose();
  }
});

test('snapshot policy: by command count and by command time, one at a time', async () => {
  const saved: number[] = [];
  const checkpoints: number[] = [];
  let seq = 0;
  const snapshots = {
    saveSnapshot: async (s: { seq: number }) => {
      saved.push(s.seq);
      return { seq: s.seq, ts: 0, stateHash: '', bytes: 1 };
    },
  } as unknown as SnapshotStore;
  const snapshotter = new Snapshotter(
    { everyCommands: 10, everyMs: 1000, checkpointEveryCommands: 4 },
    {
      journal: { recordCheckpoint: (c) => checkpoints.push(c.seq) },
      snapshots,
      capture: () => ({ seq, ts: 0, stateHash: '', state: null }),
      currentHash: () => ({ seq, stateHash: '' }),
    },
  );
  for (seq = 1; seq <= 25; seq++) {
    snapshotter.onCommitted(seq);
    await snapshotter.idle();
  }
  assert.deepEqual(saved, [10, 20]);
  assert.deepEqual(checkpoints, [4, 8, 12, 16, 20, 24]);
  // Time: 1000 ms of command time since the last snapshot (taken at ts 20) triggers one.
  seq = 26;
  snapshotter.onCommitted(1020);
  await snapshotter.idle();
  assert.deepEqual(saved, [10, 20, 26]);
});

/** A journal stub holding exactly `entries` (a backend fault can be shaped at will). */
function stubJournal(
  entries: readonly JournalEntry<Cmd>[],
  last: { seq: number; ts: number },
  firstSeq: number,
): Journal<Cmd> {
  return {
    openReport: { droppedTailRecords: 0, droppedTailEntries: 0 },
    last: async () => last,
    firstSeq: async () => firstSeq,
    checkpoints: async () => [],
    async *readBatches(fromSeq: number) {
      const batch = entries.filter((e) => e.seq >= fromSeq);
      if (batch.length > 0) yield batch;
    },
  } as unknown as Journal<Cmd>;
}

function stubSnapshots(
  snapshot: { seq: number; ts: number; stateHash: string; state: unknown } | null,
): SnapshotStore {
  return {
    discardAfter: async () => 0,
    latestSnapshot: async () => snapshot,
    listSnapshots: async () => [],
  } as unknown as SnapshotStore;
}

const add = (seq: number): JournalEntry<Cmd> => ({ seq, ts: 1000 + seq, command: { type: 'add', n: seq } });

test('replay refuses a journal that yields an entry out of sequence, even when the count adds up', async () => {
  // Entries 1 and 3 under a last seq of 2: as many entries as the journal claims.
  await assert.rejects(
    recover({
      journal: stubJournal([add(1), add(3)], { seq: 2, ts: 1002 }, 1),
      snapshots: stubSnapshots(null),
      createCore: ToyCore.from,
    }),
    /replay expected seq 2, found 3/,
  );
});

test('replay refuses a journal whose entries end before its last durable seq', async () => {
  // The journal says seq 3 is durable but yields only 1 and 2: the core would miss command 3.
  await assert.rejects(
    recover({
      journal: stubJournal([add(1), add(2)], { seq: 3, ts: 1003 }, 1),
      snapshots: stubSnapshots(null),
      createCore: ToyCore.from,
    }),
    /replay ended at seq 2, journal ends at 3/,
  );
});

test('snapshot policy: a snapshot due while one is being saved is not started; idle waits for the one in flight', async () => {
  const saved: number[] = [];
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let seq = 0;
  const snapshots = {
    saveSnapshot: async (s: { seq: number }) => {
      saved.push(s.seq);
      await held;
      return { seq: s.seq, ts: 0, stateHash: '', bytes: 1 };
    },
  } as unknown as SnapshotStore;
  const snapshotter = new Snapshotter(
    { everyCommands: 1, everyMs: 0, checkpointEveryCommands: 0 },
    {
      journal: { recordCheckpoint: () => undefined },
      snapshots,
      capture: () => ({ seq, ts: 0, stateHash: '', state: null }),
      currentHash: () => ({ seq, stateHash: '' }),
    },
  );
  for (seq = 1; seq <= 3; seq++) snapshotter.onCommitted(seq);
  assert.deepEqual(saved, [1], 'a second snapshot started while the first was being saved');
  let idle = false;
  const idling = snapshotter.idle().then(() => {
    idle = true;
  });
  await new Promise<void>((resolve) => setImmediate(resolve));
  assert.equal(idle, false);
  release();
  await idling;
});
