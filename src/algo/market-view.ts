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

/**
 * The accounts whose resting orders a portfolio leaves out of the market it prices against: the
 * account it trades in and its group's (the original's and every mirror's). Every visible resting
 * order of those accounts is left out, the group's children, other portfolios' and hand-placed
 * ones alike: a peg follows the others' market, never its own desk's (docs/decisions.md, DYNAMIC).
 */
export type OwnAccounts = readonly number[];

export interface AlgoMarketView {
  /** A listed instrument that is open for trading; undefined when unknown or expired. */
  instrument(name: string): Instrument | undefined;
  /**
   * True when the instrument was listed and no longer trades at `now`: settled, or its expiry
   * instant has come (`now >= expiration`) and its settlement is still to be booked. The engine
   * refuses orders from that instant on (src/engine/trading.ts `pastExpiry`).
   */
  expired(name: string, now: number): boolean;
  /**
   * Best bid / ask in ticks, null when that side is empty. The visible resting orders of the
   * `own` accounts are left out level by level, so neither a child nor a sibling portfolio (a
   * mirror, another portfolio of the account) becomes a peg's reference: two DYNAMIC bids pegged
   * to each other would otherwise walk upwards, each outbidding the other at every reprice.
   */
  bestBid(instrumentName: string, own?: OwnAccounts | null): number | null;
  bestAsk(instrumentName: string, own?: OwnAccounts | null): number | null;
  /**
   * The opposite best an order on `side` meets, hidden orders included: where the engine
   * reprices a crossing post-only child. Only for predicting where a child rests, never a price
   * reference: a peg does not follow liquidity no one else can see.
   */
  engineTouch(instrumentName: string, side: 'buy' | 'sell'): number | null;
  /**
   * The best price (ticks) among the resting orders `accountId` has on `side` of the instrument,
   * hidden ones included; null when it has none. A limit child is kept clear of these.
   */
  accountBest(accountId: number, instrumentName: string, side: 'buy' | 'sell'): number | null;
  /**
   * Prices (ticks) the engine takes an order at now: mark ± its band, null with no mark yet
   * (the ticker's min/max price).
   */
  priceBand(instrumentName: string): { readonly min: number; readonly max: number } | null;
  /** Mark price in ticks, null before the first mark. */
  markPrice(instrumentName: string): number | null;
  /** USD per coin, null before the first index. */
  indexPrice(currency: string): number | null;
  /** Black-76 inputs of an option at `now` (forward, time to expiry); null for other kinds. */
  optionContext(instrumentName: string, now: number): OptionPricingContext | null;
  /** Theoretical price from the vol surface in the quote currency (a float), null when unknown. */
  modelPrice(instrumentName: string, now: number): number | null;
}
