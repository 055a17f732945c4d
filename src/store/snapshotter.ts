/**
 * Periodic snapshots and hash checkpoints, driven by committed commands (no timers: without
 * commands the state does not change, so nothing is due).
 *
 * Invariants:
 * - A snapshot is taken every `everyCommands` commands or when `everyMs` passed since the last
 *   one (whichever first), never two at once; a hash checkpoint every `checkpointEveryCommands`.
 * - `capture` must describe the core exactly as it is at the call (seq = last APPLIED seq, which
 *   may be ahead of the durable journal; recovery handles that). The state is encoded during the
 *   synchronous part of `saveSnapshot`, so the core may run on right after.
 * - A failed snapshot is reported through `onError` and retried at the next due point; it never
 *   affects the journal.
 */
import type { HashCheckpoint, Journal, Snapshot, SnapshotInfo, SnapshotStore } from './journal.ts';

export interface SnapshotPolicy {
  /** Snapshot after this many commands since the last one (0 disables). */
  readonly everyCommands: number;
  /** Snapshot when this many ms of command time passed since the last one (0 disables). */
  readonly everyMs: number;
  /** Hash checkpoint in the journal every this many commands (0 disables). */
  readonly checkpointEveryCommands: number;
}

/**
 * Defaults: a restart replays at most ~1M commands (about a second); checkpoints are sparse
 * because a state hash costs about as much as a snapshot (it hashes the canonical state). They are
 * the defaults of the config's `snapshots` (SNAPSHOT_EVERY_COMMANDS, ...), which the service uses.
 */
export const DEFAULT_SNAPSHOT_POLICY: SnapshotPolicy = {
  everyCommands: 1_000_000,
  everyMs: 10 * 60_000,
  checkpointEveryCommands: 250_000,
};

export interface SnapshotterDeps {
  readonly journal: Pick<Journal, 'recordCheckpoint'>;
  readonly snapshots: SnapshotStore;
  /** The core as it is now: snapshot() value, stateHash(), last applied seq and its ts. */
  readonly capture: () => Snapshot;
  /** Cheap: the current state hash and last applied seq (for checkpoints). */
  readonly currentHash: () => HashCheckpoint;
  readonly onSaved?: (info: SnapshotInfo, ms: number) => void;
  readonly onError?: (error: unknown) => void;
}

export class Snapshotter {
  private commandsSinceSnapshot = 0;
  private commandsSinceCheckpoint = 0;
  private lastSnapshotTs: number | null = null;
  private saving: Promise<void> | null = null;

  constructor(
    private readonly policy: SnapshotPolicy,
    private readonly deps: SnapshotterDeps,
  ) {}

  /** Call once per committed command with its stamp time. */
  onCommitted(ts: number): void {
    this.commandsSinceSnapshot++;
    this.commandsSinceCheckpoint++;
    if (this.lastSnapshotTs === null) this.lastSnapshotTs = ts;
    const { everyCommands, everyMs, checkpointEveryCommands } = this.policy;
    if (checkpointEveryCommands > 0 && this.commandsSinceCheckpoint >= checkpointEveryCommands) {
      this.commandsSinceCheckpoint = 0;
      this.deps.journal.recordCheckpoint(this.deps.currentHash());
    }
    const dueByCount = everyCommands > 0 && this.commandsSinceSnapshot >= everyCommands;
    const dueByTime = everyMs > 0 && ts - this.lastSnapshotTs >= everyMs;
    if ((dueByCount || dueByTime) && this.saving === null) this.takeSnapshot(ts);
  }

  /** Takes a snapshot now (e.g. at clean shutdown); resolves when it is durable. */
  snapshotNow(ts: number): Promise<void> {
    return this.saving ?? this.takeSnapshot(ts);
  }

  /** Resolves when no snapshot is being written. */
  idle(): Promise<void> {
    return this.saving ?? Promise.resolve();
  }

  private takeSnapshot(ts: number): Promise<void> {
    this.commandsSinceSnapshot = 0;
    this.lastSnapshotTs = ts;
    const started = performance.now();
    let pending: Promise<SnapshotInfo>;
    try {
      const snapshot = this.deps.capture();
      pending = this.deps.snapshots.saveSnapshot(snapshot);
    } catch (error) {
      pending = Promise.reject(error);
    }
    const saving = pending.then(
      (info) => {
        this.saving = null;
        this.deps.onSaved?.(info, performance.now() - started);
      },
      (error: unknown) => {
        this.saving = null;
        this.deps.onError?.(error);
      },
    );
    this.saving = saving;
    return saving;
  }
}
