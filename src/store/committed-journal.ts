/**
 * What every journal backend shares: appends, checkpoints, batch listeners, the last durable
 * entry and flush all go through the backend's `GroupCommitter`; `readFrom` flattens
 * `readBatches`; `trimThrough` checks its arguments and runs one trim at a time. A backend
 * supplies its committer (built over its own batch writer), its reads, its checkpoint query, its
 * first stored seq, its trim (serialised with its batch writes) and its close.
 */
import type { GroupCommitter } from './group-commit.ts';
import {
  type BatchListener,
  type HashCheckpoint,
  type Journal,
  type JournalEntry,
  JournalWriteError,
  type OpenReport,
  type TrimResult,
} from './journal.ts';

export abstract class CommittedJournal<C> implements Journal<C> {
  abstract readonly openReport: OpenReport;
  protected abstract readonly committer: GroupCommitter;
  /** Set by `close` (first thing): later trims are refused. */
  protected closed = false;
  /** The trim running or last run: trims run one after another. */
  private trimming: Promise<unknown> = Promise.resolve();

  abstract readBatches(fromSeq: number): AsyncIterable<readonly JournalEntry<C>[]>;
  abstract checkpoints(fromSeq: number, toSeq: number): Promise<readonly HashCheckpoint[]>;
  abstract firstSeq(): Promise<number>;
  abstract close(): Promise<void>;

  /**
   * Deletes the records (see `Journal.trimThrough`): called one at a time and never after close.
   * Must never leave a gap: either pick the records in the same atomic step that deletes them,
   * serialised with the backend's batch writes, or delete them one by one, oldest first.
   */
  protected abstract trimRecords(seq: number, maxRecords: number): Promise<TrimResult>;

  append(entry: JournalEntry<C>): Promise<void> {
    return this.committer.append(entry);
  }

  recordCheckpoint(checkpoint: HashCheckpoint): void {
    this.committer.recordCheckpoint(checkpoint);
  }

  observeBatches(listener: BatchListener): void {
    this.committer.observeBatches(listener);
  }

  async *readFrom(fromSeq: number): AsyncIterable<JournalEntry<C>> {
    for await (const batch of this.readBatches(fromSeq)) yield* batch;
  }

  async last(): Promise<{ readonly seq: number; readonly ts: number }> {
    return this.committer.lastDurable;
  }

  async lastSeq(): Promise<number> {
    return this.committer.lastDurable.seq;
  }

  flush(): Promise<void> {
    return this.committer.flush();
  }

  /**
   * Rejects with `JournalWriteError` when the journal is closed or poisoned, or the delete failed
   * (the journal stays usable: the delete rolled back, or on NATS stopped at a record with the
   * older ones gone). A `RangeError` for a seq or record count that is not a (positive) safe
   * integer.
   */
  trimThrough(seq: number, maxRecords: number): Promise<TrimResult> {
    if (!Number.isSafeInteger(seq)) {
      return Promise.reject(new RangeError(`trimThrough: seq must be a safe integer, got ${seq}`));
    }
    if (!Number.isSafeInteger(maxRecords) || maxRecords < 1) {
      return Promise.reject(
        new RangeError(`trimThrough: maxRecords must be a positive integer, got ${maxRecords}`),
      );
    }
    const run = this.trimming.then(async () => {
      if (this.closed) throw new JournalWriteError('the journal is closed');
      const failure = this.committer.failed;
      if (failure !== null) throw failure;
      try {
        return await this.trimRecords(seq, maxRecords);
      } catch (error) {
        if (error instanceof JournalWriteError) throw error;
        throw new JournalWriteError('journal trim failed', { cause: error });
      }
    });
    this.trimming = run.catch(() => undefined);
    return run;
  }

  /** Resolves once the trims started so far have finished (close waits for them). */
  protected async trimsSettled(): Promise<void> {
    await this.trimming;
  }
}
