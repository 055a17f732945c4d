/**
 * Test and benchmark helpers: instrument specs and a command builder with an automatic stamp.
 * Not used by production code.
 */
import type { CoreCommand, PlaceOrder, UnstampedCommand } from '../core/commands.ts';
import type { CommandResult, TradeParty } from '../core/events.ts';
import type { InstrumentSpec } from '../domain/instrument.ts';
import { decodeSnapshotState, encodeSnapshot } from '../store/record-format.ts';
import type { EngineConfig } from './config.ts';
import { Venue, type VenueSnapshot } from './venue.ts';

export const T0 = Date.UTC(2026, 0, 5, 12);

/** Inverse BTC perpetual: quantity in USD (lot 10), tick 0.5 USD, settled in BTC. */
export function perpetualSpec(overrides: Partial<InstrumentSpec> = {}): InstrumentSpec {
  return {
    name: 'BTC-PERPETUAL',
    kind: 'future',
    baseCurrency: 'BTC',
    quoteCurrency: 'USD',
    counterCurrency: 'USD',
    settlementCurrency: 'BTC',
    marginKind: 'inverse',
    settlementPeriod: 'perpetual',
    optionType: null,
    strike: null,
    expiration: null,
    tickSize: '0.5',
    tickSizeSteps: [],
    minTradeAmount: '10',
    contractSize: '10',
    makerCommission: '0',
    takerCommission: '0.0005',
    blockTradeMinTradeAmount: '200000',
    createdAt: 0,
    legs: null,
    ...overrides,
  };
}

/** Linear USDC perpetual: quantity in BTC (lot 0.001), tick 0.5 USDC. */
export function linearPerpetualSpec(overrides: Partial<InstrumentSpec> = {}): InstrumentSpec {
  return perpetualSpec({
    name: 'BTC_USDC-PERPETUAL',
    quoteCurrency: 'USDC',
    counterCurrency: 'BTC',
    settlementCurrency: 'USDC',
    marginKind: 'linear',
    minTradeAmount: '0.001',
    contractSize: '0.001',
    makerCommission: '-0.0001',
    takerCommission: '0.0005',
    ...overrides,
  });
}

/**
 * Inverse BTC call option: quantity in BTC (lot 0.1, block minimum 25), price in BTC (tick
 * 0.0001 / 0.0005).
 */
export function optionSpec(overrides: Partial<InstrumentSpec> = {}): InstrumentSpec {
  return perpetualSpec({
    name: 'BTC-27DEC26-70000-C',
    kind: 'option',
    quoteCurrency: 'BTC',
    counterCurrency: 'USD',
    settlementPeriod: 'month',
    optionType: 'call',
    strike: '70000',
    expiration: Date.UTC(2026, 11, 27, 8),
    tickSize: '0.0001',
    tickSizeSteps: [{ abovePrice: '0.005', tickSize: '0.0005' }],
    minTradeAmount: '0.1',
    contractSize: '1',
    makerCommission: '0.0003',
    takerCommission: '0.0003',
    blockTradeMinTradeAmount: '25',
    ...overrides,
  });
}

/** BTC_USDC spot: quantity in BTC (lot 0.0001), tick 1 USDC. */
export function spotSpec(overrides: Partial<InstrumentSpec> = {}): InstrumentSpec {
  return perpetualSpec({
    name: 'BTC_USDC',
    kind: 'spot',
    quoteCurrency: 'USDC',
    counterCurrency: 'BTC',
    settlementCurrency: 'USDC',
    marginKind: 'linear',
    settlementPeriod: null,
    tickSize: '1',
    minTradeAmount: '0.0001',
    contractSize: '0.0001',
    makerCommission: '0',
    takerCommission: '0.001',
    ...overrides,
  });
}

/** A venue driven by unstamped commands: seq counts up, ts is the current virtual time. */
export class Harness {
  readonly venue: Venue;
  seq = 0;
  ts = T0;

  /** `venue`: drive an existing one (a restored venue) instead of a new one. */
  constructor(config: Partial<EngineConfig> = {}, venue: Venue = Venue.create(config)) {
    this.venue = venue;
  }

  /** `command` with the next seq and the current virtual time, as the sequencer stamps it. */
  stamp(command: UnstampedCommand): CoreCommand {
    return { ...command, seq: ++this.seq, ts: this.ts } as CoreCommand;
  }

  run(command: UnstampedCommand): CommandResult {
    return this.venue.execute(this.stamp(command));
  }

  /** Runs and asserts success. */
  ok(command: UnstampedCommand): Extract<CommandResult, { ok: true }> {
    const result = this.run(command);
    if (!result.ok) throw new Error(`expected success, got ${result.error.name}: ${result.error.message}`);
    return result;
  }

  account(accountId: number, deposits: Record<string, number> = { BTC: 100_000_000_000 }): void {
    this.ok({ type: 'create_account', accountId });
    for (const [currency, amount] of Object.entries(deposits)) {
      this.ok({ type: 'deposit', accountId, currency, amount });
    }
  }

  list(spec: InstrumentSpec): void {
    this.ok({ type: 'list_instrument', spec });
  }

  /** Marks the inverse perpetual at `markPrice` ticks (100,000: 50,000 USD), the BTC index at 50,000 USD. */
  markPerpetual(markPrice = 100_000): void {
    this.ok({
      type: 'update_prices',
      indexPrices: [{ currency: 'BTC', price: 50_000 }],
      markPrices: [{ instrumentName: 'BTC-PERPETUAL', markPrice }],
    });
  }

  order(
    accountId: number,
    side: 'buy' | 'sell',
    amount: number,
    price: number | null,
    more: Partial<Omit<PlaceOrder, 'type' | 'seq' | 'ts'>> = {},
  ): CommandResult {
    return this.run(orderCommand(accountId, side, amount, price, more));
  }
}

/** Account 1 with `funds` sat, rich accounts 2-4, on a fee-free perpetual marked at 50,000 USD. */
export function markedPerpetualVenue(funds: number): Harness {
  const h = new Harness();
  h.list(perpetualSpec({ takerCommission: '0' }));
  h.account(1, { BTC: funds });
  for (const id of [2, 3, 4]) h.account(id);
  h.markPerpetual();
  return h;
}

/** A good-til-cancelled limit (or, without a price, market) order on the perpetual unless `more` says otherwise. */
export function orderCommand(
  accountId: number,
  side: 'buy' | 'sell',
  amount: number,
  price: number | null,
  more: Partial<Omit<PlaceOrder, 'type' | 'seq' | 'ts'>> = {},
): Omit<PlaceOrder, 'seq' | 'ts'> {
  return {
    type: 'place_order',
    accountId,
    instrumentName: 'BTC-PERPETUAL',
    side,
    orderType: price === null ? 'market' : 'limit',
    amount,
    price,
    timeInForce: 'good_til_cancelled',
    postOnly: false,
    rejectPostOnly: false,
    reduceOnly: false,
    label: '',
    validUntil: null,
    source: { api: true },
    ...more,
  };
}

/** One side of a trade: a limit order over the API, filled, no fee or PnL, unless `fields` say otherwise. */
export function tradeParty(
  fields: Pick<TradeParty, 'accountId' | 'orderId' | 'side' | 'liquidity'> & Partial<TradeParty>,
): TradeParty {
  const { accountId, orderId, side, liquidity, ...more } = fields;
  return {
    accountId,
    orderId,
    orderType: 'limit',
    side,
    liquidity,
    state: 'filled',
    fee: 0,
    feeCurrency: 'BTC',
    profitLoss: 0,
    label: '',
    owner: null,
    api: true,
    postOnly: false,
    mmp: false,
    reduceOnly: false,
    riskReducing: false,
    advanced: null,
    ...more,
  };
}

/** `venue` restored from its snapshot as the snapshot store writes and reads it back (at `seq`). */
export function restoreStored(venue: Venue, seq = 0): Venue {
  const stored = encodeSnapshot(seq, venue.now, venue.stateHash(), venue.snapshot());
  return Venue.restore(decodeSnapshotState<VenueSnapshot>(stored));
}

/** A property's fast-check seed from `PROPERTY_SEED` (replaying a reported failure), if set. */
export function propertySeed(): number | undefined {
  const seed = process.env.PROPERTY_SEED;
  return seed === undefined || seed === '' ? undefined : Number(seed);
}

/**
 * The least funds (in (0, `most`]) with which `attempt` on a fresh venue is taken, by bisection
 * (a funds check is monotone in the funds), and what the account has available after it then.
 */
export function leastFundsTaken(
  attempt: (funds: number) => { readonly taken: boolean; readonly available: number },
  most: number,
): { funds: number; available: number } {
  if (!attempt(most).taken) throw new Error(`not taken even with ${most}`);
  let low = 0;
  let high = most;
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (attempt(middle).taken) high = middle;
    else low = middle;
  }
  return { funds: high, available: attempt(high).available };
}
