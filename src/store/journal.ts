/**
 * The durable command journal and snapshot store: the interfaces every backend implements.
 *
 * Invariants:
 * - `append` resolves only once the entry is durable (committed and fsynced by the backend);
 *   appends resolve in the order they were made. Entries must arrive with strictly consecutive
 *   `seq` (lastSeq + 1, + 2, ...); anything else is a programming error and poisons the journal.
 * - Appends made close together are committed together (group commit): one transaction and one
 *   fsync per batch; a batch is bounded in entries and bytes, and starts at the next turn of the
 *   event loop, so an append waits at most one batch commit behind the one in flight.
 * - After any write failure the journal refuses every later append (the in-memory state of the
 *   writer can no longer be trusted to match what a restart rebuilds).
 * - Reads return exactly the durable entries in `seq` order. A record whose checksum fails is
 *   dropped when it is the LAST record (a torn write from a crash, never acknowledged) and is a
 *   hard `JournalCorruptError` anywhere else.
 * - Trimming (`trimThrough`) deletes whole records from the oldest end only, never the newest
 *   record (it holds the last seq and ts a restart resumes from), so the stored entries stay one
 *   contiguous run from `firstSeq()` to the last durable seq.
 * - Every stored record carries a format version; readers accept every version ever written.
 * - Commands are opaque JSON-serialisable values to the journal.
 */
import type { StoredFrame } from './record-format.ts';

export interface JournalEntry<C = unknown> {
  readonly seq: number;
  readonly ts: number;
  readonly command: C;
}

/** The live state hash at `seq` (after applying the entry with that `seq`). */
export interface HashCheckpoint {
  readonly seq: number;
  readonly stateHash: string;
}

/** See `Journal.observeBatches`. */
export type BatchListener = (
  entries: number,
  ms: number,
  frame: StoredFrame | null,
  storageMs: number | null,
) => void;

export interface Journal<C = unknown> {
  /** Resolves once the entry is durable. Rejects (and keeps rejecting) after a write failure. */
  append(entry: JournalEntry<C>): Promise<void>;
  /**
   * Records the live state hash at `seq`; written with the next batch (not awaited by callers,
   * best effort: a crash may lose it, never the entries). Recovery compares against it.
   */
  recordCheckpoint(checkpoint: HashCheckpoint): void;
  /**
   * Calls the listener after each batch is durable with its entry count, write time (ms), the
   * frame as stored (null when the batch held only checkpoints) and, where the backend measures
   * it, the part of the write time the storage itself took (SQLite: the transaction and its fsync
   * on the writer thread; null otherwise); in seq order.
   */
  observeBatches(listener: BatchListener): void;
  /** Durable entries with seq ≥ fromSeq, in batches, in order. */
  readBatches(fromSeq: number): AsyncIterable<readonly JournalEntry<C>[]>;
  /** Durable entries with seq ≥ fromSeq, one by one (convenience over readBatches). */
  readFrom(fromSeq: number): AsyncIterable<JournalEntry<C>>;
  /** The seq and ts of the last durable entry, or {seq: 0, ts: 0} when empty. */
  last(): Promise<{ readonly seq: number; readonly ts: number }>;
  lastSeq(): Promise<number>;
  /** Hash checkpoints with fromSeq ≤ seq ≤ toSeq, ascending. */
  checkpoints(fromSeq: number, toSeq: number): Promise<readonly HashCheckpoint[]>;
  /** The seq of the first stored entry: 1 unless trimmed; lastSeq + 1 when the journal is empty. */
  firstSeq(): Promise<number>;
  /**
   * Deletes up to `maxRecords` of the oldest stored records whose entries all have seq ≤ `seq`
   * (never the newest record), with the hash checkpoints up to the last entry deleted (on NATS,
   * one stored after a kept record stays until a later trim passes it). Never interleaved with a
   * batch write in a way that could leave a gap (a backend with a writer thread runs it there,
   * between batches). `done` is true once no such record is left. Callers trim only what a kept
   * snapshot covers.
   */
  trimThrough(seq: number, maxRecords: number): Promise<TrimResult>;
  /** Resolves once everything appended so far is durable (or failed). */
  flush(): Promise<void>;
  /** What opening found: a torn tail dropped, and so on. */
  readonly openReport: OpenReport;
  /** Flushes, then releases the backend. Further appends reject. */
  close(): Promise<void>;
}

export interface TrimResult {
  /** Records deleted by this call, and the entries they held. */
  readonly records: number;
  readonly entries: number;
  /** No record whose entries are all ≤ the given seq is left (the newest record aside). */
  readonly done: boolean;
}

export interface OpenReport {
  /** Records dropped at the tail because their checksum failed (a torn last write). */
  readonly droppedTailRecords: number;
  /** Entries contained in the dropped records (as far as their header says). */
  readonly droppedTailEntries: number;
}

export interface Snapshot<S = unknown> {
  /** The seq of the last entry applied to `state`. */
  readonly seq: number;
  /** The ts of that entry (the restored sequencer must never stamp earlier). */
  readonly ts: number;
  /** The live `stateHash()` at `seq`. */
  readonly stateHash: string;
  /** The core's `snapshot()` value: JSON-serialisable. */
  readonly state: S;
}

export interface SnapshotInfo {
  readonly seq: number;
  readonly ts: number;
  readonly stateHash: string;
  /** Stored size in bytes. */
  readonly bytes: number;
  /** Kept whatever `keep` says (see `SnapshotStore.pin`). */
  readonly pinned: boolean;
}

export interface SnapshotStore<S = unknown> {
  /**
   * Durable once resolved. Encodes `state` synchronously before its first await, so the caller
   * may let the core run on right after the call. A snapshot may be ahead of the durable journal
   * (taken before its last commands were fsynced); recovery ignores such a snapshot.
   */
  saveSnapshot(snapshot: Snapshot<S>): Promise<SnapshotInfo>;
  /**
   * The newest snapshot whose checksum verifies and whose seq ≤ maxSeq (default: any);
   * corrupt ones are skipped (recovery then replays more). Null when none.
   */
  latestSnapshot(maxSeq?: number): Promise<Snapshot<S> | null>;
  listSnapshots(): Promise<readonly SnapshotInfo[]>;
  /**
   * Deletes snapshots with seq > `seq`: taken ahead of an fsync that never happened, they
   * describe commands that were lost, and the journal will reuse those seqs for other commands.
   * Recovery calls it with the journal's last durable seq. Returns how many were deleted.
   */
  discardAfter(seq: number): Promise<number>;
  /**
   * Pins the snapshot at `seq`: pruning to the newest `keep` passes it by, so it can be the base
   * a trimmed journal starts after. Resolves false when there is no snapshot at `seq`.
   */
  pin(seq: number): Promise<boolean>;
  /**
   * Unpins the pinned snapshots with seq < `seq` and deletes those of them that are not among the
   * newest `keep`; returns how many were deleted.
   */
  unpinBefore(seq: number): Promise<number>;
  close(): Promise<void>;
}

/** Group-commit bounds. */
export interface BatchLimits {
  /** Most entries in one transaction (and one stored record). */
  readonly maxEntries: number;
}

export const DEFAULT_BATCH_LIMITS: BatchLimits = { maxEntries: 4096 };

/**
 * How long a journal on a server (NATS, PostgreSQL) waits out its server for one batch, tries
 * and reconnections included, before it fails: long enough for a cluster to elect leaders or a
 * database to restart or fail over. Commands wait meanwhile.
 */
export const JOURNAL_WRITE_DEADLINE_MS = 30_000;

/** A record before the tail failed its checksum, or seqs are not consecutive: never replay it. */
export class JournalCorruptError extends Error {
  constructor(
    message: string,
    readonly atSeq: number,
  ) {
    super(message);
    this.name = 'JournalCorruptError';
  }
}

/** The journal refused an append: wrong seq, closed, or poisoned by an earlier failure. */
export class JournalWriteError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'JournalWriteError';
  }
}
