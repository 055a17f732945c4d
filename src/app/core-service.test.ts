/**
 * The core service's wakeup timer and its committed listeners, over a real CoreMachine with a
 * toy sub-machine that asks to be woken at a given time, on the virtual clock.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CommandStamp } from '../core/commands.ts';
import { CoreMachine } from '../core/machine.ts';
import type { SubCommand, SubMachine, SubResult } from '../core/submachine.ts';
import { T0 } from '../engine/testkit.ts';
import { Venue } from '../engine/venue.ts';
import { VirtualClock } from './clock.ts';
import { CoreService } from './core-service.ts';

interface WakeCommand extends SubCommand {
  readonly type: 'wake_at';
  readonly at: number;
}

/** Asks for one wakeup at the time of its last command (as FollowMachine in machine.test.ts). */
class WakeupMachine implements SubMachine<WakeCommand, null, string> {
  readonly commandTypes = new Set(['wake_at']);
  state = { until: null as number | null };

  execute(command: WakeCommand): SubResult<null, string> {
    this.state.until = command.at;
    return { ok: true, value: null, events: ['armed'] };
  }
  react(): readonly string[] {
    return [];
  }
  advance(stamp: CommandStamp): readonly string[] {
    if (this.state.until === null || stamp.ts < this.state.until) return [];
    this.state.until = null;
    return ['woke'];
  }
  nextWakeup(): number | null {
    return this.state.until;
  }
  snapshot(): unknown {
    return structuredClone(this.state);
  }
  restore(snapshot: unknown): void {
    this.state = structuredClone(snapshot) as WakeupMachine['state'];
  }
  stateHash(): string {
    return JSON.stringify(this.state);
  }
}

/** A core service over a journal whose appends resolve at once; `timers` lists the timer commands. */
function service() {
  const clock = new VirtualClock(T0);
  const journaled: Array<{ type: string; ts: number }> = [];
  const errors: unknown[] = [];
  const core = new CoreService({
    machine: new CoreMachine(Venue.create(), new Map([['wakeup', new WakeupMachine()]])),
    journal: {
      append: async (entry) => {
        journaled.push({ type: entry.command.type, ts: entry.ts });
      },
    },
    clock,
    start: { seq: 0, ts: 0 },
    onError: (error) => errors.push(error),
  });
  const timers = () => journaled.filter((entry) => entry.type === 'timer').map((entry) => entry.ts - T0);
  return { clock, core, errors, timers };
}

const wakeAt = (core: CoreService, offset: number) =>
  core.submitMachine({ type: 'wake_at', at: T0 + offset } as Omit<WakeCommand, 'seq' | 'ts'>);

describe('CoreService wakeups', () => {
  test('a submit that asks for a wakeup schedules it', async () => {
    const { clock, core, timers } = service();
    await wakeAt(core, 60_000);
    clock.advance(59_999);
    await core.drain();
    assert.deepEqual(timers(), [], 'not before it is due');
    clock.advance(1);
    await core.drain();
    assert.deepEqual(timers(), [60_000]);
    core.stop();
  });

  test('an earlier wakeup moves the timer', async () => {
    const { clock, core, timers } = service();
    await wakeAt(core, 60_000);
    await wakeAt(core, 30_000);
    clock.advance(30_000);
    await core.drain();
    assert.deepEqual(timers(), [30_000]);
    core.stop();
  });

  test('after a timer fired, a later wakeup is scheduled', async () => {
    const { clock, core, timers } = service();
    await wakeAt(core, 30_000);
    clock.advance(30_000);
    await core.drain();
    await wakeAt(core, 90_000);
    clock.advance(60_000);
    await core.drain();
    assert.deepEqual(timers(), [30_000, 90_000]);
    core.stop();
  });

  test('a committed listener that throws is reported once; the caller and later listeners still get the result', async () => {
    const { core, errors } = service();
    const seen: number[] = [];
    core.onCommitted(() => {
      throw new Error('listener bug');
    });
    core.onCommitted((batch) => seen.push(batch.seq));
    const result = await core.submit({ type: 'create_account', accountId: 1 });
    assert.equal(result.ok, true);
    assert.deepEqual(seen, [1], 'the later listener saw the batch');
    assert.equal(errors.length, 1);
    assert.match(String(errors[0]), /listener bug/);
    core.stop();
  });
});

describe('CoreService stop and failure', () => {
  test('after stop() a due wakeup journals no timer command', async () => {
    const { clock, core, timers } = service();
    await wakeAt(core, 1_000);
    core.stop();
    // Submitted commands still complete after stop(), but schedule nothing.
    await wakeAt(core, 500);
    clock.advance(2_000);
    await core.drain();
    assert.deepEqual(timers(), [], 'no command after stop');
  });

  test('a journal that fails reports the core fatal through onFatal', async () => {
    const fatal: Error[] = [];
    const core = new CoreService({
      machine: new CoreMachine(Venue.create(), new Map([['wakeup', new WakeupMachine()]])),
      journal: { append: async () => Promise.reject(new Error('disk gone')) },
      clock: new VirtualClock(T0),
      start: { seq: 0, ts: 0 },
      onFatal: (error) => fatal.push(error),
    });
    await assert.rejects(core.submitMachine({ type: 'wake_at', at: T0 } as Omit<WakeCommand, 'seq' | 'ts'>));
    assert.equal(fatal.length, 1, 'onFatal called once');
    assert.ok(core.failed !== null);
  });
});
