/**
 * Time for the edge of the system. The core never reads a clock: the sequencer stamps every
 * command with `clock.now()`, and timers fire as commands. Tests use `VirtualClock`, which only
 * moves when told to, so time-based behaviour is tested without sleeping.
 */

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Calls `callback` once at or after `at` (ms since epoch); returns a cancel function. */
  schedule(at: number, callback: () => void): () => void;
}

export class SystemClock implements Clock {
  now(): number {
    return Date.now();
  }

  schedule(at: number, callback: () => void): () => void {
    const handle = setTimeout(callback, Math.max(0, at - Date.now()));
    handle.unref?.();
    return () => clearTimeout(handle);
  }
}

interface PendingTimer {
  readonly at: number;
  readonly order: number;
  readonly callback: () => void;
  cancelled: boolean;
}

/** A clock that advances only through `advance`/`set`, firing due timers in time order. */
export class VirtualClock implements Clock {
  private current: number;
  private timers: PendingTimer[] = [];
  private scheduled = 0;

  constructor(start: number) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  schedule(at: number, callback: () => void): () => void {
    const timer: PendingTimer = { at, order: this.scheduled++, callback, cancelled: false };
    this.timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  /** Moves time forward by `ms`, firing every timer due on the way, each at its own time. */
  advance(ms: number): void {
    this.set(this.current + ms);
  }

  set(target: number): void {
    if (target < this.current) throw new Error('virtual time cannot go backwards');
    for (;;) {
      const next = this.nextDue(target);
      if (next === undefined) break;
      this.current = Math.max(this.current, next.at);
      this.timers = this.timers.filter((timer) => timer !== next);
      if (!next.cancelled) next.callback();
    }
    this.current = target;
  }

  pendingTimers(): number {
    return this.timers.filter((timer) => !timer.cancelled).length;
  }

  private nextDue(limit: number): PendingTimer | undefined {
    let best: PendingTimer | undefined;
    for (const timer of this.timers) {
      if (timer.at > limit) continue;
      if (best === undefined || timer.at < best.at || (timer.at === best.at && timer.order < best.order))
        best = timer;
    }
    return best;
  }
}
