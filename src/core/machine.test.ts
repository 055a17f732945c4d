import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { orderCommand, perpetualSpec, T0 } from '../engine/testkit.ts';
import { Venue } from '../engine/venue.ts';
import type { CommandStamp, CoreCommand } from './commands.ts';
import type { CoreEvent } from './events.ts';
import { CoreMachine, type MachineCommand } from './machine.ts';
import type { EnginePort, SubCommand, SubMachine, SubResult } from './submachine.ts';

interface FollowCommand extends SubCommand {
  readonly type: 'follow_start';
  readonly accountId: number;
  readonly price: number;
  /** When to cancel what is left. */
  readonly until: number;
}

/**
 * A toy algorithm: places a buy, and after each of its fills places one sell of the filled size
 * one tick higher (a reaction that drives the engine again). At `until` it cancels its orders.
 */
class FollowMachine implements SubMachine<FollowCommand, string, string> {
  readonly commandTypes = new Set(['follow_start']);
  state = { accountId: 0, price: 0, until: null as number | null, followUps: 0 };

  execute(command: FollowCommand, engine: EnginePort): SubResult<string, string> {
    this.state = { accountId: command.accountId, price: command.price, until: command.until, followUps: 0 };
    const result = engine.execute(this.place(command, 'buy', 10, command.price));
    if (!result.ok)
      return { ok: false, error: { ...result.error, data: { ...result.error.data } }, events: [] };
    return { ok: true, value: result.order!.orderId, events: ['started'] };
  }

  react(events: readonly CoreEvent[], stamp: CommandStamp, engine: EnginePort): readonly string[] {
    const out: string[] = [];
    for (const event of events) {
      if (
        event.type !== 'trade' ||
        (event.trade.taker.owner !== 'follow' && event.trade.maker.owner !== 'follow')
      )
        continue;
      const mine = event.trade.maker.owner === 'follow' ? event.trade.maker : event.trade.taker;
      if (mine.side !== 'buy') continue;
      this.state.followUps++;
      engine.execute(this.place(stamp, 'sell', event.trade.amount, this.state.price + 2));
      out.push(`follow-up ${event.trade.amount}`);
    }
    return out;
  }

  advance(stamp: CommandStamp, engine: EnginePort): readonly string[] {
    if (this.state.until === null || stamp.ts < this.state.until) return [];
    this.state.until = null;
    engine.execute({
      type: 'cancel_all',
      accountId: this.state.accountId,
      owner: 'follow',
      seq: stamp.seq,
      ts: stamp.ts,
    });
    return ['stopped'];
  }

  nextWakeup(): number | null {
    return this.state.until;
  }
  snapshot(): unknown {
    return structuredClone(this.state);
  }
  restore(snapshot: unknown): void {
    this.state = structuredClone(snapshot) as FollowMachine['state'];
  }
  stateHash(): string {
    return JSON.stringify(this.state);
  }

  private place(stamp: CommandStamp, side: 'buy' | 'sell', amount: number, price: number): CoreCommand {
    return {
      ...orderCommand(this.state.accountId, side, amount, price, { source: { api: false }, owner: 'follow' }),
      seq: stamp.seq,
      ts: stamp.ts,
    };
  }
}

function setup() {
  const machine = new CoreMachine(Venue.create(), new Map([['follow', new FollowMachine()]]));
  let seq = 0;
  const run = (command: Record<string, unknown>, ts = T0) =>
    machine.execute({ ...command, seq: ++seq, ts } as unknown as MachineCommand);
  run({ type: 'list_instrument', spec: perpetualSpec() });
  for (const accountId of [1, 2]) {
    run({ type: 'create_account', accountId });
    run({ type: 'deposit', accountId, currency: 'BTC', amount: 100_000_000_000 });
  }
  return { machine, run };
}

const sellOrder = (price: number, amount: number) => orderCommand(2, 'sell', amount, price);

describe('CoreMachine', () => {
  test('routes sub-machine commands and lets sub-machines react to fills through the engine', () => {
    const { machine, run } = setup();
    const started = run({ type: 'follow_start', accountId: 1, price: 200_000, until: T0 + 60_000 });
    assert.equal(started.handledBy, 'follow');
    assert.deepEqual(started.subEvents.get('follow'), ['started']);

    const fill = run(sellOrder(200_000, 4));
    assert.equal(fill.handledBy, 'engine');
    assert.deepEqual(fill.subEvents.get('follow'), ['follow-up 4']);
    const followUps = machine.venue.openOrders({ accountId: 1 }).filter((order) => order.side === 'sell');
    assert.equal(followUps.length, 1);
    assert.equal(followUps[0]!.price, 200_002);
    assert.ok(
      fill.engineEvents.some(
        (event) => event.type === 'order' && event.order.orderId === followUps[0]!.orderId,
      ),
    );
  });

  test('advances sub-machines to the command time and reports the next wakeup', () => {
    const { machine, run } = setup();
    run({ type: 'follow_start', accountId: 1, price: 200_000, until: T0 + 60_000 });
    assert.equal(machine.nextWakeup(), T0 + 60_000);
    const early = run({ type: 'timer' }, T0 + 59_999);
    assert.equal(early.subEvents.get('follow'), undefined);
    const due = run({ type: 'timer' }, T0 + 60_000);
    assert.deepEqual(due.subEvents.get('follow'), ['stopped']);
    assert.equal(machine.venue.openOrders({ accountId: 1 }).length, 0);
    assert.equal(machine.nextWakeup(), null);
  });

  test('the state hash covers sub-machines, and snapshot/restore reproduces it', () => {
    const { machine, run } = setup();
    run({ type: 'follow_start', accountId: 1, price: 200_000, until: T0 + 60_000 });
    run(sellOrder(200_000, 3));
    const snapshot = structuredClone(machine.snapshot());
    const restored = new CoreMachine(
      Venue.restore(snapshot.venue),
      new Map([['follow', new FollowMachine()]]),
    );
    restored.restoreSubs(snapshot);
    assert.equal(restored.stateHash(), machine.stateHash());
    const before = machine.stateHash();
    (machine.sub<FollowMachine>('follow').state as { followUps: number }).followUps++;
    assert.notEqual(machine.stateHash(), before);
  });

  test('nextWakeup is the earliest wakeup of all parts', () => {
    const later = new FollowMachine();
    const earlier = new FollowMachine();
    (earlier as { commandTypes: Set<string> }).commandTypes = new Set(['follow_other']);
    const machine = new CoreMachine(
      Venue.create(),
      new Map<string, FollowMachine>([
        ['later', later],
        ['earlier', earlier],
      ]),
    );
    later.state.until = T0 + 60_000;
    earlier.state.until = T0 + 30_000;
    assert.equal(machine.nextWakeup(), T0 + 30_000);
  });

  test('refuses two parts claiming one command type', () => {
    const clash = new FollowMachine();
    (clash as { commandTypes: Set<string> }).commandTypes = new Set(['place_order']);
    assert.throws(() => new CoreMachine(Venue.create(), new Map([['clash', clash]])), /already handled/);
  });
});
