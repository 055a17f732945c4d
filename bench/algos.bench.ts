/**
 * Algorithm layer benchmark: 1,000 concurrent TWAP portfolios (frequency 1 s, DYNAMIC MID repriced
 * every 100 ms) and 100 four-leg BALANCE portfolios (3 option legs + a perpetual hedge; half with
 * a priority leg) on the real core machine (engine + algorithm layer), against a seeded liquidity
 * provider that re-quotes every 200 ms around a random-walking mid. Virtual time, exact wakeups.
 *
 * Figures:
 * - slice-timing error: for each TWAP slice, (stamp of the command that started it − its
 *   scheduled time) + wall time from that command's start to the slice's first child order. The
 *   timer's own OS jitter (setTimeout) is not included: the core service adds it in production.
 * - leg imbalance: BALANCE main legs sampled every 500 ms, (max − min filled fraction) × parts,
 *   i.e. in tranches (goal: ≤ 1).
 * - CPU of the algorithm layer: wall time inside the portfolio machine's execute/advance/react,
 *   minus the engine calls it made, over the simulated (virtual) duration = share of one core
 *   needed to run this load in real time (goal < 30 %).
 *
 * Run: npm run bench:algos   (env TWAPS, BALANCES, SECONDS to change the load)
 */
import { PortfolioMachine } from '../src/algo/machine.ts';
import type { LegPricing, LegSpec, PortfolioEvent, PortfolioSpec } from '../src/algo/types.ts';
import { venueMarketView } from '../src/algo/venue-market-view.ts';
import type { CoreCommand, UnstampedCommand } from '../src/core/commands.ts';
import { CoreMachine, type MachineCommand } from '../src/core/machine.ts';
import { optionSpec, perpetualSpec, T0 } from '../src/engine/testkit.ts';
import { Venue } from '../src/engine/venue.ts';
import { SeededRandom } from '../src/market/random.ts';

const TWAPS = Number(process.env.TWAPS ?? 1000);
const BALANCES = Number(process.env.BALANCES ?? 100);
const SECONDS = Number(process.env.SECONDS ?? 70);
const MAKER = 1;
const TRADER_BASE = 100;
const PERP = 'BTC-PERPETUAL';
const OPTIONS = ['BTC-27DEC26-70000-C', 'BTC-27DEC26-70000-P', 'BTC-27DEC26-80000-C'];
const INSTRUMENTS = [PERP, ...OPTIONS];

// ---- the core, instrumented -------------------------------------------------------------------

const venue = Venue.create({ maxOpenOrdersPerAccount: 5000 });
const algos = new PortfolioMachine(venueMarketView(venue));
const core = new CoreMachine(venue, new Map([['portfolios', algos]]));

let insideAlgo = false;
let algoWall = 0;
let engineInsideAlgo = 0;
let commandStart = 0;
let currentSeq = 0;
/** First child placement per (portfolio, seq): wall ms after the command started. */
const placementOffset = new Map<string, number>();

const rawExecute = venue.execute.bind(venue);
venue.execute = (command: CoreCommand) => {
  if (!insideAlgo) return rawExecute(command);
  const t = performance.now();
  if (command.type === 'place_order' && command.owner) {
    const key = `${command.owner}|${command.seq}`;
    if (!placementOffset.has(key)) placementOffset.set(key, t - commandStart);
  }
  const result = rawExecute(command);
  engineInsideAlgo += performance.now() - t;
  return result;
};
for (const method of ['execute', 'advance', 'react'] as const) {
  const original = (algos[method] as (...args: unknown[]) => unknown).bind(algos);
  (algos as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
    insideAlgo = true;
    const t = performance.now();
    try {
      return original(...args);
    } finally {
      algoWall += performance.now() - t;
      insideAlgo = false;
    }
  };
}

let seq = 0;
let now = T0;
const news: { event: PortfolioEvent; seq: number }[] = [];
function run(command: UnstampedCommand | { readonly type: string; readonly [key: string]: unknown }) {
  currentSeq = ++seq;
  commandStart = performance.now();
  const result = core.execute({ ...command, seq: currentSeq, ts: now } as MachineCommand);
  const own = result.subEvents.get('portfolios');
  if (own) for (const event of own) news.push({ event: event as PortfolioEvent, seq: currentSeq });
  return result;
}

// ---- market ------------------------------------------------------------------------------------

run({ type: 'list_instrument', spec: perpetualSpec() });
run({ type: 'list_instrument', spec: optionSpec() });
run({ type: 'list_instrument', spec: optionSpec({ name: OPTIONS[1]!, optionType: 'put' }) });
run({ type: 'list_instrument', spec: optionSpec({ name: OPTIONS[2]!, strike: '80000' }) });
const traders = Array.from({ length: 20 }, (_, i) => TRADER_BASE + i);
for (const accountId of [MAKER, ...traders]) {
  run({ type: 'create_account', accountId, maxOpenOrders: 5000 });
  run({ type: 'deposit', accountId, currency: 'BTC', amount: 1_000_000_000_000_000 });
}
const random = SeededRandom.fromSeed(42);
const mids = new Map<string, number>([
  [PERP, 120_000],
  [OPTIONS[0]!, 400],
  [OPTIONS[1]!, 1000],
  [OPTIONS[2]!, 200],
]);
function publishPrices(): void {
  run({
    type: 'update_prices',
    indexPrices: [{ currency: 'BTC', price: mids.get(PERP)! / 2 }],
    markPrices: INSTRUMENTS.map((instrumentName) => ({
      instrumentName,
      markPrice: mids.get(instrumentName)!,
    })),
  });
}
function requote(): void {
  run({ type: 'cancel_all', accountId: MAKER });
  for (const name of INSTRUMENTS) {
    const option = name !== PERP;
    const step = option ? 5 : 1;
    const mid = Math.max(option ? 50 : 1000, mids.get(name)! + (random.next() < 0.5 ? -step : step));
    mids.set(name, mid);
    for (let level = 1; level <= 3; level++) {
      for (const side of ['buy', 'sell'] as const) {
        run({
          type: 'place_order',
          accountId: MAKER,
          instrumentName: name,
          side,
          orderType: 'limit',
          amount: option ? 200 : 5000,
          price: side === 'buy' ? mid - level * step : mid + level * step,
          timeInForce: 'good_til_cancelled',
          postOnly: false,
          rejectPostOnly: false,
          reduceOnly: false,
          label: 'lp',
          validUntil: null,
          source: { api: true },
        });
      }
    }
  }
}

// ---- portfolios --------------------------------------------------------------------------------

function leg(
  instrumentName: string,
  side: 'buy' | 'sell',
  amount: number,
  pricing: LegPricing,
  extra: Partial<LegSpec> = {},
): LegSpec {
  return {
    instrumentName,
    instrumentType: instrumentName === PERP ? 'PERPETUAL' : 'OPTION',
    side,
    amount,
    pricing,
    timeInForce: null,
    postOnly: false,
    reduceOnly: false,
    hidden: false,
    tradeMode: null,
    positionSide: null,
    hedge: false,
    priority: false,
    forCcy: 'BTC',
    priceSnapshot: [],
    ...extra,
  };
}
const twapSpec = (i: number): PortfolioSpec => {
  const side = i % 2 === 0 ? 'buy' : 'sell';
  return {
    accountId: traders[i % traders.length]!,
    portfolioType: 'TWAP',
    strategy: null,
    customizedNote: null,
    legs: [
      leg(PERP, side, 600, {
        priceType: 'DYNAMIC',
        price: side === 'buy' ? 90_000 : 30_000,
        priceIn: 'USD',
        dynamicStrategy: 'MID',
        dynamicOffset: side === 'buy' ? 1 : -1,
        dynamicMs: 100,
      }),
    ],
    balance: null,
    twap: { startTimestamp: null, durationMs: 60_000, frequencyMs: 1_000 },
    iceberg: null,
    mirrorAccountIds: [],
  };
};
const balanceSpec = (i: number): PortfolioSpec => {
  const dynamic = (side: 'buy' | 'sell'): LegPricing => ({
    priceType: 'DYNAMIC',
    price: side === 'buy' ? 0.5 : 0.0001,
    priceIn: 'BTC',
    dynamicStrategy: 'MID',
    dynamicOffset: 0,
    dynamicMs: 500,
  });
  return {
    accountId: traders[i % traders.length]!,
    portfolioType: 'BALANCE',
    strategy: null,
    customizedNote: null,
    legs: [
      leg(OPTIONS[0]!, 'buy', 50, dynamic('buy'), { priority: i % 2 === 0 }),
      leg(OPTIONS[1]!, 'buy', 30, dynamic('buy')),
      leg(OPTIONS[2]!, 'sell', 50, dynamic('sell')),
      leg(
        PERP,
        'sell',
        300,
        { ...dynamic('sell'), priceType: 'MARKET', price: null, priceIn: null },
        { hedge: true },
      ),
    ],
    balance: { parts: 5, eachLimitMs: 10_000, totalLimitMs: 60_000, totalEndAction: 'FILL_BY_MARKET' },
    twap: null,
    iceberg: null,
    mirrorAccountIds: [],
  };
};

// ---- the clock ---------------------------------------------------------------------------------

publishPrices();
requote();
const end = T0 + SECONDS * 1000;
let nextRequote = T0 + 200;
let nextPrices = T0 + 1000;
let nextSample = T0 + 500;
let submitted = 0;
const submitAt = (k: number) => T0 + Math.floor((k * 1000) / (TWAPS + BALANCES));
const imbalances: number[] = [];
const wallStart = performance.now();
let commands = 0;

function sampleImbalance(): void {
  for (const id of balanceIds) {
    const p = algos.portfolio(id)!;
    if (p.status !== 'WORKING') continue;
    const fractions = p.spec.legs.flatMap((l, i) => (l.hedge ? [] : [p.legs[i]!.filled / l.amount]));
    imbalances.push((Math.max(...fractions) - Math.min(...fractions)) * p.spec.balance!.parts);
  }
}
const balanceIds: number[] = [];
const twapIds: number[] = [];

while (now < end) {
  const wake = core.nextWakeup() ?? Number.POSITIVE_INFINITY;
  const submitDue = submitted < TWAPS + BALANCES ? submitAt(submitted) : Number.POSITIVE_INFINITY;
  const next = Math.min(wake, nextRequote, nextPrices, nextSample, submitDue, end);
  now = Math.max(now, next);
  commands++;
  if (submitDue <= now) {
    const k = submitted++;
    const spec =
      k % 11 === 10 && balanceIds.length < BALANCES
        ? balanceSpec(k)
        : twapIds.length < TWAPS
          ? twapSpec(k)
          : balanceSpec(k);
    const result = run({ type: 'submit_portfolio', portfolio: spec });
    const value = (result.result as { ok: boolean; value?: { portfolioId: number } }).value;
    if (value) (spec.portfolioType === 'TWAP' ? twapIds : balanceIds).push(value.portfolioId);
  } else if (nextRequote <= now) {
    requote();
    nextRequote += 200;
  } else if (nextPrices <= now) {
    publishPrices();
    nextPrices += 1000;
  } else if (nextSample <= now) {
    sampleImbalance();
    nextSample += 500;
  } else {
    run({ type: 'timer' });
  }
}
const wall = performance.now() - wallStart;

// ---- figures -----------------------------------------------------------------------------------

const sliceErrors: number[] = [];
const virtualErrors: number[] = [];
for (const { event, seq: at } of news) {
  if (event.messageType !== 'PART_STARTED' || event.portfolioType !== 'TWAP') continue;
  const p = algos.portfolio(event.portfolioId)!;
  const scheduled = p.startAt + event.part! * p.spec.twap!.frequencyMs;
  const offset = placementOffset.get(`${event.portfolioId}|${at}`);
  if (offset === undefined) continue; // a slice of 0 lots places nothing
  virtualErrors.push(event.timestamp - scheduled);
  sliceErrors.push(event.timestamp - scheduled + offset);
}
sliceErrors.sort((a, b) => a - b);
virtualErrors.sort((a, b) => a - b);
const pct = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
imbalances.sort((a, b) => a - b);
const statuses = (ids: number[]) => {
  const out: Record<string, number> = {};
  for (const id of ids) {
    const s = algos.portfolio(id)!.status;
    out[s] = (out[s] ?? 0) + 1;
  }
  return out;
};
const algoCpu = algoWall - engineInsideAlgo;
const simulated = SECONDS * 1000;
console.log(
  `portfolios: ${twapIds.length} TWAP (60 slices, DYNAMIC MID every 100 ms), ${balanceIds.length} BALANCE (4 legs, 5 parts)`,
);
console.log(
  `simulated ${SECONDS} s in ${(wall / 1000).toFixed(2)} s wall, ${commands} commands, ${news.length} trade-news messages`,
);
console.log(
  `TWAP statuses: ${JSON.stringify(statuses(twapIds))}; BALANCE statuses: ${JSON.stringify(statuses(balanceIds))}`,
);
console.log(
  `slice timing error (stamp − schedule + wall time to the first child order): p50 ${pct(sliceErrors, 0.5).toFixed(3)} ms, p99 ${pct(sliceErrors, 0.99).toFixed(3)} ms, max ${(sliceErrors.at(-1) ?? 0).toFixed(3)} ms over ${sliceErrors.length} slices (stamp part alone: p99 ${pct(virtualErrors, 0.99)} ms)`,
);
console.log(
  `leg imbalance (tranches, main legs, every 500 ms): p50 ${pct(imbalances, 0.5).toFixed(2)}, p99 ${pct(imbalances, 0.99).toFixed(2)}, max ${(imbalances.at(-1) ?? 0).toFixed(2)} over ${imbalances.length} samples`,
);
console.log(
  `algorithm layer CPU: ${(algoCpu / 1000).toFixed(2)} s for ${SECONDS} s simulated = ${((100 * algoCpu) / simulated).toFixed(1)}% of one core (engine calls from it: ${(engineInsideAlgo / 1000).toFixed(2)} s)`,
);
