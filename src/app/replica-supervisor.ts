/**
 * Keeps a snapshot replica running: hands it every frame the journal makes durable, and when it
 * fails starts a new one, after a delay that doubles up to `maxDelayMs` (a replica that ran for
 * `healthyAfterMs` starts the doubling over). A failure that keeps coming back (a frame that
 * cannot be decoded, a full disk) thus costs a catch-up replay on the other core at most once per
 * `maxDelayMs`.
 *
 * Invariants:
 * - A new replica starts at the last seq handed to the old one's journal feed: everything up to
 *   it is durable, so it reads it from the journal; every later frame is fed to it.
 * - While no replica runs, snapshots are the caller's (`onFailed`, then `onStarted` gives them
 *   back) and the read store is not written: `failure` is the last error, and `caughtUp` waits
 *   for the new replica to re-feed the store from its last write (a query bounds its wait with its
 *   signal and is then refused as behind: it never answers from what was written).
 * - `restartNow` cuts a waiting delay short when the store is known to be back.
 */
import type { MachineCommand } from '../core/machine.ts';
import type { Journal } from '../store/journal.ts';
import type { RemoteReadWriter } from '../store/read/read-store.ts';
import type { Clock } from './clock.ts';
import { type ReplicaHooks, type ReplicaSettings, SnapshotReplica } from './snapshot-replica.ts';

export interface RestartPolicy {
  readonly firstDelayMs: number;
  readonly maxDelayMs: number;
  readonly healthyAfterMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  firstDelayMs: 1_000,
  maxDelayMs: 60_000,
  healthyAfterMs: 600_000,
};

/** The delay before each restart: doubling from the first, capped, and back to the first after a healthy run. */
export class RestartBackoff {
  private next: number;

  constructor(private readonly policy: RestartPolicy) {
    this.next = policy.firstDelayMs;
  }

  /** The delay before starting again a replica that ran for `ranMs` and failed. */
  afterFailure(ranMs: number): number {
    if (ranMs >= this.policy.healthyAfterMs) this.next = this.policy.firstDelayMs;
    const delay = this.next;
    this.next = Math.min(this.next * 2, this.policy.maxDelayMs);
    return delay;
  }
}

export interface SupervisorHooks extends Omit<ReplicaHooks, 'onFailed'> {
  /** A replica failed; the next starts in `restartInMs` (Infinity: none will, it is stopping). */
  readonly onFailed: (error: Error, restartInMs: number) => void;
  /** A replica was started after a failure. */
  readonly onRestarted?: () => void;
}

export class ReplicaSupervisor implements RemoteReadWriter {
  private replica: SnapshotReplica | null = null;
  private startedAt = 0;
  private lastFailure: Error | null = null;
  private readonly backoff: RestartBackoff;
  /** Cancels the restart waiting for its delay (null when none waits). */
  private cancelRestart: (() => void) | null = null;
  private stopping = false;
  /** The last seq of the frames the journal made durable (where a new replica starts). */
  private durableSeq: number;
  private readApplied: number;
  private runningWaiters: { readonly resolve: () => void }[] = [];

  constructor(
    journal: Journal<MachineCommand>,
    private readonly settings: ReplicaSettings,
    readAppliedSeq: number,
    private readonly hooks: SupervisorHooks,
    policy: RestartPolicy = DEFAULT_RESTART_POLICY,
    private readonly clock: Clock = WALL_CLOCK,
  ) {
    this.durableSeq = settings.startSeq;
    this.readApplied = readAppliedSeq;
    this.backoff = new RestartBackoff(policy);
    journal.observeBatches((_entries, _ms, frame) => {
      if (frame === null) return;
      this.durableSeq = frame.firstSeq + frame.count - 1;
      this.replica?.feed(frame);
    });
    this.start();
  }

  /** The running replica (null between a failure and the restart, and after `stop`). */
  get current(): SnapshotReplica | null {
    return this.replica;
  }

  get lastAppliedSeq(): number {
    if (this.replica !== null) this.readApplied = Math.max(this.readApplied, this.replica.readAppliedSeq);
    return this.readApplied;
  }

  get failure(): Error | null {
    return this.replica === null ? this.lastFailure : null;
  }

  /** The last seq of the frames handed over: every command committed so far. */
  get handedSeq(): number {
    return this.durableSeq;
  }

  /**
   * Resolves once the read store holds `throughSeq` (default: every frame handed over before the
   * call), across replica failures: while none runs, it waits for the next to start and re-feed
   * the store. Also resolves when `signal` aborts or the supervisor stops; the caller checks
   * `lastAppliedSeq`.
   */
  async caughtUp(throughSeq?: number, signal?: AbortSignal): Promise<void> {
    if (this.settings.writesReadStore !== true) return;
    const target = Math.min(throughSeq ?? this.durableSeq, this.durableSeq);
    while (this.lastAppliedSeq < target && !this.stopping && signal?.aborted !== true) {
      const replica = this.replica;
      // A replica's wait ends when it has written the target, fails (it is then gone) or stops.
      if (replica === null) {
        await this.running(signal);
        continue;
      }
      await replica.readCaughtUp(target, signal);
      // Only a failed replica's wait goes on (with its successor); one that is still running ended
      // its wait because it wrote the target, stopped, or the wait was aborted: never spin.
      if (this.replica === replica && !replica.failed) return;
    }
  }

  /** The running replica's seq and state hash once it applied every frame fed so far. */
  status(): Promise<{ seq: number; stateHash: string }> {
    if (this.replica === null) return Promise.reject(this.lastFailure ?? new Error('no replica is running'));
    return this.replica.status();
  }

  /**
   * Resolves once a replica runs (at once if one does): after a failure, when its successor starts;
   * or when `signal` aborts, or the supervisor stops.
   */
  running(signal?: AbortSignal): Promise<void> {
    if (this.replica !== null || this.stopping || signal?.aborted === true) return Promise.resolve();
    return new Promise((resolve) => {
      const aborted = () => {
        this.runningWaiters = this.runningWaiters.filter((w) => w !== waiter);
        resolve();
      };
      const waiter = {
        resolve: () => {
          signal?.removeEventListener('abort', aborted);
          resolve();
        },
      };
      signal?.addEventListener('abort', aborted, { once: true });
      this.runningWaiters.push(waiter);
    });
  }

  /**
   * Starts the replica waiting out its restart delay at once (nothing when one runs, none waits,
   * or it is stopping): for when the store it failed on is known to be back (the database's lock
   * was taken again), so history does not wait up to `maxDelayMs` after an outage. The delays go
   * on doubling if it fails again.
   */
  restartNow(): void {
    if (this.cancelRestart === null || this.stopping) return;
    this.cancelRestart();
    this.cancelRestart = null;
    this.start();
    this.hooks.onRestarted?.();
  }

  /** Stops the running replica (see `SnapshotReplica.stop`) and starts no other. */
  async stop(finalSnapshot: boolean): Promise<void> {
    this.stopping = true;
    this.cancelRestart?.();
    this.cancelRestart = null;
    this.releaseRunningWaiters();
    await this.replica?.stop(finalSnapshot);
  }

  /**
   * Ends the running replica's thread at once (see `SnapshotReplica.terminate`; a `stop` under
   * way then resolves) and starts no other: for a close whose replica stop is past its deadline.
   */
  async terminate(): Promise<void> {
    this.stopping = true;
    this.cancelRestart?.();
    this.cancelRestart = null;
    this.releaseRunningWaiters();
    await this.replica?.terminate();
  }

  /** True when no replica can take the final snapshot: none runs, or the last one failed. */
  get failed(): boolean {
    return this.replica === null || this.replica.failed;
  }

  private start(): void {
    this.startedAt = this.clock.now();
    const replica: SnapshotReplica = new SnapshotReplica(
      { ...this.settings, startSeq: this.durableSeq },
      {
        onCheckpoint: this.hooks.onCheckpoint,
        ...(this.hooks.onSaved === undefined ? {} : { onSaved: this.hooks.onSaved }),
        ...(this.hooks.onSnapshotSkipped === undefined
          ? {}
          : { onSnapshotSkipped: this.hooks.onSnapshotSkipped }),
        onFailed: (error) => this.onReplicaFailed(replica, error),
      },
      this.lastAppliedSeq,
    );
    this.replica = replica;
    this.releaseRunningWaiters();
  }

  private onReplicaFailed(replica: SnapshotReplica, error: Error): void {
    if (this.replica !== replica) return;
    this.readApplied = Math.max(this.readApplied, replica.readAppliedSeq);
    this.replica = null;
    this.lastFailure = error;
    if (this.stopping) {
      this.hooks.onFailed(error, Number.POSITIVE_INFINITY);
      return;
    }
    const now = this.clock.now();
    const delay = this.backoff.afterFailure(now - this.startedAt);
    this.hooks.onFailed(error, delay);
    this.cancelRestart = this.clock.schedule(now + delay, () => {
      this.cancelRestart = null;
      if (this.stopping) return;
      this.start();
      this.hooks.onRestarted?.();
    });
  }

  private releaseRunningWaiters(): void {
    const waiting = this.runningWaiters;
    this.runningWaiters = [];
    for (const waiter of waiting) waiter.resolve();
  }
}

/**
 * Real time, with timers that keep no process alive (the service's server does): the default, so
 * a replica restarts on time whatever the service clock is; tests pass a virtual clock.
 */
const WALL_CLOCK: Clock = {
  now: Date.now,
  schedule(at, callback) {
    const timer = setTimeout(callback, Math.max(0, at - Date.now()));
    timer.unref();
    return () => clearTimeout(timer);
  },
};
