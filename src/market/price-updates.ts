/**
 * Glue from the market model to the core's integer world: mark prices in ticks for the
 * `update_prices` command and settlement prices for `settle_instrument`.
 *
 * Marks round to the instrument's finest tick (the core's contract), never below 0 except for
 * combos, whose net price can be negative.
 *
 * Settlement value at expiry against the settlement index S (settlement.ts, 30-min TWAP):
 * dated futures S (USD); inverse options max(±(S − K), 0) / S in coin; linear options
 * max(±(S − K), 0) in USDC. The index is fixed to cents (Deribit's delivery prices have two
 * decimals) and sent with the command, so the engine settles options and dated futures exactly;
 * the `settlementPrice` in ticks (the value rounded to the finest tick) is what the instrument
 * shows, and what combos settle at.
 */
import type { MarkPriceUpdate, UnstampedCommand } from '../core/commands.ts';
import type { Instrument, InstrumentSpec } from '../domain/instrument.ts';
import type { MarketState } from './market-state.ts';

/**
 * A price (quote currency) in the instrument's finest ticks, rounded to nearest with halves away
 * from zero. Combos (net prices) may be negative and round the same either side of zero; single
 * instruments never are, so theirs is at least 0.
 */
export function toTicks(instrument: Instrument, price: number): number {
  const ticks = price / Number(instrument.spec.tickSize);
  if (instrument.spec.legs === null) return Math.max(0, Math.round(ticks));
  return Math.sign(ticks) * Math.round(Math.abs(ticks)) + 0;
}

/** Ticks of the instrument as a plain number in its quote currency. */
export function fromTicks(instrument: Instrument, ticks: number): number {
  return Number(instrument.formatPrice(ticks));
}

/**
 * One `update_prices` command with every index and every listed instrument's mark. With
 * `lastSent` (instrument name → ticks, updated in place) only marks whose ticks changed are
 * included, which keeps the journal small when the market is quiet.
 */
export function priceUpdateCommand(
  state: MarketState,
  instruments: Iterable<Instrument>,
  lastSent?: Map<string, number>,
): Extract<UnstampedCommand, { type: 'update_prices' }> {
  const indexPrices: { currency: string; price: number }[] = [];
  const seen = new Set<string>();
  const markPrices: MarkPriceUpdate[] = [];
  for (const instrument of instruments) {
    const currency = instrument.spec.baseCurrency;
    if (!seen.has(currency) && state.hasIndex(currency)) {
      seen.add(currency);
      indexPrices.push({ currency, price: state.index(currency) });
    }
    const mark = state.mark(instrument.name);
    if (mark === undefined) continue;
    const markPrice = toTicks(instrument, mark.markPrice);
    if (lastSent !== undefined) {
      if (lastSent.get(instrument.name) === markPrice) continue;
      lastSent.set(instrument.name, markPrice);
    }
    // Options carry delta (per coin) and vega (USD per vol point) for MMP delta/vega limits, and
    // their forward over the index for implv orders.
    markPrices.push(
      mark.greeks === null
        ? { instrumentName: instrument.name, markPrice }
        : {
            instrumentName: instrument.name,
            markPrice,
            delta: mark.greeks.delta,
            vega: mark.greeks.vega / 100,
            ...(state.hasIndex(currency)
              ? { forwardFactor: mark.underlyingPrice / state.index(currency) }
              : {}),
          },
    );
  }
  return { type: 'update_prices', indexPrices, markPrices };
}

/**
 * `update_prices` split so that none carries more than `maxMarks` marks (the engine applies and
 * the journal encodes each in one go): the first carries the index prices and the first marks,
 * the next ones only marks, in the same order. Always at least one command.
 */
export function splitPriceUpdate(
  command: Extract<UnstampedCommand, { type: 'update_prices' }>,
  maxMarks: number,
): UnstampedCommand[] {
  if (!Number.isInteger(maxMarks) || maxMarks < 1)
    throw new RangeError(`maxMarks must be a positive integer, got ${maxMarks}`);
  const marks = command.markPrices ?? [];
  if (marks.length <= maxMarks) return [command];
  const commands: UnstampedCommand[] = [];
  for (let start = 0; start < marks.length; start += maxMarks) {
    commands.push({
      type: 'update_prices',
      indexPrices: start === 0 ? (command.indexPrices ?? []) : [],
      markPrices: marks.slice(start, start + maxMarks),
    });
  }
  return commands;
}

/** The mark, in the quote currency, of an instrument that trades on past a combo's expiry. */
export type ContinuingLegValue = (instrumentName: string) => number | undefined;

/**
 * Exact settlement value in the quote currency (combos: Σ ratio · leg value, legs found with
 * `lookup`); null for instruments that do not expire (perpetuals, spot). A combo leg that does
 * not expire with the combo (the perpetual, or the later future, of a future spread) is worth its
 * mark (`continuing`), or the settlement index when it has none.
 */
export function settlementValue(
  spec: InstrumentSpec,
  settlementIndex: number,
  lookup: (name: string) => InstrumentSpec | undefined = () => undefined,
  continuing: ContinuingLegValue = () => undefined,
): number | null {
  switch (spec.kind) {
    case 'future':
      return spec.expiration === null ? null : settlementIndex;
    case 'option': {
      const strike = Number(spec.strike);
      const intrinsic =
        spec.optionType === 'put'
          ? Math.max(strike - settlementIndex, 0)
          : Math.max(settlementIndex - strike, 0);
      return spec.marginKind === 'inverse' ? intrinsic / settlementIndex : intrinsic;
    }
    case 'future_combo':
    case 'option_combo': {
      const expiration = spec.expiration;
      if (expiration === null) return null;
      let total = 0;
      for (const leg of spec.legs ?? []) {
        const legSpec = lookup(leg.instrumentName);
        if (legSpec === undefined) return null;
        const settles = legSpec.expiration !== null && legSpec.expiration <= expiration;
        const value = settles
          ? settlementValue(legSpec, settlementIndex, lookup)
          : (continuing(legSpec.name) ?? settlementIndex);
        if (value === null) return null;
        total += leg.ratio * value;
      }
      return total;
    }
    case 'spot':
      return null;
    default: {
      const _exhaustive: never = spec.kind;
      return _exhaustive;
    }
  }
}

/** The `settle_instrument` command for an expiring instrument; null when it has no own settlement. */
export function settlementCommand(
  instrument: Instrument,
  settlementIndex: number,
  lookup?: (name: string) => InstrumentSpec | undefined,
  continuing?: ContinuingLegValue,
): UnstampedCommand | null {
  const index = settlementIndex.toFixed(2);
  const value = settlementValue(instrument.spec, Number(index), lookup, continuing);
  if (value === null) return null;
  const settlementPrice = toTicks(instrument, value);
  return {
    type: 'settle_instrument',
    instrumentName: instrument.name,
    settlementPrice,
    settlementIndex: index,
  };
}
