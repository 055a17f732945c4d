/**
 * The market loop spreads a tick over event-loop turns (pricing, the simulator, submissions):
 * whatever the turns, the venue ends where executing `driver.tick`'s commands at once leads.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CoreCommand, UnstampedCommand } from '../core/commands.ts';
import type { MachineCommand } from '../core/machine.ts';
import { Venue } from '../engine/venue.ts';
import { defaultMarketDriverConfig, MarketDriver } from '../market/driver.ts';
import { DEFAULT_SIMULATOR_CONFIG } from '../market/simulator/config.ts';
import { VirtualClock } from './clock.ts';
import { createCoreMachine } from './core-factory.ts';
import { CoreService } from './core-service.ts';
import { MarketLoop, venueSimulatorView } from './market-loop.ts';

const START = Date.UTC(2026, 10, 22, 6);
const TICKS = 4;

async function runLoop(turnBudgetMs: number) {
  const clock = new VirtualClock(START);
  const journaled: MachineCommand[] = [];
  const core = new CoreService({
    machine: createCoreMachine(),
    journal: {
      append: async (entry) => {
        // The command is journaled stamped, with the entry's own stamp.
        const { seq, ts, ...command } = entry.command;
        assert.deepEqual({ seq, ts }, { seq: entry.seq, ts: entry.ts });
        journaled.push(command as MachineCommand);
      },
    },
    clock,
    start: { seq: 0, ts: 0 },
  });
  const loop = new MarketLoop({
    driver: new MarketDriver(defaultMarketDriverConfig(START, 2)),
    core,
    clock,
    // Ticks are driven by hand below.
    tickMs: 1e12,
    simulator: true,
    onError: (error) => assert.fail(String(error)),
    turnBudgetMs,
  });
  const turns: number[] = [];
  loop.observeSlices((_ms, tick) => turns.push(tick));
  await loop.start();
  for (let i = 0; i <= TICKS; i++) {
    clock.set(START + i * 1000);
    await loop.tick();
  }
  await loop.stop();
  core.stop();
  return { core, loop, journaled, turns };
}

/** The same market, each tick's commands executed at once on a bare engine. */
function runAtOnce() {
  const venue = Venue.create();
  const view = venueSimulatorView(venue);
  const driver = new MarketDriver(defaultMarketDriverConfig(START, 2));
  const commands: UnstampedCommand[] = [];
  let seq = 1;
  const execute = (now: number, batch: readonly UnstampedCommand[]) => {
    for (const command of batch) {
      commands.push(command);
      venue.execute({ ...command, seq: seq++, ts: now } as CoreCommand);
    }
  };
  execute(START, driver.start(START));
  for (let i = 0; i <= TICKS; i++) execute(START + i * 1000, driver.tick(START + i * 1000, view));
  return { venue, commands };
}

describe('MarketLoop', () => {
  test('a tick in many turns submits what driver.tick returns, in order, and leads to the same venue', async () => {
    const atOnce = runAtOnce();
    // Budget 0: every step (a few marks, a few instruments quoted, one command) is its own turn.
    const sliced = await runLoop(0);
    assert.deepEqual(sliced.journaled, atOnce.commands);
    assert.equal(sliced.core.machine.venue.stateHash(), atOnce.venue.stateHash());
    assert.equal(sliced.loop.submitted, atOnce.commands.length);
    assert.equal(sliced.loop.refused, 0);
    // Start (0), then TICKS + 1 ticks, each in many turns.
    for (let tick = 1; tick <= TICKS + 1; tick++) {
      assert.ok(sliced.turns.filter((t) => t === tick).length > 50, `tick ${tick} ran in few turns`);
    }
    // No budget: a tick's turns end only before each maker's read of its open orders (a long
    // step); the same commands.
    const whole = await runLoop(Number.POSITIVE_INFINITY);
    assert.deepEqual(whole.journaled, atOnce.commands);
    const makers = DEFAULT_SIMULATOR_CONFIG.makers.length;
    for (let tick = 1; tick <= TICKS + 1; tick++) {
      assert.equal(whole.turns.filter((t) => t === tick).length, 1 + makers, `tick ${tick}`);
    }
  });
});

/** A loop over a real driver and core that ticks by itself every `tickMs` of the virtual clock. */
function tickingLoop(tickMs: number) {
  const clock = new VirtualClock(START);
  const core = new CoreService({
    machine: createCoreMachine(),
    journal: { append: async () => {} },
    clock,
    start: { seq: 0, ts: 0 },
  });
  const driver = new MarketDriver(defaultMarketDriverConfig(START, 2));
  const loop = new MarketLoop({
    driver,
    core,
    clock,
    tickMs,
    simulator: false,
    onError: (error) => assert.fail(String(error)),
  });
  return { clock, core, driver, loop };
}

describe('MarketLoop timing', () => {
  test('ticks come tickMs (milliseconds) apart', async () => {
    const { clock, core, loop } = tickingLoop(1_000);
    await loop.start();
    clock.advance(999);
    await loop.idle();
    assert.equal(loop.ticks, 0, 'no tick before tickMs');
    clock.advance(1);
    await loop.idle();
    assert.equal(loop.ticks, 1, 'one tick at tickMs');
    await loop.stop();
    core.stop();
  });

  test('stop cancels the next tick', async () => {
    const { clock, core, loop } = tickingLoop(1_000);
    await loop.start();
    await loop.stop();
    assert.equal(clock.pendingTimers(), 0, 'no tick left scheduled');
    clock.advance(5_000);
    await loop.idle();
    assert.equal(loop.ticks, 0, 'no tick after stop');
    core.stop();
  });

  test('a refused combo listing is asked of the driver again on the next request', async () => {
    const { core, driver, loop } = tickingLoop(1_000);
    let calls = 0;
    const combo = driver.combo.bind(driver);
    driver.combo = (...args: Parameters<MarketDriver['combo']>) => {
      calls++;
      return combo(...args);
    };
    // Nothing is listed yet: the driver refuses the combo.
    await assert.rejects(loop.listCombo('BTC-CS-1JAN27-1_2'));
    await assert.rejects(loop.listCombo('BTC-CS-1JAN27-1_2'));
    assert.equal(calls, 2, 'the refusal is not kept for later requests');
    core.stop();
  });

  test('stop waits for the tick under way to submit all its commands', async () => {
    const { clock, core, loop } = tickingLoop(1_000);
    await loop.start();
    const before = loop.submitted;
    clock.advance(1_000);
    assert.equal(loop.ticks, 1, 'the tick started');
    await loop.stop();
    assert.ok(loop.submitted > before, 'the tick in flight finished before stop resolved');
    core.stop();
  });

  test('ticks keep coming every tickMs', async () => {
    const { clock, core, loop } = tickingLoop(1_000);
    await loop.start();
    for (let i = 1; i <= 3; i++) {
      clock.advance(1_000);
      await loop.idle();
      assert.equal(loop.ticks, i, `tick ${i} at ${i * 1_000} ms`);
    }
    await loop.stop();
    core.stop();
  });

  test('a stop during a tick leaves no next tick scheduled', async () => {
    const { clock, core, loop } = tickingLoop(1_000);
    await loop.start();
    clock.advance(1_000);
    await loop.stop();
    assert.equal(clock.pendingTimers(), 0, 'the tick in flight scheduled nothing after stop');
    clock.advance(5_000);
    await loop.idle();
    assert.equal(loop.ticks, 1, 'no tick after stop');
    core.stop();
  });
});
