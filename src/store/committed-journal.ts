/**
 * What every journal backend shares: appends, checkpoints, batch listeners, the last durable
 * entry and flush all go through the backend's `GroupCommitter`; `readFrom` flattens
 * `readBatches`. A backend supplies its committer (built over its own batch writer), its reads,
 * its checkpoint query and its close.
 */
import type { GroupCommitter } from './group-commit.ts';
import type { BatchListener, HashCheckpoint, Journal, JournalEntry, OpenReport } from './journal.ts';

export abstract class CommittedJournal<C> implements Journal<C> {
  abstract readonly openReport: OpenReport;
  protected abstract readonly committer: GroupCommitter;

  abstract readBatches(fromSeq: number): AsyncIterable<readonly JournalEntry<C>[]>;
  abstract checkpoints(fromSeq: number, toSeq: number): Promise<readonly HashCheckpoint[]>;
  abstract close(): Promise<void>;

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
}
