/**
 * How the Block RFQ desk and the portfolio algorithms plug into the one deterministic core.
 *
 * The core is a composite state machine (`src/core/machine.ts`): the engine plus sub-machines.
 * Only external commands are journaled. A sub-machine handles its own command types and may
 * drive the engine synchronously while it does (RFQ accept → `block_trade`; an algorithm placing,
 * editing or cancelling child orders), stamping those inner engine commands with the outer
 * command's `seq` and `ts`. After every command (whoever handled it) each sub-machine sees the
 * events the engine emitted and may react, again synchronously through the engine. Because all of
 * this happens inside one journaled command, replaying the journal rebuilds everything exactly.
 *
 * Invariants every sub-machine keeps:
 * - No I/O, no clock, no randomness: time is `stamp.ts`; ids come from counters in its state.
 * - `nextWakeup()` tells the edge when the next time-driven step is due; the edge then submits a
 *   `timer` command stamped at (or after) that time. A sub-machine must tolerate being woken
 *   late (the stamp is later than asked) and must do everything due at or before `stamp.ts`.
 * - `snapshot()` is JSON-serialisable; `restore(snapshot)` rebuilds an identical state;
 *   `stateHash()` covers everything that affects future behaviour.
 * - Refusals are results, not exceptions.
 */
import type { CommandStamp, CoreCommand } from './commands.ts';
import type { CommandResult, CoreEvent } from './events.ts';

/** What a sub-machine may do with the engine. The engine's class satisfies this structurally. */
export interface EnginePort {
  execute(command: CoreCommand): CommandResult;
}

/** A command addressed to a sub-machine: a tagged, JSON-serialisable object with its stamp. */
export interface SubCommand extends CommandStamp {
  readonly type: string;
}

/** Outcome of a sub-machine command; `events` are the sub-machine's own (e.g. RFQ updates). */
export type SubResult<TValue, TEvent> =
  | { readonly ok: true; readonly value: TValue; readonly events: readonly TEvent[] }
  | {
      readonly ok: false;
      readonly error: {
        readonly name: string;
        readonly message: string;
        readonly data: Record<string, unknown>;
      };
      readonly events: readonly TEvent[];
    };

export interface SubMachine<TCommand extends SubCommand, TValue, TEvent> {
  /** The command `type`s this sub-machine handles (disjoint from the engine's and each other's). */
  readonly commandTypes: ReadonlySet<string>;
  execute(command: TCommand, engine: EnginePort): SubResult<TValue, TEvent>;
  /**
   * Called after every command with the engine events it produced (including those caused by
   * this sub-machine). Returns the sub-machine's own events caused by the reaction.
   */
  react(engineEvents: readonly CoreEvent[], stamp: CommandStamp, engine: EnginePort): readonly TEvent[];
  /** Everything due at or before `stamp.ts` (called for `timer` commands, and before others). */
  advance(stamp: CommandStamp, engine: EnginePort): readonly TEvent[];
  nextWakeup(): number | null;
  snapshot(): unknown;
  restore(snapshot: unknown): void;
  stateHash(): string;
}
