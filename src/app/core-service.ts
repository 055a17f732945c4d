/**
 * The core service: the gateway's ports (commands, reads, committed events) implemented over
 * the sequencer and the core machine, plus the timer that wakes the core when something is due.
 *
 * Invariants:
 * - Every write goes through the sequencer (stamped, applied, journaled, acknowledged after
 *   durability); reads are synchronous views of the machine's current state.
 * - Committed listeners see every command's events in seq order, after durability.
 * - Whenever the core reports an earlier wakeup than the one scheduled, the timer is moved, so
 *   good_til_day expiries, RFQ expiry and algorithm slices fire on time (virtual or wall clock).
 */

import type {
  AccountSummaryView,
  CommandPort,
  CommittedBatch,
  EventPort,
  OrderBookView,
  OrderFilter,
  ReadPort,
  TickerView,
} from '../api/ports.ts';
import type { UnstampedCommand } from '../core/commands.ts';
import type { CommandResult, OrderView, PositionView } from '../core/events.ts';
import type { CoreMachine, MachineCommand, MachineResult } from '../core/machine.ts';
import type { SubCommand } from '../core/submachine.ts';
import type { Instrument } from '../domain/instrument.ts';
import type { MarketState } from '../market/market-state.ts';
import { tickerFigures } from '../market/ticker.ts';
import type { Clock } from './clock.ts';
import { type AppendOnlyJournal, Sequencer, type Stamp } from './sequencer.ts';

export type UnstampedMachineCommand = UnstampedCommand | Omit<SubCommand, 'seq' | 'ts'>;

export interface CoreServiceOptions {
  readonly machine: CoreMachine;
  readonly journal: AppendOnlyJournal<MachineCommand>;
  readonly clock: Clock;
  /** Where the journal ends (after recovery). */
  readonly start: Stamp;
  /** The latest priced market, for ticker figures (IV, greeks); null when none. */
  readonly market?: () => MarketState | null;
  readonly onError?: (error: unknown) => void;
}

export class CoreService implements CommandPort, ReadPort, EventPort {
  readonly machine: CoreMachine;
  private readonly sequencer: Sequencer<MachineCommand, MachineResult>;
  private readonly listeners = new Set<(batch: CommittedBatch) => void>();
  private readonly clock: Clock;
  private readonly market: () => MarketState | null;
  private readonly onError: (error: unknown) => void;
  private timer: { at: number; cancel: () => void } | null = null;
  private stopped = false;

  constructor(options: CoreServiceOptions) {
    this.machine = options.machine;
    this.clock = options.clock;
    this.market = options.market ?? (() => null);
    this.onError = options.onError ?? (() => {});
    this.sequencer = new Sequencer<MachineCommand, MachineResult>(
      (command, stamp) =>
        this.machine.execute({ ...command, seq: stamp.seq, ts: stamp.ts } as MachineCommand),
      options.journal,
      options.clock,
      options.start,
    );
    this.sequencer.onCommitted((entry, result) => {
      const batch: CommittedBatch = {
        seq: entry.seq,
        ts: entry.ts,
        events: result.engineEvents,
        subEvents: result.subEvents,
      };
      for (const listener of this.listeners) {
        try {
          listener(batch);
        } catch (error) {
          this.onError(error);
        }
      }
    });
    this.scheduleWakeup();
  }

  get sequence(): number {
    return this.sequencer.sequence;
  }

  // ---- commands -------------------------------------------------------------------------------

  /** An engine command (the gateway's port). */
  async submit(command: UnstampedCommand): Promise<CommandResult> {
    const outcome = await this.submitMachine(command);
    return outcome.result as CommandResult;
  }

  /** Any command of the core: engine or sub-machine (RFQ desk, portfolio algorithms). */
  submitMachine(command: UnstampedMachineCommand): Promise<MachineResult> {
    // The journal holds the stamped command; the sequencer stamps a copy when applying it.
    const pending = this.sequencer.submit(command as MachineCommand);
    this.scheduleWakeup();
    return pending;
  }

  now(): number {
    return this.sequencer.now();
  }

  /** Resolves once everything submitted so far is durable. */
  drain(): Promise<void> {
    return this.sequencer.drain();
  }

  /** Stops the wakeup timer; submitted commands still complete. */
  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = null;
  }

  // ---- committed events -----------------------------------------------------------------------

  onCommitted(listener: (batch: CommittedBatch) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  // ---- reads ----------------------------------------------------------------------------------

  instrument(name: string): Instrument | undefined {
    return this.machine.venue.instrument(name)?.instrument;
  }

  instruments(expired: boolean): readonly Instrument[] {
    const wanted = expired ? 'expired' : 'open';
    return this.machine.venue
      .instruments()
      .filter((info) => info.status === wanted)
      .map((info) => info.instrument);
  }

  order(orderId: string): OrderView | undefined {
    return this.machine.venue.getOrder(orderId) ?? undefined;
  }

  openOrders(accountId: number, filter: OrderFilter): readonly OrderView[] {
    return this.machine.venue.openOrders({
      accountId,
      instrumentName: filter.instrumentName ?? null,
      currency: filter.currency ?? null,
      kind: filter.kind ?? null,
    });
  }

  positions(accountId: number, filter: OrderFilter): readonly PositionView[] {
    const positions = this.machine.venue.positions(accountId, filter.currency ?? null, filter.kind ?? null);
    return filter.instrumentName === undefined
      ? positions
      : positions.filter((position) => position.instrumentName === filter.instrumentName);
  }

  accountSummary(accountId: number, currency: string): AccountSummaryView | undefined {
    const summary = this.machine.venue.accountSummary(accountId, currency);
    if (summary === null) return undefined;
    return {
      accountId,
      currency,
      balance: summary.balance,
      equity: summary.equity,
      availableFunds: summary.availableFunds,
      initialMargin: summary.positionMargin + summary.orderMargin,
      maintenanceMargin: summary.positionMargin,
    };
  }

  orderBook(instrumentName: string, depth: number): OrderBookView | undefined {
    const book = this.machine.venue.book(instrumentName, depth);
    if (book === null) return undefined;
    return {
      instrumentName,
      timestamp: this.machine.venue.now,
      bids: book.bids.map((level) => [level.price, level.amount] as const),
      asks: book.asks.map((level) => [level.price, level.amount] as const),
    };
  }

  ticker(instrumentName: string): TickerView | undefined {
    const venue = this.machine.venue;
    const info = venue.instrument(instrumentName);
    if (info === null) return undefined;
    const book = venue.book(instrumentName, 1);
    const bestBid = book?.bids[0];
    const bestAsk = book?.asks[0];
    const market = this.market();
    const figures =
      market === null || info.status !== 'open'
        ? null
        : tickerFigures(info.instrument, market, {
            bestBid: bestBid?.price ?? null,
            bestAsk: bestAsk?.price ?? null,
          });
    return {
      instrumentName,
      timestamp: venue.now,
      state: info.status,
      bestBidPrice: bestBid?.price ?? null,
      bestBidAmount: bestBid?.amount ?? 0,
      bestAskPrice: bestAsk?.price ?? null,
      bestAskAmount: bestAsk?.amount ?? 0,
      lastPrice: info.lastPrice,
      markPrice: info.markPrice,
      indexPrice: info.indexPrice,
      markIv: figures?.markIv ?? null,
      bidIv: figures?.bidIv ?? null,
      askIv: figures?.askIv ?? null,
      underlyingPrice: figures?.underlyingPrice ?? null,
    };
  }

  currencies(): readonly string[] {
    const currencies = new Set<string>();
    for (const info of this.machine.venue.instruments()) currencies.add(info.instrument.currency);
    return [...currencies].sort();
  }

  // ---- timers ---------------------------------------------------------------------------------

  private scheduleWakeup(): void {
    if (this.stopped) return;
    const at = this.machine.nextWakeup();
    if (at === null) return;
    if (this.timer !== null && this.timer.at <= at) return;
    this.timer?.cancel();
    const cancel = this.clock.schedule(at, () => {
      this.timer = null;
      if (this.stopped) return;
      this.submitMachine({ type: 'timer' }).catch(this.onError);
    });
    this.timer = { at, cancel };
  }
}
