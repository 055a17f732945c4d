/**
 * A tiny composite core for algorithm tests: the real engine (`Venue`) plus the portfolio
 * machine, driven by a virtual clock. It does what src/core/machine.ts does for one sub-machine:
 * due timers first (`advance`), then the command, then `react` with the engine events the
 * command produced (repeated while reacting produced more). Every command is journaled here so
 * a test can replay them into a fresh pair.
 */

import { PortfolioMachine } from '../../src/algo/machine.ts';
import type {
  AlgoCommand,
  AlgoEvent,
  BalanceSpec,
  LegPricing,
  LegSpec,
  PortfolioEvent,
  PortfolioPruned,
  PortfolioSpec,
} from '../../src/algo/types.ts';
import { venueMarketView } from '../../src/algo/venue-market-view.ts';
import type { CommandStamp, CoreCommand, UnstampedCommand } from '../../src/core/commands.ts';
import type { CommandResult, CoreEvent } from '../../src/core/events.ts';
import type { EnginePort } from '../../src/core/submachine.ts';
import type { InstrumentSpec } from '../../src/domain/instrument.ts';
import { optionSpec, orderCommand, perpetualSpec, T0 } from '../../src/engine/testkit.ts';
import { Venue } from '../../src/engine/venue.ts';

export { T0 };
export const MAKER = 1;
export const TRADER = 2;
export const MIRROR = 3;
export const PERP = 'BTC-PERPETUAL';
export const OPTION = 'BTC-27DEC26-70000-C';
export const PUT = 'BTC-27DEC26-70000-P';
/** 60,000 USD in the perpetual's 0.5 ticks. */
export const PERP_60K = 120_000;
/** As src/core/machine.ts: more reaction rounds than this for one command is a loop. */
const MAX_REACTION_ROUNDS = 64;

type Journaled =
  | { readonly kind: 'core'; readonly command: CoreCommand }
  | { readonly kind: 'algo'; readonly command: AlgoCommand };

export class AlgoHarness {
  venue: Venue;
  machine: PortfolioMachine;
  seq = 0;
  ts = T0;
  readonly journal: Journaled[] = [];
  readonly news: PortfolioEvent[] = [];
  /** `portfolio_pruned` events (not trade-news). */
  readonly pruned: PortfolioPruned[] = [];
  /** Every place_order the machine sent (to prove no duplicates after a restart). */
  readonly placed: string[] = [];

  constructor(venue = Venue.create(), machine?: PortfolioMachine) {
    this.venue = venue;
    this.machine = machine ?? new PortfolioMachine(venueMarketView(venue));
  }

  /** A restart: both machines restored from their snapshots, at this harness's seq and time. */
  restarted(): AlgoHarness {
    const venue = Venue.restore(this.venue.snapshot());
    const machine = new PortfolioMachine(venueMarketView(venue));
    machine.restore(this.machine.snapshot());
    const copy = new AlgoHarness(venue, machine);
    copy.seq = this.seq;
    copy.ts = this.ts;
    return copy;
  }

  /** A fresh pair fed this harness's whole journal, each command at its own stamp. */
  replayed(): AlgoHarness {
    const copy = new AlgoHarness();
    for (const entry of this.journal) {
      copy.seq = entry.command.seq - 1;
      copy.ts = entry.command.ts;
      if (entry.kind === 'core') copy.core(entry.command);
      else copy.algo(entry.command);
    }
    return copy;
  }

  /** Standard market: BTC index 60,000, perpetual and option listed, maker and trader funded. */
  static withMarket(): AlgoHarness {
    const h = new AlgoHarness();
    h.core({ type: 'list_instrument', spec: perpetualSpec() });
    h.core({ type: 'list_instrument', spec: optionSpec() as InstrumentSpec });
    h.core({ type: 'list_instrument', spec: optionSpec({ name: PUT, optionType: 'put' }) });
    for (const accountId of [MAKER, TRADER, MIRROR]) {
      h.core({ type: 'create_account', accountId });
      h.core({ type: 'deposit', accountId, currency: 'BTC', amount: 100_000_000_000 });
    }
    h.core({
      type: 'update_prices',
      indexPrices: [{ currency: 'BTC', price: 60_000 }],
      markPrices: [
        { instrumentName: PERP, markPrice: PERP_60K },
        { instrumentName: OPTION, markPrice: 500 },
        { instrumentName: PUT, markPrice: 1000 },
      ],
    });
    return h;
  }

  private port(collected: CoreEvent[]): EnginePort {
    return {
      execute: (command: CoreCommand): CommandResult => {
        if (command.type === 'place_order')
          this.placed.push(`${command.seq}:${command.instrumentName}:${command.amount}`);
        const result = this.venue.execute(command);
        collected.push(...result.events);
        return result;
      },
    };
  }

  private record(events: readonly AlgoEvent[]): void {
    for (const event of events) {
      if (event.type === 'portfolio') this.news.push(event);
      else this.pruned.push(event);
    }
  }

  private stamp(): CommandStamp {
    return { seq: ++this.seq, ts: this.ts };
  }

  /** Reacts until the engine is quiet; like the core, a runaway reaction loop throws. */
  private settle(stamp: CommandStamp, events: CoreEvent[]): void {
    let pending = events;
    for (let round = 0; pending.length > 0; round++) {
      if (round >= MAX_REACTION_ROUNDS) throw new Error(`reactions did not settle within ${round} rounds`);
      const more: CoreEvent[] = [];
      this.record(this.machine.react(pending, stamp, this.port(more)));
      pending = more;
    }
  }

  core(command: UnstampedCommand): CommandResult {
    const stamp = this.stamp();
    const stamped = { ...command, ...stamp } as CoreCommand;
    this.journal.push({ kind: 'core', command: stamped });
    const collected: CoreEvent[] = [];
    this.record(this.machine.advance(stamp, this.port(collected)));
    const result = this.venue.execute(stamped);
    collected.push(...result.events);
    this.settle(stamp, collected);
    return result;
  }

  algo(command: Omit<AlgoCommand, 'seq' | 'ts'>) {
    const stamp = this.stamp();
    const stamped = { ...command, ...stamp } as AlgoCommand;
    this.journal.push({ kind: 'algo', command: stamped });
    const collected: CoreEvent[] = [];
    this.record(this.machine.advance(stamp, this.port(collected)));
    const result = this.machine.execute(stamped, this.port(collected));
    this.record(result.events);
    this.settle(stamp, collected);
    return result;
  }

  submit(portfolio: PortfolioSpec): number {
    const result = this.algo({ type: 'submit_portfolio', portfolio } as Omit<AlgoCommand, 'seq' | 'ts'>);
    if (!result.ok) throw new Error(`submit refused: ${result.error.message}`);
    if (result.value.kind !== 'submitted') throw new Error('unexpected value');
    return result.value.portfolioId;
  }

  /** Moves the virtual clock to `to`, firing a timer at every wakeup on the way. */
  runUntil(to: number): void {
    for (let guard = 0; guard < 100_000; guard++) {
      const next = this.machine.nextWakeup();
      if (next === null || next > to) break;
      this.ts = Math.max(this.ts, next);
      this.core({ type: 'timer' });
    }
    this.ts = Math.max(this.ts, to);
  }

  maker(side: 'buy' | 'sell', amount: number, price: number, instrumentName = PERP): CommandResult {
    return this.limit(MAKER, side, amount, price, 'maker', instrumentName);
  }

  /** A resting GTC limit order of `accountId`, placed through the API path. */
  limit(
    accountId: number,
    side: 'buy' | 'sell',
    amount: number,
    price: number,
    label: string,
    instrumentName = PERP,
  ): CommandResult {
    return this.core(orderCommand(accountId, side, amount, price, { instrumentName, label }));
  }

  childOrders(portfolioId: number) {
    return this.machine.portfolio(portfolioId)!.children;
  }

  openChildren(portfolioId: number) {
    return this.venue.openOrders({
      accountId: this.machine.portfolio(portfolioId)!.spec.accountId,
      owner: String(portfolioId),
    });
  }

  messages(portfolioId: number): string[] {
    return this.news.filter((e) => e.portfolioId === portfolioId).map((e) => e.messageType);
  }
}

/** The 70,000 call: 30 lots at 0.05 BTC. */
export const callLeg = (overrides: Partial<LegSpec> = {}) =>
  leg({
    instrumentName: OPTION,
    instrumentType: 'OPTION',
    amount: 30,
    pricing: { ...leg().pricing, price: 0.05, priceIn: 'BTC' },
    ...overrides,
  });

/** The 70,000 put: 60 lots at 0.1 BTC. */
export const putLeg = (overrides: Partial<LegSpec> = {}) =>
  leg({
    instrumentName: PUT,
    instrumentType: 'OPTION',
    amount: 60,
    pricing: { ...leg().pricing, price: 0.1, priceIn: 'BTC' },
    ...overrides,
  });

/** Three parts of 10 s, no total limit, the rest cancelled at the end. */
export const balanceSpec = (overrides: Partial<BalanceSpec> = {}): BalanceSpec => ({
  parts: 3,
  eachLimitMs: 10_000,
  totalLimitMs: 0,
  totalEndAction: 'CANCEL_REMAINING',
  ...overrides,
});

/** A MARKET leg's pricing: no price, no unit. */
export const MARKET_PRICING: LegPricing = {
  priceType: 'MARKET',
  price: null,
  priceIn: null,
  dynamicStrategy: null,
  dynamicOffset: 0,
  dynamicMs: null,
};

export function leg(overrides: Partial<LegSpec> = {}): LegSpec {
  return {
    instrumentName: PERP,
    instrumentType: 'PERPETUAL',
    side: 'buy',
    amount: 100,
    pricing: {
      priceType: 'LIMIT',
      price: 60_000,
      priceIn: 'USD',
      dynamicStrategy: null,
      dynamicOffset: 0,
      dynamicMs: null,
    },
    timeInForce: null,
    postOnly: false,
    reduceOnly: false,
    hidden: false,
    tradeMode: null,
    positionSide: null,
    hedge: false,
    priority: false,
    forCcy: null,
    priceSnapshot: [],
    ...overrides,
  };
}

export function portfolio(overrides: Partial<PortfolioSpec> = {}): PortfolioSpec {
  return {
    accountId: TRADER,
    portfolioType: 'COMMON',
    strategy: null,
    customizedNote: null,
    legs: [leg()],
    balance: null,
    twap: null,
    iceberg: null,
    mirrorAccountIds: [],
    ...overrides,
  };
}
