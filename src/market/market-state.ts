/**
 * The market at one instant: index per currency, forward per expiry, mark per instrument.
 *
 * `priceMarket(now, indexLevels, specs, model, fixings?)` is a pure function of its inputs; the
 * returned `MarketState` computes marks lazily and memoises them (the same question always gets
 * the same answer).
 *
 * Price formation (the model, per currency):
 * - index: from the currency's `IndexSource` (index-source.ts), passed in as a level;
 * - forward of a dated expiry: F(T) = index · e^{r(T)·T}, r(T) the annualised basis (the carry
 *   crypto futures trade at): `basisCurve` interpolated linearly in T (flat outside its
 *   points) when given, else the flat `basisRate`; the perpetual's mark is
 *   index · (1 + perpetualBasis); spot
 *   pairs mark at the index (USDC, USDT at par with USD);
 * - dated expiries settle at the average of the index over the 30 minutes before expiry
 *   (settlement.ts). Inside that window a fraction f of the average is already fixed at `average`
 *   (from the `fixings` source, the driver's index history; without one, at the carry forward),
 *   so the forward of the expiry is F = f · average + (1 − f) · index · e^{r(T)·T};
 * - futures mark at their forward; options at Black-76 on the forward of their expiry and time T
 *   with σ_eff (`settlementVolatility`): the surface's volatility σ for (strike, forward, T)
 *   scaled to the variance of the settlement average, σ² · (t_pre + (1 − f)² · τ_w / 3) · X²,
 *   t_pre = max(0, T − W) the time before the window, τ_w = min(T, W) the window time left and X
 *   the carry forward (the index's level; σ_eff = σ · √(that / T) · X / F). σ_eff is continuous
 *   at the window's start, about σ for long expiries (√(1 − 2W/3T)), and falls to 0 at expiry,
 *   where the mark is the payoff at the fixed average. It is the mark IV (implv orders and the
 *   ticker invert the mark with it) and the greeks' volatility; greeks are with respect to F.
 *   Inverse options are in coin (USD value / forward, conversions.ts), linear ones in USDC;
 * - combos mark at Σ ratio · leg mark.
 * Expired instruments (expiration ≤ now) have no mark.
 */
import type { InstrumentSpec } from '../domain/instrument.ts';
import { black76, type Greeks, MS_PER_YEAR, yearsBetween } from './black76.ts';
import { type Fixing, SETTLEMENT_WINDOW_MS, settlementWindowFraction } from './settlement.ts';
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

/** Where an expiry's settlement average stands (settlement.ts `IndexHistory` is one). */
export interface FixingSource {
  /** The average so far and the fraction of the window it covers; null outside the window. */
  fixing(currency: string, expiration: number, now: number): Fixing | null;
}

/**
 * The volatility to price an option on the settlement average with Black-76 over time T:
 * σ · √((t_pre + (1 − f)² · τ_w / 3) / T) · level / forward, t_pre = max(0, T − W) and τ_w =
 * min(T, W) in years (W the settlement window), f the fraction of the window already fixed,
 * `level` the index level the moves scale with, `forward` the forward priced on. 0 at T = 0.
 */
export function settlementVolatility(
  volatility: number,
  timeToExpiry: number,
  fixedFraction: number,
  level: number,
  forward: number,
): number {
  if (!(timeToExpiry > 0) || !(forward > 0)) return 0;
  const window = SETTLEMENT_WINDOW_MS / MS_PER_YEAR;
  const beforeWindow = Math.max(0, timeToExpiry - window);
  const windowLeft = Math.min(timeToExpiry, window);
  const unfixed = 1 - Math.min(1, Math.max(0, fixedFraction));
  const variance = beforeWindow + (unfixed * unfixed * windowLeft) / 3;
  return volatility * Math.sqrt(variance / timeToExpiry) * (level / forward);
}

interface ForwardOf {
  /** The forward priced on (F, with the fixed part of the settlement inside the window). */
  readonly forward: number;
  /** index · e^{r(T)·T} (the perpetual: index · (1 + basis)). */
  readonly carry: number;
  /** Fraction of the settlement window already fixed (0 before it, and for the perpetual). */
  readonly fixedFraction: number;
}

export interface InstrumentMark {
  readonly instrumentName: string;
  /** In the instrument's quote currency (coin for inverse options, USD/USDC otherwise). */
  readonly markPrice: number;
  /** The USD value of one unit (options: Black-76 value; others: the mark). */
  readonly usdValue: number;
  /** Forward of the expiry (futures and options), the index otherwise. */
  readonly underlyingPrice: number;
  /** Mark implied volatility as a fraction (options only): Black-76 on the forward and T. */
  readonly markIv: number | null;
  /** Black-76 greeks in USD per coin (options only); see black76.ts for units. */
  readonly greeks: Greeks | null;
  readonly timeToExpiry: number | null;
}

export class MarketState {
  private readonly marks = new Map<string, InstrumentMark | null>();
  private readonly forwards = new Map<string, ForwardOf>();
  private readonly specs: ReadonlyMap<string, InstrumentSpec>;

  constructor(
    readonly time: number,
    private readonly indexLevels: Readonly<Record<string, number>>,
    specs: Iterable<InstrumentSpec>,
    readonly model: MarketModel,
    private readonly fixings?: FixingSource,
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

  /**
   * Forward for an expiry (ms); null = the perpetual. Inside the settlement window, the fixed
   * part of the settlement average blended with the carry forward.
   */
  forward(currency: string, expiration: number | null): number {
    return this.forwardOf(currency, expiration).forward;
  }

  /**
   * How much the forward of an expiry moves per unit of relative index move: 1 − f inside the
   * settlement window (the fixed part of the average no longer moves), 1 otherwise.
   */
  forwardExposure(currency: string, expiration: number | null): number {
    return 1 - this.forwardOf(currency, expiration).fixedFraction;
  }

  private forwardOf(currency: string, expiration: number | null): ForwardOf {
    const key = `${currency}|${expiration}`;
    let forward = this.forwards.get(key);
    if (forward === undefined) {
      forward = this.computeForward(currency, expiration);
      this.forwards.set(key, forward);
    }
    return forward;
  }

  private computeForward(currency: string, expiration: number | null): ForwardOf {
    const index = this.index(currency);
    const model = this.currencyModel(currency);
    if (expiration === null) {
      const carry = index * (1 + model.perpetualBasis);
      return { forward: carry, carry, fixedFraction: 0 };
    }
    const t = yearsBetween(this.time, expiration);
    const curve = model.basisCurve;
    const rate = curve !== undefined && curve.length > 0 ? basisAt(curve, t) : model.basisRate;
    const carry = index * Math.exp(rate * t);
    const fixing = this.fixing(currency, expiration, carry);
    if (fixing === null) return { forward: carry, carry, fixedFraction: 0 };
    const f = fixing.fixedFraction;
    return { forward: f * fixing.average + (1 - f) * carry, carry, fixedFraction: f };
  }

  /**
   * The fixed part of an expiry's settlement now; null before the window. Without a source (or
   * a sample) the part already fixed is taken at the carry forward.
   */
  private fixing(currency: string, expiration: number, carry: number): Fixing | null {
    const fraction = settlementWindowFraction(expiration, this.time);
    if (!(fraction > 0)) return null;
    const fixed = this.fixings?.fixing(currency, expiration, this.time) ?? null;
    return fixed ?? { average: carry, fixedFraction: fraction };
  }

  /** Surface volatility (fraction) for a strike and expiry (before `settlementVolatility`). */
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
        const { forward, carry, fixedFraction } = this.forwardOf(currency, spec.expiration);
        const strike = Number(spec.strike);
        const t = timeToExpiry ?? 0;
        const volatility = settlementVolatility(
          this.currencyModel(currency).surface.volatility(strike, forward, t),
          t,
          fixedFraction,
          carry,
          forward,
        );
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

/**
 * The market at `now` for the given instruments. `fixings` (the driver's index history) gives
 * the part of a settlement average already fixed; without it that part is taken at the forward.
 */
export function priceMarket(
  now: number,
  indexLevels: Readonly<Record<string, number>>,
  specs: Iterable<InstrumentSpec>,
  model: MarketModel,
  fixings?: FixingSource,
): MarketState {
  return new MarketState(now, indexLevels, specs, model, fixings);
}
