/**
 * The instrument catalogue: which instruments are listed at a time, and the roll schedule.
 *
 * `buildCatalogue(now, indexLevels)` lists, per currency: the inverse perpetual, the linear
 * USDC perpetual, spot pairs, and for every expiry of the calendar (expiries.ts) an inverse
 * future and inverse + linear USDC calls and puts on the strike grid (strikes.ts) around the
 * index. It is a function of (now, index levels, config) only, sorted by name.
 *
 * `rollCatalogue(now, current, indexLevels)` compares the current listing with the one due
 * now: dated instruments (and combos) whose expiry is ≤ now expire (settle at 08:00 UTC
 * against the settlement index, settlement.ts); instruments due but not yet listed (a new
 * expiry, or new strikes once the index has moved or the grid got finer closer to expiry)
 * are listed. Listed strikes are never withdrawn before expiry. `listNew: false` skips the
 * (costlier) listing check unless something expires; the driver checks once a minute.
 */
import type { InstrumentSpec } from '../domain/instrument.ts';
import { yearsBetween } from './black76.ts';
import { DEFAULT_EXPIRY_CALENDAR, type ExpiryCalendarConfig, listedExpiries } from './expiries.ts';
import {
  type CurrencyProducts,
  DEFAULT_PRODUCTS,
  inverseFutureSpec,
  inverseOptionSpec,
  linearOptionSpec,
  linearPerpetualSpec,
  spotSpec,
} from './products.ts';
import { runToEnd, type Steps } from './steps.ts';
import { DEFAULT_STRIKE_GRID, type StrikeGridConfig, strikeGrid } from './strikes.ts';

export interface CatalogueConfig {
  readonly currencies: readonly string[];
  readonly products: Readonly<Record<string, CurrencyProducts>>;
  readonly calendar: ExpiryCalendarConfig;
  readonly strikes: StrikeGridConfig;
  /** Volatility used to size strike grids (a fixed number so grids do not jitter). */
  readonly gridVolatility: Readonly<Record<string, number>>;
  readonly linearOptions: boolean;
  readonly spot: boolean;
}

export const DEFAULT_CATALOGUE: CatalogueConfig = {
  currencies: ['BTC', 'ETH'],
  products: DEFAULT_PRODUCTS,
  calendar: DEFAULT_EXPIRY_CALENDAR,
  strikes: DEFAULT_STRIKE_GRID,
  gridVolatility: { BTC: 0.55, ETH: 0.7 },
  linearOptions: true,
  spot: true,
};

export function buildCatalogue(
  now: number,
  indexLevels: Readonly<Record<string, number>>,
  config: CatalogueConfig = DEFAULT_CATALOGUE,
): InstrumentSpec[] {
  return runToEnd(catalogueSteps(now, indexLevels, config));
}

/** `buildCatalogue` in steps (steps.ts): one expiry's strikes per step. */
export function* catalogueSteps(
  now: number,
  indexLevels: Readonly<Record<string, number>>,
  config: CatalogueConfig = DEFAULT_CATALOGUE,
): Steps<InstrumentSpec[]> {
  const specs: InstrumentSpec[] = [];
  const expiries = listedExpiries(now, config.calendar);
  for (const currency of config.currencies) {
    const products = config.products[currency];
    const index = indexLevels[currency];
    if (products === undefined) throw new Error(`no product parameters for ${currency}`);
    if (index === undefined || !(index > 0)) throw new Error(`no index level for ${currency}`);
    specs.push(inverseFutureSpec(products, null, 'perpetual', now));
    specs.push(linearPerpetualSpec(products, now));
    if (config.spot) for (const quote of products.spotQuotes) specs.push(spotSpec(products, quote, now));
    const volatility = config.gridVolatility[currency] ?? 0.7;
    for (const { expiration, period } of expiries) {
      yield;
      specs.push(inverseFutureSpec(products, expiration, period, now));
      for (const strike of strikeGrid(index, yearsBetween(now, expiration), volatility, config.strikes)) {
        for (const type of ['call', 'put'] as const) {
          specs.push(inverseOptionSpec(products, expiration, period, strike, type, now));
          if (config.linearOptions)
            specs.push(linearOptionSpec(products, expiration, period, strike, type, now));
        }
      }
    }
  }
  yield;
  return specs.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export interface RollPlan {
  /** Due now and not listed yet. */
  readonly list: InstrumentSpec[];
  /** Listed, dated, with expiry ≤ now: settle them. */
  readonly expire: InstrumentSpec[];
}

export function rollCatalogue(
  now: number,
  current: readonly InstrumentSpec[],
  indexLevels: Readonly<Record<string, number>>,
  config: CatalogueConfig = DEFAULT_CATALOGUE,
  options: { readonly listNew?: boolean } = {},
): RollPlan {
  return runToEnd(rollCatalogueSteps(now, current, indexLevels, config, options));
}

/** `rollCatalogue` in steps (steps.ts): the listing check is spread over them. */
export function* rollCatalogueSteps(
  now: number,
  current: readonly InstrumentSpec[],
  indexLevels: Readonly<Record<string, number>>,
  config: CatalogueConfig = DEFAULT_CATALOGUE,
  options: { readonly listNew?: boolean } = {},
): Steps<RollPlan> {
  const listed = new Set(current.map((spec) => spec.name));
  const expire = current.filter((spec) => spec.expiration !== null && spec.expiration <= now);
  // Listing is always checked when something expires (the next expiry is due at that instant).
  if (options.listNew === false && expire.length === 0) return { list: [], expire };
  const due = yield* catalogueSteps(now, indexLevels, config);
  const list = due.filter((spec) => !listed.has(spec.name));
  return { list, expire };
}
