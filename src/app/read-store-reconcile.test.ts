/**
 * The read store's check before recovery, on a real SQLite journal and snapshot store trimmed as
 * the journal trimmer trims them: whole records only, the older snapshots unpinned and pruned.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { JournalEntry } from '../store/journal.ts';
import { recover } from '../store/recovery.ts';
import { SqliteJournal } from '../store/sqlite/sqlite-journal.ts';
import { SqliteSnapshotStore } from '../store/sqlite/sqlite-snapshots.ts';
import { reconcileReadStore } from './read-store-reconcile.ts';

type Cmd = { readonly n: number };

/** An order-sensitive accumulator: a replay from the wrong place gives another hash. */
class Sum {
  constructor(
    public seq = 0,
    public acc = 0,
  ) {}
  apply(entry: JournalEntry<Cmd>): void {
    this.seq = entry.seq;
    this.acc = this.acc * 3 + entry.command.n;
  }
  stateHash(): string {
    return `${this.seq}:${this.acc}`;
  }
}

/** The read store as the check sees it: where it has written to, and what a reset set it to. */
function store(lastAppliedSeq: number) {
  const resets: number[] = [];
  return {
    resets,
    get lastAppliedSeq() {
      return resets.at(-1) ?? lastAppliedSeq;
    },
    reset: async (seq: number) => {
      resets.push(seq);
    },
  };
}

/** A journal holding seqs `first`..`last`, as the check reads it. */
function journalOf(first: number, last: number) {
  return { lastSeq: async () => last, firstSeq: async () => first };
}

/** A snapshot store listing `listed`; `latest(max)` is the newest at or before `max` that loads. */
function snapshotsOf(listed: number[], latest: (max: number) => number | null) {
  return {
    listSnapshots: async () => listed.map((seq) => ({ seq })) as never,
    latestSnapshot: async (max?: number) => {
      const seq = latest(max ?? Number.POSITIVE_INFINITY);
      return (seq === null ? null : { seq }) as never;
    },
  };
}

function quietLog() {
  const warnings: string[] = [];
  return { warnings, warn: (_fields: object, message: string) => void warnings.push(message) };
}

describe('reconcileReadStore', () => {
  const dir = mkdtempSync(join(tmpdir(), 'reconcile-'));
  let journal: SqliteJournal<Cmd>;
  let snapshots: SqliteSnapshotStore;

  before(async () => {
    // Appended in one turn: the group commit writes records of up to four entries, so the trim
    // below keeps a record that starts before seq 5. Snapshots at 2, 5 and 12.
    const writing = SqliteJournal.open<Cmd>({ path: join(dir, 'journal.sqlite'), limits: { maxEntries: 4 } });
    snapshots = new SqliteSnapshotStore({ path: join(dir, 'snapshots.sqlite'), keep: 1 });
    const core = new Sum();
    const states = new Map<number, Sum>();
    const appends: Promise<void>[] = [];
    for (let seq = 1; seq <= 12; seq++) {
      const entry = { seq, ts: seq * 1000, command: { n: seq } };
      core.apply(entry);
      appends.push(writing.append(entry));
      if (seq === 2 || seq === 5 || seq === 12) states.set(seq, new Sum(core.seq, core.acc));
    }
    await Promise.all(appends);
    for (const [seq, state] of states) {
      await snapshots.saveSnapshot({
        seq,
        ts: seq * 1000,
        stateHash: state.stateHash(),
        state: { ...state },
      });
      // The trimmer's anchors are pinned (the one at 2 too, until the trim below lets it go).
      if (seq < 12) await snapshots.pin(seq);
    }
    // The trimmer's steps with the snapshot at 5 as its base: let the older ones go, trim.
    await snapshots.unpinBefore(5);
    await writing.trimThrough(5, 16);
    await writing.close();
    journal = SqliteJournal.open<Cmd>({ path: join(dir, 'journal.sqlite') });
  });
  after(async () => {
    await journal.close();
    await snapshots.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the setting: a journal that starts before the snapshot it was trimmed after', async () => {
    const firstSeq = await journal.firstSeq();
    assert.ok(
      firstSeq > 1 && firstSeq <= 5,
      `a record holding seq 5 and earlier ones is kept whole (first ${firstSeq})`,
    );
    assert.deepEqual(
      (await snapshots.listSnapshots()).map((s) => s.seq).sort((a, b) => a - b),
      [5, 12],
      'the snapshot at 2 was pruned',
    );
  });

  test('a store that lost writes back to between the journal start and the trim base is rebuilt from the base', async () => {
    // The store was past 5 when the trim ran; a power cut took it back to 4, which the journal
    // still holds. But the snapshot at 4 or earlier it would be re-fed from is gone.
    const read = store(4);
    const log = quietLog();
    await reconcileReadStore(read, journal, snapshots, log);
    assert.deepEqual(read.resets, [5], 'emptied and set to the trim base');
    assert.match(log.warnings[0] ?? '', /behind the trimmed journal/);
    // Recovery as the service runs it, bounded by the store, now succeeds and re-feeds from 5.
    const { core, report } = await recover({
      journal,
      snapshots,
      maxSnapshotSeq: read.lastAppliedSeq,
      createCore: (state) => Object.assign(new Sum(), state),
      strict: true,
    });
    assert.equal(report.snapshotSeq, 5);
    assert.equal(core.seq, 12);
  });

  test('recovery bounded by such a store fails without the rebuild', async () => {
    await assert.rejects(
      recover({
        journal,
        snapshots,
        maxSnapshotSeq: 4,
        createCore: (state) => Object.assign(new Sum(), state),
        strict: true,
      }),
      { name: 'JournalTrimmedError' },
    );
  });

  test('a store at or past a snapshot the journal continues is kept', async () => {
    for (const seq of [5, 8, 12]) {
      const read = store(seq);
      const log = quietLog();
      await reconcileReadStore(read, journal, snapshots, log);
      assert.deepEqual(read.resets, [], `kept at seq ${seq}`);
      assert.deepEqual(log.warnings, [], `nothing logged at seq ${seq}`);
    }
  });

  test('a store behind the journal start, or ahead of its end, is rebuilt from the base', async () => {
    for (const [seq, reason] of [
      [0, /behind the trimmed journal/],
      [13, /ahead of the journal/],
    ] as const) {
      const read = store(seq);
      const log = quietLog();
      await reconcileReadStore(read, journal, snapshots, log);
      assert.deepEqual(read.resets, [5], `rebuilt from 5 at seq ${seq}`);
      assert.match(log.warnings[0] ?? '', reason);
    }
  });

  test('an untrimmed journal re-feeds any store behind it from seq 1; one ahead is rebuilt from 0', async () => {
    const whole = journalOf(1, 12);
    const none = snapshotsOf([], () => null);
    const behind = store(0);
    await reconcileReadStore(behind, whole, none, quietLog());
    assert.deepEqual(behind.resets, [], 'replayed from the start, nothing to empty');
    const ahead = store(20);
    await reconcileReadStore(ahead, whole, none, quietLog());
    assert.deepEqual(ahead.resets, [0]);
  });
});

describe('reconcileReadStore: the snapshot that bases a rebuild', () => {
  test('a snapshot at firstSeq - 1 is one the trimmed journal continues (keep / rebuild from it)', async () => {
    // Journal holds 6..20; the snapshot at 5 is continued by it.
    const snapshots = snapshotsOf([5, 30], (max) => Math.min(max, 5));
    const kept = store(7);
    await reconcileReadStore(kept, journalOf(6, 20), snapshots, quietLog());
    assert.deepEqual(kept.resets, [], 'a store at 7 is re-fed from the snapshot at 5: kept');
    const ahead = store(25);
    await reconcileReadStore(ahead, journalOf(6, 20), snapshots, quietLog());
    assert.deepEqual(ahead.resets, [5], 'rebuilt from the snapshot at 5, not one past the journal end');
  });

  test('a listed snapshot that does not load is skipped for the next one', async () => {
    // The one at 8 fails its checksum: asked for <= 8 the store finds nothing that loads.
    const snapshots = snapshotsOf([8, 12], (max) => (max >= 12 ? 12 : null));
    const read = store(2);
    await reconcileReadStore(read, journalOf(6, 20), snapshots, quietLog());
    assert.deepEqual(read.resets, [12]);
  });

  test('a journal trimmed to start at seq 2 still needs a snapshot (seq 1 lost)', async () => {
    const read = store(25);
    await reconcileReadStore(
      read,
      journalOf(2, 20),
      snapshotsOf([1], () => 1),
      quietLog(),
    );
    assert.deepEqual(read.resets, [1], 'rebuilt from the snapshot at 1, not from 0 (seq 1 is gone)');
  });

  test('a snapshot past the journal end is no base: no usable one stops the start', async () => {
    const read = store(25);
    await assert.rejects(
      reconcileReadStore(
        read,
        journalOf(6, 20),
        snapshotsOf([30], () => 30),
        quietLog(),
      ),
      {
        name: 'JournalTrimmedError',
      },
    );
    assert.deepEqual(read.resets, []);
  });
});
