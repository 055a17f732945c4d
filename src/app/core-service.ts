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
import { createVenueReadPort } from '../api/venue-read-port.ts';
import type { UnstampedCommand } from '../core/commands.ts';
import type { CommandResult, OrderView, PositionView, TradeView } from '../core/events.ts';
import type { CoreMachine, MachineCommand, MachineResult } from '../core/machine.ts';
import type { RulesVersionCommand } from '../core/rules-version.ts';
import type { SubCommand } from '../core/submachine.ts';
import type { Instrument } from '../domain/instrument.ts';
import type { MarketState } from '../market/market-state.ts';
import { tickerFigures } from '../market/ticker.ts';
import type { Clock } from './clock.ts';
import { type AppendOnlyJournal, Sequencer, type Stamp, stampInPlace } from './sequencer.ts';

export type UnstampedMachineCommand =
  | UnstampedCommand
  | Omit<SubCommand, 'seq' | 'ts'>
  | Omit<RulesVersionCommand, 'seq' | 'ts'>;

export interface CoreServiceOptions {
  readonly machine: CoreMachine;
  readonly journal: AppendOnlyJournal<MachineCommand>;
  readonly clock: Clock;
  /** Where the journal ends (after recovery). */
  readonly start: Stamp;
  /** The latest priced market, for ticker figures (IV, greeks); null when none. */
  readonly market?: () => MarketState | null;
  readonly onError?: (error: unknown) => void;
  /**
   * The sequencer stopped taking commands (the journal failed, or the core threw on a command):
   * the in-memory state can no longer be trusted and the process should restart from the journal.
   */
  readonly onFatal?: (error: Error) => void;
}

const commandResultOf = (outcome: MachineResult): CommandResult => outcome.result as CommandResult;

export class CoreService implements CommandPort, ReadPort, EventPort {
  readonly machine: CoreMachine;
  private readonly sequencer: Sequencer<MachineCommand, MachineResult>;
  private readonly listeners = new Set<(batch: CommittedBatch) => void>();
  private readonly clock: Clock;
  private readonly market: () => MarketState | null;
  private readonly onError: (error: unknown) => void;
  private readonly reads: ReadPort;
  private timer: { at: number; cancel: () => void } | null = null;
  private stopped = false;

  constructor(options: CoreServiceOptions) {
    this.machine = options.machine;
    this.clock = options.clock;
    this.market = options.market ?? (() => null);
    this.onError = options.onError ?? (() => {});
    this.reads = createVenueReadPort(this.machine.venue, {
      tickerExtras: (instrumentName) => this.tickerExtras(instrumentName),
    });
    this.sequencer = new Sequencer<MachineCommand, MachineResult>(
      (command, stamp) => this.machine.execute(stampInPlace(command, stamp)),
      options.journal,
      options.clock,
      options.start,
    );
    if (options.onFatal !== undefined) this.sequencer.onFatal(options.onFatal);
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

  /** Why the core stopped taking commands, or null while it runs (see `onFatal`). */
  get failed(): Error | null {
    return this.sequencer.failed;
  }

  // ---- commands -------------------------------------------------------------------------------

  /** An engine command (the gateway's port). */
  submit(command: UnstampedCommand): Promise<CommandResult> {
    // Not an async function (one promise and microtask less per order), but it still never throws:
    // a command the core throws on becomes a rejection, as callers that only .catch() expect.
    try {
      return this.submitMachine(command).then(commandResultOf);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Any command of the core: engine or sub-machine (RFQ desk, portfolio algorithms). */
  submitMachine(command: UnstampedMachineCommand): Promise<MachineResult> {
    // The command is stamped in place when applied, and journaled stamped.
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

  // ---- reads (the gateway's one adapter over the engine's queries) ---------------------------

  instrument(name: string): Instrument | undefined {
    return this.reads.instrument(name);
  }
  instruments(expired: boolean): readonly Instrument[] {
    return this.reads.instruments(expired);
  }
  order(orderId: string): OrderView | undefined {
    return this.reads.order(orderId);
  }
  openOrders(accountId: number, filter: OrderFilter): readonly OrderView[] {
    return this.reads.openOrders(accountId, filter);
  }
  positions(accountId: number, filter: OrderFilter): readonly PositionView[] {
    return this.reads.positions(accountId, filter);
  }
  position(accountId: number, instrumentName: string): PositionView | undefined {
    return this.reads.position(accountId, instrumentName);
  }
  orderMargins(accountId: number, instrumentName: string, lots: number, price: number) {
    return this.reads.orderMargins(accountId, instrumentName, lots, price);
  }
  valuedPosition(position: PositionView): PositionView {
    return this.reads.valuedPosition(position);
  }
  accountSummary(accountId: number, currency: string): AccountSummaryView | undefined {
    return this.reads.accountSummary(accountId, currency);
  }
  orderBook(instrumentName: string, depth: number): OrderBookView | undefined {
    return this.reads.orderBook(instrumentName, depth);
  }
  ticker(instrumentName: string): TickerView | undefined {
    return this.reads.ticker(instrumentName);
  }
  recentTrades(instrumentName: string, count: number): readonly TradeView[] {
    return this.reads.recentTrades(instrumentName, count);
  }
  currencies(): readonly string[] {
    return this.reads.currencies();
  }
  estimatedDeliveryPrice(currency: string): number | null {
    return this.reads.estimatedDeliveryPrice?.(currency) ?? this.reads.indexPrice(currency);
  }
  indexPrice(currency: string): number | null {
    return this.reads.indexPrice(currency);
  }
  accountCancelOnDisconnect(accountId: number): boolean {
    return this.reads.accountCancelOnDisconnect(accountId);
  }

  /** Model figures (IVs, underlying) for the ticker, from the latest priced market. */
  private tickerExtras(instrumentName: string): Partial<TickerView> | undefined {
    const market = this.market();
    const info = this.machine.venue.instrument(instrumentName);
    if (market === null || info === null || info.status !== 'open') return undefined;
    const book = this.machine.venue.book(instrumentName, 1);
    const figures = tickerFigures(info.instrument, market, {
      bestBid: book?.bids[0]?.price ?? null,
      bestAsk: book?.asks[0]?.price ?? null,
    });
    if (figures === null) return undefined;
    return {
      markIv: figures.markIv,
      bidIv: figures.bidIv,
      askIv: figures.askIv,
      underlyingPrice: figures.underlyingPrice,
      greeks: figures.greeks,
    };
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
