/**
 * Recovery at start: latest usable snapshot + replay of the journal after it, with the state
 * hash checked against what was recorded live.
 *
 * Invariants:
 * - Only a snapshot with seq ≤ the journal's last durable seq is used; newer ones (taken ahead of
 *   an fsync that never happened) describe lost commands and are deleted, because the journal
 *   reuses their seqs for other commands from now on.
 * - The restored core's hash must equal the hash recorded with the snapshot; after replay, the
 *   core's hash at every recorded checkpoint seq must equal the recorded one. Mismatches are
 *   reported (and thrown with `strict`), never silently ignored.
 * - Replay starts exactly at snapshot.seq + 1 and is contiguous to the journal's end. A trimmed
 *   journal (its first seq past 1) needs a snapshot at or after the seq before its first entry;
 *   without one recovery stops with `JournalTrimmedError` rather than replaying a partial history.
 */
import { performance } from 'node:perf_hooks';
import { type Journal, JournalCorruptError, type JournalEntry, type SnapshotStore } from './journal.ts';

/** What recovery needs of the core (the composite machine satisfies it through a small adapter). */
export interface RecoverableCore<C> {
  /** Re-applies one journaled command (its result is not needed). */
  apply(entry: JournalEntry<C>): void;
  stateHash(): string;
}

export interface RecoveryOptions<C, K extends RecoverableCore<C>> {
  readonly journal: Journal<C>;
  readonly snapshots: SnapshotStore;
  /** A fresh core; restored from `state` when a snapshot is used (null: empty core). */
  readonly createCore: (state: unknown | null) => K;
  /**
   * Use no snapshot newer than this (e.g. the read store's lastAppliedSeq, so the replay re-feeds
   * the projections everything they missed).
   */
  readonly maxSnapshotSeq?: number;
  /** Throw RecoveryMismatchError on any hash mismatch instead of only reporting it. */
  readonly strict?: boolean;
  /** Called per replayed batch (e.g. to feed projections or report progress). */
  readonly onBatch?: (entries: readonly JournalEntry<C>[]) => void;
}

export interface HashMismatch {
  readonly seq: number;
  readonly expected: string;
  readonly actual: string;
  readonly where: 'snapshot' | 'checkpoint';
}

export interface RecoveryReport {
  readonly snapshotSeq: number | null;
  readonly snapshotBytes: number | null;
  readonly replayedFrom: number;
  readonly replayed: number;
  readonly lastSeq: number;
  readonly lastTs: number;
  readonly droppedTailRecords: number;
  readonly droppedTailEntries: number;
  /** Snapshots deleted because they were ahead of the durable journal. */
  readonly discardedSnapshots: number;
  readonly checkpointsVerified: number;
  readonly mismatches: readonly HashMismatch[];
  readonly finalStateHash: string;
  readonly restoreMs: number;
  readonly replayMs: number;
  /** No mismatch. */
  readonly ok: boolean;
}

export class RecoveryMismatchError extends Error {
  constructor(readonly report: RecoveryReport) {
    const first = report.mismatches[0]!;
    super(
      `state hash mismatch at seq ${first.seq} (${first.where}): recorded ${first.expected}, rebuilt ${first.actual}`,
    );
    this.name = 'RecoveryMismatchError';
  }
}

/** The journal was trimmed past what the snapshots recovery may use can continue from. */
export class JournalTrimmedError extends JournalCorruptError {
  constructor(
    readonly firstSeq: number,
    readonly snapshotSeq: number | null,
  ) {
    super(
      `the journal starts at seq ${firstSeq} (trimmed), and no usable snapshot at seq ${firstSeq - 1} or later was found (newest usable: ${snapshotSeq ?? 'none'})`,
      firstSeq,
    );
    this.name = 'JournalTrimmedError';
  }
}

export async function recover<C, K extends RecoverableCore<C>>(
  options: RecoveryOptions<C, K>,
): Promise<{ readonly core: K; readonly report: RecoveryReport }> {
  const { journal } = options;
  const last = await journal.last();
  const mismatches: HashMismatch[] = [];

  const discardedSnapshots = await options.snapshots.discardAfter(last.seq);
  const restoreStart = performance.now();
  const snapshot = await options.snapshots.latestSnapshot(
    Math.min(last.seq, options.maxSnapshotSeq ?? last.seq),
  );
  const core = options.createCore(snapshot === null ? null : snapshot.state);
  let snapshotBytes: number | null = null;
  if (snapshot !== null) {
    const actual = core.stateHash();
    if (actual !== snapshot.stateHash) {
      mismatches.push({ seq: snapshot.seq, expected: snapshot.stateHash, actual, where: 'snapshot' });
    }
    snapshotBytes =
      (await options.snapshots.listSnapshots()).find((s) => s.seq === snapshot.seq)?.bytes ?? null;
  }
  const restoreMs = performance.now() - restoreStart;

  const from = (snapshot?.seq ?? 0) + 1;
  const firstSeq = await journal.firstSeq();
  if (from <= last.seq && from < firstSeq) throw new JournalTrimmedError(firstSeq, snapshot?.seq ?? null);
  const checkpoints = await journal.checkpoints(from, last.seq);
  let nextCheckpoint = 0;
  let expectedSeq = from;
  let checkpointsVerified = 0;
  const replayStart = performance.now();
  for await (const batch of journal.readBatches(from)) {
    for (const entry of batch) {
      if (entry.seq !== expectedSeq) {
        throw new JournalCorruptError(`replay expected seq ${expectedSeq}, found ${entry.seq}`, expectedSeq);
      }
      core.apply(entry);
      expectedSeq++;
      const checkpoint = checkpoints[nextCheckpoint];
      if (checkpoint !== undefined && checkpoint.seq === entry.seq) {
        nextCheckpoint++;
        checkpointsVerified++;
        const actual = core.stateHash();
        if (actual !== checkpoint.stateHash) {
          mismatches.push({ seq: entry.seq, expected: checkpoint.stateHash, actual, where: 'checkpoint' });
        }
      }
    }
    options.onBatch?.(batch);
  }
  const replayMs = performance.now() - replayStart;
  if (expectedSeq !== last.seq + 1) {
    throw new JournalCorruptError(
      `replay ended at seq ${expectedSeq - 1}, journal ends at ${last.seq}`,
      expectedSeq,
    );
  }

  const report: RecoveryReport = {
    snapshotSeq: snapshot?.seq ?? null,
    snapshotBytes,
    replayedFrom: from,
    replayed: expectedSeq - from,
    lastSeq: last.seq,
    lastTs: last.ts,
    droppedTailRecords: journal.openReport.droppedTailRecords,
    droppedTailEntries: journal.openReport.droppedTailEntries,
    discardedSnapshots,
    checkpointsVerified,
    mismatches,
    finalStateHash: core.stateHash(),
    restoreMs,
    replayMs,
    ok: mismatches.length === 0,
  };
  if (!report.ok && options.strict === true) throw new RecoveryMismatchError(report);
  return { core, report };
}
