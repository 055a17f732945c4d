/**
 * The snapshot replica: a second core machine on a worker thread that follows the journal and
 * takes the hash checkpoints and snapshots. Hashing or encoding the whole state costs the live
 * core tens of ms at a small venue and about a second at 500k resting orders; here it costs the
 * event loop one message per group commit.
 *
 * Invariants:
 * - The replica applies exactly the durable journal, in seq order: at start the snapshot and
 *   journal up to `startSeq` (read on its own connections), then every frame `feed` hands it, which
 *   must be every frame the live journal makes durable after `startSeq`. The core is deterministic,
 *   so its state at any seq is the live core's state at that seq.
 * - A checkpoint is taken at every seq that is a multiple of `checkpointEveryCommands`, and sent
 *   back for the live journal to record; snapshots are saved by the replica itself, as often as the
 *   inline snapshotter would (commands or command time since the last one).
 * - The replica never writes the journal. A gap, a decode error or a failed save stops it and is
 *   reported once through `onFailed`; the service then goes back to snapshotting inline until a
 *   new replica runs (./replica-supervisor.ts).
 * - It holds a second copy of the state: memory doubles (documented; `SNAPSHOT_REPLICA=off`).
 * - With `writesReadStore` it also projects every command it applies into the read store, so the
 *   live core does not: the rows are the same, as its events are. `readCaughtUp` resolves once
 *   the store holds every frame handed over before the call, which includes every acknowledged
 *   command (frames are fed before their commands are acknowledged). A read-store write that
 *   fails stops the replica like any other failure; its waits then end, and the supervisor has
 *   them wait for the new replica, which re-feeds the store from its last write (a query gives up
 *   after its bound and is refused as behind, never answered from what was written).
 */
import { Worker } from 'node:worker_threads';
import type { HashCheckpoint, SnapshotInfo } from '../store/journal.ts';
import type { NatsJournalTarget } from '../store/nats/nats-journal.ts';
import type { RetentionSettings } from '../store/read/read-store.ts';
import type { StoredFrame } from '../store/record-format.ts';
import type { SnapshotPolicy } from '../store/snapshotter.ts';

/**
 * The worker runs the core's TypeScript modules: Node 20 does not apply the `--import tsx` hooks
 * to a worker's entry module, so the worker registers tsx itself, then imports its entry.
 */
const WORKER_BOOTSTRAP = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(
  new URL('./snapshot-replica-worker.ts', import.meta.url).href,
)}); });`;

/**
 * The longest frames wait to be handed over, and the bytes that send them at once. Since the
 * replica writes the read store, each hand-over is a burst of its CPU on the cores the live core
 * shares: at 50 ms the open-loop p99 at 5,000 orders/s was 0.7–1.2 ms higher, at 10 ms it is not.
 */
const FEED_INTERVAL_MS = 10;
const FEED_MAX_BYTES = 4 * 1024 * 1024;

export interface ReplicaSettings {
  readonly dataDir: string;
  readonly databaseUrl: string | null;
  /** The journal on NATS JetStream, read on the replica's own connection (null: with the others). */
  readonly natsJournal: NatsJournalTarget | null;
  readonly keepSnapshots?: number;
  /** The live core's last seq when the replica starts (after recovery, before new commands). */
  readonly startSeq: number;
  readonly policy: SnapshotPolicy;
  /** The replica writes the read store, not the live core (whose store only answers queries). */
  readonly writesReadStore?: boolean;
  /** How long the read store it writes keeps history (absent: forever). */
  readonly retention?: RetentionSettings;
}

export type ReplicaRequest =
  | { readonly type: 'frames'; readonly frames: readonly StoredFrame[] }
  | { readonly type: 'status'; readonly id: number }
  | { readonly type: 'readFlush' }
  | { readonly type: 'stop'; readonly finalSnapshot: boolean };

export type ReplicaReply =
  | { readonly type: 'ready'; readonly seq: number }
  | { readonly type: 'checkpoint'; readonly checkpoint: HashCheckpoint }
  | { readonly type: 'saved'; readonly info: SnapshotInfo; readonly ms: number }
  | { readonly type: 'status'; readonly id: number; readonly seq: number; readonly stateHash: string }
  | { readonly type: 'stopped'; readonly seq: number }
  | { readonly type: 'failed'; readonly error: string }
  /** The read store wrote through `seq` (after each write). */
  | { readonly type: 'readWritten'; readonly seq: number }
  /** The answer to `readFlush`: everything handed over before it is written. */
  | { readonly type: 'readFlushed'; readonly seq: number }
  /** Its start passed over the snapshot at `seq`: it fails its checksum. */
  | { readonly type: 'snapshotSkipped'; readonly seq: number };

export interface ReplicaHooks {
  readonly onCheckpoint: (checkpoint: HashCheckpoint) => void;
  readonly onSaved?: (info: SnapshotInfo, ms: number) => void;
  /**
   * Its start passed over the snapshot at `seq` because it fails its checksum (it then starts
   * from an older one), as the service's recovery tells `onSnapshotSkipped`.
   */
  readonly onSnapshotSkipped?: (seq: number) => void;
  /** The replica stopped on an error (its read store's included); it takes no more frames. */
  readonly onFailed: (error: Error) => void;
}

export class SnapshotReplica {
  private readonly worker: Worker;
  private failure: Error | null = null;
  private stopped: Promise<void> | null = null;
  private readonly statusWaiters = new Map<
    number,
    { resolve: (status: { seq: number; stateHash: string }) => void; reject: (error: Error) => void }
  >();
  private nextStatusId = 1;
  private pendingFrames: StoredFrame[] = [];
  private pendingBytes = 0;
  private feedTimer: NodeJS.Timeout | null = null;
  private readonly exited: Promise<void>;
  /** The last seq of the frames handed over (or pending to be). */
  private fedSeq: number;
  private readonly writesReadStore: boolean;
  private readApplied: number;
  private readFlushPending = false;
  /** Queries waiting for the read store, each until it has written through `seq`. */
  private readWaiters: { readonly seq: number; readonly resolve: () => void }[] = [];

  /**
   * `readAppliedSeq` is what the read store had written when the service opened it (the replica
   * re-feeds it from there).
   */
  constructor(settings: ReplicaSettings, hooks: ReplicaHooks, readAppliedSeq = 0) {
    this.fedSeq = settings.startSeq;
    this.writesReadStore = settings.writesReadStore === true;
    this.readApplied = readAppliedSeq;
    // Profiling flags carry over (`--cpu-prof`); the tsx hooks are registered by the bootstrap.
    const execArgv = process.execArgv.filter((flag) => flag.startsWith('--cpu-prof'));
    this.worker = new Worker(WORKER_BOOTSTRAP, { eval: true, execArgv, workerData: settings });
    this.worker.on('message', (reply: ReplicaReply) => {
      switch (reply.type) {
        case 'checkpoint':
          hooks.onCheckpoint(reply.checkpoint);
          break;
        case 'saved':
          hooks.onSaved?.(reply.info, reply.ms);
          break;
        case 'snapshotSkipped':
          hooks.onSnapshotSkipped?.(reply.seq);
          break;
        case 'status':
          this.statusWaiters.get(reply.id)?.resolve({ seq: reply.seq, stateHash: reply.stateHash });
          this.statusWaiters.delete(reply.id);
          this.unrefWhenIdle();
          break;
        case 'readWritten':
          this.readWritten(reply.seq);
          break;
        case 'readFlushed':
          this.readFlushPending = false;
          this.readWritten(reply.seq);
          // Frames handed over after that flush was asked for: ask again for their waiters.
          if (this.readWaiters.length > 0) this.requestReadFlush();
          break;
        case 'failed':
          this.fail(new Error(`snapshot replica: ${reply.error}`), hooks);
          break;
        case 'ready':
        case 'stopped':
          break;
      }
    });
    this.worker.on('error', (error) => this.fail(error, hooks));
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()));
    void this.exited.then(() => {
      if (this.stopped === null) this.fail(new Error('snapshot replica exited'), hooks);
    });
    // Only pending work keeps the process alive: a replica never holds up an exit on its own.
    this.worker.unref();
  }

  /** Whether it stopped on an error (it then takes no more frames). */
  get failed(): boolean {
    return this.failure !== null;
  }

  /**
   * Hands over a frame the live journal made durable (in seq order, none skipped). Frames go
   * over together at most every FEED_INTERVAL_MS: a message per group commit woke the thread
   * thousands of times a second.
   */
  feed(frame: StoredFrame): void {
    if (this.failure !== null || this.stopped !== null) return;
    this.fedSeq = frame.firstSeq + frame.count - 1;
    this.pendingFrames.push(frame);
    this.pendingBytes += frame.payload.byteLength;
    if (this.pendingBytes >= FEED_MAX_BYTES) this.flushFrames();
    else this.feedTimer ??= setTimeout(() => this.flushFrames(), FEED_INTERVAL_MS).unref();
  }

  private flushFrames(): void {
    if (this.feedTimer !== null) clearTimeout(this.feedTimer);
    this.feedTimer = null;
    if (this.pendingFrames.length === 0 || this.failure !== null) return;
    const request: ReplicaRequest = { type: 'frames', frames: this.pendingFrames };
    this.pendingFrames = [];
    this.pendingBytes = 0;
    this.worker.postMessage(request);
  }

  /** The last seq its read store has written (as far as this thread has heard). */
  get readAppliedSeq(): number {
    return this.readApplied;
  }

  /**
   * Resolves once the read store has written through `throughSeq` (default: every frame handed
   * over so far, so a query then sees every acknowledged command); at once if it has, if the
   * replica failed (nothing more will be written), or if it does not write the read store; or
   * when `signal` aborts (the caller's wait is over; it checks `readAppliedSeq`).
   */
  readCaughtUp(throughSeq?: number, signal?: AbortSignal): Promise<void> {
    const seq = throughSeq === undefined ? this.fedSeq : Math.min(throughSeq, this.fedSeq);
    if (!this.writesReadStore || this.readApplied >= seq || this.failure !== null) return Promise.resolve();
    if (signal?.aborted === true) return Promise.resolve();
    // A stopping replica writes what it was handed before it ends.
    if (this.stopped !== null) return this.stopped;
    return new Promise((resolve) => {
      const aborted = () => {
        this.readWaiters = this.readWaiters.filter((w) => w !== waiter);
        this.unrefWhenIdle();
        resolve();
      };
      const waiter = {
        seq,
        resolve: () => {
          signal?.removeEventListener('abort', aborted);
          resolve();
        },
      };
      signal?.addEventListener('abort', aborted, { once: true });
      this.readWaiters.push(waiter);
      this.worker.ref();
      this.requestReadFlush();
    });
  }

  /** One flush at a time: its answer asks again if frames came after it. */
  private requestReadFlush(): void {
    if (this.readFlushPending) return;
    this.readFlushPending = true;
    this.flushFrames();
    const request: ReplicaRequest = { type: 'readFlush' };
    this.worker.postMessage(request);
  }

  private readWritten(seq: number): void {
    if (seq > this.readApplied) this.readApplied = seq;
    // Waiters' seqs are not in order (each account's last command): every one now written goes.
    const applied = this.readApplied;
    if (!this.readWaiters.some((waiter) => waiter.seq <= applied)) return;
    const done = this.readWaiters.filter((waiter) => waiter.seq <= applied);
    this.readWaiters = this.readWaiters.filter((waiter) => waiter.seq > applied);
    for (const waiter of done) waiter.resolve();
    this.unrefWhenIdle();
  }

  private releaseReadWaiters(): void {
    const waiting = this.readWaiters;
    this.readWaiters = [];
    for (const waiter of waiting) waiter.resolve();
    this.unrefWhenIdle();
  }

  /** Only pending answers keep the process alive. */
  private unrefWhenIdle(): void {
    if (this.statusWaiters.size === 0 && this.readWaiters.length === 0 && this.stopped === null) {
      this.worker.unref();
    }
  }

  /**
   * The replica's seq and state hash once it has applied every frame fed so far; rejects if it
   * fails first.
   */
  status(): Promise<{ seq: number; stateHash: string }> {
    if (this.failure !== null) return Promise.reject(this.failure);
    const id = this.nextStatusId++;
    this.flushFrames();
    // Referenced while an answer is awaited, so the process waits for it.
    this.worker.ref();
    return new Promise((resolve, reject) => {
      this.statusWaiters.set(id, { resolve, reject });
      const request: ReplicaRequest = { type: 'status', id };
      this.worker.postMessage(request);
    });
  }

  /**
   * Applies what was fed, saves a last snapshot when `finalSnapshot` (at a clean shutdown, so the
   * next start replays nothing), and ends the thread. A replica that has not finished after
   * `timeoutMs` (catching up a long journal, a stuck save) is terminated and counts as failed,
   * so the caller snapshots inline instead.
   */
  stop(finalSnapshot: boolean, timeoutMs = 120_000): Promise<void> {
    this.stopped ??=
      this.failure !== null
        ? this.worker.terminate().then(() => undefined)
        : (() => {
            this.flushFrames();
            const request: ReplicaRequest = { type: 'stop', finalSnapshot };
            this.worker.ref();
            this.worker.postMessage(request);
            let timer: NodeJS.Timeout | undefined;
            const timedOut = new Promise<void>((resolve) => {
              timer = setTimeout(() => {
                this.failure ??= new Error(`snapshot replica did not stop within ${timeoutMs} ms`);
                void this.worker.terminate().then(() => resolve());
              }, timeoutMs);
            });
            return Promise.race([this.exited, timedOut]).finally(() => {
              clearTimeout(timer);
              // The thread is gone: a status it did not answer never will be.
              const ended = this.failure ?? new Error('snapshot replica stopped');
              for (const waiter of this.statusWaiters.values()) waiter.reject(ended);
              this.statusWaiters.clear();
              this.releaseReadWaiters();
            });
          })();
    return this.stopped;
  }

  /**
   * Ends the thread now, whatever it is doing (a close past its deadline, waiting on a store that
   * stopped answering): it counts as failed, takes no more frames, its waits end, and a `stop`
   * under way resolves once the thread is gone. What it had not saved is lost to it only: the
   * journal holds every frame it was handed.
   */
  terminate(): Promise<void> {
    this.failure ??= new Error('snapshot replica terminated');
    if (this.feedTimer !== null) clearTimeout(this.feedTimer);
    this.feedTimer = null;
    this.pendingFrames = [];
    for (const waiter of this.statusWaiters.values()) waiter.reject(this.failure);
    this.statusWaiters.clear();
    this.releaseReadWaiters();
    return this.worker.terminate().then(() => undefined);
  }

  private fail(error: Error, hooks: ReplicaHooks): void {
    if (this.failure !== null) return;
    this.failure = error;
    for (const waiter of this.statusWaiters.values()) waiter.reject(error);
    if (this.feedTimer !== null) clearTimeout(this.feedTimer);
    this.pendingFrames = [];
    this.statusWaiters.clear();
    this.releaseReadWaiters();
    void this.worker.terminate();
    hooks.onFailed(error);
  }
}
