/**
 * Market benchmark: pricing throughput and the liquidity simulator's cost at default density
 * over the full default catalogue. Prints figures; asserts nothing.
 *
 *   npm run bench:market
 *
 * The simulator runs 1 step per simulated second against a minimal in-memory venue
 * (test/market/fake-venue.ts) with a simulated index; "CPU" is the time spent in
 * priceMarket + simulator.step (not the venue applying the commands) divided by the simulated
 * time: the share of one core the simulator needs in real time.
 */
import { cpuUsage, hrtime } from 'node:process';
import { venueSimulatorView } from '../src/app/market-loop.ts';
import type { CoreCommand, UnstampedCommand } from '../src/core/commands.ts';
import { Instrument } from '../src/domain/instrument.ts';
import { Venue } from '../src/engine/venue.ts';
import { black76, black76Price } from '../src/market/black76.ts';
import { buildCatalogue } from '../src/market/catalogue.ts';
import { defaultMarketDriverConfig, MarketDriver } from '../src/market/driver.ts';
import { impliedVolatility } from '../src/market/implied-vol.ts';
import { defaultSimulatedIndex } from '../src/market/index-source.ts';
import { defaultMarketModel, priceMarket } from '../src/market/market-state.ts';
import { SeededRandom } from '../src/market/random.ts';
import { DEFAULT_SIMULATOR_CONFIG } from '../src/market/simulator/config.ts';
import { LiquiditySimulator } from '../src/market/simulator/simulator.ts';
import { FakeVenue } from '../test/market/fake-venue.ts';

function seconds(start: bigint): number {
  return Number(hrtime.bigint() - start) / 1e9;
}

function benchPricing(): void {
  const random = SeededRandom.fromSeed(3);
  const n = 1_000_000;
  const inputs = Array.from({ length: 1000 }, () => ({
    optionType: random.next() < 0.5 ? ('call' as const) : ('put' as const),
    forward: 65_000,
    strike: 65_000 * Math.exp(random.normal() * 0.3),
    timeToExpiry: 0.001 + random.next(),
    volatility: 0.3 + random.next(),
  }));
  let sink = 0;
  let start = hrtime.bigint();
  for (let i = 0; i < n; i++) sink += black76Price(inputs[i % 1000]!);
  const priced = n / seconds(start);
  start = hrtime.bigint();
  for (let i = 0; i < n; i++) sink += black76(inputs[i % 1000]!).delta;
  const pricedWithGreeks = n / seconds(start);
  const prices = inputs.map((input) => black76Price(input));
  const m = 200_000;
  let iterations = 0;
  start = hrtime.bigint();
  for (let i = 0; i < m; i++) {
    const input = inputs[i % 1000]!;
    const result = impliedVolatility({ ...input, price: prices[i % 1000]! });
    if (result.ok) iterations += result.iterations;
  }
  const solves = m / seconds(start);
  console.log(
    `options priced/s:  ${Math.round(priced).toLocaleString('en')} (price only), ${Math.round(pricedWithGreeks).toLocaleString('en')} (with delta, gamma, vega, theta)`,
  );
  console.log(
    `IV solves/s:       ${Math.round(solves).toLocaleString('en')}  (mean ${(iterations / m).toFixed(1)} iterations)`,
  );
  if (sink === 42) console.log('');
}

function benchSimulator(): void {
  const start = Date.UTC(2026, 10, 22, 6);
  const indices = ['BTC', 'ETH'].map((currency, i) => defaultSimulatedIndex(currency, start, 100 + i));
  const levels = (now: number) =>
    Object.fromEntries(indices.map((index) => [index.currency, index.priceAt(now)]));
  const specs = buildCatalogue(start, levels(start));
  const instruments = specs.map((spec, i) => new Instrument(i + 1, spec));
  const model = defaultMarketModel();
  const venue = new FakeVenue(instruments);
  const simulator = new LiquiditySimulator(DEFAULT_SIMULATOR_CONFIG);
  venue.apply(simulator.setupCommands());
  const steps = 600;
  let commands = 0;
  let first = 0;
  let busy = 0n;
  const counts: Record<string, number> = {};
  const cpuStart = cpuUsage();
  for (let step = 0; step <= steps; step++) {
    const now = start + step * 1000;
    const t0 = hrtime.bigint();
    const market = priceMarket(now, levels(now), specs, model);
    const batch = simulator.step(now, market, venue);
    busy += hrtime.bigint() - t0;
    if (step === 0) first = batch.length;
    else {
      commands += batch.length;
      for (const command of batch) counts[command.type] = (counts[command.type] ?? 0) + 1;
    }
    venue.apply(batch);
  }
  const cpu = cpuUsage(cpuStart);
  const busySeconds = Number(busy) / 1e9;
  console.log(`catalogue:         ${instruments.length} instruments, ${venue.orders.size} resting quotes`);
  console.log(`first step:        ${first} commands (initial two-sided books)`);
  console.log(
    `steady state:      ${(commands / steps).toFixed(1)} commands/s over ${steps} simulated s (${Object.entries(
      counts,
    )
      .map(([type, count]) => `${type} ${(count / steps).toFixed(1)}/s`)
      .join(', ')})`,
  );
  console.log(`trades (fake venue): ${venue.trades}`);
  console.log(
    `simulator CPU:     ${((busySeconds / steps) * 1000).toFixed(2)} ms per 1 s step = ${((busySeconds / steps) * 100).toFixed(1)}% of one core (limit 25%)`,
  );
  console.log(
    `process CPU (incl. fake venue): ${((cpu.user + cpu.system) / 1e6).toFixed(2)} s for ${steps} simulated s`,
  );
}

/** The whole market loop (driver tick + the real engine executing its commands). */
function benchOnEngine(): void {
  const start = Date.UTC(2026, 10, 22, 6);
  const venue = Venue.create();
  const view = venueSimulatorView(venue);
  const driver = new MarketDriver(defaultMarketDriverConfig(start, 1));
  let seq = 1;
  let refused = 0;
  const execute = (now: number, commands: readonly UnstampedCommand[]): void => {
    for (const command of commands) {
      if (!venue.execute({ ...command, seq: seq++, ts: now } as CoreCommand).ok) refused++;
    }
  };
  execute(start, driver.start(start));
  execute(start, driver.tick(start, view));
  const steps = 300;
  let driverNs = 0n;
  let engineNs = 0n;
  let commands = 0;
  for (let step = 1; step <= steps; step++) {
    const now = start + step * 1000;
    const t0 = hrtime.bigint();
    const batch = driver.tick(now, view);
    const t1 = hrtime.bigint();
    execute(now, batch);
    engineNs += hrtime.bigint() - t1;
    driverNs += t1 - t0;
    commands += batch.length;
  }
  const perStep = (ns: bigint) => Number(ns) / 1e6 / steps;
  console.log('--- on the real engine (driver tick + Venue.execute), 1 tick per simulated second ---');
  console.log(`commands:          ${(commands / steps).toFixed(1)}/s, refused ${refused}`);
  console.log(
    `driver (market + simulator): ${perStep(driverNs).toFixed(2)} ms per tick = ${(perStep(driverNs) / 10).toFixed(1)}% of one core`,
  );
  console.log(`engine executing them:       ${perStep(engineNs).toFixed(2)} ms per tick`);
}

benchPricing();
benchSimulator();
benchOnEngine();
