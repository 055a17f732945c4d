/**
 * The market driver: the one object the composition root ticks. It owns the index sources,
 * the index history, the listed catalogue and the liquidity simulator, and turns time into
 * ordinary core commands for the sequencer to stamp and journal:
 *
 *   start(now): list_instrument for the catalogue, the simulator's accounts and funding, and
 *               the first update_prices;
 *   tick(now, view?) (or tickSteps, the same in small steps for the event loop):
 *     1. sample every index (recorded for the settlement TWAP, and passed to the pricing as the
 *        part of a settlement average already fixed);
 *     2. roll: settle_instrument for every listed instrument whose expiry is ≤ now, at the
 *        settlement index (30-min TWAP before expiry), then list_instrument for what is due
 *        (checked at every expiry and at least once a minute);
 *     3. update_prices (all indices; the marks, in ticks, that changed since last sent; split
 *        in commands of at most 256 marks, the first carrying the indices);
 *     4. the simulator's commands (when a view of the venue is given and it is enabled).
 *
 * Deterministic for a given config and sequence of `now`s (sources are seeded or replayed).
 * It keeps no venue state beyond what it listed (an instrument it settles is forgotten: the
 * engine keeps expired instruments); the engine stays the source of truth.
 */
import type { UnstampedCommand } from '../core/commands.ts';
import { Instrument, type InstrumentSpec } from '../domain/instrument.ts';
import { buildCatalogue, type CatalogueConfig, DEFAULT_CATALOGUE, rollCatalogueSteps } from './catalogue.ts';
import { createCombo, parseComboName } from './combos.ts';
import { defaultSimulatedIndex, type IndexSource } from './index-source.ts';
import { defaultMarketModel, type MarketModel, type MarketState, priceMarket } from './market-state.ts';
import { priceUpdateCommand, settlementCommand, splitPriceUpdate } from './price-updates.ts';
import { IndexHistory } from './settlement.ts';
import { DEFAULT_SIMULATOR_CONFIG, type SimulatorConfig } from './simulator/config.ts';
import { LiquiditySimulator } from './simulator/simulator.ts';
import type { SimulatorView } from './simulator/view.ts';
import { runToEnd, type Steps } from './steps.ts';

/** New strikes (index moved, grid finer nearer expiry) are looked for once a minute. */
const LISTING_CHECK_MS = 60_000;
/** Marks computed per step of `tickSteps` (a Black-76 price with greeks is about 1–2 µs). */
const MARKS_PER_STEP = 64;
/**
 * Marks per `update_prices` of a tick: a quiet second changes hundreds, and applying plus
 * journaling ~900 in one command blocked the service for up to 5 ms.
 */
const MARKS_PER_UPDATE = 256;

export interface MarketDriverConfig {
  readonly sources: readonly IndexSource[];
  readonly model: MarketModel;
  readonly catalogue: CatalogueConfig;
  readonly simulator: SimulatorConfig;
}

/**
 * Simulated BTC and ETH indices, default surfaces, catalogue and simulator, from one seed.
 * After a restart pass the recovered venue's last index prices as `initialPrices` so the
 * simulated market continues where it was.
 */
export function defaultMarketDriverConfig(
  startTime: number,
  seed = 1,
  initialPrices: Readonly<Record<string, number>> = {},
): MarketDriverConfig {
  const currencies = DEFAULT_CATALOGUE.currencies;
  return {
    sources: currencies.map((currency) =>
      defaultSimulatedIndex(currency, startTime, seed, initialPrices[currency]),
    ),
    model: defaultMarketModel(0, currencies),
    catalogue: DEFAULT_CATALOGUE,
    simulator: { ...DEFAULT_SIMULATOR_CONFIG, seed },
  };
}

export type ComboListing =
  | { readonly ok: true; readonly spec: InstrumentSpec; readonly command: UnstampedCommand | null }
  | { readonly ok: false; readonly message: string };

export class MarketDriver {
  private readonly listed = new Map<string, Instrument>();
  private readonly history = new IndexHistory();
  /** Mark ticks last sent per instrument: update_prices carries only changes. */
  private readonly sentMarks = new Map<string, number>();
  private lastListingCheck: number | null = null;
  private readonly simulator: LiquiditySimulator;
  private state: MarketState | null = null;

  constructor(readonly config: MarketDriverConfig) {
    this.simulator = new LiquiditySimulator(config.simulator);
  }

  /**
   * Index samples a recovered venue kept (its `indexSamples()`): a restart inside a settlement
   * window then averages over the whole window, not only over what was sampled since the start
   * with the first sample stretched back over the gap.
   */
  seedIndexHistory(
    samples: ReadonlyArray<readonly [string, ReadonlyArray<readonly [number, number]>]>,
  ): void {
    this.history.restore(samples);
  }

  /** Commands that bring an empty venue to a listed, priced market. */
  /**
   * `alreadyListed`: the instruments a recovered venue already has (active ones). They are
   * adopted — priced, rolled and settled like the driver's own — and not listed again; any
   * whose expiry passed while the service was down settle at the next tick.
   */
  start(now: number, alreadyListed: readonly InstrumentSpec[] = []): UnstampedCommand[] {
    const levels = this.sample(now);
    const commands: UnstampedCommand[] = [];
    for (const spec of alreadyListed) this.listed.set(spec.name, new Instrument(0, spec));
    for (const spec of buildCatalogue(now, levels, this.config.catalogue)) {
      if (!this.listed.has(spec.name)) commands.push(this.list(spec));
    }
    commands.push(...this.simulator.setupCommands());
    this.state = priceMarket(now, levels, this.specs(), this.config.model, this.history);
    commands.push(
      ...splitPriceUpdate(
        priceUpdateCommand(this.state, this.listed.values(), this.sentMarks),
        MARKS_PER_UPDATE,
      ),
    );
    return commands;
  }

  tick(now: number, view?: SimulatorView): UnstampedCommand[] {
    return runToEnd(this.tickSteps(now, view));
  }

  /**
   * `tick` in small steps (steps.ts), for a caller that spreads a tick over several event-loop
   * turns: the same commands as `tick(now, view)` for the same venue, whatever the pauses.
   * The view is read as the steps go, so submit the commands once they are all returned (as
   * `tick` callers do), not in between. One tick at a time.
   */
  *tickSteps(now: number, view?: SimulatorView): Steps<UnstampedCommand[]> {
    const levels = this.sample(now);
    const commands: UnstampedCommand[] = [];
    const listNew = this.lastListingCheck === null || now - this.lastListingCheck >= LISTING_CHECK_MS;
    const plan = yield* rollCatalogueSteps(now, this.specs(), levels, this.config.catalogue, { listNew });
    if (listNew || plan.expire.length > 0) this.lastListingCheck = now;
    const lookup = (name: string) => this.listed.get(name)?.spec;
    // The marks of the last tick: those of the legs that trade on past an expiring combo.
    const previous = this.state;
    const continuing = (name: string) => previous?.mark(name)?.markPrice;
    for (const spec of plan.expire) {
      const instrument = this.listed.get(spec.name)!;
      const settlementIndex =
        this.history.settlementIndex(spec.baseCurrency, spec.expiration!) ?? levels[spec.baseCurrency]!;
      const command = settlementCommand(instrument, settlementIndex, lookup, continuing);
      if (command !== null) commands.push(command);
    }
    for (const spec of plan.expire) {
      this.listed.delete(spec.name);
      this.sentMarks.delete(spec.name);
    }
    for (const spec of plan.list) commands.push(this.list(spec));
    yield;
    // What is priced now (a combo listed on demand from here on is priced at the next tick).
    const instruments = [...this.listed.values()];
    const state = priceMarket(
      now,
      levels,
      instruments.map((instrument) => instrument.spec),
      this.config.model,
      this.history,
    );
    this.state = state;
    for (let i = 0; i < instruments.length; i++) {
      state.mark(instruments[i]!.name);
      if ((i + 1) % MARKS_PER_STEP === 0) yield;
    }
    yield;
    commands.push(
      ...splitPriceUpdate(priceUpdateCommand(state, instruments, this.sentMarks), MARKS_PER_UPDATE),
    );
    if (view !== undefined) {
      yield;
      commands.push(...(yield* this.simulator.steps(now, state, view)));
    }
    return commands;
  }

  /** The latest market (after `start` or the last `tick`). */
  market(): MarketState {
    if (this.state === null) throw new Error('the market driver has not started');
    return this.state;
  }

  /** Listed (unexpired) instruments, sorted by name. */
  instruments(): Instrument[] {
    return [...this.listed.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * A combo by its Deribit-style id: the listed spec, or a new spec and its list_instrument
   * command (the combo is listed from now on and priced at the next tick).
   */
  combo(name: string, now: number): ComboListing {
    const existing = this.listed.get(name);
    if (existing !== undefined) return { ok: true, spec: existing.spec, command: null };
    const request = parseComboName(name);
    if (request === null) return { ok: false, message: `${name} is not a combo id` };
    const created = createCombo(request, (leg) => this.listed.get(leg)?.spec, now);
    if (!created.ok) return created;
    return { ok: true, spec: created.spec, command: this.list(created.spec) };
  }

  simulatorSnapshot() {
    return this.simulator.snapshot();
  }

  private specs(): InstrumentSpec[] {
    return [...this.listed.values()].map((instrument) => instrument.spec);
  }

  private list(spec: InstrumentSpec): UnstampedCommand {
    this.listed.set(spec.name, new Instrument(0, spec));
    return { type: 'list_instrument', spec };
  }

  private sample(now: number): Record<string, number> {
    const levels: Record<string, number> = {};
    for (const source of this.config.sources) {
      const price = source.priceAt(now);
      levels[source.currency] = price;
      this.history.record(source.currency, now, price);
    }
    return levels;
  }
}
