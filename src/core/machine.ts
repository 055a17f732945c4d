/**
 * The core state machine: the engine plus its sub-machines (Block RFQ desk, portfolio
 * algorithms), executed as one deterministic unit per journaled command.
 *
 * Order of work for one command (see ./submachine.ts for the contract):
 * 1. every sub-machine `advance`s to `ts` (timers due at or before it);
 * 2. the command goes to the engine or to the one sub-machine that handles its type;
 * 3. every sub-machine `react`s to the engine events produced so far; reactions may drive the
 *    engine again, whose new events are offered once more, until no new engine events appear
 *    (bounded: a runaway reaction loop is a programming error and throws).
 *
 * Invariants:
 * - Only the outer command is journaled; inner engine commands carry the outer `seq`/`ts`.
 * - The returned `engineEvents` hold every engine event of the command in the order they
 *   happened, so projections and push channels see child orders, block trades and expiries too.
 * - `stateHash()` covers the engine and every sub-machine, in registration order, and the rules
 *   version once one was journaled (`rules_version`, ./rules-version.ts: the core's own command,
 *   which changes nothing else).
 */
import { createHash } from 'node:crypto';
import type { Venue, VenueSnapshot } from '../engine/venue.ts';
import type { CommandStamp, CoreCommand } from './commands.ts';
import type { CommandResult, CoreEvent } from './events.ts';
import { isRulesVersion, type RulesVersionCommand } from './rules-version.ts';
import type { EnginePort, SubCommand, SubMachine, SubResult } from './submachine.ts';

const ENGINE_COMMAND_TYPES: ReadonlySet<string> = new Set<CoreCommand['type']>([
  'create_account',
  'set_account_settings',
  'deposit',
  'withdraw',
  'list_instrument',
  'update_prices',
  'settle_instrument',
  'place_order',
  'edit_order',
  'cancel_order',
  'cancel_all',
  'set_cancel_on_disconnect',
  'set_account_cancel_on_disconnect',
  'cancel_cod_sessions',
  'block_trade',
  'set_mmp_config',
  'reset_mmp',
  'timer',
]);

/** Most reaction rounds for one command before we call it a loop. */
const MAX_REACTION_ROUNDS = 64;

// biome-ignore lint/suspicious/noExplicitAny: sub-machines are heterogeneous; each checks its own types.
export type AnySubMachine = SubMachine<any, unknown, unknown>;

export type MachineCommand = CoreCommand | SubCommand | RulesVersionCommand;

export interface MachineResult {
  /** The engine's result for engine commands; the sub-machine's for the others. */
  readonly result: CommandResult | SubResult<unknown, unknown>;
  /** Which part handled the command: 'engine' or the sub-machine's name. */
  readonly handledBy: string;
  /** Every engine event of this command, in order. */
  readonly engineEvents: readonly CoreEvent[];
  /** Sub-machine events by sub-machine name, in order. */
  readonly subEvents: ReadonlyMap<string, readonly unknown[]>;
}

export interface MachineSnapshot {
  readonly venue: VenueSnapshot;
  readonly subs: Readonly<Record<string, unknown>>;
  /** The rules the core last journaled; absent (0) in snapshots of builds before versions. */
  readonly rulesVersion?: number;
}

export function isEngineCommand(command: MachineCommand): command is CoreCommand {
  return ENGINE_COMMAND_TYPES.has(command.type);
}

/** A command's sub-machine events when there are none (most commands): shared, never written. */
const NO_SUB_EVENTS: ReadonlyMap<string, readonly unknown[]> = new Map();

/**
 * Appends a sub-machine's events to its list: lists exist only for sub-machines that emitted, and
 * the map itself is made at the first event (null until then).
 */
function collect(
  subEvents: Map<string, unknown[]> | null,
  name: string,
  events: readonly unknown[],
): Map<string, unknown[]> | null {
  if (events.length === 0) return subEvents;
  const map = subEvents ?? new Map<string, unknown[]>();
  const list = map.get(name);
  if (list === undefined) map.set(name, [...events]);
  else for (const event of events) list.push(event);
  return map;
}

/** An engine port that records every event the engine emits while a command runs. */
class RecordingEnginePort implements EnginePort {
  events: CoreEvent[] = [];

  constructor(private readonly venue: Venue) {}

  execute(command: CoreCommand): CommandResult {
    const result = this.venue.execute(command);
    for (const event of result.events) this.events.push(event);
    return result;
  }
}

export class CoreMachine {
  private readonly byType = new Map<string, string>();
  private readonly port: RecordingEnginePort;
  /** `subs` as a list, walked for every command without an entry array per sub-machine. */
  private readonly subList: ReadonlyArray<readonly [string, AnySubMachine]>;
  /** The rules version the commands are journaled under (the latest `rules_version`; 0: none). */
  rulesVersion = 0;

  constructor(
    readonly venue: Venue,
    private readonly subs: ReadonlyMap<string, AnySubMachine>,
  ) {
    this.port = new RecordingEnginePort(venue);
    this.subList = [...subs];
    for (const [name, sub] of subs) {
      for (const type of sub.commandTypes) {
        if (ENGINE_COMMAND_TYPES.has(type) || this.byType.has(type)) {
          throw new Error(`command type ${type} of ${name} is already handled`);
        }
        this.byType.set(type, name);
      }
    }
  }

  sub<T extends AnySubMachine>(name: string): T {
    const sub = this.subs.get(name);
    if (sub === undefined) throw new Error(`no sub-machine ${name}`);
    return sub as T;
  }

  /** True when some part of the core handles this command type. */
  handles(type: string): boolean {
    return ENGINE_COMMAND_TYPES.has(type) || this.byType.has(type) || type === 'rules_version';
  }

  execute(command: MachineCommand): MachineResult {
    const stamp: CommandStamp = { seq: command.seq, ts: command.ts };
    const port = this.port;
    port.events = [];
    let subEvents: Map<string, unknown[]> | null = null;
    for (let i = 0; i < this.subList.length; i++) {
      const entry = this.subList[i]!;
      subEvents = collect(subEvents, entry[0], entry[1].advance(stamp, port));
    }

    let result: CommandResult | SubResult<unknown, unknown>;
    let handledBy: string;
    if (isEngineCommand(command)) {
      result = port.execute(command);
      handledBy = 'engine';
    } else if (isRulesVersion(command)) {
      this.rulesVersion = command.version;
      result = { ok: true, events: [] };
      handledBy = 'core';
    } else {
      const name = this.byType.get(command.type);
      if (name === undefined) throw new Error(`no part of the core handles command type ${command.type}`);
      const subResult = this.subs.get(name)!.execute(command, port);
      subEvents = collect(subEvents, name, subResult.events);
      result = subResult;
      handledBy = name;
    }

    subEvents = this.react(stamp, subEvents);
    return { result, handledBy, engineEvents: port.events, subEvents: subEvents ?? NO_SUB_EVENTS };
  }

  /** The earliest time any part of the core wants a `timer` command, or null. */
  nextWakeup(): number | null {
    let next: number | null = this.venue.nextWakeup();
    for (const sub of this.subs.values()) {
      const at = sub.nextWakeup();
      if (at !== null && (next === null || at < next)) next = at;
    }
    return next;
  }

  snapshot(): MachineSnapshot {
    const subs: Record<string, unknown> = {};
    for (const [name, sub] of this.subs) subs[name] = sub.snapshot();
    const snapshot = { venue: this.venue.snapshot(), subs };
    return this.rulesVersion === 0 ? snapshot : { ...snapshot, rulesVersion: this.rulesVersion };
  }

  /** Restores every sub-machine from `snapshot.subs`; the venue is restored by its factory. */
  restoreSubs(snapshot: MachineSnapshot): void {
    for (const [name, sub] of this.subs) {
      if (name in snapshot.subs) sub.restore(snapshot.subs[name]);
    }
    this.rulesVersion = snapshot.rulesVersion ?? 0;
  }

  stateHash(): string {
    const hash = createHash('sha256').update(this.venue.stateHash());
    for (const [name, sub] of this.subs) hash.update(`\n${name}:${sub.stateHash()}`);
    // Absent before the first `rules_version`, so older snapshots hash as they were written.
    if (this.rulesVersion !== 0) hash.update(`\nrules:${this.rulesVersion}`);
    return hash.digest('hex');
  }

  private react(
    stamp: CommandStamp,
    subEvents: Map<string, unknown[]> | null,
  ): Map<string, unknown[]> | null {
    let offered = 0;
    for (let round = 0; offered < this.port.events.length; round++) {
      if (round >= MAX_REACTION_ROUNDS) throw new Error(`reactions did not settle within ${round} rounds`);
      const fresh = this.port.events.slice(offered);
      offered = this.port.events.length;
      for (let i = 0; i < this.subList.length; i++) {
        const entry = this.subList[i]!;
        subEvents = collect(subEvents, entry[0], entry[1].react(fresh, stamp, this.port));
      }
    }
    return subEvents;
  }
}
