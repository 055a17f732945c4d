/**
 * COMMON portfolios as one combo order (SEMANTICS: "one order per leg (a combo where the legs
 * form one)"). Two legs form a combo when `comboIdOf` names one for them (call/put spread,
 * straddle, future spread) and they trade alike: the same quantity in lots, the same order type
 * (LIMIT or MARKET), time in force, postOnly and hidden flags, and neither is reduceOnly (a combo
 * holds no position of its own, so a reduce-only combo order could never trade).
 *
 * The gateway lists the combo before it journals the submit (`commonComboCandidate`); the machine
 * uses it only when it is listed and open at placement (`commonComboPlan`), from journaled state
 * alone, so replay decides alike. Otherwise the legs are placed one order each, as before.
 *
 * Prices: the combo's limit is the net of the legs' converted limits, Σ ratio_i × price_i, put on
 * the combo's grid (`netComboTicks`: a leg's tick may be finer than the combo's).
 */
import type { Side } from '../core/types.ts';
import { parseDecimal } from '../domain/decimal.ts';
import type { Instrument } from '../domain/instrument.ts';
import { comboIdOf } from '../market/combos.ts';
import type { AlgoMarketView } from './market-view.ts';
import type { LegSpec, PortfolioSpec } from './types.ts';

export interface ComboPlan {
  /** The combo instrument's name. */
  readonly instrumentName: string;
  readonly instrument: Instrument;
  /** The combo side that trades every leg on its own side. */
  readonly side: Side;
  /** Per combo leg (in the combo's order): the portfolio leg it fills and its ratio. */
  readonly legs: readonly { readonly leg: number; readonly ratio: 1 | -1 }[];
}

function tradesAlike(a: LegSpec, b: LegSpec): boolean {
  const type = a.pricing.priceType;
  return (
    (type === 'LIMIT' || type === 'MARKET') &&
    b.pricing.priceType === type &&
    a.amount === b.amount &&
    a.timeInForce === b.timeInForce &&
    a.postOnly === b.postOnly &&
    a.hidden === b.hidden &&
    !a.reduceOnly &&
    !b.reduceOnly
  );
}

/**
 * The combo a COMMON portfolio's legs would trade as (listed or not), or null when they do not
 * form one. `instrument` finds the legs (any listed instrument).
 */
export function commonComboCandidate(
  spec: PortfolioSpec,
  instrument: (name: string) => Instrument | undefined,
): string | null {
  if (spec.portfolioType !== 'COMMON' || spec.legs.length !== 2) return null;
  const [a, b] = spec.legs as [LegSpec, LegSpec];
  if (!tradesAlike(a, b)) return null;
  const instruments = [instrument(a.instrumentName), instrument(b.instrumentName)];
  if (instruments[0] === undefined || instruments[1] === undefined) return null;
  return comboIdOf(
    spec.legs.map((leg) => ({ side: leg.side, ratio: 1 })),
    instruments as Instrument[],
  );
}

const opposite = (side: Side): Side => (side === 'buy' ? 'sell' : 'buy');

/**
 * The combo order that trades a COMMON portfolio's legs, or null: when the legs form no combo,
 * or the combo is not listed and open now (the market view sees open instruments only).
 */
export function commonComboPlan(spec: PortfolioSpec, market: AlgoMarketView): ComboPlan | null {
  const name = commonComboCandidate(spec, (n) => market.instrument(n));
  if (name === null) return null;
  const combo = market.instrument(name);
  const comboLegs = combo?.spec.legs ?? null;
  if (combo === undefined || comboLegs === null || comboLegs.length !== spec.legs.length) return null;
  let side: Side | null = null;
  const legs: { leg: number; ratio: 1 | -1 }[] = [];
  for (const comboLeg of comboLegs) {
    const leg = spec.legs.findIndex((l) => l.instrumentName === comboLeg.instrumentName);
    if (leg < 0 || (comboLeg.ratio !== 1 && comboLeg.ratio !== -1)) return null;
    if (legs.some((l) => l.leg === leg)) return null;
    const legSide = spec.legs[leg]!.side;
    const comboSide = comboLeg.ratio === 1 ? legSide : opposite(legSide);
    if (side !== null && side !== comboSide) return null;
    side = comboSide;
    legs.push({ leg, ratio: comboLeg.ratio });
  }
  if (side === null) return null;
  return { instrumentName: name, instrument: combo, side, legs };
}

/**
 * The combo price (combo ticks) of legs at `legTicks` (each in its own leg's ticks): Σ ratio ×
 * price, exact in decimals, then onto the combo's grid, down for a buy and up for a sell (as
 * converted prices round). A future spread on the perpetual has legs of 2.5 and 0.5 USD ticks.
 */
export function netComboTicks(
  plan: ComboPlan,
  legInstruments: readonly Instrument[],
  legTicks: readonly number[],
): number {
  const ticks = [plan.instrument, ...legInstruments].map((instrument) =>
    parseDecimal(instrument.spec.tickSize, 'tickSize'),
  );
  const scale = Math.max(...ticks.map((tick) => tick.scale));
  const [comboTick, ...legTick] = ticks.map((tick) => tick.units * 10n ** BigInt(scale - tick.scale));
  let net = 0n;
  for (let i = 0; i < plan.legs.length; i++) net += BigInt(plan.legs[i]!.ratio * legTicks[i]!) * legTick[i]!;
  const quotient = net / comboTick!;
  const exact = quotient * comboTick! === net;
  if (exact) return Number(quotient);
  // BigInt division truncates toward zero: step to the floor (buy) or the ceiling (sell).
  const floor = net < 0n ? quotient - 1n : quotient;
  return Number(plan.side === 'buy' ? floor : floor + 1n);
}

/**
 * A combo limit price kept clear of the account's own best resting combo order on the other side
 * (combo prices may be zero or negative, and a combo has one tick everywhere).
 */
export function clearOfOwnCombo(side: Side, price: number, ownOpposite: number | null): number {
  if (ownOpposite === null) return price;
  if (side === 'buy') return price < ownOpposite ? price : ownOpposite - 1;
  return price > ownOpposite ? price : ownOpposite + 1;
}
