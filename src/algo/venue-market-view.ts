/**
 * `AlgoMarketView` over the engine (`Venue` queries: book, mark, index, instruments, an account's
 * open orders) and the market model (forward and vol surface, src/market/market-state.ts) for IV
 * conversions and MODEL prices. Everything comes from journaled state (the engine's index/mark
 * prices and index samples, the seeded model), so replay sees the same numbers.
 */
import type { Instrument } from '../domain/instrument.ts';
import type { Venue } from '../engine/venue.ts';
import type { OptionPricingContext } from '../market/conversions.ts';
import {
  defaultMarketModel,
  type FixingSource,
  type MarketModel,
  type MarketState,
  priceMarket,
} from '../market/market-state.ts';
import type { AlgoMarketView, OwnAccounts } from './market-view.ts';

/**
 * Visible open lots per price that the `own` accounts rest on one side of the instrument (as the
 * book counts them: an iceberg its display, a hidden order nothing); null when there are none.
 */
function ownLevels(
  venue: VenueReads,
  name: string,
  side: 'buy' | 'sell',
  own: OwnAccounts,
): Map<number, number> | null {
  let levels: Map<number, number> | null = null;
  for (const accountId of own) {
    for (const order of venue.openOrders({ accountId, instrumentName: name })) {
      if (order.side !== side || order.orderState !== 'open' || order.price === null || order.hidden)
        continue;
      const rest = order.amount - order.filledAmount;
      const shown = order.displayAmount === null ? rest : Math.min(order.displayAmount, rest);
      if (shown <= 0) continue;
      levels ??= new Map();
      levels.set(order.price, (levels.get(order.price) ?? 0) + shown);
    }
  }
  return levels;
}

/** Best visible price of one side with the `own` accounts' orders taken out of their levels. */
function best(venue: VenueReads, name: string, side: 'buy' | 'sell', own: OwnAccounts | null): number | null {
  const mine = own === null || own.length === 0 ? null : ownLevels(venue, name, side, own);
  // Every level that is all ours is skipped: one more level than we hold is enough.
  const book = venue.book(name, mine === null ? 1 : mine.size + 1);
  if (book === null) return null;
  const levels = side === 'buy' ? book.bids : book.asks;
  for (const level of levels) {
    if (level.amount - (mine?.get(level.price) ?? 0) > 0) return level.price;
  }
  return null;
}

/** The engine queries the view needs (Venue satisfies this structurally). */
export type VenueReads = Pick<
  Venue,
  'book' | 'instrument' | 'indexPrice' | 'openOrders' | 'priceBand' | 'settlementFixing' | 'touch'
>;

/** Best price of an account's resting orders on one side (trigger orders waiting are not on the book). */
function accountBest(
  venue: VenueReads,
  accountId: number,
  instrumentName: string,
  side: 'buy' | 'sell',
): number | null {
  let best: number | null = null;
  for (const order of venue.openOrders({ accountId, instrumentName })) {
    if (order.side !== side || order.orderState !== 'open' || order.price === null) continue;
    if (best === null || (side === 'buy' ? order.price > best : order.price < best)) best = order.price;
  }
  return best;
}

export function venueMarketView(
  venue: VenueReads,
  model: MarketModel = defaultMarketModel(),
): AlgoMarketView {
  // Inside a settlement window the engine's index samples give the part already fixed.
  const fixings: FixingSource = {
    fixing: (currency, expiration, now) => venue.settlementFixing(currency, expiration, now),
  };
  // One priced market per (instrument, time): the model is pure, so caching by key is safe.
  let cachedAt = Number.NaN;
  let cache = new Map<string, MarketState>();
  const priced = (instrument: Instrument, now: number): MarketState | null => {
    const currency = instrument.spec.baseCurrency;
    const index = venue.indexPrice(currency);
    if (index === null || model.currencies[currency] === undefined) return null;
    if (cachedAt !== now) {
      // A new Map, not clear(): docs/decisions.md, "No Map churn on the hot path".
      cache = new Map();
      cachedAt = now;
    }
    const key = `${instrument.name}|${index}`;
    let state = cache.get(key);
    if (state === undefined) {
      state = priceMarket(now, { [currency]: index }, [instrument.spec], model, fixings);
      cache.set(key, state);
    }
    return state;
  };
  return {
    instrument: (name) => {
      const info = venue.instrument(name);
      return info === null || info.status !== 'open' ? undefined : info.instrument;
    },
    expired: (name, now) => {
      // As the engine's `pastExpiry`: no order is taken from the expiry instant on, though the
      // settlement (status expired) comes only at the market's next tick.
      const info = venue.instrument(name);
      if (info === null) return false;
      const expiration = info.instrument.spec.expiration;
      return info.status === 'expired' || (expiration !== null && now >= expiration);
    },
    bestBid: (name, own) => best(venue, name, 'buy', own ?? null),
    bestAsk: (name, own) => best(venue, name, 'sell', own ?? null),
    engineTouch: (name, side) => venue.touch(name, side),
    accountBest: (accountId, name, side) => accountBest(venue, accountId, name, side),
    markPrice: (name) => venue.instrument(name)?.markPrice ?? null,
    priceBand: (name) => venue.priceBand(name),
    indexPrice: (currency) => venue.indexPrice(currency),
    optionContext: (name, now): OptionPricingContext | null => {
      const info = venue.instrument(name);
      if (info === null || !info.instrument.isOption) return null;
      const spec = info.instrument.spec;
      const state = priced(info.instrument, now);
      const mark = state?.mark(name);
      if (state === undefined || state === null || mark === undefined || mark.timeToExpiry === null)
        return null;
      return {
        optionType: spec.optionType ?? 'call',
        marginKind: spec.marginKind,
        strike: Number(spec.strike),
        forward: mark.underlyingPrice,
        index: state.index(spec.baseCurrency),
        timeToExpiry: mark.timeToExpiry,
      };
    },
    modelPrice: (name, now) => {
      const info = venue.instrument(name);
      if (info === null) return null;
      return priced(info.instrument, now)?.mark(name)?.markPrice ?? null;
    },
  };
}
