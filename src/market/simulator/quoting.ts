/**
 * Where a liquidity provider wants its quotes: a pure function of the instrument, its mark,
 * the volatility and the provider's inventory.
 *
 * Half-spread h (quote currency), scaled by volScale = clamp(σ / σ_ref, 0.5, 3):
 * - options: (fraction · premium + volPoints · vega per vol point) · volScale;
 * - futures, spot: bps · price · volScale; combos: fraction · |price| (options) or bps.
 * never below `minHalfSpreadTicks`. Inventory q = position / (inventoryLimit · level-0 size),
 * clamped to [−1, 1], shifts the centre by −inventorySkew · q · h and widens the side that
 * would add to the position by |q|·h. Level i sits a further i·gap out, gap = max(tick,
 * levelGapFraction · h). Bids round down and asks up onto the tick that applies at their level
 * (options: 0.0005 above 0.005). Option prices stay ≥ 1 tick; level-0 ask > level-0 bid; a level
 * that rounds onto the one inside it moves one valid tick further out, so the set of levels is
 * stable.
 * - An option bid that would fall below 1 tick is left out, never raised to 1 tick: an option
 *   marked at a fraction of a tick bid at one tick paid a seller up to thousands of times its
 *   value, riskless.
 * - With the venue's price band (`band`, ticks): the band's edges, a tenth of its width inside
 *   (the mark the band was taken from may have moved since), bound the ladder: a level-0 quote
 *   beyond is brought to the edge, deeper levels beyond are left out. A future spread's band (5%
 *   of its net price) is narrower than its spread (bps of the underlying) and inventory widening
 *   together, and quotes outside it were depth nobody could trade.
 */
import type { Side } from '../../core/types.ts';
import type { Instrument } from '../../domain/instrument.ts';
import type { InstrumentMark } from '../market-state.ts';
import type { SimulatorConfig } from './config.ts';

export interface Quote {
  readonly side: Side;
  readonly level: number;
  /** Ticks. */
  readonly price: number;
  /** Lots. */
  readonly amount: number;
}

export interface QuoteLadder {
  readonly quotes: Quote[];
  /** A resting quote within this many ticks of its wanted price is left alone. */
  readonly toleranceTicks: number;
}

/** Largest valid price (ticks) ≤ raw (in finest ticks, fractional allowed). */
export function floorToTick(instrument: Instrument, raw: number): number {
  const ticks = Math.floor(raw + 1e-9);
  const step = instrument.tickAt(ticks);
  return step === 1 ? ticks : Math.floor(ticks / step) * step;
}

/** Smallest valid price (ticks) ≥ raw. */
export function ceilToTick(instrument: Instrument, raw: number): number {
  const ticks = Math.ceil(raw - 1e-9);
  const step = instrument.tickAt(ticks);
  return step === 1 ? ticks : Math.ceil(ticks / step) * step;
}

function halfSpread(
  instrument: Instrument,
  mark: InstrumentMark,
  volatility: number,
  config: SimulatorConfig,
): number {
  const volScale = Math.min(3, Math.max(0.5, volatility / config.referenceVolatility));
  const spec = instrument.spec;
  switch (spec.kind) {
    case 'option': {
      const vegaPerPoint = (mark.greeks?.vega ?? 0) / 100;
      const vegaInQuote = spec.marginKind === 'inverse' ? vegaPerPoint / mark.underlyingPrice : vegaPerPoint;
      return (
        (config.optionHalfSpreadFraction * mark.markPrice + config.optionHalfSpreadVolPoints * vegaInQuote) *
        volScale
      );
    }
    case 'option_combo':
      return config.optionHalfSpreadFraction * Math.abs(mark.markPrice) * volScale;
    case 'future':
    case 'spot':
      return (config.futureHalfSpreadBps / 10_000) * mark.markPrice * volScale;
    case 'future_combo':
      return (config.futureHalfSpreadBps / 10_000) * mark.underlyingPrice * volScale;
    default: {
      const _exhaustive: never = spec.kind;
      return _exhaustive;
    }
  }
}

export function quoteLadder(
  instrument: Instrument,
  mark: InstrumentMark,
  volatility: number,
  positionLots: number,
  config: SimulatorConfig,
  band: { readonly min: number; readonly max: number } | null = null,
): QuoteLadder {
  const tick = Number(instrument.spec.tickSize);
  const half = Math.max(halfSpread(instrument, mark, volatility, config), config.minHalfSpreadTicks * tick);
  const baseSize = Math.max(1, Math.round(config.sizeMultiple));
  const inventory = Math.max(-1, Math.min(1, positionLots / (config.inventoryLimit * baseSize)));
  const centre = mark.markPrice - config.inventorySkew * inventory * half;
  const bidHalf = half * (1 + Math.max(inventory, 0));
  const askHalf = half * (1 + Math.max(-inventory, 0));
  const gap = Math.max(tick, config.levelGapFraction * half);
  const isOption = instrument.spec.kind === 'option';
  const minPrice = isOption ? 1 : Number.NEGATIVE_INFINITY;
  const margin = band === null ? 0 : Math.floor((band.max - band.min) / 20);
  const lowest = band === null ? Number.NEGATIVE_INFINITY : ceilToTick(instrument, band.min + margin);
  const highest = band === null ? Number.POSITIVE_INFINITY : floorToTick(instrument, band.max - margin);
  const quotes: Quote[] = [];
  let previousBid = Number.POSITIVE_INFINITY;
  let previousAsk = Number.NEGATIVE_INFINITY;
  let firstBid = Number.NEGATIVE_INFINITY;
  for (let level = 0; level < config.levels; level++) {
    const amount = baseSize * (1 + level);
    let bid = floorToTick(instrument, (centre - bidHalf - level * gap) / tick);
    // A level that rounds onto the one inside it is pushed one valid tick further out.
    if (bid >= previousBid) bid = floorToTick(instrument, previousBid - 1);
    if (level === 0 && bid < lowest) bid = lowest;
    // A mark above the band (the engine's band lags the model's mark by a tick): the level-0 bid
    // comes down to just under the usable top, leaving the ask room at it, as a bid lifted to the
    // bottom leaves the asks room above it; deeper bids follow below.
    if (level === 0 && bid >= highest) bid = floorToTick(instrument, highest - 1);
    if (bid >= minPrice && bid >= lowest && bid < previousBid) {
      quotes.push({ side: 'buy', level, price: bid, amount });
      previousBid = bid;
      if (level === 0) firstBid = bid;
    }
    let ask = Math.max(minPrice, ceilToTick(instrument, (centre + askHalf + level * gap) / tick));
    if (level === 0 && ask <= firstBid) ask = ceilToTick(instrument, firstBid + 1);
    if (ask <= previousAsk) ask = ceilToTick(instrument, previousAsk + 1);
    if (level === 0 && ask > highest) ask = Math.max(highest, ceilToTick(instrument, firstBid + 1));
    if (ask > highest) continue;
    quotes.push({ side: 'sell', level, price: ask, amount });
    previousAsk = ask;
  }
  const toleranceTicks = Math.max(1, Math.floor((config.refreshFraction * half) / tick));
  return { quotes, toleranceTicks };
}
