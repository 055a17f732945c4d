/**
 * A combo's legs as the engine trades them, and the prices its trades split into (Deribit's
 * model: a trade on a combo's book is booked as one trade per leg, and positions live on the
 * legs only).
 *
 * Invariants:
 * - Every leg has ratio ±1 and the combo's own price and amount grids (`comboLegsProblem`
 *   refuses anything else at listing), so a combo tick is a leg tick and a combo lot a leg lot.
 * - `legPrices(P, legs)` returns whole leg ticks p_i ≥ 1 with Σ ratio_i × p_i = P exactly, each leg
 *   at its reference (mark, else last price) except where the net must be absorbed; the dearest
 *   leg absorbs first, so the relative move off the marks is smallest. It returns null only when
 *   no such prices exist: every ratio is +1 and P is below the number of legs.
 */
import type { Side } from '../core/types.ts';
import type { InstrumentSpec } from '../domain/instrument.ts';
import type { InstrumentState, VenueState } from './state.ts';

export interface ComboLegState {
  readonly instrument: InstrumentState;
  /** +1: traded in the combo's direction; −1: the opposite one. */
  readonly ratio: 1 | -1;
}

/** Why a combo spec cannot be split into its legs, or null when it can. */
export function comboLegsProblem(
  spec: InstrumentSpec,
  lookup: (name: string) => InstrumentSpec | undefined,
): string | null {
  if (spec.legs === null) return null;
  if (spec.legs.length < 2) return 'a combo needs at least two legs';
  for (const leg of spec.legs) {
    const legSpec = lookup(leg.instrumentName);
    if (legSpec === undefined) return `combo leg ${leg.instrumentName} is not listed`;
    if (legSpec.legs !== null) return `combo leg ${leg.instrumentName} is itself a combo`;
    if (leg.ratio !== 1 && leg.ratio !== -1)
      return `combo leg ${leg.instrumentName} has ratio ${leg.ratio}, not ±1`;
    if (legSpec.tickSize !== spec.tickSize || legSpec.minTradeAmount !== spec.minTradeAmount)
      return `combo leg ${leg.instrumentName} has other grids than the combo`;
    if (legSpec.settlementCurrency !== spec.settlementCurrency)
      return `combo leg ${leg.instrumentName} settles in another currency`;
  }
  return null;
}

const resolved = new WeakMap<InstrumentState, readonly ComboLegState[]>();

/** The combo's legs (resolved once per instrument), or null for an instrument that is no combo. */
export function comboLegs(state: VenueState, instrument: InstrumentState): readonly ComboLegState[] | null {
  const legs = instrument.instrument.spec.legs;
  if (legs === null) return null;
  let out = resolved.get(instrument);
  if (out === undefined) {
    out = legs.map((leg) => ({
      instrument: state.instruments.get(leg.instrumentName)!,
      ratio: leg.ratio > 0 ? 1 : -1,
    }));
    resolved.set(instrument, out);
  }
  return out;
}

/** The side a party trades a leg on when it trades the combo on `side`. */
export function legSide(side: Side, ratio: 1 | -1): Side {
  if (ratio === 1) return side;
  return side === 'buy' ? 'sell' : 'buy';
}

/**
 * The combo prices that split into positive leg prices: a combo of bought legs only trades at one
 * tick per leg or more, one of sold legs only at minus one tick per leg or less.
 */
export function comboPriceRange(ratios: readonly (1 | -1)[]): { readonly min: number; readonly max: number } {
  const bought = ratios.filter((ratio) => ratio > 0).length;
  const sold = ratios.length - bought;
  return {
    min: sold === 0 ? bought : Number.NEGATIVE_INFINITY,
    max: bought === 0 ? -sold : Number.POSITIVE_INFINITY,
  };
}

/**
 * Leg prices in ticks for a combo price `price` (see the invariants above). `references` are the
 * legs' marks (or last prices), null when the leg has neither.
 */
export function legPrices(
  price: number,
  legs: readonly { readonly ratio: 1 | -1; readonly reference: number | null }[],
): number[] | null {
  const prices = legs.map((leg) => Math.max(1, leg.reference ?? 1));
  let residual = price;
  for (let i = 0; i < legs.length; i++) residual -= legs[i]!.ratio * prices[i]!;
  const dearestFirst = legs.map((_, i) => i).sort((a, b) => prices[b]! - prices[a]! || a - b);
  for (const i of dearestFirst) {
    if (residual === 0) break;
    const ratio = legs[i]!.ratio;
    const moved = Math.max(1, prices[i]! + ratio * residual);
    residual -= ratio * (moved - prices[i]!);
    prices[i] = moved;
  }
  return residual === 0 ? prices : null;
}

/** Leg prices for a trade or a reserve on `instrument`'s combo book at `price`, from the legs' marks. */
export function comboLegPrices(legs: readonly ComboLegState[], price: number): number[] | null {
  return legPrices(
    price,
    legs.map((leg) => ({
      ratio: leg.ratio,
      reference: leg.instrument.markPrice ?? leg.instrument.lastPrice,
    })),
  );
}
