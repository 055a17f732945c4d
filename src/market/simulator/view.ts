/**
 * What the liquidity simulator reads from the venue: a small read interface the composition
 * root implements over the engine's queries (or a test fake). Prices are ticks, amounts lots.
 */
import type { Side } from '../../core/types.ts';
import type { Instrument } from '../../domain/instrument.ts';

export interface SimulatorOrder {
  readonly orderId: string;
  readonly instrumentName: string;
  readonly side: Side;
  readonly price: number;
  /** Total amount of the order, lots. */
  readonly amount: number;
  readonly filledAmount: number;
  readonly label: string;
}

export interface SimulatorPosition {
  readonly instrumentName: string;
  /** Signed lots (positive long). */
  readonly size: number;
}

export interface SimulatorView {
  /** Listed, open (unexpired) instruments, in a stable order. */
  instruments(): Iterable<Instrument>;
  /** The account's open orders. */
  openOrders(accountId: number): Iterable<SimulatorOrder>;
  positions(accountId: number): Iterable<SimulatorPosition>;
  /** Best bid and ask in ticks (null when that side is empty). */
  bestPrices(instrumentName: string): { readonly bestBid: number | null; readonly bestAsk: number | null };
  /**
   * The price band orders must keep to now, in ticks (null: none, before a first mark). Absent
   * in views that do not know it: quotes are then not kept to one.
   */
  priceBand?(instrumentName: string): { readonly min: number; readonly max: number } | null;
}
