/**
 * Drives the market at the edge: lists the catalogue and prices at start, then every tick turns
 * time into ordinary commands (index/mark updates, expiries, the liquidity simulator's orders)
 * submitted through the same sequencer as users' commands.
 *
 * Refusals of market commands are expected and harmless (e.g. re-listing an instrument that a
 * recovered venue already has, or a simulator order that lost a race) and are only counted.
 */
import type { UnstampedCommand } from '../core/commands.ts';
import type { OrderView } from '../core/events.ts';
import { VenueError } from '../domain/errors.ts';
import type { InstrumentSpec } from '../domain/instrument.ts';
import type { Venue } from '../engine/venue.ts';
import type { MarketDriver } from '../market/driver.ts';
import type { SimulatorOrder, SimulatorView } from '../market/simulator/view.ts';
import { nextTurn, runInTurns, type Steps } from '../market/steps.ts';
import type { Clock } from './clock.ts';
import type { CoreService } from './core-service.ts';

/**
 * Market work per event-loop turn, ms (the turn ends after the step that reaches it; steps are
 * tens to hundreds of µs). Requests wait at most about this long for the market.
 */
const TURN_BUDGET_MS = 2;

export interface MarketLoopOptions {
  readonly driver: MarketDriver;
  readonly core: CoreService;
  readonly clock: Clock;
  readonly tickMs: number;
  /** Whether the liquidity simulator trades (prices and expiries run regardless). */
  readonly simulator: boolean;
  readonly onError: (error: unknown) => void;
  /** Market work per event-loop turn, ms (default TURN_BUDGET_MS). */
  readonly turnBudgetMs?: number;
}

export class MarketLoop {
  private cancelNext: (() => void) | null = null;
  private stopped = false;
  private running: Promise<void> = Promise.resolve();
  refused = 0;
  submitted = 0;
  ticks = 0;
  private readonly sliceListeners: Array<(ms: number, tick: number) => void> = [];
  private readonly comboListings = new Map<string, Promise<void>>();

  constructor(private readonly options: MarketLoopOptions) {}

  /**
   * Observes every synchronous slice of market work (one event-loop turn): its duration in ms
   * and the tick it belongs to (benchmarks, metrics).
   */
  observeSlices(listener: (ms: number, tick: number) => void): void {
    this.sliceListeners.push(listener);
  }

  /**
   * Lists and prices the market; resolves once those commands are durable. `listed` are the
   * instruments a recovered venue already has: the driver takes them over instead of relisting.
   */
  async start(listed: readonly InstrumentSpec[] = []): Promise<void> {
    const commands = this.options.driver.start(this.options.core.now(), listed);
    await this.run(this.submitting(commands));
    this.scheduleNext();
  }

  /**
   * Lists a combo by its id on first use (ComboPort): the driver builds it from the listed legs
   * and the listing is journaled; concurrent requests for one new combo share one listing.
   */
  listCombo(name: string): Promise<void> {
    let pending = this.comboListings.get(name);
    if (pending === undefined) {
      pending = this.submitCombo(name).finally(() => this.comboListings.delete(name));
      this.comboListings.set(name, pending);
    }
    return pending;
  }

  private async submitCombo(name: string): Promise<void> {
    const listing = this.options.driver.combo(name, this.options.core.now());
    if (!listing.ok) {
      throw new VenueError('invalid_instrument', `${name}: ${listing.message}`, {
        field: 'instrumentName',
        instrumentName: name,
      });
    }
    if (listing.command === null) return;
    const result = await this.options.core.submit(listing.command);
    if (!result.ok) throw new VenueError(result.error.name, result.error.message, { ...result.error.data });
  }

  /**
   * Resolves once the tick under way, if any, has submitted all its commands (tests with a virtual
   * clock wait on it after moving the clock; the commands' durability is the core's `drain`).
   */
  idle(): Promise<void> {
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelNext?.();
    await this.running;
  }

  /**
   * One market step at the current time (also used by tests with a virtual clock), spread over
   * event-loop turns of about `turnBudgetMs`: the driver's steps (pricing, the simulator reading
   * the venue), then the submissions. The commands are all computed before the first is
   * submitted, so they are what `driver.tick` would return at the tick's start; users' commands
   * may interleave with the turns, as the simulator already expects (a command that lost such a
   * race is a harmless refusal).
   */
  async tick(): Promise<void> {
    const { driver, core, simulator } = this.options;
    this.ticks++;
    const view = simulator ? venueSimulatorView(core.machine.venue) : undefined;
    await this.run(this.tickSteps(driver.tickSteps(core.now(), view)));
  }

  private *tickSteps(driverSteps: Steps<UnstampedCommand[]>): Steps<Promise<{ ok: boolean }>[]> {
    const commands = yield* driverSteps;
    return yield* this.submitting(commands);
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

  /** Submits the commands one step each (a tick can carry thousands: the first seeds every book). */
  private *submitting(commands: readonly UnstampedCommand[]): Steps<Promise<{ ok: boolean }>[]> {
    const pending: Promise<{ ok: boolean }>[] = [];
    for (const command of commands) {
      const result = this.options.core.submit(command);
      // Observed now, awaited after the last turn: a refusal in between is not "unhandled".
      result.catch(() => {});
      pending.push(result);
      yield;
    }
    return pending;
  }

  /** Runs the steps in turns, then waits until what they submitted is durable and counts it. */
  private async run(steps: Steps<Promise<{ ok: boolean }>[]>): Promise<void> {
    const tick = this.ticks;
    const pending = await runInTurns(steps, {
      budgetMs: this.options.turnBudgetMs ?? TURN_BUDGET_MS,
      now: () => performance.now(),
      yieldTurn: nextTurn,
      onTurn: (ms) => {
        for (const listener of this.sliceListeners) listener(ms, tick);
      },
    });
    const results = await Promise.all(pending);
    this.submitted += results.length;
    for (const result of results) if (!result.ok) this.refused++;
  }
}

/** The simulator's read interface over the engine's queries. */
export function venueSimulatorView(venue: Venue): SimulatorView {
  return {
    // The open instruments alone: no walk over the expired ones, no price bands.
    instruments: () => venue.listedInstruments(false),
    // The engine's order views carry every field the simulator reads: no copy (thousands a tick).
    openOrders: (accountId) =>
      venue
        .openOrders({ accountId })
        .filter((order): order is OrderView & SimulatorOrder => order.price !== null),
    positions: (accountId) =>
      venue
        .positions(accountId)
        .map((position) => ({ instrumentName: position.instrumentName, size: position.size })),
    bestPrices: (instrumentName) => {
      const book = venue.book(instrumentName, 1);
      return { bestBid: book?.bestBid ?? null, bestAsk: book?.bestAsk ?? null };
    },
    priceBand: (instrumentName) => venue.instrument(instrumentName)?.priceBand ?? null,
  };
}
