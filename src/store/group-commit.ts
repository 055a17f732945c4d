/**
 * Group commit: collects appends and hands them to a backend writer as bounded batches, one
 * batch (one transaction + one fsync) at a time.
 *
 * Invariants:
 * - Entries must come with consecutive seqs; the first wrong one poisons the committer.
 * - Entries are encoded as they are appended, into the frame being filled, so encoding overlaps
 *   the write in flight; an entry that cannot be encoded is refused and poisons the committer.
 * - A batch starts on the next turn of the event loop (setImmediate) after the first append that
 *   found the writer idle, or right after the previous batch finished: while a batch is being
 *   written, later appends wait and go together in the next one.
 * - Promises resolve in seq order, only after the writer reported the batch durable.
 * - A writer failure rejects that batch and everything queued or appended later.
 */
import {
  type BatchLimits,
  type BatchListener,
  type HashCheckpoint,
  type JournalEntry,
  JournalWriteError,
} from './journal.ts';
import { FrameBuilder, type StoredFrame } from './record-format.ts';

export interface BatchWriter {
  /** Durably writes the frame and checkpoints in one transaction. */
  write(frame: StoredFrame | null, checkpoints: readonly HashCheckpoint[]): void | Promise<void>;
}

interface Pending {
  readonly seq: number;
  readonly ts: number;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

interface OpenFrame {
  readonly builder: FrameBuilder;
  readonly pending: Pending[];
}

export class GroupCommitter {
  /** Frames waiting for the writer, oldest first; the last one is still being filled. */
  private frames: OpenFrame[] = [];
  private queuedCheckpoints: HashCheckpoint[] = [];
  private scheduled = false;
  private writing = false;
  private failure: Error | null = null;
  private closed = false;
  private nextSeq: number;
  private durable: { seq: number; ts: number };
  private idleWaiters: Array<() => void> = [];
  private batchListeners: BatchListener[] = [];

  constructor(
    private readonly writer: BatchWriter,
    private readonly limits: BatchLimits,
    last: { readonly seq: number; readonly ts: number },
  ) {
    this.nextSeq = last.seq + 1;
    this.durable = { seq: last.seq, ts: last.ts };
  }

  /** The last durable entry. */
  get lastDurable(): { readonly seq: number; readonly ts: number } {
    return this.durable;
  }

  append(entry: JournalEntry<unknown>): Promise<void> {
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(new JournalWriteError('the journal is closed'));
    if (entry.seq !== this.nextSeq) {
      this.poison(
        new JournalWriteError(`append out of order: expected seq ${this.nextSeq}, got ${entry.seq}`),
      );
      return Promise.reject(this.failure);
    }
    let frame = this.frames[this.frames.length - 1];
    if (frame === undefined || frame.pending.length >= this.limits.maxEntries) {
      frame = { builder: new FrameBuilder(entry.seq), pending: [] };
      this.frames.push(frame);
    }
    try {
      frame.builder.add(entry);
    } catch (error) {
      this.poison(new JournalWriteError(`cannot encode entry ${entry.seq}`, { cause: error }));
      return Promise.reject(this.failure);
    }
    this.nextSeq++;
    const target = frame;
    return new Promise<void>((resolve, reject) => {
      target.pending.push({ seq: entry.seq, ts: entry.ts, resolve, reject });
      this.schedule();
    });
  }

  /** Adds a listener for each batch made durable (metrics). */
  observeBatches(listener: BatchListener): void {
    this.batchListeners.push(listener);
  }

  recordCheckpoint(checkpoint: HashCheckpoint): void {
    if (this.failure !== null || this.closed) return;
    this.queuedCheckpoints.push(checkpoint);
    this.schedule();
  }

  /** Resolves when nothing is queued or being written. */
  flush(): Promise<void> {
    if (!this.writing && !this.scheduled && this.frames.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
  }

  get failed(): Error | null {
    return this.failure;
  }

  private schedule(): void {
    if (this.scheduled || this.writing) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    while (this.failure === null && (this.frames.length > 0 || this.queuedCheckpoints.length > 0)) {
      const next = this.frames.shift();
      const batch = next?.pending ?? [];
      const checkpoints = this.queuedCheckpoints;
      this.queuedCheckpoints = [];
      const started = performance.now();
      const frame = next === undefined ? null : next.builder.finish();
      try {
        const written = this.writer.write(frame, checkpoints);
        if (written !== undefined) await written;
      } catch (error) {
        const failure = new JournalWriteError('journal write failed', { cause: error });
        for (const pending of batch) pending.reject(failure);
        this.poison(failure);
        break;
      }
      const last = batch[batch.length - 1];
      if (last !== undefined) this.durable = { seq: last.seq, ts: last.ts };
      const ms = performance.now() - started;
      for (const listener of this.batchListeners) listener(batch.length, ms, frame);
      for (const pending of batch) pending.resolve();
    }
    this.writing = false;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private poison(failure: Error): void {
    if (this.failure === null) this.failure = failure;
    const queued = this.frames;
    this.frames = [];
    for (const frame of queued) for (const pending of frame.pending) pending.reject(this.failure);
    if (!this.writing) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }
}
