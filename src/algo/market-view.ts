/**
 * The read interface the algorithm layer needs from the rest of the core: instruments, the top
 * of the book, mark and index, and the option model (forward, expiry, vol surface) for IV
 * conversions and MODEL prices. The composite core implements it over the engine's state and
 * the market model (`engineMarketView` in ./engine-market-view.ts); tests may fake it.
 *
 * Invariant: every answer is a function of journaled state at `now`, so replay sees the same
 * prices and places the same child orders.
 */
import type { Instrument } from '../domain/instrument.ts';
import type { OptionPricingContext } from '../market/conversions.ts';

/** One of the portfolio's own resting orders, left out of the references it prices against. */
export interface OwnOrder {
  readonly side: 'buy' | 'sell';
  /** Ticks. */
  readonly price: number;
  /** Visible open lots. */
  readonly amount: number;
}

export interface AlgoMarketView {
  /** A listed instrument that is open for trading; undefined when unknown or expired. */
  instrument(name: string): Instrument | undefined;
  /** True when the instrument was listed and has expired (settled): it never trades again. */
  expired(name: string): boolean;
  /**
   * Best bid / ask in ticks, null when that side is empty. `own` orders are left out, so a
   * child order never becomes its own reference (a DYNAMIC bid would otherwise walk upwards).
   */
  bestBid(instrumentName: string, own?: OwnOrder | null): number | null;
  bestAsk(instrumentName: string, own?: OwnOrder | null): number | null;
  /**
   * The best price (ticks) among the resting orders `accountId` has on `side` of the instrument,
   * hidden ones included; null when it has none. A limit child is kept clear of these.
   */
  accountBest(accountId: number, instrumentName: string, side: 'buy' | 'sell'): number | null;
  /** Mark price in ticks, null before the first mark. */
  markPrice(instrumentName: string): number | null;
  /** USD per coin, null before the first index. */
  indexPrice(currency: string): number | null;
  /** Black-76 inputs of an option at `now` (forward, time to expiry); null for other kinds. */
  optionContext(instrumentName: string, now: number): OptionPricingContext | null;
  /** Theoretical price from the vol surface in the quote currency (a float), null when unknown. */
  modelPrice(instrumentName: string, now: number): number | null;
}
