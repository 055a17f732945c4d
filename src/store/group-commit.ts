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
 * - Promises resolve in seq order, only after the writer reported the batch durable (a frame's
 *   entries share one promise; its callbacks run in the order they were added).
 * - A writer failure rejects that batch and everything queued or appended later.
 * - `wake` asks for a batch even with nothing queued (the writer gets an empty one): a backend
 *   that must act between batches (the PostgreSQL journal connecting again) does it in order.
 * - A batch listener that throws is a bug elsewhere: its error goes to `onListenerError` (by
 *   default thrown on a later turn, an uncaught exception), and the batch, durable already, still
 *   resolves and reaches the other listeners; left to unwind `drain`, it would have left every
 *   later append waiting forever.
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
  /**
   * Durably writes the frame and checkpoints in one transaction. May give the ms the storage
   * itself took (without the hand-over to it), for `observeBatches`.
   */
  write(
    frame: StoredFrame | null,
    checkpoints: readonly HashCheckpoint[],
  ): void | number | Promise<void> | Promise<number>;
}

/**
 * A frame being filled or waiting for the writer. Its entries share one promise: they become
 * durable together, and callbacks on one promise run in the order they were added, which is seq
 * order (one promise per entry cost about 250 bytes an entry).
 */
class OpenFrame {
  readonly builder: FrameBuilder;
  count = 0;
  lastSeq = 0;
  lastTs = 0;
  readonly durable: Promise<void>;
  resolve!: () => void;
  reject!: (error: Error) => void;

  constructor(firstSeq: number) {
    this.builder = new FrameBuilder(firstSeq);
    this.durable = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }
}

export class GroupCommitter {
  /** Frames waiting for the writer, oldest first; the last one is still being filled. */
  private frames: OpenFrame[] = [];
  private queuedCheckpoints: HashCheckpoint[] = [];
  private scheduled = false;
  private woken = false;
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
    private readonly onListenerError: (error: unknown) => void = throwLater,
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
    const last = this.frames[this.frames.length - 1];
    const frame = last !== undefined && last.count < this.limits.maxEntries ? last : new OpenFrame(entry.seq);
    try {
      frame.builder.add(entry);
    } catch (error) {
      this.poison(new JournalWriteError(`cannot encode entry ${entry.seq}`, { cause: error }));
      return Promise.reject(this.failure);
    }
    // A new frame is queued only once it holds an entry: one no one awaits is never rejected.
    if (frame !== last) this.frames.push(frame);
    this.nextSeq++;
    frame.count++;
    frame.lastSeq = entry.seq;
    frame.lastTs = entry.ts;
    this.schedule();
    return frame.durable;
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

  /** Runs a batch soon even when nothing is queued (see the module's docstring). */
  wake(): void {
    if (this.failure !== null || this.closed) return;
    this.woken = true;
    this.schedule();
  }

  /** Resolves when nothing is queued or being written. */
  flush(): Promise<void> {
    if (!this.writing && !this.scheduled && this.frames.length === 0 && !this.woken) return Promise.resolve();
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
    while (
      this.failure === null &&
      (this.frames.length > 0 || this.queuedCheckpoints.length > 0 || this.woken)
    ) {
      this.woken = false;
      const next = this.frames.shift();
      const checkpoints = this.queuedCheckpoints;
      this.queuedCheckpoints = [];
      const started = performance.now();
      const frame = next === undefined ? null : next.builder.finish();
      let storageMs: number | null = null;
      try {
        const written = this.writer.write(frame, checkpoints);
        const settled = written instanceof Promise ? await written : written;
        if (typeof settled === 'number') storageMs = settled;
      } catch (error) {
        const failure = new JournalWriteError('journal write failed', { cause: error });
        next?.reject(failure);
        this.poison(failure);
        break;
      }
      if (next !== undefined) this.durable = { seq: next.lastSeq, ts: next.lastTs };
      const ms = performance.now() - started;
      for (const listener of this.batchListeners) {
        try {
          listener(next?.count ?? 0, ms, frame, storageMs);
        } catch (error) {
          this.onListenerError(error);
        }
      }
      next?.resolve();
    }
    this.writing = false;
    // A wake-up that came with the failure has nothing left to do.
    this.woken = false;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private poison(failure: Error): void {
    if (this.failure === null) this.failure = failure;
    const queued = this.frames;
    this.frames = [];
    for (const frame of queued) frame.reject(this.failure);
    if (!this.writing) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }
}

function throwLater(error: unknown): void {
  setImmediate(() => {
    throw error;
  });
}
