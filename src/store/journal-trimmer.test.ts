import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { SnapshotInfo, TrimResult } from './journal.ts';
import { JournalTrimmer, type TrimReport } from './journal-trimmer.ts';

/** Stored records as first seq and count; one command per ms of command time (ts = seq). */
class FakeJournal {
  records: { first: number; count: number }[] = [];
  trimCalls = 0;

  append(count: number): void {
    const last = this.records[this.records.length - 1];
    const first = last === undefined ? 1 : last.first + last.count;
    this.records.push({ first, count });
  }

  get lastSeq(): number {
    const last = this.records[this.records.length - 1];
    return last === undefined ? 0 : last.first + last.count - 1;
  }

  async firstSeq(): Promise<number> {
    return this.records[0]?.first ?? this.lastSeq + 1;
  }

  async trimThrough(seq: number, maxRecords: number): Promise<TrimResult> {
    this.trimCalls++;
    const covered = (r: { first: number; count: number }, i: number) =>
      i < this.records.length - 1 && r.first + r.count - 1 <= seq;
    let records = 0;
    let entries = 0;
    while (records < maxRecords && this.records.length > 0 && covered(this.records[0]!, 0)) {
      entries += this.records.shift()!.count;
      records++;
    }
    const done = this.records.length === 0 || !covered(this.records[0]!, 0);
    return { records, entries, done };
  }
}

class FakeSnapshots {
  readonly rows = new Map<number, SnapshotInfo>();
  constructor(private readonly keep = 3) {}

  save(seq: number, ts = seq): SnapshotInfo {
    const info: SnapshotInfo = { seq, ts, stateHash: `h${seq}`, bytes: 1, pinned: false };
    this.rows.set(seq, info);
    this.prune();
    return info;
  }

  private prune(): void {
    const newest = [...this.rows.keys()].sort((a, b) => b - a).slice(0, this.keep);
    for (const [seq, info] of this.rows) if (!info.pinned && !newest.includes(seq)) this.rows.delete(seq);
  }

  async listSnapshots(): Promise<readonly SnapshotInfo[]> {
    return [...this.rows.values()].sort((a, b) => b.seq - a.seq);
  }

  async pin(seq: number): Promise<boolean> {
    const info = this.rows.get(seq);
    if (info === undefined) return false;
    this.rows.set(seq, { ...info, pinned: true });
    return true;
  }

  async unpinBefore(seq: number): Promise<number> {
    const before = this.rows.size;
    for (const [at, info] of this.rows)
      if (info.pinned && at < seq) this.rows.set(at, { ...info, pinned: false });
    this.prune();
    return before - this.rows.size;
  }

  pinnedSeqs(): number[] {
    return [...this.rows.values()]
      .filter((s) => s.pinned)
      .map((s) => s.seq)
      .sort((a, b) => a - b);
  }
}

function setUp(keepMs: number, options: { readStoreSeq?: () => number; recordsPerStep?: number } = {}) {
  const journal = new FakeJournal();
  const snapshots = new FakeSnapshots();
  const trims: TrimReport[] = [];
  const errors: unknown[] = [];
  let pauses = 0;
  const trimmer = new JournalTrimmer({
    journal,
    snapshots,
    keepMs,
    readStoreSeq: options.readStoreSeq ?? (() => journal.lastSeq),
    recordsPerStep: options.recordsPerStep ?? 1_000,
    pause: async () => {
      pauses++;
    },
    onTrimmed: (trim) => trims.push(trim),
    onError: (error) => errors.push(error),
  });
  /** Appends `commands` in records of `perRecord`, then saves and offers a snapshot at the end. */
  const run = async (commands: number, perRecord = 10) => {
    for (let left = commands; left > 0; left -= perRecord) journal.append(Math.min(perRecord, left));
    trimmer.onSnapshotSaved(snapshots.save(journal.lastSeq));
    await trimmer.idle();
  };
  return { journal, snapshots, trimmer, trims, errors, run, pauses: () => pauses };
}

describe('JournalTrimmer', () => {
  test('pins one snapshot per quarter of the retention and trims through the newest pinned one past it', async () => {
    const t = setUp(1_000);
    await t.run(100); // seq 100: the first anchor
    await t.run(100); // 200: under 250 ms after the anchor, not pinned
    await t.run(200); // 400: pinned
    assert.deepEqual(t.snapshots.pinnedSeqs(), [100, 400]);
    assert.equal(await t.journal.firstSeq(), 1);
    await t.run(700); // 1,100: the horizon is 100, the first anchor is due
    assert.equal(await t.journal.firstSeq(), 101);
    assert.deepEqual(t.trims, [
      { throughSeq: 100, records: 10, entries: 100, firstSeq: 101, ms: t.trims[0]!.ms },
    ]);
    // The base stays pinned; 1,100 is the next anchor.
    assert.deepEqual(t.snapshots.pinnedSeqs(), [100, 400, 1_100]);
    await t.run(300); // 1,400: the horizon 400 reaches the second anchor; the first is released
    assert.equal(await t.journal.firstSeq(), 401);
    assert.deepEqual(t.snapshots.pinnedSeqs(), [400, 1_100, 1_400]);
    assert.equal(t.snapshots.rows.has(100), false);
    assert.deepEqual(t.errors, []);
  });

  test('never trims past what the read store has written', async () => {
    let readSeq = 0;
    const t = setUp(1_000, { readStoreSeq: () => readSeq });
    await t.run(100);
    await t.run(1_200);
    assert.equal(await t.journal.firstSeq(), 1, 'the read store has written nothing');
    readSeq = 1_300;
    await t.run(10);
    assert.equal(await t.journal.firstSeq(), 101);
  });

  test('trims in steps with a pause between them; stop ends a trim at its next step', async () => {
    const t = setUp(1_000, { recordsPerStep: 3 });
    await t.run(100);
    await t.run(1_000);
    assert.equal(await t.journal.firstSeq(), 101);
    assert.equal(t.journal.trimCalls, 4, '10 records, 3 per step');
    assert.equal(t.pauses(), 3);

    const s = setUp(1_000, { recordsPerStep: 3 });
    await s.run(100);
    for (let i = 0; i < 110; i++) s.journal.append(10);
    s.trimmer.onSnapshotSaved(s.snapshots.save(s.journal.lastSeq));
    const stopped = s.trimmer.stop();
    await stopped;
    assert.equal(s.journal.trimCalls, 1, 'stopped after the first step');
    assert.deepEqual(s.trims, []);
    s.trimmer.onSnapshotSaved(s.snapshots.save(s.journal.lastSeq + 0));
    assert.equal(s.journal.trimCalls, 1, 'a stopped trimmer takes no more snapshots');
  });

  test('snapshots offered while a run is under way are folded into the next run, newest first', async () => {
    const t = setUp(1_000);
    await t.run(100);
    for (let i = 0; i < 110; i++) t.journal.append(10);
    t.trimmer.onSnapshotSaved(t.snapshots.save(1_100));
    t.trimmer.onSnapshotSaved(t.snapshots.save(1_200));
    t.trimmer.onSnapshotSaved(t.snapshots.save(1_150, 1_150));
    await t.trimmer.idle();
    assert.equal(await t.journal.firstSeq(), 101);
    // 1,200 was pinned by the second run (the 1,150 offer came after it and lost to it).
    assert.deepEqual(t.snapshots.pinnedSeqs(), [100, 1_100]);
  });

  test('property: the journal keeps every command within the retention and starts right after a kept snapshot', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 100, max: 5_000 }),
        fc.array(
          fc.record({
            commands: fc.integer({ min: 1, max: 2_000 }),
            perRecord: fc.integer({ min: 1, max: 64 }),
          }),
          {
            minLength: 1,
            maxLength: 40,
          },
        ),
        async (keepMs, steps) => {
          const t = setUp(keepMs, { recordsPerStep: 7 });
          for (const step of steps) {
            await t.run(step.commands, step.perRecord);
            const first = await t.journal.firstSeq();
            const last = t.journal.lastSeq;
            // Every command less than keepMs older than the newest is still there (one exactly
            // keepMs old may go: an anchor that old is due, the unit tests above pin that edge).
            assert.ok(
              first <= Math.max(1, last - keepMs + 1),
              `first ${first}, last ${last}, keep ${keepMs}`,
            );
            if (first > 1) {
              const base = [...t.snapshots.rows.values()].filter((s) => s.seq >= first - 1);
              assert.ok(base.length > 0, `no kept snapshot the journal can start after (first ${first})`);
            }
            // And not much more: anchors are at most a quarter of it plus a snapshot interval
            // (2,000 here) apart, and a record (64) may straddle the base.
            const firstAnchor = steps[0]!.commands;
            if (last - keepMs >= firstAnchor) {
              assert.ok(
                last - first <= keepMs * 1.25 + 2_000 + 64,
                `kept ${last - first + 1} of keep ${keepMs}`,
              );
            }
            assert.deepEqual(t.errors, []);
          }
        },
      ),
      {
        numRuns: 60,
        // Found by a run of the suite: an anchor exactly keepMs old is due.
        examples: [
          [
            100,
            [
              { commands: 1, perRecord: 1 },
              { commands: 99, perRecord: 1 },
              { commands: 1, perRecord: 1 },
            ],
          ],
        ],
      },
    );
  });
});
