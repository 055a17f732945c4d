/**
 * An RFQ's structure from the taker's legs: integer ratios by gcd normalisation, the RFQ
 * quantity grid, strategy price units and the combo id when the legs form a known combo.
 *
 * Invariants:
 * - Ratios are the leg quantities divided by their greatest common divisor, so they are
 *   positive integers (well within "at most 2 decimals") and leg_i = ratio_i × RFQ quantity.
 * - One RFQ lot (`quantityStep`) is the smallest structure size for which every leg amount is
 *   a whole number of its instrument's lots; the RFQ quantity is a whole number of them.
 * - Strategy prices are counted in 10^-priceScale of the legs' common quote currency, where
 *   priceScale is the finest decimal place among the legs' ticks: every leg price converts
 *   exactly (`legTickUnits`).
 * - `minTradeAmount` is the smallest RFQ size (in RFQ lots) at which every leg reaches its
 *   instrument's `blockTradeMinTradeAmount`; the RFQ itself must be at least that big. The
 *   hedge is exempt: its size follows from the legs' delta, not from the block.
 * - The hedge is a future or perpetual of the legs' base currency, settled and margined like the
 *   legs (an inverse BTC option is hedged with an inverse BTC future), at a positive price on its
 *   tick grid (priceOffTick) within the band around its mark (futurePriceOutsideBand).
 */
import type { Side } from '../core/types.ts';
import { formatScaled, parseDecimal } from '../domain/decimal.ts';
import type { ErrorName } from '../domain/errors.ts';
import type { Instrument } from '../domain/instrument.ts';
import { comboIdOf } from '../market/combos.ts';
import type { HedgeInput, RfqHedge, RfqLeg, RfqLegInput } from './types.ts';

/** What the desk reads from the engine (queries, not journaled; deterministic at a command). */
export interface RfqMarket {
  /** A listed instrument (active or expired), or undefined. */
  instrument(name: string): Instrument | undefined;
  /** Listed and not expired. */
  isActive(name: string): boolean;
  /** Ticks, or null when no mark was published. */
  markPrice(name: string): number | null;
  /** The engine's allowed order prices around the mark (ticks), or null without a mark. */
  priceBand(name: string): { readonly min: number; readonly max: number } | null;
}

export interface Refusal {
  readonly name: ErrorName;
  readonly message: string;
  readonly data: Record<string, unknown>;
}

export interface Structure {
  readonly currency: string;
  readonly quoteCurrency: string;
  readonly legs: readonly RfqLeg[];
  readonly hedge: RfqHedge | null;
  readonly quantity: number;
  readonly quantityStep: string;
  /** The step as a scaled integer, for parsing at the edge. */
  readonly stepUnits: bigint;
  readonly stepScale: number;
  readonly priceScale: number;
  readonly legTickUnits: readonly number[];
  readonly comboId: string | null;
  /** RFQ lots. */
  readonly minTradeAmount: number;
}

export type StructureResult = { readonly ok: true; readonly structure: Structure } | Refused;

type Refused = { readonly ok: false; readonly error: Refusal };

function refuse(name: ErrorName, message: string, data: Record<string, unknown> = {}): Refused {
  return { ok: false, error: { name, message, data } };
}

function gcd(a: bigint, b: bigint): bigint {
  let x = a < 0n ? -a : a;
  let y = b < 0n ? -b : b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function unitsAt(instrumentSteps: bigint, scale: number, target: number): bigint {
  return instrumentSteps * 10n ** BigInt(target - scale);
}

export function deriveStructure(
  legsIn: readonly RfqLegInput[],
  hedgeIn: HedgeInput | null,
  market: RfqMarket,
  maxLegs: number,
): StructureResult {
  if (legsIn.length === 0)
    return refuse('invalid_arguments', 'an RFQ needs at least one leg', { field: 'legs' });
  if (legsIn.length > maxLegs) {
    return refuse('invalid_arguments', `an RFQ has at most ${maxLegs} legs`, { field: 'legs', maxLegs });
  }
  const instruments: Instrument[] = [];
  const seen = new Set<string>();
  for (const [index, leg] of legsIn.entries()) {
    const field = `legs[${index}].instrumentName`;
    const instrument = market.instrument(leg.instrumentName);
    if (instrument === undefined) {
      return refuse('invalid_instrument', `unknown instrument ${leg.instrumentName}`, { field });
    }
    if (!market.isActive(leg.instrumentName)) {
      return refuse('instrument_expired', `${leg.instrumentName} has expired`, { field });
    }
    if (instrument.kind === 'future_combo' || instrument.kind === 'option_combo') {
      return refuse('invalid_instrument', 'RFQ legs are single instruments, not combos', { field });
    }
    if (seen.has(leg.instrumentName)) {
      return refuse('invalid_arguments', `${leg.instrumentName} appears in two legs`, { field });
    }
    if (!Number.isSafeInteger(leg.amount) || leg.amount <= 0) {
      return refuse('invalid_amount', 'leg quantity must be positive', { field: `legs[${index}].quantity` });
    }
    seen.add(leg.instrumentName);
    instruments.push(instrument);
  }
  const first = instruments[0]!;
  for (const [index, instrument] of instruments.entries()) {
    if (
      instrument.spec.baseCurrency !== first.spec.baseCurrency ||
      instrument.spec.quoteCurrency !== first.spec.quoteCurrency
    ) {
      return refuse('invalid_arguments', 'all legs must share the base and quote currency', {
        field: `legs[${index}].instrumentName`,
      });
    }
  }

  // Quantities at a common decimal scale, ratios by gcd.
  const amountScale = Math.max(...instruments.map((i) => i.amountGrid.scale));
  const lotUnits = instruments.map((i) => unitsAt(i.amountGrid.stepUnits, i.amountGrid.scale, amountScale));
  const quantities = legsIn.map((leg, index) => BigInt(leg.amount) * lotUnits[index]!);
  const common = quantities.reduce((acc, q) => gcd(acc, q), 0n);
  const ratios = quantities.map((q) => q / common);
  if (ratios.some((r) => r > 1_000_000n)) {
    return refuse('invalid_arguments', 'leg ratios are too far apart', { field: 'legs' });
  }
  // Smallest structure step putting every leg on its lot grid.
  let step = 1n;
  for (const [index, ratio] of ratios.entries()) {
    const lot = lotUnits[index]!;
    const need = lot / gcd(lot, ratio);
    step = (step * need) / gcd(step, need);
  }
  const quantity = common / step;
  if (quantity > SAFE || common % step !== 0n) {
    return refuse('invalid_amount', 'RFQ quantity is out of range', { field: 'legs' });
  }
  const legs: RfqLeg[] = legsIn.map((leg, index) => ({
    instrumentName: leg.instrumentName,
    side: leg.side,
    ratio: Number(ratios[index]!),
    lotsPerUnit: Number((step * ratios[index]!) / lotUnits[index]!),
  }));

  const minimum = blockMinimum(instruments, legs, step, amountScale);
  if (minimum.lots > quantity) {
    const index = minimum.bindingLeg;
    return refuse(
      'qty_too_low',
      `${legs[index]!.instrumentName} trades at least ${minimum.text} in a block`,
      { field: `legs[${index}].quantity`, min: minimum.text },
    );
  }

  const priceScale = Math.max(...instruments.map((i) => i.priceGrid.scale));
  const legTickUnits = instruments.map((i) =>
    Number(unitsAt(i.priceGrid.stepUnits, i.priceGrid.scale, priceScale)),
  );

  let hedge: RfqHedge | null = null;
  if (hedgeIn !== null) {
    const checked = checkHedge(hedgeIn, first, seen, market);
    if (!checked.ok) return checked;
    hedge = checked.hedge;
  }

  return {
    ok: true,
    structure: {
      currency: first.spec.baseCurrency,
      quoteCurrency: first.spec.quoteCurrency,
      legs,
      hedge,
      quantity: Number(quantity),
      quantityStep: formatScaled(step, amountScale),
      stepUnits: step,
      stepScale: amountScale,
      priceScale,
      legTickUnits,
      comboId: comboIdOf(legs, instruments),
      minTradeAmount: Number(minimum.lots),
    },
  };
}

/**
 * The smallest RFQ size (RFQ lots, at least 1) at which every leg reaches its instrument's
 * block minimum, the leg that sets it, and that leg's minimum as text.
 */
function blockMinimum(
  instruments: readonly Instrument[],
  legs: readonly RfqLeg[],
  step: bigint,
  amountScale: number,
): { lots: bigint; bindingLeg: number; text: string } {
  let lots = 1n;
  let bindingLeg = 0;
  let text = instruments[0]!.spec.blockTradeMinTradeAmount;
  for (const [index, instrument] of instruments.entries()) {
    const minimum = parseDecimal(instrument.spec.blockTradeMinTradeAmount, 'blockTradeMinTradeAmount');
    const scale = Math.max(minimum.scale, amountScale);
    const minimumUnits = unitsAt(minimum.units, minimum.scale, scale);
    const perRfqLot = unitsAt(step * BigInt(legs[index]!.ratio), amountScale, scale);
    const needed = (minimumUnits + perRfqLot - 1n) / perRfqLot;
    if (needed > lots) {
      lots = needed;
      bindingLeg = index;
      text = instrument.spec.blockTradeMinTradeAmount;
    }
  }
  return { lots, bindingLeg, text };
}

function checkHedge(
  hedgeIn: HedgeInput,
  firstLeg: Instrument,
  legNames: ReadonlySet<string>,
  market: RfqMarket,
): { readonly ok: true; readonly hedge: RfqHedge } | Refused {
  const field = 'hedge.instrumentName';
  const instrument = market.instrument(hedgeIn.instrumentName);
  if (instrument === undefined) {
    return refuse('invalid_instrument', `unknown instrument ${hedgeIn.instrumentName}`, { field });
  }
  if (!market.isActive(hedgeIn.instrumentName)) {
    return refuse('instrument_expired', `${hedgeIn.instrumentName} has expired`, { field });
  }
  const spec = instrument.spec;
  if (
    instrument.kind !== 'future' ||
    spec.baseCurrency !== firstLeg.spec.baseCurrency ||
    spec.marginKind !== firstLeg.spec.marginKind ||
    spec.settlementCurrency !== firstLeg.spec.settlementCurrency
  ) {
    return refuse(
      'invalid_arguments',
      `the hedge is a future or perpetual of ${firstLeg.spec.baseCurrency} settled in ${firstLeg.spec.settlementCurrency} like the legs`,
      { field },
    );
  }
  if (legNames.has(hedgeIn.instrumentName)) {
    return refuse('invalid_arguments', 'the hedge instrument is also a leg', { field });
  }
  if (!Number.isSafeInteger(hedgeIn.amount) || hedgeIn.amount <= 0) {
    return refuse('invalid_amount', 'hedge quantity must be positive', { field: 'hedge.quantity' });
  }
  if (!Number.isSafeInteger(hedgeIn.price) || hedgeIn.price <= 0) {
    return refuse('invalid_price', 'hedge price must be positive', { field: 'hedge.price' });
  }
  const offGrid = priceOffTick(market, hedgeIn.instrumentName, hedgeIn.price, 'hedge.price');
  if (offGrid !== null) return { ok: false, error: offGrid };
  const band = futurePriceOutsideBand(market, hedgeIn.instrumentName, hedgeIn.price, 'hedge.price');
  if (band !== null) return { ok: false, error: band };
  return {
    ok: true,
    hedge: {
      instrumentName: hedgeIn.instrumentName,
      side: hedgeIn.side,
      amount: hedgeIn.amount,
      price: hedgeIn.price,
    },
  };
}

/**
 * A trade price (ticks of `instrumentName`, the finest) off the tick that applies at its level
 * (`Instrument.isOnTick`: options' coarser tick above a price), as the engine refuses it for an
 * order or a block trade; null when on the grid or the instrument is unknown. The edge parses
 * wire prices on the grid already; the desk checks again, so a price that reached it another way
 * is refused when quoted, not when an accept trades it.
 */
export function priceOffTick(
  market: RfqMarket,
  instrumentName: string,
  price: number,
  field: string,
): Refusal | null {
  const instrument = market.instrument(instrumentName);
  if (instrument === undefined || instrument.isOnTick(price)) return null;
  const tickSize = instrument.priceGrid.format(instrument.tickAt(price));
  return {
    name: 'off_grid',
    message: `${field} ${instrument.formatPrice(price)} is not on the ${instrumentName} tick grid (tick ${tickSize} at that level)`,
    data: { field, tickSize },
  };
}

/**
 * Futures (and perpetuals) of an RFQ trade at their own prices, outside the strategy price the
 * taker bounds: a hedge's price always, and an inverse future leg's in its PnL (1/price). So
 * those prices lie within the engine's price band of the instrument (±5% of its mark), when it
 * has one; a price elsewhere would move value between the parties that neither's limit covers.
 * Options and spot legs are exempt (their premiums add up linearly in the strategy price).
 */
export function futurePriceOutsideBand(
  market: RfqMarket,
  instrumentName: string,
  price: number,
  field: string,
): Refusal | null {
  const instrument = market.instrument(instrumentName);
  if (instrument === undefined || instrument.kind !== 'future') return null;
  const band = market.priceBand(instrumentName);
  if (band === null || (price >= band.min && price <= band.max)) return null;
  const minPrice = instrument.formatPrice(band.min);
  const maxPrice = instrument.formatPrice(band.max);
  return {
    name: 'invalid_price',
    message: `${field} must be within the ${instrumentName} price band around its mark (${minPrice} to ${maxPrice})`,
    data: { field, minPrice, maxPrice },
  };
}

/** +1 when the leg is bought with the structure, −1 when sold. */
export function legSign(side: Side): 1 | -1 {
  return side === 'buy' ? 1 : -1;
}

export function flip(side: Side): Side {
  return side === 'buy' ? 'sell' : 'buy';
}

/** The strategy price (strategy units) of per-leg prices (ticks). */
export function strategyPrice(
  legs: readonly RfqLeg[],
  legTickUnits: readonly number[],
  prices: readonly number[],
): number {
  let total = 0;
  for (const [index, leg] of legs.entries()) {
    total += legSign(leg.side) * leg.ratio * prices[index]! * legTickUnits[index]!;
  }
  return total;
}
