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

/** A decision of SystemClock to follow the wall clock after a persistent difference. */
export interface ClockAdjustment {
  /** `jump`: moved forward at once; `slew`: runs slower until it meets the wall clock. */
  readonly kind: 'jump' | 'slew';
  /** How far the service clock is moved (ms): positive forward at once, negative slewed away. */
  readonly byMs: number;
  /** The service time when decided (after a jump, the time jumped to). */
  readonly at: number;
  /** The wall clock (`Date.now()`) when decided. */
  readonly wall: number;
}

export interface SystemClockOptions {
  /** The wall clock, which NTP or a VM resume may step. Default `Date.now`. */
  readonly wall?: () => number;
  /** A monotonic clock in ms (any origin; never stepped). Default `performance.now`. */
  readonly monotonic?: () => number;
  /** Default `setTimeout` (unref'd); `clearTimer` cancels what it returned. Both for tests. */
  readonly setTimer?: (run: () => void, ms: number) => unknown;
  readonly clearTimer?: (handle: unknown) => void;
  /** Differences up to this are slewed away gently, and never followed at once. Default 1 s. */
  readonly toleranceMs?: number;
  /** How long a larger difference must persist, in one direction, to be followed. Default 60 s. */
  readonly persistMs?: number;
  /** While slewing back a larger difference, the clock runs at `1 - slewRate` speed. Default 0.5. */
  readonly slewRate?: number;
  /** Speed change for differences within the tolerance (1 ± gentleRate). Default 0.01. */
  readonly gentleRate?: number;
}

export const CLOCK_TOLERANCE_MS = 1_000;
export const CLOCK_PERSIST_MS = 60_000;
/** setTimeout fires at once past 2^31 - 1 ms; a longer wait is armed again when this one ends. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * The service clock: the monotonic clock plus an offset, steered toward the wall clock so that a
 * wall-clock step (NTP, a VM pause) neither becomes command time nor stops it.
 *
 * - It starts at the wall clock and runs on the monotonic one (whole milliseconds).
 * - A difference to the wall clock beyond `toleranceMs` is followed only once it has persisted
 *   `persistMs` in one direction: a forward one is jumped to (time only advances, and it is a real
 *   correction such as the end of a VM pause), a backward one is slewed away (the clock runs at
 *   `1 - slewRate` speed until it meets the wall clock). A step corrected sooner changes nothing.
 * - Smaller differences are slewed away gently (speed 1 ± `gentleRate`).
 * - `now()` never goes backwards and never stops; `schedule` fires when `now()` reaches `at`
 *   (re-arming if the clock was slowed meanwhile).
 * It logs nothing: `onAdjust` listeners, `lastAdjustment` and `offset` tell the service.
 * The wall clock is read (and the decisions taken) on each `now()`; the service reads it at least
 * every market tick, so persistence is judged between readings a second or so apart.
 */
export class SystemClock implements Clock {
  private readonly wall: () => number;
  private readonly monotonic: () => number;
  private readonly setTimer: (run: () => void, ms: number) => unknown;
  private readonly clearTimer: (handle: unknown) => void;
  private readonly toleranceMs: number;
  private readonly persistMs: number;
  private readonly slewRate: number;
  private readonly gentleRate: number;
  /** Service time = monotonic + `shift`; `goal` is the shift of the wall clock accepted. */
  private shift: number;
  private goal: number;
  private lastMono: number;
  private lastNow = Number.NEGATIVE_INFINITY;
  private lastOffset = 0;
  /** A difference beyond the tolerance to the accepted shift, since when and which way. */
  private divergence: { readonly since: number; readonly direction: 1 | -1 } | null = null;
  private adjustment: ClockAdjustment | null = null;
  private readonly listeners: Array<(adjustment: ClockAdjustment) => void> = [];
  /** Timers waiting on the monotonic clock: re-armed when the clock jumps forward past them. */
  private readonly armed = new Set<() => void>();

  constructor(options: SystemClockOptions = {}) {
    this.wall = options.wall ?? Date.now;
    this.monotonic = options.monotonic ?? (() => performance.now());
    this.setTimer =
      options.setTimer ??
      ((run, ms) => {
        const handle = setTimeout(run, ms);
        handle.unref?.();
        return handle;
      });
    this.clearTimer = options.clearTimer ?? ((handle) => clearTimeout(handle as NodeJS.Timeout));
    this.toleranceMs = options.toleranceMs ?? CLOCK_TOLERANCE_MS;
    this.persistMs = options.persistMs ?? CLOCK_PERSIST_MS;
    this.slewRate = options.slewRate ?? 0.5;
    this.gentleRate = options.gentleRate ?? 0.01;
    if (!(this.slewRate > 0 && this.slewRate < 1) || !(this.gentleRate > 0 && this.gentleRate < 1)) {
      throw new RangeError('slewRate and gentleRate must be between 0 and 1 (the clock never stops)');
    }
    this.lastMono = this.monotonic();
    this.shift = this.wall() - this.lastMono;
    this.goal = this.shift;
  }

  now(): number {
    const mono = this.monotonic();
    if (mono > this.lastMono) {
      this.shift = this.slewed(mono - this.lastMono);
      this.lastMono = mono;
    }
    this.observe(this.wall());
    const now = Math.max(this.lastNow, Math.floor(this.lastMono + this.shift));
    this.lastNow = now;
    return now;
  }

  schedule(at: number, callback: () => void): () => void {
    const due = Math.ceil(at);
    let handle: unknown;
    let cancelled = false;
    const fire = () => {
      this.armed.delete(rearm);
      if (!cancelled) callback();
    };
    const arm = () => {
      const wait = due - this.now();
      if (wait <= 0) {
        handle = this.setTimer(fire, 0);
        return;
      }
      handle = this.setTimer(
        () => {
          if (cancelled) return;
          if (this.now() < due) arm();
          else fire();
        },
        Math.min(MAX_TIMER_MS, Math.max(1, Math.ceil(this.monoUntil(wait)))),
      );
    };
    const rearm = () => {
      this.clearTimer(handle);
      arm();
    };
    this.armed.add(rearm);
    arm();
    return () => {
      cancelled = true;
      this.armed.delete(rearm);
      this.clearTimer(handle);
    };
  }

  /** Called on each jump or slew decided (not for the gentle slewing of small differences). */
  onAdjust(listener: (adjustment: ClockAdjustment) => void): void {
    this.listeners.push(listener);
  }

  /** The latest jump or slew decided, if any. */
  get lastAdjustment(): ClockAdjustment | null {
    return this.adjustment;
  }

  /** Service time minus the wall clock at the latest reading (ms; positive: the service is ahead). */
  get offset(): number {
    return this.lastOffset;
  }

  private observe(wall: number): void {
    const mono = this.lastMono;
    const wallShift = wall - mono;
    this.lastOffset = Math.round(this.shift - wallShift);
    const difference = wallShift - this.goal;
    if (Math.abs(difference) <= this.toleranceMs) {
      this.divergence = null;
      this.goal = wallShift;
      // Small forward steps accepted one after another can leave the clock further behind than
      // the gentle slew catches up: beyond the tolerance, that is jumped to.
      if (this.goal - this.shift > this.toleranceMs) this.adjust(wall);
      return;
    }
    const direction = difference > 0 ? 1 : -1;
    if (this.divergence === null || this.divergence.direction !== direction) {
      this.divergence = { since: mono, direction };
      return;
    }
    if (mono - this.divergence.since < this.persistMs) return;
    this.divergence = null;
    this.goal = wallShift;
    this.adjust(wall);
  }

  /** Follows the accepted wall clock: forward at once, backward by slewing. */
  private adjust(wall: number): void {
    const byMs = this.goal - this.shift;
    const kind = byMs > 0 ? 'jump' : 'slew';
    if (kind === 'jump') this.shift = this.goal;
    this.lastOffset = Math.round(this.shift - this.goal);
    const adjustment: ClockAdjustment = { kind, byMs, at: Math.floor(this.lastMono + this.shift), wall };
    this.adjustment = adjustment;
    // A jump forward may pass timers armed for a longer monotonic wait: they fire now.
    if (kind === 'jump') for (const rearm of [...this.armed]) rearm();
    for (const listener of this.listeners) listener(adjustment);
  }

  /** The course ahead, from the latest reading: monotonic lengths at a speed, then speed 1. */
  private course(): Array<{ readonly length: number; readonly speed: number }> {
    const gap = this.goal - this.shift;
    if (gap > 0) return [{ length: gap / this.gentleRate, speed: 1 + this.gentleRate }];
    if (gap < 0) {
      const far = Math.max(0, -gap - this.toleranceMs);
      const near = Math.min(-gap, this.toleranceMs);
      return [
        { length: far / this.slewRate, speed: 1 - this.slewRate },
        { length: near / this.gentleRate, speed: 1 - this.gentleRate },
      ];
    }
    return [];
  }

  /** The shift after `elapsed` monotonic ms on the course (`course`, without building it: per read). */
  private slewed(elapsed: number): number {
    const gap = this.goal - this.shift;
    if (gap === 0) return this.shift;
    if (gap > 0) return elapsed >= gap / this.gentleRate ? this.goal : this.shift + elapsed * this.gentleRate;
    const far = Math.max(0, -gap - this.toleranceMs);
    const farLength = far / this.slewRate;
    if (elapsed <= farLength) return this.shift - elapsed * this.slewRate;
    const near = Math.min(-gap, this.toleranceMs);
    const rest = elapsed - farLength;
    return rest >= near / this.gentleRate ? this.goal : this.shift - far - rest * this.gentleRate;
  }

  /** Monotonic ms until the service clock has advanced `ahead` ms on the course. */
  private monoUntil(ahead: number): number {
    let mono = 0;
    for (const { length, speed } of this.course()) {
      if (ahead <= length * speed) return mono + ahead / speed;
      mono += length;
      ahead -= length * speed;
    }
    return mono + ahead;
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
