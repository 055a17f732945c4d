/**
 * Chaos over the portfolio algorithms inside the whole core (`createCoreMachine`: the engine, the
 * RFQ desk and the portfolio layer, as the service composes them): random BALANCE, TWAP, COMMON
 * and ICEBERG portfolios (1–5 legs over inverse options, futures and the perpetual and linear
 * BTC_USDC products; LIMIT, MARKET and DYNAMIC prices in every priceIn; price snapshots; TWAP
 * starts now, later and slightly in the past; mirrors), each submitted as the gateway does it:
 * the wire body through `validatePortfolioBody` (what it refuses never reaches the core) and a
 * COMMON portfolio's combo listed first. Around them: book liquidity appearing and drying up on
 * the legs and on combos, takers hitting it, marks and the index moving, the portfolio account's
 * own hand orders and hand edits/cancels of its children, its self-trade mode and open-order
 * limit, Block RFQs of the user traded by a desk (positions moving under reduce-only children),
 * deposits and withdrawals, legs listed mid-session with no mark, a leg settling, cancels of one
 * or all portfolios, and time passing with a timer at every wakeup the core asks for (or late).
 *
 * Whatever a command does, it is answered: the core never throws (a throw stops the service),
 * the engine's `validate` holds, the portfolio layer's records stay consistent with the engine's
 * orders (`checkPortfolios`), and a snapshot taken mid-run (through the snapshot store's
 * encoding) restores to the same state hash, then gives the same result for every later command
 * and the same final hash, and the journal replayed into a fresh core ends in that state too.
 *
 * ALGO_CHAOS_RUNS, ALGO_CHAOS_SEED and ALGO_CHAOS_STEPS override the run count, the seed and the
 * longest session; ALGO_CHAOS_STATS=1 prints how the commands, the children and the portfolios
 * fared.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { commonComboCandidate } from '../../src/algo/combo.ts';
import type { PortfolioMachine } from '../../src/algo/machine.ts';
import { childCovers } from '../../src/algo/portfolio-state.ts';
import type { PortfolioEvent, PortfolioType, UnstampedAlgoCommand } from '../../src/algo/types.ts';
import { PortfolioInfoValue, TradeNewsMessage } from '../../src/api/portfolios/answer-schemas.ts';
import { validatePortfolioBody } from '../../src/api/portfolios/validate.ts';
import { portfolioInfoToWire, tradeNewsToWire } from '../../src/api/portfolios/wire.ts';
import { compileValidator } from '../../src/api/validation.ts';
import { PORTFOLIOS, RFQ_DESK } from '../../src/app/core-factory.ts';
import type { UnstampedCommand } from '../../src/core/commands.ts';
import type { CoreMachine, MachineCommand } from '../../src/core/machine.ts';
import { VenueError } from '../../src/domain/errors.ts';
import { Instrument, type InstrumentSpec } from '../../src/domain/instrument.ts';
import {
  linearPerpetualSpec,
  optionSpec,
  orderCommand,
  perpetualSpec,
  spotSpec,
} from '../../src/engine/testkit.ts';
import { createCombo, parseComboName } from '../../src/market/combos.ts';
import type { RfqDesk } from '../../src/rfq/desk.ts';
import type { UnstampedRfqCommand } from '../../src/rfq/types.ts';
import {
  ChaosCore,
  checkCopyAnswers,
  checkRestoredAndReplayed,
  passTime as passTimeOn,
  restoredCopy,
} from '../support/chaos-core.ts';

// ---------------------------------------------------------------------------------------------
// The market

interface Traded {
  readonly name: string;
  readonly spec: InstrumentSpec;
  readonly type: 'OPTION' | 'PERPETUAL' | 'DELIVERY_FUTURES' | 'SPOT';
  /** Starting mark (ticks). */
  readonly mark: number;
  /** Ticks a price step moves. */
  readonly step: number;
  /** Listed by a step mid-session, with no mark until a mark step gives it one. */
  readonly late?: boolean;
}

const EXPIRY = Date.UTC(2026, 11, 27, 8);
const LINEAR_OPTION = {
  quoteCurrency: 'USDC',
  counterCurrency: 'BTC',
  settlementCurrency: 'USDC',
  marginKind: 'linear' as const,
  tickSize: '5',
  tickSizeSteps: [],
  minTradeAmount: '0.01',
};
const SHORT_CALL = 'BTC-7JAN26-60000-C';

const LEGS: readonly Traded[] = [
  { name: 'BTC-PERPETUAL', spec: perpetualSpec(), type: 'PERPETUAL', mark: 120_000, step: 1 },
  {
    name: 'BTC-27DEC26',
    spec: perpetualSpec({
      name: 'BTC-27DEC26',
      settlementPeriod: 'month',
      expiration: EXPIRY,
      tickSize: '2.5',
    }),
    type: 'DELIVERY_FUTURES',
    mark: 24_100,
    step: 1,
  },
  { name: 'BTC-27DEC26-70000-C', spec: optionSpec(), type: 'OPTION', mark: 500, step: 5 },
  {
    name: 'BTC-27DEC26-75000-C',
    spec: optionSpec({ name: 'BTC-27DEC26-75000-C', strike: '75000' }),
    type: 'OPTION',
    mark: 300,
    step: 5,
  },
  {
    name: 'BTC-27DEC26-70000-P',
    spec: optionSpec({ name: 'BTC-27DEC26-70000-P', optionType: 'put' }),
    type: 'OPTION',
    mark: 1_700,
    step: 5,
  },
  {
    name: SHORT_CALL,
    spec: optionSpec({ name: SHORT_CALL, strike: '60000', expiration: Date.UTC(2026, 0, 7, 8) }),
    type: 'OPTION',
    mark: 600,
    step: 5,
  },
  {
    name: 'BTC_USDC-27DEC26-70000-C',
    spec: optionSpec({ name: 'BTC_USDC-27DEC26-70000-C', ...LINEAR_OPTION }),
    type: 'OPTION',
    mark: 600,
    step: 1,
  },
  {
    name: 'BTC_USDC-27DEC26-75000-C',
    spec: optionSpec({ name: 'BTC_USDC-27DEC26-75000-C', strike: '75000', ...LINEAR_OPTION }),
    type: 'OPTION',
    mark: 360,
    step: 1,
  },
  { name: 'BTC_USDC-PERPETUAL', spec: linearPerpetualSpec(), type: 'PERPETUAL', mark: 120_000, step: 1 },
  { name: 'BTC_USDC', spec: spotSpec(), type: 'SPOT', mark: 60_000, step: 1 },
  {
    name: 'BTC-27DEC26-80000-C',
    spec: optionSpec({ name: 'BTC-27DEC26-80000-C', strike: '80000' }),
    type: 'OPTION',
    mark: 200,
    step: 5,
    late: true,
  },
  {
    name: 'BTC-26JUN26',
    spec: perpetualSpec({
      name: 'BTC-26JUN26',
      settlementPeriod: 'month',
      expiration: Date.UTC(2026, 5, 26, 8),
      tickSize: '2.5',
    }),
    type: 'DELIVERY_FUTURES',
    mark: 24_050,
    step: 1,
    late: true,
  },
];
const LATE = LEGS.filter((l) => l.late);
const LEG_BY_NAME = new Map(LEGS.map((l) => [l.name, l]));
/** Combos books may be made on (listed by a step, or by a COMMON submit as the gateway does). */
const COMBOS = [
  'BTC-CS-27DEC26-70000_75000',
  'BTC-STRD-27DEC26-70000',
  'BTC-FS-27DEC26_PERP',
  'BTC_USDC-CS-27DEC26-70000_75000',
  // On the legs listed mid-session (with no mark at first).
  'BTC-CS-27DEC26-75000_80000',
  'BTC-FS-26JUN26_PERP',
];

/** Instruments a step may settle (expire): the short call, and legs of the combos. */
const SETTLED = [SHORT_CALL, SHORT_CALL, 'BTC-27DEC26', 'BTC-27DEC26-75000-C', 'BTC_USDC-27DEC26-70000-C'];

/** Leg pairs (instrument, side when the pair is bought) that form the combos above. */
const PAIRS: readonly (readonly [string, 1 | 2])[][] = [
  [
    ['BTC-27DEC26-70000-C', 1],
    ['BTC-27DEC26-75000-C', 2],
  ],
  [
    ['BTC-27DEC26-70000-C', 1],
    ['BTC-27DEC26-70000-P', 1],
  ],
  [
    ['BTC-27DEC26', 1],
    ['BTC-PERPETUAL', 2],
  ],
  [
    ['BTC_USDC-27DEC26-70000-C', 1],
    ['BTC_USDC-27DEC26-75000-C', 2],
  ],
  [
    ['BTC-27DEC26-75000-C', 1],
    ['BTC-27DEC26-80000-C', 2],
  ],
  [
    ['BTC-26JUN26', 2],
    ['BTC-PERPETUAL', 1],
  ],
  // Legs in the other order, and a pair that forms no combo.
  [
    ['BTC-27DEC26-75000-C', 2],
    ['BTC-27DEC26-70000-C', 1],
  ],
  [
    ['BTC-27DEC26-70000-C', 1],
    ['BTC-PERPETUAL', 1],
  ],
];

/** The portfolio user's accounts: 1 submits, 2 takes mirrors (and submits too). */
const TRADER = 1;
const MIRROR = 2;
const USER_ACCOUNTS = new Set([TRADER, MIRROR]);
/** Liquidity: resting orders and takers of other users. */
const MAKERS = [3, 4];
const FUNDS: Record<number, { BTC: number; USDC: number }> = {
  [TRADER]: { BTC: 500_000_000, USDC: 50_000_000_000 },
  [MIRROR]: { BTC: 20_000_000, USDC: 1_000_000_000 },
  3: { BTC: 100_000_000_000, USDC: 100_000_000_000_000 },
  4: { BTC: 300_000_000, USDC: 20_000_000_000 },
};
const ACCOUNTS = Object.keys(FUNDS).map(Number);
/** The maker desk that trades the user's Block RFQs. */
const RFQ_MAKER = { desk: 'desk-a', accountId: 3 };
const TYPES: readonly PortfolioType[] = ['BALANCE', 'TWAP', 'COMMON', 'ICEBERG'];

// ---------------------------------------------------------------------------------------------
// Steps

type PriceType = 'LIMIT' | 'MARKET' | 'DYNAMIC';

interface LegPick {
  readonly at: number;
  readonly side: 1 | 2;
  readonly lots: number;
  readonly priceType: PriceType;
  /** priceIn pick among the leg's units (by remainder); -1 = absent. */
  readonly priceIn: number;
  /** Percent away from the reference (a buy below, a sell above when positive). */
  readonly away: number;
  /** The price sent as a string (else a number; BALANCE needs strings, TWAP numbers). */
  readonly asString: boolean;
  readonly noPrice: boolean;
  readonly strategy: 'MID' | 'MARK' | 'MODEL' | 'BID' | 'ASK';
  readonly offset: number;
  readonly dynamicMs: number | null;
  readonly timeInForce: number | null;
  readonly postOnly: boolean;
  readonly reduceOnly: boolean;
  readonly hidden: boolean;
  readonly hedge: boolean;
  readonly priority: boolean;
  readonly snapshot: boolean;
}

type Step =
  | {
      kind: 'submit';
      account: number;
      type: number;
      legs: LegPick[];
      /** COMMON: legs priced and flagged alike (so they may form a combo). */
      alike: boolean;
      /** List the COMMON portfolio's combo first, as the gateway does. */
      listCombo: boolean;
      parts: number;
      eachLimitMs: number;
      totalLimitMs: number;
      endAction: 1 | 2;
      durationSec: number;
      frequencySec: number;
      start: number | null;
      display: number;
      refresh: number | null;
      /** ICEBERG: sized for a venue iceberg child (display ≥ 100 lots, the rest < 100 displays). */
      venueIceberg: boolean;
      displays: number;
      mirror: boolean;
    }
  | { kind: 'cancel'; pick: number; account: number | null }
  | { kind: 'cancel_all'; account: number; type: number | null }
  | {
      kind: 'book';
      account: number;
      at: number;
      combo: boolean;
      side: 'buy' | 'sell';
      lots: number;
      away: number;
    }
  | { kind: 'take'; account: number; at: number; combo: boolean; side: 'buy' | 'sell'; lots: number }
  | { kind: 'hit'; account: number; pick: number; part: number; resting: boolean }
  | { kind: 'dry'; account: number }
  | {
      kind: 'hand_order';
      account: number;
      at: number;
      combo: boolean;
      side: 'buy' | 'sell';
      lots: number;
      away: number;
    }
  | { kind: 'settings'; account: number; mode: 'cancel_maker' | 'reject_taker'; maxOpenOrders: number | null }
  | { kind: 'hand_edit'; pick: number; grow: number; away: number }
  | { kind: 'hand_cancel'; pick: number }
  | { kind: 'mark'; at: number; percent: number; index: number | null }
  | { kind: 'funds'; account: number; currency: 'BTC' | 'USDC'; deposit: boolean; amount: number }
  | { kind: 'list'; which: number }
  | { kind: 'list_leg'; which: number }
  | { kind: 'settle'; go: boolean; which: number; price: number }
  | { kind: 'time'; ms: number; wakeups: boolean }
  | { kind: 'rfq'; account: number; at: number; side: 'buy' | 'sell'; lots: number }
  | { kind: 'rfq_trade'; pick: number; takerBuys: boolean; away: number };

/** True `percent` % of the time (unbiased: fast-check otherwise favours the bounds). */
const chance = (percent: number) => fc.noBias(fc.integer({ min: 0, max: 99 })).map((n) => n < percent);
const anyPick = fc.noBias(fc.nat());
const side = fc.constantFrom<'buy' | 'sell'>('buy', 'sell');
const legAt = fc.nat(LEGS.length - 1);

const legPick: fc.Arbitrary<LegPick> = fc.record({
  at: legAt,
  side: fc.constantFrom<1 | 2>(1, 2),
  lots: fc.oneof(
    { weight: 5, arbitrary: fc.integer({ min: 1, max: 30 }) },
    { weight: 2, arbitrary: fc.integer({ min: 30, max: 400 }) },
    { weight: 1, arbitrary: fc.integer({ min: 400, max: 30_000 }) },
  ),
  priceType: fc.constantFrom<PriceType>('LIMIT', 'LIMIT', 'LIMIT', 'MARKET', 'DYNAMIC', 'DYNAMIC'),
  priceIn: fc.oneof({ weight: 1, arbitrary: fc.constant(-1) }, { weight: 12, arbitrary: fc.nat(6) }),
  away: fc.integer({ min: -15, max: 15 }),
  asString: fc.boolean(),
  noPrice: chance(4),
  strategy: fc.constantFrom('MID', 'MARK', 'MODEL', 'BID', 'ASK'),
  offset: fc.integer({ min: -3, max: 3 }),
  dynamicMs: fc.option(fc.constantFrom(100, 250, 1_000, 3_000), { nil: null, freq: 4 }),
  timeInForce: fc.option(fc.constantFrom(1, 2, 3, 4), { nil: null, freq: 2 }),
  postOnly: chance(15),
  reduceOnly: chance(8),
  hidden: chance(8),
  hedge: chance(10),
  priority: chance(10),
  snapshot: chance(20),
});

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('submit' as const),
      account: fc.constantFrom(TRADER, TRADER, TRADER, MIRROR),
      type: fc.nat(TYPES.length - 1),
      legs: fc.array(legPick, { minLength: 1, maxLength: 5 }),
      alike: chance(50),
      listCombo: chance(85),
      parts: fc.integer({ min: 1, max: 5 }),
      eachLimitMs: fc.constantFrom(500, 2_000, 10_000, 60_000),
      totalLimitMs: fc.constantFrom(0, 0, 3_000, 30_000),
      endAction: fc.constantFrom<1 | 2>(1, 2),
      durationSec: fc.integer({ min: 1, max: 90 }),
      frequencySec: fc.integer({ min: 1, max: 20 }),
      start: fc.option(fc.integer({ min: -20_000, max: 30_000 }), { nil: null, freq: 2 }),
      display: fc.oneof(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 90, max: 300 })),
      refresh: fc.option(fc.integer({ min: 1, max: 300 }), { nil: null, freq: 2 }),
      venueIceberg: chance(40),
      displays: fc.integer({ min: 1, max: 120 }),
      mirror: chance(15),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('cancel' as const),
      pick: anyPick,
      account: fc.option(fc.constantFrom(TRADER, MIRROR, 3), { nil: null }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('cancel_all' as const),
      account: fc.constantFrom(TRADER, MIRROR),
      type: fc.option(fc.nat(TYPES.length - 1), { nil: null }),
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('book' as const),
      account: fc.constantFrom(...MAKERS),
      at: fc.nat(),
      combo: chance(25),
      side,
      lots: fc.oneof(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 50, max: 3_000 })),
      away: fc.integer({ min: -6, max: 12 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('take' as const),
      account: fc.constantFrom(...MAKERS),
      at: fc.nat(),
      combo: chance(25),
      side,
      lots: fc.integer({ min: 1, max: 500 }),
    }),
  },
  {
    // Another user's order at a child's price: the portfolio trades (wholly or in part).
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('hit' as const),
      account: fc.constantFrom(...MAKERS),
      pick: anyPick,
      part: fc.integer({ min: 1, max: 120 }),
      resting: chance(30),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('dry' as const), account: fc.constantFrom(...MAKERS) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('hand_order' as const),
      account: fc.constantFrom(TRADER, TRADER, MIRROR),
      at: fc.nat(),
      combo: chance(30),
      side,
      lots: fc.integer({ min: 1, max: 50 }),
      away: fc.integer({ min: -5, max: 5 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('hand_edit' as const),
      pick: anyPick,
      grow: fc.integer({ min: -5, max: 20 }),
      away: fc.integer({ min: -3, max: 3 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('hand_cancel' as const), pick: anyPick }) },
  {
    // Self-trade prevention mode and the open-order limit of the user's accounts.
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('settings' as const),
      account: fc.constantFrom(TRADER, MIRROR),
      mode: fc.constantFrom<'cancel_maker' | 'reject_taker'>('cancel_maker', 'reject_taker'),
      maxOpenOrders: fc.option(fc.constantFrom(1, 2, 4, 1_000), { nil: null }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('mark' as const),
      at: legAt,
      percent: fc.integer({ min: -10, max: 10 }),
      index: fc.option(fc.integer({ min: 45_000, max: 75_000 }), { nil: null, freq: 3 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('funds' as const),
      account: fc.constantFrom(...ACCOUNTS),
      currency: fc.constantFrom<'BTC' | 'USDC'>('BTC', 'USDC'),
      deposit: fc.boolean(),
      amount: fc.constantFrom(1_000_000, 50_000_000, 400_000_000, 10_000_000_000),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('list' as const), which: fc.nat(COMBOS.length - 1) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('list_leg' as const), which: fc.nat(LATE.length - 1) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('settle' as const),
      go: chance(15),
      which: fc.nat(SETTLED.length - 1),
      price: fc.integer({ min: 0, max: 1_500 }),
    }),
  },
  {
    // A Block RFQ of the portfolio user on a leg, traded later by another user's desk: block
    // trades move the positions reduce-only children and hedges work against.
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('rfq' as const),
      account: fc.constantFrom(TRADER, MIRROR),
      at: legAt,
      side,
      lots: fc.integer({ min: 1, max: 60 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('rfq_trade' as const),
      pick: anyPick,
      takerBuys: fc.boolean(),
      away: fc.integer({ min: -2, max: 2 }),
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('time' as const),
      ms: fc.oneof(
        { weight: 4, arbitrary: fc.integer({ min: 1, max: 2_000 }) },
        { weight: 3, arbitrary: fc.integer({ min: 1_000, max: 20_000 }) },
        { weight: 1, arbitrary: fc.integer({ min: 20_000, max: 120_000 }) },
      ),
      wakeups: chance(85),
    }),
  },
);

// ---------------------------------------------------------------------------------------------
// The driver

class Core extends ChaosCore {
  get algos(): PortfolioMachine {
    return this.machine.sub<PortfolioMachine>(PORTFOLIOS);
  }

  instrument(name: string): Instrument | undefined {
    return this.machine.venue.instrument(name)?.instrument;
  }

  open(name: string): boolean {
    return this.machine.venue.instrument(name)?.status === 'open';
  }

  index(): number {
    return this.machine.venue.indexPrice('BTC') ?? 60_000;
  }
}

function market(): Core {
  const core = new Core();
  // Block minimums below one lot: small Block RFQs on the legs are valid.
  for (const leg of LEGS) if (!leg.late) core.ok({ type: 'list_instrument', spec: specOf(leg) });
  for (const accountId of ACCOUNTS) {
    core.ok({ type: 'create_account', accountId, userId: USER_ACCOUNTS.has(accountId) ? TRADER : accountId });
    for (const [currency, amount] of Object.entries(FUNDS[accountId]!))
      core.ok({ type: 'deposit', accountId, currency, amount });
  }
  core.ok({
    type: 'update_prices',
    indexPrices: [{ currency: 'BTC', price: 60_000 }],
    markPrices: LEGS.filter((l) => !l.late).map((l) => ({ instrumentName: l.name, markPrice: l.mark })),
  });
  // The call spread is listed from the start; the other combos by a step or a COMMON submit.
  const listed = listCombo(core, COMBOS[0]!);
  assert.ok(listed !== null);
  core.ok(listed);
  return core;
}

/** A leg's spec as listed: block minimums below one lot, so small Block RFQs on it are valid. */
function specOf(leg: Traded): InstrumentSpec {
  return { ...leg.spec, blockTradeMinTradeAmount: '0.0001' };
}

/** The list_instrument of a combo built from the listed legs, as the market loop builds it. */
function listCombo(core: Core, name: string): UnstampedCommand | null {
  if (core.instrument(name) !== undefined) return null;
  const request = parseComboName(name);
  if (request === null) return null;
  const built = createCombo(request, (leg) => core.instrument(leg)?.spec, core.ts);
  return built.ok ? { type: 'list_instrument', spec: built.spec } : null;
}

/** A decimal text for a float (plain notation, at most 8 decimals), as a client would send it. */
function decimal(value: number): string {
  const text = value.toFixed(8).replace(/0+$/, '').replace(/\.$/, '');
  return text === '-0' ? '0' : text;
}

/** priceIn units of a leg (as the validator allows them). */
function unitsOf(instrument: Instrument): string[] {
  const units = ['USD', 'USDC', 'BTC', instrument.spec.quoteCurrency];
  if (instrument.isOption) units.push('IV');
  return [...new Set(units)];
}

/** The mark in quote currency converted to `unit` (IV: a volatility in percent). */
function reference(core: Core, instrument: Instrument, unit: string): number {
  const traded = LEG_BY_NAME.get(instrument.name)!;
  const quote = (core.mark(instrument.name) ?? traded.mark) * Number(instrument.spec.tickSize);
  if (unit === 'IV') return 60;
  const q = instrument.spec.quoteCurrency;
  if (unit === q || (unit !== 'BTC' && q !== 'BTC')) return quote;
  return unit === 'BTC' ? quote / core.index() : quote * core.index();
}

function legBody(core: Core, pick: LegPick, type: PortfolioType): Record<string, unknown> {
  const traded = LEGS[pick.at]!;
  // A leg not listed yet is sent all the same (the gateway refuses it).
  const instrument = core.instrument(traded.name) ?? new Instrument(0, traded.spec);
  const units = unitsOf(instrument);
  const unit = pick.priceIn < 0 ? null : units[pick.priceIn % units.length]!;
  const ref = reference(core, instrument, unit ?? instrument.spec.quoteCurrency);
  const buy = pick.side === 1;
  const value = ref * (1 + ((buy ? -1 : 1) * pick.away) / 100);
  const price = pick.asString || type === 'BALANCE' ? decimal(value) : Number(decimal(value));
  const options: Record<string, unknown> = { priceType: pick.priceType };
  if (!pick.noPrice && pick.priceType !== 'MARKET') options.price = type === 'TWAP' ? Number(price) : price;
  if (unit !== null) options.priceIn = unit;
  if (pick.priceType === 'DYNAMIC') {
    options.dynamicPriceStrategy = pick.strategy;
    options.dynamicPriceOffset = decimal((ref * pick.offset) / 100);
    options.dynamicMs = pick.dynamicMs ?? (type === 'TWAP' ? 1_000 : undefined);
  }
  return {
    instrument: traded.name,
    instrumentType: traded.type,
    side: pick.side,
    quantity: instrument.formatQuantity(pick.lots),
    priceOptions: options,
    ...(pick.timeInForce === null ? {} : { timeInForce: pick.timeInForce }),
    postOnly: pick.postOnly,
    reduceOnly: pick.reduceOnly,
    hidden: pick.hidden,
    hedge: pick.hedge,
    priority: type === 'BALANCE' && pick.priority,
    ...(pick.snapshot
      ? {
          priceSnapshot: [{ placePriceIn: unit ?? '', placePrice: value, price: value, priceIn: unit ?? '' }],
        }
      : {}),
  };
}

function submitBody(core: Core, s: Extract<Step, { kind: 'submit' }>): Record<string, unknown> {
  const type = TYPES[s.type]!;
  const iceberg = type === 'ICEBERG' && s.venueIceberg;
  const display = iceberg ? 100 + (s.display % 200) : s.display;
  const picks =
    type !== 'ICEBERG'
      ? s.legs
      : [{ ...s.legs[0]!, ...(iceberg ? { lots: display * s.displays + (s.legs[0]!.lots % display) } : {}) }];
  // COMMON "alike": a pair of legs forming a combo (most of the time), sharing the first leg's
  // size, flags and kind of price (LIMIT or MARKET), so the portfolio trades as one combo order.
  let legs = picks;
  if (type === 'COMMON' && s.alike) {
    const first = picks[0]!;
    const pair = PAIRS[first.at % PAIRS.length]!;
    const flip = first.side === 2;
    legs = pair.map(([name, sideOf], i) => ({
      ...first,
      at: LEGS.findIndex((l) => l.name === name),
      side: (sideOf === 1) !== flip ? 1 : 2,
      priceType: first.priceType === 'DYNAMIC' ? 'LIMIT' : first.priceType,
      priceIn: (picks[i] ?? first).priceIn,
      away: (picks[i] ?? first).away,
      reduceOnly: false,
    }));
  }
  const body: Record<string, unknown> = {
    accountId: s.account,
    portfolioType: type,
    strategy: 'chaos',
    legs: legs.map((pick) => legBody(core, pick, type)),
  };
  if (type === 'BALANCE')
    body.balanceTrade = {
      parts: s.parts,
      eachLimitMs: s.eachLimitMs,
      totalLimitMs: s.totalLimitMs,
      totalEndAction: s.endAction,
    };
  if (type === 'TWAP')
    body.twapTrade = {
      ...(s.start === null ? {} : { startTimestamp: core.ts + s.start }),
      durationSec: s.durationSec,
      frequencySec: s.frequencySec,
    };
  if (type === 'ICEBERG') {
    const traded = LEGS[legs[0]!.at]!;
    const instrument = core.instrument(traded.name) ?? new Instrument(0, traded.spec);
    body.icebergTrade = {
      displayQuantity: instrument.formatQuantity(display),
      ...(s.refresh === null
        ? {}
        : { refreshQuantity: instrument.formatQuantity(iceberg ? display : s.refresh) }),
    };
  }
  if (s.mirror) body.sendToDummyAccountIds = [s.account === TRADER ? MIRROR : TRADER];
  return body;
}

/** Instruments a liquidity step may pick: the legs, or the combos listed and open. */
function bookTarget(
  core: Core,
  at: number,
  combo: boolean,
): { name: string; ref: number; step: number } | null {
  if (combo) {
    const listed = COMBOS.filter((name) => core.open(name));
    const name = listed[at % Math.max(1, listed.length)];
    if (name === undefined) return null;
    const legs = core.instrument(name)!.spec.legs!;
    // The net of the legs' marks (Σ ratio × mark, in the quote currency) in the combo's ticks.
    let ref = 0;
    for (const leg of legs) {
      const l = LEG_BY_NAME.get(leg.instrumentName)!;
      const legTick = Number(l.spec.tickSize);
      ref += leg.ratio * (core.mark(leg.instrumentName) ?? l.mark) * legTick;
    }
    const tick = Number(core.instrument(name)!.spec.tickSize);
    return { name, ref: Math.round(ref / tick), step: 1 };
  }
  const traded = LEGS[at % LEGS.length]!;
  if (!core.open(traded.name)) return null;
  return { name: traded.name, ref: core.mark(traded.name) ?? traded.mark, step: traded.step };
}

/** Open child orders of the user's portfolios (what a hand edit or cancel may pick). */
function childOrders(core: Core) {
  return [TRADER, MIRROR].flatMap((accountId) =>
    core.machine.venue.openOrders({ accountId }).filter((order) => order.owner !== null),
  );
}

/** The commands of a step against the current state (none when it has nothing to act on). */
function commands(
  core: Core,
  s: Step,
): (UnstampedCommand | UnstampedAlgoCommand | UnstampedRfqCommand)[] | 'refused' {
  switch (s.kind) {
    case 'submit': {
      const body = submitBody(core, s);
      let portfolio: ReturnType<typeof validatePortfolioBody>;
      try {
        portfolio = validatePortfolioBody(body, {
          accountIds: USER_ACCOUNTS,
          instrument: (name) => core.instrument(name),
          now: core.ts,
        });
      } catch (error) {
        // The gateway refuses it: it never reaches the core.
        if (error instanceof VenueError) {
          count(`gateway refusal: ${error.message.replace(/[0-9.]+/g, '#')}`);
          return 'refused';
        }
        throw error;
      }
      const out: (UnstampedCommand | UnstampedAlgoCommand | UnstampedRfqCommand)[] = [];
      if (s.listCombo) {
        const name = commonComboCandidate(portfolio, (n) => core.instrument(n));
        const list = name === null ? null : listCombo(core, name);
        if (list !== null) out.push(list);
      }
      out.push({ type: 'submit_portfolio', portfolio });
      return out;
    }
    case 'cancel': {
      const ids = core.algos.portfoliosOf(TRADER).concat(core.algos.portfoliosOf(MIRROR));
      const target = ids[s.pick % Math.max(1, ids.length)];
      if (target === undefined) return [];
      return [{ type: 'cancel_portfolio', portfolioId: target.id, accountId: s.account }];
    }
    case 'cancel_all':
      return [
        {
          type: 'cancel_all_portfolios',
          accountId: s.account,
          portfolioType: s.type === null ? null : TYPES[s.type]!,
        },
      ];
    case 'book': {
      const target = bookTarget(core, s.at, s.combo);
      if (target === null) return [];
      // Asks above the reference, bids below it, by `away` steps (negative: crossing).
      const price = target.ref + (s.side === 'sell' ? 1 : -1) * s.away * target.step;
      if (!s.combo && price < 1) return [];
      return [orderCommand(s.account, s.side, s.lots, price, { instrumentName: target.name, label: 'book' })];
    }
    case 'take': {
      const target = bookTarget(core, s.at, s.combo);
      if (target === null) return [];
      return [
        orderCommand(s.account, s.side, s.lots, null, {
          instrumentName: target.name,
          timeInForce: 'immediate_or_cancel',
          label: 'take',
        }),
      ];
    }
    case 'hit': {
      const orders = childOrders(core);
      const order = orders[s.pick % Math.max(1, orders.length)];
      if (order === undefined || order.price === null) return [];
      const open = order.amount - order.filledAmount;
      // Up to 120% of the child's open lots; an IOC unless it rests for later children.
      const lots = Math.max(1, Math.round((open * s.part) / 100));
      return [
        orderCommand(s.account, order.side === 'buy' ? 'sell' : 'buy', lots, order.price, {
          instrumentName: order.instrumentName,
          timeInForce: s.resting ? 'good_til_cancelled' : 'immediate_or_cancel',
          label: 'hit',
        }),
      ];
    }
    case 'dry':
      return [{ type: 'cancel_all', accountId: s.account }];
    case 'hand_order': {
      const target = bookTarget(core, s.at, s.combo);
      if (target === null) return [];
      const price = target.ref + s.away * target.step;
      if (!s.combo && price < 1) return [];
      return [orderCommand(s.account, s.side, s.lots, price, { instrumentName: target.name, label: 'hand' })];
    }
    case 'settings':
      return [
        {
          type: 'set_account_settings',
          accountId: s.account,
          selfTradeMode: s.mode,
          ...(s.maxOpenOrders === null ? {} : { maxOpenOrders: s.maxOpenOrders }),
        },
      ];
    case 'hand_edit': {
      const orders = childOrders(core);
      const order = orders[s.pick % Math.max(1, orders.length)];
      if (order === undefined || order.price === null) return [];
      return [
        {
          type: 'edit_order',
          accountId: order.accountId,
          orderId: order.orderId,
          amount: Math.max(1, order.amount + s.grow),
          price: order.price + s.away,
        },
      ];
    }
    case 'hand_cancel': {
      const orders = childOrders(core);
      const order = orders[s.pick % Math.max(1, orders.length)];
      if (order === undefined) return [];
      return [{ type: 'cancel_order', accountId: order.accountId, orderId: order.orderId }];
    }
    case 'mark': {
      const traded = LEGS[s.at]!;
      const ref = core.mark(traded.name) ?? traded.mark;
      const moved = Math.max(1, Math.round((ref * (100 + s.percent)) / 100));
      return [
        {
          type: 'update_prices',
          ...(s.index === null ? {} : { indexPrices: [{ currency: 'BTC', price: s.index }] }),
          markPrices: [{ instrumentName: traded.name, markPrice: moved }],
        },
      ];
    }
    case 'funds':
      return [
        {
          type: s.deposit ? 'deposit' : 'withdraw',
          accountId: s.account,
          currency: s.currency,
          amount: s.amount,
        },
      ];
    case 'list': {
      const list = listCombo(core, COMBOS[s.which]!);
      return list === null ? [] : [list];
    }
    case 'list_leg': {
      const late = LATE[s.which]!;
      return core.instrument(late.name) === undefined
        ? [{ type: 'list_instrument', spec: specOf(late) }]
        : [];
    }
    case 'settle':
      if (!s.go) return [];
      return [
        {
          type: 'settle_instrument',
          instrumentName: SETTLED[s.which]!,
          settlementPrice: SETTLED[s.which] === 'BTC-27DEC26' ? 24_000 + s.price : s.price,
        },
      ];
    case 'rfq': {
      const traded = LEGS[s.at]!;
      return [
        {
          type: 'rfq_create',
          accountId: s.account,
          userId: TRADER,
          takerAlias: null,
          makers: [],
          targetDesks: [RFQ_MAKER.desk],
          disclosed: true,
          label: '',
          legs: [{ instrumentName: traded.name, side: s.side, amount: s.lots }],
          hedge: null,
          tradeAllocations: [],
        },
      ];
    }
    case 'rfq_trade': {
      const desk = core.machine.sub<RfqDesk>(RFQ_DESK);
      const open = desk.takerRfqs(USER_ACCOUNTS).filter((rfq) => rfq.status === 'open');
      const rfq = open[s.pick % Math.max(1, open.length)];
      if (rfq === undefined) return [];
      const leg = rfq.legs[0]!;
      const traded = LEG_BY_NAME.get(leg.instrumentName)!;
      const price = Math.max(1, (core.mark(leg.instrumentName) ?? traded.mark) + s.away * traded.step);
      const strategy = (leg.side === 'buy' ? 1 : -1) * price * rfq.legTickUnits[0]!;
      return [
        {
          type: 'rfq_quote_create',
          accountId: RFQ_MAKER.accountId,
          userId: RFQ_MAKER.accountId,
          desk: RFQ_MAKER.desk,
          blockRfqId: rfq.makerRecords[0]!.blockRfqId,
          side: s.takerBuys ? 'sell' : 'buy',
          quantity: rfq.quantity,
          price: null,
          legs: [{ instrumentName: leg.instrumentName, side: leg.side, ratio: leg.ratio, price }],
          hedge: null,
          executionInstruction: 'any_part_of',
          expiresAt: null,
          label: '',
        },
        {
          type: 'rfq_accept',
          accountId: rfq.takerAccountId,
          blockRfqId: rfq.blockRfqId,
          side: s.takerBuys ? 'buy' : 'sell',
          price: strategy,
          quantity: null,
          timeInForce: 'fill_or_kill',
        },
      ];
    }
    case 'time':
      return [];
  }
}

// ---------------------------------------------------------------------------------------------
// Invariants

/**
 * The portfolio layer against the engine: only active portfolios have open children, every open
 * child is an open engine order of its account with that owner and size (and no owned order is
 * an orphan), a leg never fills more than its quantity, and `working` names an open child of it.
 */
function checkPortfolios(core: Core): void {
  const venue = core.machine.venue;
  const algos = core.algos;
  const owned = new Map<string, { accountId: number; amount: number; filled: number; owner: string }>();
  for (const accountId of USER_ACCOUNTS) {
    for (const order of venue.openOrders({ accountId })) {
      if (order.owner === null) continue;
      owned.set(order.orderId, {
        accountId,
        amount: order.amount,
        filled: order.filledAmount,
        owner: order.owner,
      });
    }
  }
  let openChildren = 0;
  for (const accountId of USER_ACCOUNTS) {
    for (const p of algos.portfoliosOf(accountId)) {
      const active = p.status === 'PENDING' || p.status === 'WORKING';
      const where = `portfolio ${p.id} (${p.spec.portfolioType} ${p.status})`;
      for (const [i, leg] of p.legs.entries()) {
        const amount = p.spec.legs[i]!.amount;
        assert.ok(leg.filled <= amount, `${where}: leg ${i} filled ${leg.filled} > ${amount}`);
        // A leg's fills are its children's (a combo child fills each of its legs by its own lots).
        const children = p.children.filter((c) => childCovers(c, i));
        assert.equal(
          leg.filled,
          children.reduce((sum, c) => sum + c.filled, 0),
          `${where}: leg ${i} filled is not the sum of its children's`,
        );
        if (p.status === 'COMPLETED')
          assert.equal(leg.filled, amount, `${where}: completed with leg ${i} short`);
        if (leg.working !== null) {
          const child = p.children.find((c) => c.orderId === leg.working);
          assert.ok(child?.open && childCovers(child, i), `${where}: leg ${i} works a closed child`);
        }
      }
      for (const child of p.children) {
        assert.ok(child.filled <= child.amount, `${where}: child ${child.orderId} overfilled`);
        if (!child.open) continue;
        openChildren++;
        assert.ok(active, `${where}: open child ${child.orderId} on an ended portfolio`);
        const order = owned.get(child.orderId);
        assert.ok(order, `${where}: child ${child.orderId} is not an open engine order`);
        assert.equal(order.owner, String(p.id), `${where}: child ${child.orderId} owner`);
        assert.equal(order.amount, child.amount, `${where}: child ${child.orderId} amount`);
        assert.equal(order.filled, child.filled, `${where}: child ${child.orderId} filled`);
      }
      if (!active) assert.equal(p.legs.filter((l) => l.working !== null).length, 0, `${where}: working legs`);
    }
  }
  assert.equal(owned.size, openChildren, 'every open owned engine order is an open child');
}

// ---------------------------------------------------------------------------------------------

const OUTCOMES: Map<string, number> | null = process.env.ALGO_CHAOS_STATS ? new Map() : null;

function count(key: string): void {
  if (OUTCOMES !== null) OUTCOMES.set(key, (OUTCOMES.get(key) ?? 0) + 1);
}

function execute(core: Core, copy: CoreMachine | null, c: MachineCommand, label: string): void {
  let result: ReturnType<CoreMachine['execute']> | undefined;
  assert.doesNotThrow(() => {
    result = core.machine.execute(c);
  }, label);
  checkCopyAnswers(copy, c, result!, label);
  checkTradeNews(core, result!, label);
  const value = result!.result;
  count(`${c.type}: ${value.ok ? 'ok' : value.error.name}`);
}

/** Moves the clock `ms`: a timer at every wakeup the core asks for, as the service does (or late). */
function passTime(core: Core, copy: CoreMachine | null, ms: number, wakeups: boolean, label: string): void {
  passTimeOn(core, ms, wakeups, label, 2_000, (c, at) => execute(core, copy, c, at));
}

function runSession(steps: readonly Step[], cut: number): Core {
  const core = market();
  let copy: CoreMachine | null = null;
  for (const [i, s] of steps.entries()) {
    if (i === cut % steps.length) {
      copy = restoredCopy(core);
      assert.equal(copy.stateHash(), core.machine.stateHash(), 'restored hash');
    }
    const label = `step ${i}: ${JSON.stringify(s)}`;
    if (s.kind === 'time') {
      passTime(core, copy, s.ms, s.wakeups, label);
    } else {
      const next = commands(core, s);
      if (next === 'refused') {
        count('submit: refused by the gateway');
        continue;
      }
      for (const c of next) {
        core.ts += 3;
        execute(core, copy, core.stamp(c), label);
      }
    }
    core.machine.venue.validate();
    checkPortfolios(core);
  }
  checkInfoAnswers(core);
  checkRestoredAndReplayed(core, copy);
  return core;
}

const checkTradeNewsMessage = compileValidator(TradeNewsMessage, 'message');
const checkInfoAnswer = compileValidator(PortfolioInfoValue, 'value');

/** Every `trade-news` message is what the AsyncAPI document says it is, no field left out. */
function checkTradeNews(core: Core, result: ReturnType<CoreMachine['execute']>, label: string): void {
  const lookup = (name: string) => core.machine.venue.instrument(name)?.instrument;
  for (const event of (result.subEvents.get(PORTFOLIOS) ?? []) as readonly PortfolioEvent[]) {
    if (event.type !== 'portfolio') continue;
    assert.doesNotThrow(
      () => checkTradeNewsMessage(tradeNewsToWire(event, lookup)),
      `${label}: ${event.messageType}`,
    );
  }
}

/** Every portfolio's `info` answer is what the OpenAPI document says it is, no field left out. */
function checkInfoAnswers(core: Core): void {
  const lookup = (name: string) => core.machine.venue.instrument(name)?.instrument;
  for (const accountId of USER_ACCOUNTS) {
    for (const p of core.algos.portfoliosOf(accountId)) {
      assert.doesNotThrow(() => checkInfoAnswer(portfolioInfoToWire(p, lookup)), `portfolio ${p.id} info`);
    }
  }
}

test('property: random portfolio sessions never make the core throw; portfolios match the engine and restore', () => {
  let submitted = 0;
  let filled = 0;
  fc.assert(
    fc.property(
      fc.array(step, { minLength: 15, maxLength: Number(process.env.ALGO_CHAOS_STEPS ?? 60), size: 'max' }),
      fc.nat(),
      (steps, cut) => {
        const core = runSession(steps, cut);
        for (const accountId of USER_ACCOUNTS) {
          for (const p of core.algos.portfoliosOf(accountId)) {
            submitted++;
            if (p.legs.some((l) => l.filled > 0)) filled++;
            for (const child of p.children) {
              count(
                `child ${child.combo ? 'combo' : child.market ? 'market' : child.iceberg !== undefined ? 'iceberg' : 'limit'} ${child.filled > 0 ? 'filled' : 'unfilled'}`,
              );
            }
            count(
              `portfolio ${p.spec.portfolioType} ${p.status} ${p.endReason ?? ''} ${(p.endMessage ?? '').replace(/[0-9.]+/g, '#')}`,
            );
          }
        }
      },
    ),
    {
      numRuns: Number(process.env.ALGO_CHAOS_RUNS ?? 200),
      seed: process.env.ALGO_CHAOS_SEED ? Number(process.env.ALGO_CHAOS_SEED) : undefined,
    },
  );
  if (OUTCOMES !== null) console.log({ submitted, filled }, [...OUTCOMES].sort());
  // The generator must reach working portfolios that trade, not only refusals.
  assert.ok(submitted > 50, `only ${submitted} portfolios submitted`);
  assert.ok(filled > 10, `only ${filled} portfolios traded`);
});
