/**
 * Engine benchmark: seeded, deterministic workloads replayed in-process through the full engine
 * path (validation, risk checks, matching, positions, fees, events). Prints commands/s (median of
 * RUNS runs), per-command latency p50/p99/p99.9 (separate timed run) and heap per resting order.
 *
 * Workloads (issue 2):
 * - mixed: one instrument, 45% GTC limits within ±50 ticks of mid, 5% post-only, 10% aggressive
 *   (IOC/market/FOK in equal parts), 30% cancels of resting orders, 10% edits (price or size);
 * - exchange-core: 9% GTC, 3% IOC, 6% cancel, 82% price moves (edits), ~1,000 resting orders on
 *   ~750 levels (GTC turns into a cancel while the book holds more than 1,000 orders);
 * - deep narrow / deep wide: the mixed workload over ~90k resting orders on ~110 levels
 *   (~800 per level) or ~9k levels.
 *
 * Command objects are rebuilt per command from a seeded tape; the engine keeps no reference to
 * them. Run: `npm run bench:engine` (COMMANDS=… RUNS=… to change the size). Throughput is shown
 * per wall second and per CPU second of the process (the latter is steadier on a loaded machine).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { CancelOrder, CoreCommand, EditOrder, PlaceOrder } from '../src/core/commands.ts';
import type { TimeInForce } from '../src/core/types.ts';
import { perpetualSpec, T0 } from '../src/engine/testkit.ts';
import { Venue } from '../src/engine/venue.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const COMMANDS = Number(process.env.COMMANDS ?? 1_000_000);
const RUNS = Number(process.env.RUNS ?? 5);
const MID = 200_000; // ticks (100,000 USD at tick 0.5)
const ACCOUNTS = 64;
const INSTRUMENT = 'BTC-PERPETUAL';

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Open orders known to the driver (id, account, price, amount); swap-remove keeps picks O(1). */
class Pool {
  ids: string[] = [];
  accounts: number[] = [];
  prices: number[] = [];
  amounts: number[] = [];
  get size(): number {
    return this.ids.length;
  }
  add(id: string, accountId: number, price: number, amount: number): void {
    this.ids.push(id);
    this.accounts.push(accountId);
    this.prices.push(price);
    this.amounts.push(amount);
  }
  remove(i: number): void {
    const last = this.ids.length - 1;
    this.ids[i] = this.ids[last]!;
    this.accounts[i] = this.accounts[last]!;
    this.prices[i] = this.prices[last]!;
    this.amounts[i] = this.amounts[last]!;
    this.ids.pop();
    this.accounts.pop();
    this.prices.pop();
    this.amounts.pop();
  }
}

interface World {
  venue: Venue;
  pool: Pool;
  seq: number;
  ts: number;
}

function setup(): World {
  const venue = Venue.create({ maxOpenOrdersPerAccount: 10_000_000, recentClosedOrders: 1000 });
  let seq = 0;
  const run = (c: object) => venue.execute({ seq: ++seq, ts: T0, ...c } as CoreCommand);
  run({
    type: 'list_instrument',
    spec: perpetualSpec({ takerCommission: '0.0005', makerCommission: '-0.0001' }),
  });
  for (let a = 1; a <= ACCOUNTS; a++) {
    run({ type: 'create_account', accountId: a });
    run({ type: 'deposit', accountId: a, currency: 'BTC', amount: 1e15 });
  }
  return { venue, pool: new Pool(), seq, ts: T0 };
}

const place: { -readonly [K in keyof PlaceOrder]: PlaceOrder[K] } = {
  type: 'place_order',
  seq: 0,
  ts: 0,
  accountId: 1,
  instrumentName: INSTRUMENT,
  side: 'buy',
  orderType: 'limit',
  amount: 1,
  price: MID,
  timeInForce: 'good_til_cancelled',
  postOnly: false,
  rejectPostOnly: false,
  reduceOnly: false,
  label: '',
  validUntil: null,
  source: { api: true },
};
const cancel: { -readonly [K in keyof CancelOrder]: CancelOrder[K] } = {
  type: 'cancel_order',
  seq: 0,
  ts: 0,
  accountId: 1,
  orderId: '',
};
const edit: { -readonly [K in keyof EditOrder]: EditOrder[K] } = {
  type: 'edit_order',
  seq: 0,
  ts: 0,
  accountId: 1,
  orderId: '',
};

/** Places a passive order away from the touch (prefill). */
function prefill(world: World, orders: number, levels: number, seed: number): void {
  const random = rng(seed);
  for (let i = 0; i < orders; i++) {
    const buy = i % 2 === 0;
    const offset = 51 + Math.floor(random() * (levels / 2));
    placeCommand(world, {
      accountId: 1 + Math.floor(random() * ACCOUNTS),
      side: buy ? 'buy' : 'sell',
      price: buy ? MID - offset : MID + offset,
      amount: 1 + Math.floor(random() * 10),
      timeInForce: 'good_til_cancelled',
      orderType: 'limit',
      postOnly: false,
    });
  }
}

function placeCommand(
  world: World,
  o: {
    accountId: number;
    side: 'buy' | 'sell';
    price: number | null;
    amount: number;
    timeInForce: TimeInForce;
    orderType: 'limit' | 'market';
    postOnly: boolean;
  },
): void {
  place.seq = ++world.seq;
  place.ts = world.ts;
  place.accountId = o.accountId;
  place.side = o.side;
  place.price = o.price;
  place.amount = o.amount;
  place.timeInForce = o.timeInForce;
  place.orderType = o.orderType;
  place.postOnly = o.postOnly;
  const result = world.venue.execute(place);
  if (result.ok && result.order!.orderState === 'open') {
    world.pool.add(result.order!.orderId, o.accountId, result.order!.price!, o.amount);
  }
}

type Step = (world: World, random: () => number) => void;

function cancelStep(world: World, random: () => number): void {
  const pool = world.pool;
  if (pool.size === 0) return;
  const i = Math.floor(random() * pool.size);
  cancel.seq = ++world.seq;
  cancel.ts = world.ts;
  cancel.orderId = pool.ids[i]!;
  cancel.accountId = pool.accounts[i]!;
  pool.remove(i);
  world.venue.execute(cancel);
}

function editStep(world: World, random: () => number, priceMove: boolean): void {
  const pool = world.pool;
  if (pool.size === 0) return;
  const i = Math.floor(random() * pool.size);
  edit.seq = ++world.seq;
  edit.ts = world.ts;
  edit.orderId = pool.ids[i]!;
  edit.accountId = pool.accounts[i]!;
  if (priceMove || random() < 0.5 || pool.amounts[i]! < 2) {
    const price = pool.prices[i]! + (random() < 0.5 ? -1 : 1);
    pool.prices[i] = price;
    edit.price = price;
    edit.amount = undefined;
  } else {
    const amount = pool.amounts[i]! - 1;
    pool.amounts[i] = amount;
    edit.price = undefined;
    edit.amount = amount;
  }
  const result = world.venue.execute(edit);
  if (!result.ok || result.order!.orderState !== 'open') pool.remove(i);
}

const mixedStep: Step = (world, random) => {
  const r = random();
  const accountId = 1 + Math.floor(random() * ACCOUNTS);
  const side = random() < 0.5 ? 'buy' : 'sell';
  const amount = 1 + Math.floor(random() * 10);
  if (r < 0.45) {
    const price = MID + Math.floor(random() * 101) - 50;
    placeCommand(world, {
      accountId,
      side,
      price,
      amount,
      timeInForce: 'good_til_cancelled',
      orderType: 'limit',
      postOnly: false,
    });
  } else if (r < 0.5) {
    const price = MID + Math.floor(random() * 101) - 50;
    placeCommand(world, {
      accountId,
      side,
      price,
      amount,
      timeInForce: 'good_til_cancelled',
      orderType: 'limit',
      postOnly: true,
    });
  } else if (r < 0.6) {
    const kind = Math.floor(random() * 3);
    const price = side === 'buy' ? MID + 60 : MID - 60;
    if (kind === 0)
      placeCommand(world, {
        accountId,
        side,
        price,
        amount,
        timeInForce: 'immediate_or_cancel',
        orderType: 'limit',
        postOnly: false,
      });
    else if (kind === 1)
      placeCommand(world, {
        accountId,
        side,
        price: null,
        amount,
        timeInForce: 'immediate_or_cancel',
        orderType: 'market',
        postOnly: false,
      });
    else
      placeCommand(world, {
        accountId,
        side,
        price,
        amount,
        timeInForce: 'fill_or_kill',
        orderType: 'limit',
        postOnly: false,
      });
  } else if (r < 0.9) {
    cancelStep(world, random);
  } else {
    editStep(world, random, false);
  }
};

const exchangeCoreStep: Step = (world, random) => {
  const r = random();
  const accountId = 1 + Math.floor(random() * ACCOUNTS);
  const side = random() < 0.5 ? 'buy' : 'sell';
  const amount = 1 + Math.floor(random() * 10);
  if (r < 0.09) {
    if (world.pool.size > 1000) return cancelStep(world, random);
    const offset = 1 + Math.floor(random() * 375);
    const price = side === 'buy' ? MID - offset : MID + offset;
    placeCommand(world, {
      accountId,
      side,
      price,
      amount,
      timeInForce: 'good_til_cancelled',
      orderType: 'limit',
      postOnly: false,
    });
  } else if (r < 0.12) {
    const price = side === 'buy' ? MID + 400 : MID - 400;
    placeCommand(world, {
      accountId,
      side,
      price,
      amount,
      timeInForce: 'immediate_or_cancel',
      orderType: 'limit',
      postOnly: false,
    });
  } else if (r < 0.18) {
    cancelStep(world, random);
  } else {
    editStep(world, random, true);
  }
};

interface Workload {
  name: string;
  step: Step;
  prefillOrders: number;
  prefillLevels: number;
}

const WORKLOADS: Workload[] = [
  { name: 'mixed (1 instrument)', step: mixedStep, prefillOrders: 1000, prefillLevels: 200 },
  { name: 'exchange-core mix', step: exchangeCoreStep, prefillOrders: 1000, prefillLevels: 750 },
  {
    name: 'deep narrow (~90k orders, ~800/level)',
    step: mixedStep,
    prefillOrders: 90_000,
    prefillLevels: 112,
  },
  {
    name: 'deep wide (~90k orders, ~9k levels)',
    step: mixedStep,
    prefillOrders: 90_000,
    prefillLevels: 9000,
  },
];

function throughput(workload: Workload, seed: number): { wall: number; cpu: number } {
  const world = setup();
  prefill(world, workload.prefillOrders, workload.prefillLevels, seed);
  const random = rng(seed + 1);
  const firstSeq = world.seq;
  const cpuStart = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (let i = 0; i < COMMANDS; i++) {
    world.ts += (i & 1023) === 0 ? 1 : 0;
    workload.step(world, random);
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const cpu = process.cpuUsage(cpuStart);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const commands = world.seq - firstSeq; // commands actually sent to the engine
  return { wall: commands / seconds, cpu: commands / cpuSeconds };
}

function latencies(workload: Workload, seed: number): { p50: number; p99: number; p999: number } {
  const world = setup();
  prefill(world, workload.prefillOrders, workload.prefillLevels, seed);
  const random = rng(seed + 1);
  const samples = new Float64Array(COMMANDS);
  const venue = world.venue;
  const original = venue.execute.bind(venue);
  let last = 0;
  venue.execute = (command) => {
    const t0 = process.hrtime.bigint();
    const result = original(command);
    last = Number(process.hrtime.bigint() - t0);
    return result;
  };
  let n = 0;
  for (let i = 0; i < COMMANDS; i++) {
    const before = world.seq;
    workload.step(world, random);
    if (world.seq !== before) samples[n++] = last;
  }
  const sorted = samples.subarray(0, n).sort();
  const at = (q: number) => sorted[Math.min(n - 1, Math.floor(q * n))]! / 1000;
  return { p50: at(0.5), p99: at(0.99), p999: at(0.999) };
}

function heapPerRestingOrder(): number {
  const world = setup();
  gc();
  const before = process.memoryUsage().heapUsed;
  const n = 100_000;
  prefill(world, n, 2000, 7);
  const resting = world.pool.size;
  world.pool = new Pool();
  gc();
  const after = process.memoryUsage().heapUsed;
  return (after - before) / resting;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function measure(workload: Workload): string {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const rate = throughput(workload, 1000 + run);
    wall.push(rate.wall);
    cpu.push(rate.cpu);
  }
  const lat = latencies(workload, 99);
  const m = (values: number[]) => `${(median(values) / 1e6).toFixed(2)}M`;
  return `${workload.name.padEnd(40)} ${m(wall)} cmd/s wall (${m(cpu)} per CPU-second)   p50 ${lat.p50.toFixed(2)} µs  p99 ${lat.p99.toFixed(2)} µs  p99.9 ${lat.p999.toFixed(2)} µs`;
}

// Each workload runs in its own process so one workload's heap and JIT state cannot skew another.
const only = process.env.ENGINE_BENCH_WORKLOAD;
if (only === 'heap') {
  console.log(`heap per resting order: ${heapPerRestingOrder().toFixed(0)} bytes`);
} else if (only !== undefined) {
  console.log(measure(WORKLOADS[Number(only)]!));
} else {
  const { spawnSync } = await import('node:child_process');
  const { cpus, loadavg } = await import('node:os');
  console.log(
    `engine benchmark: ${COMMANDS.toLocaleString('en')} driver steps per run, median of ${RUNS} runs, node ${process.version}, ${cpus().length} cpus, load ${loadavg()[0]!.toFixed(1)}`,
  );
  for (const id of [...WORKLOADS.keys(), 'heap']) {
    // A larger young generation (documented runtime setting for the engine process) halves GC work.
    spawnSync(process.execPath, ['--max-semi-space-size=64', ...process.execArgv, process.argv[1]!], {
      stdio: 'inherit',
      env: { ...process.env, ENGINE_BENCH_WORKLOAD: String(id) },
    });
  }
}
