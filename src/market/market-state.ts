/**
 * The market at one instant: index per currency, forward per expiry, mark per instrument.
 *
 * `priceMarket(now, indexLevels, specs, model)` is a pure function; the returned `MarketState`
 * computes marks lazily and memoises them (the same question always gets the same answer).
 *
 * Price formation (the model, per currency):
 * - index: from the currency's `IndexSource` (index-source.ts), passed in as a level;
 * - forward of a dated expiry: F(T) = index · e^{r(T)·T}, r(T) the annualised basis (the carry
 *   crypto futures trade at): `basisCurve` interpolated linearly in T (flat outside its
 *   points) when given, else the flat `basisRate`; the perpetual's mark is
 *   index · (1 + perpetualBasis); spot
 *   pairs mark at the index (USDC, USDT at par with USD);
 * - futures mark at their forward; options at Black-76 on the forward of their expiry with
 *   the surface's volatility for (strike, forward, T), in coin for inverse options (USD value /
 *   forward, conversions.ts) and in USDC for linear ones;
 * - combos mark at Σ ratio · leg mark.
 * Expired instruments (expiration ≤ now) have no mark.
 */
import type { InstrumentSpec } from '../domain/instrument.ts';
import { black76, type Greeks, yearsBetween } from './black76.ts';
import { defaultSurface, type VolSurface } from './vol-surface.ts';

export interface BasisPoint {
  /** Years to expiry. */
  readonly timeToExpiry: number;
  /** Annualised basis, 0.05 = 5%. */
  readonly rate: number;
}

/** r(T) from a curve sorted or not: linear between points, flat outside. */
export function basisAt(curve: readonly BasisPoint[], timeToExpiry: number): number {
  const points = [...curve].sort((a, b) => a.timeToExpiry - b.timeToExpiry);
  const first = points[0]!;
  const last = points[points.length - 1]!;
  if (timeToExpiry <= first.timeToExpiry) return first.rate;
  if (timeToExpiry >= last.timeToExpiry) return last.rate;
  let i = 1;
  while (points[i]!.timeToExpiry < timeToExpiry) i++;
  const a = points[i - 1]!;
  const b = points[i]!;
  return a.rate + ((timeToExpiry - a.timeToExpiry) / (b.timeToExpiry - a.timeToExpiry)) * (b.rate - a.rate);
}

export interface CurrencyModel {
  readonly surface: VolSurface;
  /** Annualised basis of dated futures over the index. */
  readonly basisRate: number;
  /** Optional term structure of the annual basis; overrides `basisRate` when non-empty. */
  readonly basisCurve?: readonly BasisPoint[];
  /** Relative premium of the perpetual over the index. */
  readonly perpetualBasis: number;
}

export interface MarketModel {
  readonly currencies: Readonly<Record<string, CurrencyModel>>;
}

export function defaultMarketModel(seed = 0, currencies: readonly string[] = ['BTC', 'ETH']): MarketModel {
  const models: Record<string, CurrencyModel> = {};
  for (const currency of currencies) {
    models[currency] = {
      surface: defaultSurface(currency, seed),
      basisRate: 0.05,
      // Mild contango: about 4% annualised at the front, 7% a year out.
      basisCurve: [
        { timeToExpiry: 7 / 365, rate: 0.04 },
        { timeToExpiry: 1, rate: 0.07 },
      ],
      perpetualBasis: 0.0001,
    };
  }
  return { currencies: models };
}

export interface InstrumentMark {
  readonly instrumentName: string;
  /** In the instrument's quote currency (coin for inverse options, USD/USDC otherwise). */
  readonly markPrice: number;
  /** The USD value of one unit (options: Black-76 value; others: the mark). */
  readonly usdValue: number;
  /** Forward of the expiry (futures and options), the index otherwise. */
  readonly underlyingPrice: number;
  /** Mark implied volatility as a fraction (options only). */
  readonly markIv: number | null;
  /** Black-76 greeks in USD per coin (options only); see black76.ts for units. */
  readonly greeks: Greeks | null;
  readonly timeToExpiry: number | null;
}

export class MarketState {
  private readonly marks = new Map<string, InstrumentMark | null>();
  private readonly forwards = new Map<string, number>();
  private readonly specs: ReadonlyMap<string, InstrumentSpec>;

  constructor(
    readonly time: number,
    private readonly indexLevels: Readonly<Record<string, number>>,
    specs: Iterable<InstrumentSpec>,
    readonly model: MarketModel,
  ) {
    this.specs = new Map([...specs].map((spec) => [spec.name, spec]));
  }

  spec(instrumentName: string): InstrumentSpec | undefined {
    return this.specs.get(instrumentName);
  }

  instrumentNames(): IterableIterator<string> {
    return this.specs.keys();
  }

  /** USD index of a currency; throws for a currency without an index (a wiring error). */
  index(currency: string): number {
    const level = this.indexLevels[currency];
    if (level === undefined) throw new Error(`no index for ${currency}`);
    return level;
  }

  hasIndex(currency: string): boolean {
    return this.indexLevels[currency] !== undefined;
  }

  private currencyModel(currency: string): CurrencyModel {
    const model = this.model.currencies[currency];
    if (model === undefined) throw new Error(`no market model for ${currency}`);
    return model;
  }

  /** Forward for an expiry (ms); null = the perpetual. */
  forward(currency: string, expiration: number | null): number {
    const key = `${currency}|${expiration}`;
    let forward = this.forwards.get(key);
    if (forward === undefined) {
      forward = this.computeForward(currency, expiration);
      this.forwards.set(key, forward);
    }
    return forward;
  }

  private computeForward(currency: string, expiration: number | null): number {
    const index = this.index(currency);
    const model = this.currencyModel(currency);
    if (expiration === null) return index * (1 + model.perpetualBasis);
    const t = yearsBetween(this.time, expiration);
    const curve = model.basisCurve;
    const rate = curve !== undefined && curve.length > 0 ? basisAt(curve, t) : model.basisRate;
    return index * Math.exp(rate * t);
  }

  /** Surface volatility (fraction) for a strike and expiry. */
  volatility(currency: string, strike: number, expiration: number): number {
    return this.currencyModel(currency).surface.volatility(
      strike,
      this.forward(currency, expiration),
      yearsBetween(this.time, expiration),
    );
  }

  /** The mark of a listed, unexpired instrument; undefined otherwise. */
  mark(instrumentName: string): InstrumentMark | undefined {
    const cached = this.marks.get(instrumentName);
    if (cached !== undefined) return cached ?? undefined;
    const spec = this.specs.get(instrumentName);
    const mark = spec === undefined ? null : this.computeMark(spec);
    this.marks.set(instrumentName, mark);
    return mark ?? undefined;
  }

  private computeMark(spec: InstrumentSpec): InstrumentMark | null {
    if (spec.expiration !== null && spec.expiration <= this.time) return null;
    const currency = spec.baseCurrency;
    const timeToExpiry = spec.expiration === null ? null : yearsBetween(this.time, spec.expiration);
    switch (spec.kind) {
      case 'spot': {
        const index = this.index(currency);
        return plainMark(spec.name, index, index, null);
      }
      case 'future': {
        const forward = this.forward(currency, spec.expiration);
        return plainMark(spec.name, forward, forward, timeToExpiry);
      }
      case 'option': {
        const forward = this.forward(currency, spec.expiration);
        const strike = Number(spec.strike);
        const t = timeToExpiry ?? 0;
        const volatility = this.currencyModel(currency).surface.volatility(strike, forward, t);
        const priced = black76({
          optionType: spec.optionType ?? 'call',
          forward,
          strike,
          timeToExpiry: t,
          volatility,
        });
        const markPrice = spec.marginKind === 'inverse' ? priced.price / forward : priced.price;
        const { price: _price, ...greeks } = priced;
        return {
          instrumentName: spec.name,
          markPrice,
          usdValue: priced.price,
          underlyingPrice: forward,
          markIv: volatility,
          greeks,
          timeToExpiry: t,
        };
      }
      case 'future_combo':
      case 'option_combo': {
        let markPrice = 0;
        let usdValue = 0;
        for (const leg of spec.legs ?? []) {
          const legMark = this.mark(leg.instrumentName);
          if (legMark === undefined) return null;
          markPrice += leg.ratio * legMark.markPrice;
          usdValue += leg.ratio * legMark.usdValue;
        }
        const underlying =
          spec.expiration === null ? this.index(currency) : this.forward(currency, spec.expiration);
        return {
          instrumentName: spec.name,
          markPrice,
          usdValue,
          underlyingPrice: underlying,
          markIv: null,
          greeks: null,
          timeToExpiry,
        };
      }
      default: {
        const _exhaustive: never = spec.kind;
        return _exhaustive;
      }
    }
  }
}

function plainMark(
  instrumentName: string,
  price: number,
  underlying: number,
  timeToExpiry: number | null,
): InstrumentMark {
  return {
    instrumentName,
    markPrice: price,
    usdValue: price,
    underlyingPrice: underlying,
    markIv: null,
    greeks: null,
    timeToExpiry,
  };
}

/** The market at `now` for the given instruments. */
export function priceMarket(
  now: number,
  indexLevels: Readonly<Record<string, number>>,
  specs: Iterable<InstrumentSpec>,
  model: MarketModel,
): MarketState {
  return new MarketState(now, indexLevels, specs, model);
}
