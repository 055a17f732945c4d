import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ClockAdjustment, SystemClock, VirtualClock } from './clock.ts';

test('virtual clock fires due timers in time order, each at its own time', () => {
  const clock = new VirtualClock(1_000);
  const fired: Array<[string, number]> = [];
  clock.schedule(1_500, () => fired.push(['b', clock.now()]));
  clock.schedule(1_200, () => fired.push(['a', clock.now()]));
  const cancel = clock.schedule(1_300, () => fired.push(['cancelled', clock.now()]));
  clock.schedule(5_000, () => fired.push(['late', clock.now()]));
  cancel();
  clock.advance(1_000);
  assert.deepEqual(fired, [
    ['a', 1_200],
    ['b', 1_500],
  ]);
  assert.equal(clock.now(), 2_000);
  assert.equal(clock.pendingTimers(), 1);
});

test('timers scheduled by a firing timer run in the same advance when due', () => {
  const clock = new VirtualClock(0);
  const fired: number[] = [];
  clock.schedule(10, () => {
    fired.push(clock.now());
    clock.schedule(20, () => fired.push(clock.now()));
  });
  clock.advance(30);
  assert.deepEqual(fired, [10, 20]);
  assert.throws(() => clock.set(5));
});

/**
 * The machine's two clocks for SystemClock: `mono` (performance.now: real elapsed time, never
 * stepped) and `wall` (Date.now: NTP or a VM resume may step it). `pass` lets real time go by,
 * firing the timers due on the way at their own monotonic time; `step` moves only the wall clock.
 */
class MachineTime {
  mono = 5_000;
  wall = Date.UTC(2026, 10, 20, 7, 0);
  private timers: Array<{ due: number; order: number; run: () => void; live: boolean }> = [];
  private count = 0;
  readonly clock: SystemClock;
  readonly adjustments: ClockAdjustment[] = [];
  /** Timers armed so far (re-arming included). */
  armed = 0;

  constructor() {
    this.clock = new SystemClock({
      wall: () => this.wall,
      monotonic: () => this.mono,
      setTimer: (run, ms) => {
        this.armed++;
        // As Node's setTimeout: a delay past 2^31 - 1 ms is 1 ms.
        const delay = ms > 2_147_483_647 ? 1 : Math.max(1, ms);
        const timer = { due: this.mono + delay, order: this.count++, run, live: true };
        this.timers.push(timer);
        return timer;
      },
      clearTimer: (handle) => {
        (handle as { live: boolean }).live = false;
      },
    });
    this.clock.onAdjust((adjustment) => this.adjustments.push(adjustment));
  }

  pass(ms: number): void {
    const target = this.mono + ms;
    for (;;) {
      let next: (typeof this.timers)[number] | undefined;
      for (const t of this.timers) {
        if (t.due <= target && (!next || t.due < next.due || (t.due === next.due && t.order < next.order)))
          next = t;
      }
      if (next === undefined) break;
      this.wall += next.due - this.mono;
      this.mono = next.due;
      this.timers = this.timers.filter((t) => t !== next);
      if (next.live) next.run();
    }
    this.wall += target - this.mono;
    this.mono = target;
  }

  /** Lets `ms` of real time go by a second at a time, reading the clock each second (as the market loop does). */
  run(ms: number, everyMs = 1_000): number[] {
    const seen: number[] = [];
    for (let done = 0; done < ms; done += everyMs) {
      this.pass(Math.min(everyMs, ms - done));
      seen.push(this.clock.now());
    }
    return seen;
  }

  step(ms: number): void {
    this.wall += ms;
  }

  pending(): number {
    return this.timers.filter((t) => t.live).length;
  }
}

function assertNonDecreasing(values: readonly number[]): void {
  for (let i = 1; i < values.length; i++) {
    assert.ok(values[i]! >= values[i - 1]!, `time went back from ${values[i - 1]} to ${values[i]} at ${i}`);
  }
}

test('system clock: starts at the wall clock and runs on the monotonic one, in whole milliseconds', () => {
  const time = new MachineTime();
  const t0 = time.wall;
  assert.equal(time.clock.now(), t0);
  time.pass(1_234.6);
  assert.equal(time.clock.now(), t0 + 1_234);
  assert.equal(time.clock.offset, 0);
  assert.equal(time.clock.lastAdjustment, null);
});

test('system clock: a transient forward step (corrected within the persistence window) changes nothing', () => {
  const time = new MachineTime();
  const t0 = time.clock.now();
  time.run(10_000);
  time.step(2 * 3_600_000); // a bad NTP source or a VM resume steps the wall clock 2 h ahead ...
  const during = time.run(30_000);
  time.step(-2 * 3_600_000); // ... and it is corrected 30 s later
  const after = time.run(600_000);
  assert.equal(during.at(-1), t0 + 40_000, 'command time went on at the real rate, not 2 h ahead');
  assert.equal(after.at(-1), t0 + 640_000);
  assert.equal(time.clock.now(), time.wall);
  assertNonDecreasing([...during, ...after]);
  assert.deepEqual(time.adjustments, []);
});

test('system clock: a transient backward step changes nothing: time neither freezes nor goes back', () => {
  const time = new MachineTime();
  const t0 = time.clock.now();
  time.step(-10 * 60_000);
  const during = time.run(59_000);
  time.step(10 * 60_000);
  const after = time.run(60_000);
  assert.deepEqual(
    during.slice(0, 3),
    [t0 + 1_000, t0 + 2_000, t0 + 3_000],
    'the clock runs at full speed through the step',
  );
  assert.equal(after.at(-1), t0 + 119_000);
  assertNonDecreasing([...during, ...after]);
  assert.deepEqual(time.adjustments, []);
});

test('system clock: a persistent forward difference (a VM pause, a real correction) is jumped to after 60 s', () => {
  const time = new MachineTime();
  const t0 = time.clock.now();
  time.step(5 * 60_000);
  time.clock.now(); // seen at once (a request came in)
  const waiting = time.run(59_000);
  assert.equal(waiting.at(-1), t0 + 59_000, 'not followed while it may be transient');
  time.run(1_000);
  assert.equal(time.clock.now(), time.wall, 'jumped to the wall clock');
  assert.equal(time.clock.offset, 0);
  assert.equal(time.adjustments.length, 1);
  const adjustment = time.adjustments[0]!;
  assert.equal(adjustment.kind, 'jump');
  assert.equal(adjustment.byMs, 5 * 60_000);
  assert.equal(adjustment.at, time.wall);
  assert.deepEqual(time.clock.lastAdjustment, adjustment);
  time.run(60_000);
  assert.equal(time.clock.now(), time.wall, 'then it follows the wall clock again');
  assert.equal(time.adjustments.length, 1);
});

test('system clock: a persistent backward difference is slewed at half speed, never going back', () => {
  const time = new MachineTime();
  const t0 = time.clock.now();
  time.step(-10 * 60_000);
  time.clock.now();
  const seen = time.run(60_000);
  assert.equal(seen.at(-1), t0 + 60_000, 'full speed while it may be transient');
  assert.equal(time.adjustments.length, 1);
  assert.equal(time.adjustments[0]!.kind, 'slew');
  assert.equal(time.adjustments[0]!.byMs, -10 * 60_000);
  assert.equal(time.clock.offset, 10 * 60_000, 'the service clock is 10 min ahead of the wall clock');
  const slewing = time.run(10_000);
  assert.equal(slewing.at(-1)! - seen.at(-1)!, 5_000, 'half speed');
  seen.push(...slewing, ...time.run(25 * 60_000));
  assert.equal(time.clock.now(), time.wall, 'met the wall clock (after about 20 min)');
  const met = time.run(10_000);
  assert.equal(met.at(-1)! - seen.at(-1)!, 10_000, 'full speed again');
  assertNonDecreasing([...seen, ...met]);
  assert.equal(time.adjustments.length, 1);
});

test('system clock: small differences are slewed away gently in both directions', () => {
  const ahead = new MachineTime();
  ahead.step(500);
  const a = ahead.run(10_000);
  assert.ok(
    a.at(-1)! > ahead.wall - 500 && a.at(-1)! < ahead.wall,
    `catching up gently: ${ahead.clock.offset}`,
  );
  ahead.run(60_000);
  assert.equal(ahead.clock.offset, 0);
  const behind = new MachineTime();
  behind.step(-500);
  const b = behind.run(70_000, 100);
  assert.equal(behind.clock.offset, 0);
  assertNonDecreasing(b);
  assert.ok(b[1]! > b[0]!, 'slowed down, not stopped');
  assert.deepEqual([...ahead.adjustments, ...behind.adjustments], []);
});

test('system clock: the time only goes forward, whatever the wall clock does', () => {
  const time = new MachineTime();
  let seed = 7;
  const random = () => {
    seed = (seed * 48_271) % 2_147_483_647;
    return seed / 2_147_483_647;
  };
  const seen: number[] = [];
  for (let i = 0; i < 3_000; i++) {
    if (random() < 0.02) time.step(Math.round((random() - 0.5) * 4 * 3_600_000));
    else if (random() < 0.05) time.step(Math.round((random() - 0.5) * 3_000));
    time.pass(Math.round(random() * 5_000));
    seen.push(time.clock.now());
  }
  assertNonDecreasing(seen);
});

test('system clock: a timer fires when now() reaches its time, re-arming when the clock was slewed', () => {
  const time = new MachineTime();
  const fired: number[] = [];
  const t0 = time.clock.now();
  time.clock.schedule(t0 + 5_000, () => fired.push(time.clock.now()));
  time.clock.schedule(t0 + 500_000, () => fired.push(time.clock.now()));
  const cancel = time.clock.schedule(t0 + 3_000, () => fired.push(-1));
  cancel();
  time.step(2 * 3_600_000); // a transient wall step does not fire anything
  time.run(4_000);
  assert.equal(fired.length, 0);
  time.step(-2 * 3_600_000);
  time.run(1_000);
  assert.deepEqual(fired, [t0 + 5_000]);
  // the wall clock goes back 10 min for good: the service clock slews at half speed
  time.step(-10 * 60_000);
  time.clock.now();
  time.run(60_000);
  assert.equal(time.adjustments[0]?.kind, 'slew');
  const slewStart = time.clock.now();
  const monoStart = time.mono;
  time.clock.schedule(slewStart + 1_000, () => fired.push(time.clock.now()));
  time.pass(1_999);
  assert.equal(fired.length, 1, 'not before the service clock reached the time');
  time.pass(1);
  assert.deepEqual(fired.slice(1), [slewStart + 1_000]);
  assert.equal(time.mono - monoStart, 2_000);
  // the first timer, armed before the slew, fires when now() reaches its time, not before
  time.pass(2_000_000);
  assert.deepEqual(fired.slice(2), [t0 + 500_000]);
  assert.equal(time.pending(), 0);
});

test('system clock: a timer further away than setTimeout can wait fires at its time, not at once', () => {
  const time = new MachineTime();
  const fired: number[] = [];
  const at = time.clock.now() + 30 * 86_400_000;
  time.clock.schedule(at, () => fired.push(time.clock.now()));
  time.pass(1_000);
  assert.equal(fired.length, 0);
  assert.equal(time.armed, 1, 'not woken every millisecond');
  time.pass(30 * 86_400_000);
  assert.deepEqual(fired, [at]);
  assert.equal(time.armed, 2);
});

test('system clock: a timer the clock jumps past fires at the jump, not after its monotonic wait', () => {
  const time = new MachineTime();
  const t0 = time.clock.now();
  const fired: number[] = [];
  time.clock.schedule(t0 + 30 * 60_000, () => fired.push(time.clock.now()));
  // The wall clock was 2 h behind (a VM pause): after 60 s the service clock jumps to it.
  time.step(2 * 3_600_000);
  time.clock.now();
  time.run(61_000);
  assert.equal(time.adjustments[0]?.kind, 'jump');
  assert.equal(fired.length, 1, 'due once the clock passed its time');
  assert.ok(fired[0]! >= t0 + 30 * 60_000);
});

test('virtual clock: timers due at the same time fire in the order they were scheduled', () => {
  const clock = new VirtualClock(0);
  const fired: string[] = [];
  clock.schedule(10, () => fired.push('first'));
  clock.schedule(10, () => fired.push('second'));
  clock.schedule(10, () => fired.push('third'));
  clock.advance(10);
  assert.deepEqual(fired, ['first', 'second', 'third']);
});

test('system clock: a wall step of exactly the tolerance is slewed away gently at once', () => {
  const time = new MachineTime();
  time.clock.now();
  time.step(1_000); // exactly the 1 s tolerance
  const seen = time.run(10_000);
  assert.ok(
    seen.at(-1)! > time.wall - 1_000 && seen.at(-1)! < time.wall,
    `catching up gently at once, not held for the persistence window: offset ${time.clock.offset}`,
  );
  assert.deepEqual(time.adjustments, []);
});

test('system clock: a timer set during a forward slew fires at its time, not late', () => {
  const time = new MachineTime();
  time.clock.now();
  time.step(500); // within tolerance: the clock runs a little fast until it has caught up
  const now = time.clock.now();
  const fired: number[] = [];
  time.clock.schedule(now + 10_000, () => fired.push(time.clock.now()));
  time.pass(10_000);
  assert.equal(fired.length, 1, 'fired within 10 s of monotonic time');
  assert.ok(fired[0]! - (now + 10_000) <= 1, `fired ${fired[0]! - (now + 10_000)} ms after its time`);
});

test('virtual clock: advance(0) and set(now) are no-ops that fire what is due now; earlier is refused', () => {
  const clock = new VirtualClock(1_000);
  const fired: number[] = [];
  clock.schedule(1_000, () => fired.push(clock.now()));
  clock.advance(0);
  assert.deepEqual(fired, [1_000], 'a timer due now fires on advance(0)');
  clock.set(1_000);
  assert.equal(clock.now(), 1_000, 'set to the current time is allowed');
  assert.throws(() => clock.set(999), /cannot go backwards/, 'an earlier time is refused');
});

test('virtual clock: a timer scheduled in the past fires at once without moving time back', () => {
  const clock = new VirtualClock(1_000);
  const seen: Array<[string, number]> = [];
  clock.schedule(400, () => seen.push(['overdue', clock.now()]));
  clock.schedule(1_050, () => seen.push(['due', clock.now()]));
  clock.advance(100);
  assert.deepEqual(
    seen,
    [
      ['overdue', 1_000],
      ['due', 1_050],
    ],
    'the overdue timer sees the current time, not its own past one',
  );
  assert.equal(clock.now(), 1_100, 'time ends at the target');
});

test('virtual clock: pendingTimers() leaves out cancelled timers not yet due', () => {
  const clock = new VirtualClock(0);
  const cancel = clock.schedule(100, () => {});
  clock.schedule(200, () => {});
  assert.equal(clock.pendingTimers(), 2, 'two armed');
  cancel();
  assert.equal(clock.pendingTimers(), 1, 'the cancelled one no longer counts');
});
