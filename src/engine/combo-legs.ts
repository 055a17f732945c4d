/**
 * A combo's legs as the engine trades them, and the prices its trades split into (Deribit's
 * model: a trade on a combo's book is booked as one trade per leg, and positions live on the
 * legs only).
 *
 * Prices are worked in one unit u, the finest leg tick: a leg's tick is `step` units and the
 * combo's tick `ComboBook.step` units (BTC-FS-25DEC26_PERP: u = 0.5 USD, the perpetual's tick;
 * the dated future and the combo tick 2.5 USD, 5 units).
 *
 * Invariants:
 * - Every leg has ratio ±1, the combo's amount grid (a combo lot is a leg lot) and its
 *   settlement currency, and every tick is a whole number of units (`comboLegsProblem` refuses
 *   anything else at listing).
 * - `legPrices(P, legs)` returns leg prices on each leg's own grid, each at least one tick, with
 *   Σ ratio_i × p_i = P exactly: every leg at its reference (mark, else last price) but one, the
 *   dearest of the finest-ticked legs, which absorbs the net. Only when that would take it below
 *   one tick do the others move, as little as their ticks allow. It returns null only when no
 *   such prices exist (P outside `comboPriceRange`).
 */
import type { Side } from '../core/types.ts';
import { parseDecimal } from '../domain/decimal.ts';
import type { InstrumentSpec } from '../domain/instrument.ts';
import type { InstrumentState, VenueState } from './state.ts';

export interface ComboLegState {
  readonly instrument: InstrumentState;
  /** +1: traded in the combo's direction; −1: the opposite one. */
  readonly ratio: 1 | -1;
  /** The leg's tick in units. */
  readonly step: number;
}

export interface ComboBook {
  readonly legs: readonly ComboLegState[];
  /** The combo's tick in units. */
  readonly step: number;
}

/** Each tick in units of the finest leg tick, or null when one is not a whole number of them. */
function ticksInUnits(
  comboTick: string,
  legTicks: readonly string[],
): { combo: number; legs: number[] } | null {
  const parsed = [comboTick, ...legTicks].map((tick) => parseDecimal(tick, 'tickSize'));
  const scale = Math.max(...parsed.map((p) => p.scale));
  const units = parsed.map((p) => p.units * 10n ** BigInt(scale - p.scale));
  let unit = units[1]!;
  for (const u of units.slice(2)) if (u < unit) unit = u;
  if (unit <= 0n || units.some((u) => u % unit !== 0n)) return null;
  const steps = units.map((u) => Number(u / unit));
  return { combo: steps[0]!, legs: steps.slice(1) };
}

/** Why a combo spec cannot be split into its legs, or null when it can. */
export function comboLegsProblem(
  spec: InstrumentSpec,
  lookup: (name: string) => InstrumentSpec | undefined,
): string | null {
  if (spec.legs === null) return null;
  if (spec.legs.length < 2) return 'a combo needs at least two legs';
  const legSpecs: InstrumentSpec[] = [];
  for (const leg of spec.legs) {
    const legSpec = lookup(leg.instrumentName);
    if (legSpec === undefined) return `combo leg ${leg.instrumentName} is not listed`;
    if (legSpec.legs !== null) return `combo leg ${leg.instrumentName} is itself a combo`;
    if (leg.ratio !== 1 && leg.ratio !== -1)
      return `combo leg ${leg.instrumentName} has ratio ${leg.ratio}, not ±1`;
    if (legSpec.minTradeAmount !== spec.minTradeAmount)
      return `combo leg ${leg.instrumentName} trades in other lots than the combo`;
    if (legSpec.settlementCurrency !== spec.settlementCurrency)
      return `combo leg ${leg.instrumentName} settles in another currency`;
    legSpecs.push(legSpec);
  }
  if (
    ticksInUnits(
      spec.tickSize,
      legSpecs.map((legSpec) => legSpec.tickSize),
    ) === null
  )
    return 'combo and leg ticks must all be whole multiples of the finest leg tick';
  return null;
}

const resolved = new WeakMap<InstrumentState, ComboBook>();

/** The combo's legs and ticks (resolved once per instrument), or null for an instrument that is no combo. */
export function comboLegs(state: VenueState, instrument: InstrumentState): ComboBook | null {
  const legs = instrument.instrument.spec.legs;
  if (legs === null) return null;
  let book = resolved.get(instrument);
  if (book === undefined) {
    const legStates = legs.map((leg) => state.instruments.get(leg.instrumentName)!);
    const ticks = ticksInUnits(
      instrument.instrument.spec.tickSize,
      legStates.map((leg) => leg.instrument.spec.tickSize),
    )!;
    book = {
      legs: legs.map((leg, i) => ({
        instrument: legStates[i]!,
        ratio: leg.ratio > 0 ? 1 : -1,
        step: ticks.legs[i]!,
      })),
      step: ticks.combo,
    };
    resolved.set(instrument, book);
  }
  return book;
}

/** The side a party trades a leg on when it trades the combo on `side`. */
export function legSide(side: Side, ratio: 1 | -1): Side {
  if (ratio === 1) return side;
  return side === 'buy' ? 'sell' : 'buy';
}

/**
 * The combo prices (ticks) that split into leg prices of at least one tick: a combo of bought
 * legs only trades at one tick of each leg or more, one of sold legs only at minus that or less.
 */
export function comboPriceRange(book: ComboBook): { readonly min: number; readonly max: number } {
  let bought = 0;
  let sold = 0;
  for (const leg of book.legs) {
    if (leg.ratio > 0) bought += leg.step;
    else sold += leg.step;
  }
  return {
    min: sold === 0 ? Math.ceil(bought / book.step) : Number.NEGATIVE_INFINITY,
    max: bought === 0 ? -Math.ceil(sold / book.step) : Number.POSITIVE_INFINITY,
  };
}

export interface LegTerms {
  readonly ratio: 1 | -1;
  /** The leg's tick in units. */
  readonly step: number;
  /** Its reference price in units (a whole number of its ticks), null when it has none. */
  readonly reference: number | null;
}

/** Leg prices in units for a combo price of `price` units (see the invariants above). */
export function legPrices(price: number, legs: readonly LegTerms[]): number[] | null {
  const prices = legs.map((leg) => Math.max(leg.step, leg.reference ?? leg.step));
  const finest = Math.min(...legs.map((leg) => leg.step));
  let absorber = -1;
  for (let i = 0; i < legs.length; i++) {
    if (legs[i]!.step === finest && (absorber < 0 || prices[i]! > prices[absorber]!)) absorber = i;
  }
  const solve = (): number => {
    let rest = price;
    for (let i = 0; i < legs.length; i++) if (i !== absorber) rest -= legs[i]!.ratio * prices[i]!;
    return legs[absorber]!.ratio * rest;
  };
  const own = legs[absorber]!;
  let absorbed = solve();
  if (absorbed % own.step !== 0) return null;
  let shortfall = own.step - absorbed;
  if (shortfall > 0) {
    // The absorber rises by `shortfall` when the others shift their net by −ratio × shortfall: a
    // leg of the opposite ratio rises (no bound), one of the same ratio falls (to one tick).
    const others = legs.map((_, i) => i).filter((i) => i !== absorber);
    others.sort((a, b) => prices[b]! - prices[a]! || a - b);
    for (const i of others) {
      if (shortfall <= 0) break;
      const leg = legs[i]!;
      const move = Math.ceil(shortfall / leg.step) * leg.step;
      if (leg.ratio !== own.ratio) {
        prices[i] = prices[i]! + move;
        shortfall -= move;
      } else {
        const room = prices[i]! - leg.step;
        const fall = Math.min(room, move);
        prices[i] = prices[i]! - fall;
        shortfall -= fall;
      }
    }
    absorbed = solve();
    if (absorbed < own.step || absorbed % own.step !== 0) return null;
  }
  prices[absorber] = absorbed;
  return prices;
}

/**
 * Leg prices in each leg's own ticks for a trade (or a reserve) at `price` combo ticks, from the
 * legs' marks (else their last prices); null when they cannot net to it.
 */
export function comboLegPrices(book: ComboBook, price: number): number[] | null {
  const units = legPrices(
    price * book.step,
    book.legs.map((leg) => {
      const reference = leg.instrument.markPrice ?? leg.instrument.lastPrice;
      return {
        ratio: leg.ratio,
        step: leg.step,
        reference: reference === null ? null : reference * leg.step,
      };
    }),
  );
  return units === null ? null : units.map((p, i) => p / book.legs[i]!.step);
}

/**
 * The mark a combo takes from its legs' marks, in combo ticks: Σ ratio × leg mark, rounded to
 * the nearest combo tick as the market rounds the combo's own mark (src/market/price-updates.ts,
 * `Math.round` of the net over the combo tick; the market nets unrounded leg marks, so the two
 * may differ by a tick); null when a leg has no mark. Only journaled state goes in, so replay
 * gives the same figure.
 */
export function comboMarkFromLegs(book: ComboBook): number | null {
  let units = 0;
  for (const leg of book.legs) {
    const mark = leg.instrument.markPrice;
    if (mark === null) return null;
    units += leg.ratio * mark * leg.step;
  }
  return Math.round(units / book.step);
}
