/**
 * Drives the market at the edge: lists the catalogue and prices at start, then every tick turns
 * time into ordinary commands (index/mark updates, expiries, the liquidity simulator's orders)
 * submitted through the same sequencer as users' commands.
 *
 * Refusals of market commands are expected and harmless (e.g. re-listing an instrument that a
 * recovered venue already has, or a simulator order that lost a race) and are only counted.
 */
import type { UnstampedCommand } from '../core/commands.ts';
import type { InstrumentSpec } from '../domain/instrument.ts';
import type { Venue } from '../engine/venue.ts';
import type { MarketDriver } from '../market/driver.ts';
import type { SimulatorView } from '../market/simulator/view.ts';
import type { Clock } from './clock.ts';
import type { CoreService } from './core-service.ts';

/** Market commands applied per event-loop turn (each costs a few µs to tens of µs). */
const SUBMIT_CHUNK = 128;

export interface MarketLoopOptions {
  readonly driver: MarketDriver;
  readonly core: CoreService;
  readonly clock: Clock;
  readonly tickMs: number;
  /** Whether the liquidity simulator trades (prices and expiries run regardless). */
  readonly simulator: boolean;
  readonly onError: (error: unknown) => void;
}

export class MarketLoop {
  private cancelNext: (() => void) | null = null;
  private stopped = false;
  private running: Promise<void> = Promise.resolve();
  refused = 0;
  submitted = 0;
  ticks = 0;
  /**
   * Observes every synchronous slice of market work (one event-loop turn): its duration in ms
   * and the tick it belongs to (benchmarks, metrics).
   */
  onSlice: ((ms: number, tick: number) => void) | null = null;

  constructor(private readonly options: MarketLoopOptions) {}

  /**
   * Lists and prices the market; resolves once those commands are durable. `listed` are the
   * instruments a recovered venue already has: the driver takes them over instead of relisting.
   */
  async start(listed: readonly InstrumentSpec[] = []): Promise<void> {
    await this.submitAll(this.options.driver.start(this.options.core.now(), listed));
    this.scheduleNext();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelNext?.();
    await this.running;
  }

  /** One market step at the current time (also used by tests with a virtual clock). */
  async tick(): Promise<void> {
    const { driver, core, simulator } = this.options;
    const startedAt = performance.now();
    this.ticks++;
    const view = simulator ? venueSimulatorView(core.machine.venue) : undefined;
    await this.submitAll(driver.tick(core.now(), view), startedAt);
  }

  private scheduleNext(): void {
    if (this.stopped) return;
    const { clock, tickMs, onError } = this.options;
    this.cancelNext = clock.schedule(clock.now() + tickMs, () => {
      this.running = this.tick()
        .catch(onError)
        .finally(() => this.scheduleNext());
    });
  }

  /**
   * Submits in chunks, yielding to the event loop between them: a tick can carry thousands of
   * commands (the simulator seeding books), and applying them in one go stalled every request
   * for up to a second. Users' commands may now interleave with a tick's; the simulator already
   * treats a command that lost such a race as a harmless refusal.
   */
  private async submitAll(
    commands: readonly UnstampedCommand[],
    startedAt = performance.now(),
  ): Promise<void> {
    const pending: Promise<{ ok: boolean }>[] = [];
    let sliceStart = startedAt;
    for (let start = 0; start < commands.length; start += SUBMIT_CHUNK) {
      if (start > 0) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        sliceStart = performance.now();
      }
      const end = Math.min(commands.length, start + SUBMIT_CHUNK);
      for (let i = start; i < end; i++) pending.push(this.options.core.submit(commands[i]!));
      this.onSlice?.(performance.now() - sliceStart, this.ticks);
    }
    const results = await Promise.all(pending);
    this.submitted += results.length;
    for (const result of results) if (!result.ok) this.refused++;
  }
}

/** The simulator's read interface over the engine's queries. */
export function venueSimulatorView(venue: Venue): SimulatorView {
  return {
    instruments: () =>
      venue
        .instruments()
        .filter((info) => info.status === 'open')
        .map((info) => info.instrument),
    openOrders: (accountId) =>
      venue
        .openOrders({ accountId })
        .filter((order) => order.price !== null)
        .map((order) => ({
          orderId: order.orderId,
          instrumentName: order.instrumentName,
          side: order.side,
          price: order.price as number,
          amount: order.amount,
          filledAmount: order.filledAmount,
          label: order.label,
        })),
    positions: (accountId) =>
      venue
        .positions(accountId)
        .map((position) => ({ instrumentName: position.instrumentName, size: position.size })),
    bestPrices: (instrumentName) => {
      const book = venue.book(instrumentName, 1);
      return { bestBid: book?.bestBid ?? null, bestAsk: book?.bestAsk ?? null };
    },
  };
}
