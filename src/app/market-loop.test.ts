/**
 * The market loop spreads a tick over event-loop turns (pricing, the simulator, submissions):
 * whatever the turns, the venue ends where executing `driver.tick`'s commands at once leads.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setImmediate as nextLoopTurn } from 'node:timers/promises';
import type { CoreCommand, UnstampedCommand } from '../core/commands.ts';
import type { MachineCommand } from '../core/machine.ts';
import { VenueError } from '../domain/errors.ts';
import { Venue } from '../engine/venue.ts';
import { defaultMarketDriverConfig, MarketDriver } from '../market/driver.ts';
import { DEFAULT_SIMULATOR_CONFIG } from '../market/simulator/config.ts';
import { VirtualClock } from './clock.ts';
import { createCoreMachine } from './core-factory.ts';
import { CoreService, type CoreServiceOptions } from './core-service.ts';
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

/**
 * A loop over a real driver and core that ticks by itself every `tickMs` of the virtual clock.
 * `journal` replaces the one that is durable at once; `over` gives the clock and core of another
 * loop (a second driver over a venue that already has the market).
 */
function tickingLoop(
  tickMs: number,
  options: {
    journal?: CoreServiceOptions['journal'];
    over?: { clock: VirtualClock; core: CoreService };
  } = {},
) {
  const clock = options.over?.clock ?? new VirtualClock(START);
  const core =
    options.over?.core ??
    new CoreService({
      machine: createCoreMachine(),
      journal: options.journal ?? { append: async () => {} },
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

/** A call spread the driver can list once started: the first expiry's two lowest call strikes. */
function callSpread(driver: MarketDriver): string {
  const calls = driver
    .instruments()
    .map((instrument) => instrument.name)
    .filter((name) => /^BTC-\w+-\d+-C$/.test(name));
  assert.ok(calls.length > 0, 'the started driver lists BTC calls');
  const expiry = calls[0]!.split('-')[1]!;
  const strikes = calls
    .filter((name) => name.split('-')[1] === expiry)
    .map((name) => Number(name.split('-')[2]))
    .sort((a, b) => a - b);
  return `BTC-CS-${expiry}-${strikes[0]}_${strikes[1]}`;
}

describe('MarketLoop combos and refusals', () => {
  test('concurrent requests for a new combo share one listing, which resolves once durable', async () => {
    // The journal holds appends while `held` is set, as a slow disk would.
    let held = false;
    const waiting: Array<() => void> = [];
    const journal = {
      append: () => (held ? new Promise<void>((resolve) => waiting.push(resolve)) : Promise.resolve()),
    };
    const { core, driver, loop } = tickingLoop(1_000, { journal });
    await loop.start();
    let calls = 0;
    const combo = driver.combo.bind(driver);
    driver.combo = (...args: Parameters<MarketDriver['combo']>) => {
      calls++;
      return combo(...args);
    };
    const name = callSpread(driver);
    held = true;
    const settled: string[] = [];
    const first = loop.listCombo(name).then(() => settled.push('first'));
    const second = loop.listCombo(name).then(() => settled.push('second'));
    await nextLoopTurn();
    assert.equal(calls, 1, 'the second request waits on the first listing instead of asking the driver');
    assert.equal(waiting.length, 1, 'one listing command is journaled');
    assert.deepEqual(settled, [], 'neither request resolves before the listing is durable');
    held = false;
    for (const release of waiting.splice(0)) release();
    await Promise.all([first, second]);
    assert.ok(core.machine.venue.instrument(name) !== null, `${name} is listed on the venue`);
    await loop.stop();
    core.stop();
  });

  test('a second driver over a venue that has the market: its relistings are counted refused, its combo listing rejects', async () => {
    const one = tickingLoop(1_000);
    await one.loop.start();
    assert.equal(one.loop.refused, 0, 'the first listing is refused nothing');
    const name = callSpread(one.driver);
    await one.loop.listCombo(name);
    // Count what the venue refuses of the second loop's commands.
    let refusals = 0;
    const submit = one.core.submit.bind(one.core);
    one.core.submit = (command) =>
      submit(command).then((result) => {
        if (!result.ok) refusals++;
        return result;
      });
    const two = tickingLoop(1_000, { over: one });
    await two.loop.start();
    assert.ok(refusals > 0, 'the venue refuses instruments it already has');
    assert.equal(two.loop.refused, refusals, 'every refused market command is counted');
    await assert.rejects(two.loop.listCombo(name), (error: unknown) => {
      assert.ok(error instanceof VenueError, `a VenueError, got ${String(error)}`);
      assert.equal(error.errorName, 'invalid_params');
      assert.match(error.message, /already listed/);
      return true;
    });
    await two.loop.stop();
    await one.loop.stop();
    one.core.stop();
  });
});
