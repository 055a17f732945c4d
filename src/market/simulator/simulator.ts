/**
 * The liquidity simulator: liquidity providers and takers whose orders are ordinary core
 * commands (the same path as users' orders; the caller stamps and submits them).
 *
 * `step(now, market, view)` returns the commands due at `now`:
 * 1. Makers: for each listed instrument of a maker's currencies/products, the wanted ladder
 *    (quoting.ts), reached from the resting quotes by requote.ts (label-keyed: place what is
 *    missing, edit what moved beyond tolerance, cancel what is no longer wanted, never crossing
 *    the maker's own quotes). The index moving moves the marks, which moves the wanted prices:
 *    that is the refresh.
 * 2. Hedging: an `options` maker whose net coin delta in a currency passes the threshold sends
 *    an immediate-or-cancel order on the inverse perpetual at the best opposite price.
 * 3. Takers: a Poisson number of IOC orders (rate × elapsed time) on random instruments,
 *    crossing the spread at the best opposite price, so trades print and the tape moves.
 *
 * Deterministic: same config, same sequence of (now, market, view) ⇒ same commands. State is
 * the RNG and the last step time (`snapshot`/`restore`). Instruments are visited in the view's
 * order, orders and positions looked up by name, so iteration order never depends on hashing.
 */
import type { UnstampedCommand } from '../../core/commands.ts';
import { currencyDecimals, type Side } from '../../core/types.ts';
import type { Instrument } from '../../domain/instrument.ts';
import type { MarketState } from '../market-state.ts';
import { SeededRandom } from '../random.ts';
import { LONG_STEP, runToEnd, type Steps } from '../steps.ts';
import type { MakerAccount, SimulatorConfig } from './config.ts';
import { quoteLadder } from './quoting.ts';
import { limitOrder, QUOTE_LABEL_PREFIX, QuoteLabels, requote } from './requote.ts';
import type { SimulatorOrder, SimulatorView } from './view.ts';

const MAX_TAKER_GAP_MS = 60_000;
/** Instruments quoted per step of `steps` (a ladder and its requote: a few µs each). */
const INSTRUMENTS_PER_STEP = 32;
const NO_ORDERS: ReadonlyMap<string, SimulatorOrder> = new Map();
/** Resting orders indexed per step. */
const ORDERS_PER_STEP = 1024;

export interface SimulatorSnapshot {
  readonly random: readonly number[];
  readonly lastStep: number | null;
}

/**
 * The maker's inventory in the instrument's own units, for the quote skew. A combo holds no
 * position (its trades are booked on the legs), so its inventory is read from the legs: the
 * average of leg position × ratio, which is −10 on every leg after selling 10 call spreads.
 */
export function inventoryOf(instrument: Instrument, positions: ReadonlyMap<string, number>): number {
  const legs = instrument.spec.legs;
  if (legs === null) return positions.get(instrument.name) ?? 0;
  let sum = 0;
  for (const leg of legs) sum += (positions.get(leg.instrumentName) ?? 0) * Math.sign(leg.ratio);
  return sum / legs.length;
}

function quotesProducts(maker: MakerAccount, instrument: Instrument): boolean {
  if (!maker.currencies.includes(instrument.spec.baseCurrency)) return false;
  const isOptionLike = instrument.spec.kind === 'option' || instrument.spec.kind === 'option_combo';
  switch (maker.products) {
    case 'all':
      return true;
    case 'options':
      return isOptionLike;
    case 'delta_one':
      return !isOptionLike;
    default: {
      const _exhaustive: never = maker.products;
      return _exhaustive;
    }
  }
}

export class LiquiditySimulator {
  private random: SeededRandom;
  private lastStep: number | null = null;
  private readonly labels = new QuoteLabels();

  constructor(readonly config: SimulatorConfig) {
    this.random = SeededRandom.fromSeed(config.seed);
  }

  snapshot(): SimulatorSnapshot {
    return { random: this.random.state(), lastStep: this.lastStep };
  }

  restore(snapshot: SimulatorSnapshot): void {
    this.random = SeededRandom.fromState(snapshot.random);
    this.lastStep = snapshot.lastStep;
  }

  /** Accounts and funding for the makers and the taker (submit once, before the first step). */
  setupCommands(): UnstampedCommand[] {
    if (!this.config.enabled) return [];
    const accounts = this.config.makers.map((maker) => maker.accountId);
    if (this.config.takerAccountId !== null) accounts.push(this.config.takerAccountId);
    const commands: UnstampedCommand[] = [];
    for (const accountId of accounts) {
      commands.push({ type: 'create_account', accountId, maxOpenOrders: this.config.maxOpenOrders });
      for (const [currency, units] of Object.entries(this.config.funding)) {
        commands.push({
          type: 'deposit',
          accountId,
          currency,
          amount: Math.round(units * 10 ** currencyDecimals(currency)),
        });
      }
    }
    return commands;
  }

  step(now: number, market: MarketState, view: SimulatorView): UnstampedCommand[] {
    return runToEnd(this.steps(now, market, view));
  }

  /**
   * `step` in small steps (steps.ts): the same commands for the same inputs, whatever the
   * pauses. The view is read as the steps go.
   */
  *steps(now: number, market: MarketState, view: SimulatorView): Steps<UnstampedCommand[]> {
    if (!this.config.enabled) return [];
    const commands: UnstampedCommand[] = [];
    const instruments = [...view.instruments()];
    const atmVol = new Map<string, number>();
    const assetVolatility = (currency: string): number => {
      let vol = atmVol.get(currency);
      if (vol === undefined) {
        const model = market.model.currencies[currency];
        const index = market.hasIndex(currency) ? market.index(currency) : 1;
        vol = model ? model.surface.volatility(index, index, 30 / 365) : this.config.referenceVolatility;
        atmVol.set(currency, vol);
      }
      return vol;
    };
    for (const maker of this.config.makers) {
      yield;
      yield* this.quoteMaker(maker, instruments, market, view, assetVolatility, commands);
      if (maker.products === 'options') {
        yield;
        this.hedgeMaker(maker, instruments, market, view, commands);
      }
    }
    yield;
    this.takers(now, instruments, view, commands);
    this.lastStep = now;
    return commands;
  }

  private *quoteMaker(
    maker: MakerAccount,
    instruments: readonly Instrument[],
    market: MarketState,
    view: SimulatorView,
    assetVolatility: (currency: string) => number,
    commands: UnstampedCommand[],
  ): Steps<void> {
    // The venue lists every open order of the account at once (milliseconds for thousands).
    yield LONG_STEP;
    const open = [...view.openOrders(maker.accountId)];
    yield;
    const resting = new Map<string, Map<string, SimulatorOrder>>();
    for (let i = 0; i < open.length; i++) {
      const order = open[i]!;
      if (order.label.startsWith(QUOTE_LABEL_PREFIX)) {
        let byLabel = resting.get(order.instrumentName);
        if (byLabel === undefined) {
          byLabel = new Map();
          resting.set(order.instrumentName, byLabel);
        }
        byLabel.set(order.label, order);
      }
      if ((i + 1) % ORDERS_PER_STEP === 0) yield;
    }
    yield;
    const positions = new Map<string, number>();
    for (const position of view.positions(maker.accountId))
      positions.set(position.instrumentName, position.size);
    let quoted = 0;
    for (const instrument of instruments) {
      if (!quotesProducts(maker, instrument)) continue;
      const mark = market.mark(instrument.name);
      if (mark === undefined) continue;
      const volatility = mark.markIv ?? assetVolatility(instrument.spec.baseCurrency);
      const ladder = quoteLadder(
        instrument,
        mark,
        volatility,
        inventoryOf(instrument, positions),
        this.config,
        view.priceBand?.(instrument.name) ?? null,
      );
      const orders = resting.get(instrument.name) ?? NO_ORDERS;
      resting.delete(instrument.name);
      requote(maker.accountId, instrument.name, ladder, orders, commands, this.labels.of(instrument, ladder));
      if (++quoted % INSTRUMENTS_PER_STEP === 0) yield;
    }
    for (const orders of resting.values()) {
      for (const order of orders.values()) {
        // Orders on an instrument the market no longer prices (expired: the engine cancels
        // them when it settles) are left alone.
        if (market.mark(order.instrumentName) === undefined) continue;
        commands.push({ type: 'cancel_order', accountId: maker.accountId, orderId: order.orderId });
      }
    }
  }

  /** Net delta in coins per currency from the maker's positions. */
  private hedgeMaker(
    maker: MakerAccount,
    instruments: readonly Instrument[],
    market: MarketState,
    view: SimulatorView,
    commands: UnstampedCommand[],
  ): void {
    const byName = new Map(instruments.map((instrument) => [instrument.name, instrument]));
    const delta = new Map<string, number>();
    for (const position of view.positions(maker.accountId)) {
      const instrument = byName.get(position.instrumentName);
      const mark = market.mark(position.instrumentName);
      if (instrument === undefined || mark === undefined || position.size === 0) continue;
      const spec = instrument.spec;
      const lot = Number(spec.minTradeAmount);
      let coins = 0;
      if (spec.kind === 'option') coins = position.size * lot * (mark.greeks?.delta ?? 0);
      else if (spec.kind === 'future' && spec.marginKind === 'inverse')
        coins = (position.size * lot) / mark.markPrice;
      else if (spec.kind === 'future' || spec.kind === 'spot') coins = position.size * lot;
      // Greeks are against the forward; inside a settlement window only its unfixed part moves.
      if (spec.kind !== 'spot') coins *= market.forwardExposure(spec.baseCurrency, spec.expiration);
      delta.set(spec.baseCurrency, (delta.get(spec.baseCurrency) ?? 0) + coins);
    }
    for (const currency of maker.currencies) {
      const net = delta.get(currency) ?? 0;
      const threshold = this.config.hedgeThreshold[currency] ?? Number.POSITIVE_INFINITY;
      if (Math.abs(net) <= threshold) continue;
      const perpetual = byName.get(`${currency}-PERPETUAL`);
      if (perpetual === undefined || !market.hasIndex(currency)) continue;
      const side: Side = net > 0 ? 'sell' : 'buy';
      const best = view.bestPrices(perpetual.name);
      const price = side === 'buy' ? best.bestAsk : best.bestBid;
      const lotUsd = Number(perpetual.spec.minTradeAmount);
      const lots = Math.round((Math.abs(net) * market.index(currency)) / lotUsd);
      if (price === null || lots <= 0) continue;
      commands.push(
        limitOrder(maker.accountId, perpetual.name, side, price, lots, 'lp-hedge', 'immediate_or_cancel'),
      );
    }
  }

  private takers(
    now: number,
    instruments: readonly Instrument[],
    view: SimulatorView,
    commands: UnstampedCommand[],
  ): void {
    const accountId = this.config.takerAccountId;
    if (accountId === null || instruments.length === 0 || this.lastStep === null) return;
    const elapsed = Math.min(Math.max(now - this.lastStep, 0), MAX_TAKER_GAP_MS);
    const count = this.random.poisson((this.config.takerOrdersPerMinute * elapsed) / 60_000);
    for (let i = 0; i < count; i++) {
      const instrument = instruments[this.random.int(instruments.length)]!;
      const side: Side = this.random.next() < 0.5 ? 'buy' : 'sell';
      const lots = 1 + this.random.int(Math.max(1, this.config.takerMaxSizeMultiple));
      const best = view.bestPrices(instrument.name);
      const price = side === 'buy' ? best.bestAsk : best.bestBid;
      if (price === null) continue;
      commands.push(
        limitOrder(accountId, instrument.name, side, price, lots, 'sim-taker', 'immediate_or_cancel'),
      );
    }
  }
}
