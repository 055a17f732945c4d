/**
 * The whole core machine driven by a chaos property (test/algo, test/rfq): every command stamped
 * and logged (the journal a replay runs), a copy restored from a snapshot at a random step that
 * must answer every later command alike, and the replay of the log that must end in the same state.
 */
import assert from 'node:assert/strict';
import type { UnstampedAlgoCommand } from '../../src/algo/types.ts';
import { createCoreMachine } from '../../src/app/core-factory.ts';
import type { UnstampedCommand } from '../../src/core/commands.ts';
import type { CoreMachine, MachineCommand, MachineSnapshot } from '../../src/core/machine.ts';
import { T0 } from '../../src/engine/testkit.ts';
import type { UnstampedRfqCommand } from '../../src/rfq/types.ts';
import { decodeSnapshotState, encodeSnapshot } from '../../src/store/record-format.ts';

export class ChaosCore {
  seq = 0;
  ts = T0;
  /** Every command executed, stamped, setup included (the journal a replay runs). */
  readonly log: MachineCommand[] = [];

  constructor(readonly machine: CoreMachine = createCoreMachine()) {}

  stamp(command: UnstampedCommand | UnstampedAlgoCommand | UnstampedRfqCommand): MachineCommand {
    const stamped = { ...command, seq: ++this.seq, ts: this.ts } as MachineCommand;
    this.log.push(stamped);
    return stamped;
  }

  /** Setup commands: asserted to succeed. */
  ok(command: UnstampedCommand): void {
    const result = this.machine.execute(this.stamp(command));
    assert.ok(result.result.ok, JSON.stringify(result.result));
  }

  mark(name: string): number | null {
    return this.machine.venue.instrument(name)?.markPrice ?? null;
  }
}

/** A core restored from a snapshot of `core` now, through the snapshot's bytes. */
export function restoredCopy(core: ChaosCore): CoreMachine {
  const stored = encodeSnapshot(core.seq, core.ts, core.machine.stateHash(), core.machine.snapshot());
  return createCoreMachine(decodeSnapshotState<MachineSnapshot>(stored));
}

/** Runs `c` on the restored copy, if any, asserting it answers as the live core did. */
export function checkCopyAnswers(
  copy: CoreMachine | null,
  c: MachineCommand,
  result: ReturnType<CoreMachine['execute']>,
  label: string,
): void {
  if (copy === null) return;
  const again = copy.execute(c);
  assert.deepEqual(
    JSON.parse(JSON.stringify(again.result)),
    JSON.parse(JSON.stringify(result.result)),
    `${label}: the restored core answers alike`,
  );
}

/**
 * Moves the clock `ms`: a timer at every wakeup the core asks for (at most `guard` of them), as the
 * service does, or one timer at the end only (`wakeups` false: a late service).
 */
export function passTime(
  core: ChaosCore,
  ms: number,
  wakeups: boolean,
  label: string,
  guard: number,
  timer: (c: MachineCommand, label: string) => void,
): void {
  const target = core.ts + ms;
  if (wakeups) {
    for (let i = 0; i < guard; i++) {
      const next = core.machine.nextWakeup();
      if (next === null || next > target) break;
      core.ts = Math.max(core.ts, next);
      timer(core.stamp({ type: 'timer' }), `${label} (wakeup at ${core.ts})`);
    }
  }
  core.ts = target;
  timer(core.stamp({ type: 'timer' }), label);
}

/** The end of a session: the restored copy and a replay of the log hash as the live core does. */
export function checkRestoredAndReplayed(core: ChaosCore, copy: CoreMachine | null): void {
  if (copy !== null) assert.equal(copy.stateHash(), core.machine.stateHash(), 'final hash after restore');
  const replay = createCoreMachine();
  for (const c of core.log) replay.execute(c);
  assert.equal(replay.stateHash(), core.machine.stateHash(), 'replayed hash');
}
