/**
 * Journal retention: keeps at least `keepMs` of command time in the journal and deletes what is
 * older, down to a snapshot the journal can start after.
 *
 * How: every saved snapshot is offered here. One every `keepMs / 4` of command time is pinned (an
 * anchor: the snapshot store's pruning passes it by). When an anchor is `keepMs` old, by the time
 * of the newest snapshot, the journal is trimmed through its seq and the anchors before it are
 * released. So the journal holds between `keepMs` and `1.25 × keepMs` of commands, and always
 * starts right after a kept snapshot (its base), which recovery and a rebuilt read store start
 * from.
 *
 * Invariants:
 * - Never trims past the read store's last written seq: a store that lost its last writes (SQLite
 *   `synchronous=NORMAL` after a power cut) is re-fed from a snapshot no newer than its seq.
 * - The base is pinned before anything it covers is deleted, and released only when a newer
 *   base is chosen.
 * - Trims go in steps of `recordsPerStep` records with a pause between them, so the journal's
 *   writer, which runs them between its batches, never holds an append back for long; a large
 *   backlog (retention just switched on) is worked off over a while.
 * - One run at a time; snapshots offered meanwhile are folded into the next run (the newest wins).
 * - Command time, not the wall clock: replays and virtual clocks trim as live time does.
 */
import type { Journal, SnapshotInfo, SnapshotStore } from './journal.ts';

export interface TrimReport {
  /** The base: the snapshot the journal now starts after. */
  readonly throughSeq: number;
  readonly records: number;
  readonly entries: number;
  readonly firstSeq: number;
  readonly ms: number;
}

export interface JournalTrimmerDeps {
  readonly journal: Pick<Journal, 'trimThrough' | 'firstSeq'>;
  readonly snapshots: Pick<SnapshotStore, 'pin' | 'unpinBefore' | 'listSnapshots'>;
  /** Command time the journal keeps, in ms. */
  readonly keepMs: number;
  /** The read store's last written seq. */
  readonly readStoreSeq: () => number;
  /** Records deleted per step (default 16). */
  readonly recordsPerStep?: number;
  /** Waited between steps (default 10 ms of real time). */
  readonly pause?: () => Promise<void>;
  readonly onTrimmed?: (report: TrimReport) => void;
  readonly onError?: (error: unknown) => void;
}

/** Anchors per retention period. */
const ANCHORS_PER_PERIOD = 4;
/** A trim step's records and the pause after it (bench:journal measures them under load). */
export const TRIM_STEP_RECORDS = 16;
export const TRIM_STEP_PAUSE_MS = 10;
const defaultPause = () => new Promise<void>((resolve) => setTimeout(resolve, TRIM_STEP_PAUSE_MS));

export class JournalTrimmer {
  private offered: SnapshotInfo | null = null;
  private running: Promise<void> | null = null;
  private stopping = false;

  constructor(private readonly deps: JournalTrimmerDeps) {}

  /** Call with every snapshot saved (by the replica or inline). */
  onSnapshotSaved(info: SnapshotInfo): void {
    if (this.stopping) return;
    if (this.offered === null || info.seq > this.offered.seq) this.offered = info;
    this.running ??= this.drain();
  }

  /** Resolves once no run is under way. */
  idle(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  /** Takes no more snapshots and ends a run at its next step; resolves when it has. */
  stop(): Promise<void> {
    this.stopping = true;
    return this.idle();
  }

  private async drain(): Promise<void> {
    try {
      while (this.offered !== null && !this.stopping) {
        const info = this.offered;
        this.offered = null;
        await this.run(info);
      }
    } catch (error) {
      this.deps.onError?.(error);
    } finally {
      this.running = null;
    }
  }

  private async run(newest: SnapshotInfo): Promise<void> {
    const { journal, snapshots, keepMs } = this.deps;
    const anchors = (await snapshots.listSnapshots()).filter((s) => s.pinned).sort((a, b) => a.seq - b.seq);
    const lastAnchor = anchors[anchors.length - 1];
    if (
      newest.seq > (lastAnchor?.seq ?? 0) &&
      (lastAnchor === undefined || newest.ts - lastAnchor.ts >= keepMs / ANCHORS_PER_PERIOD) &&
      (await snapshots.pin(newest.seq))
    ) {
      anchors.push({ ...newest, pinned: true });
    }
    const horizon = newest.ts - keepMs;
    const readSeq = this.deps.readStoreSeq();
    let base: SnapshotInfo | undefined;
    for (const anchor of anchors) if (anchor.ts <= horizon && anchor.seq <= readSeq) base = anchor;
    if (base === undefined) return;
    // Right after a save, before the trim: the snapshot store's next write is a policy interval
    // away, so on SQLite this write does not wait behind the replica's (synchronously, on the
    // event loop). The anchors before the base cover only what this trim deletes.
    await snapshots.unpinBefore(base.seq);

    const started = performance.now();
    let records = 0;
    let entries = 0;
    const step = this.deps.recordsPerStep ?? TRIM_STEP_RECORDS;
    const pause = this.deps.pause ?? defaultPause;
    for (;;) {
      const result = await journal.trimThrough(base.seq, step);
      records += result.records;
      entries += result.entries;
      if (result.done) break;
      if (this.stopping) return;
      await pause();
    }
    if (records > 0) {
      this.deps.onTrimmed?.({
        throughSeq: base.seq,
        records,
        entries,
        firstSeq: await journal.firstSeq(),
        ms: performance.now() - started,
      });
    }
  }
}
