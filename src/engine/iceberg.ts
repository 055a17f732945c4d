/**
 * Iceberg orders (`displayAmount`): a resting limit order of which only the display shows in
 * the public book.
 *
 * Invariants:
 * - displayAmount ≥ 100 lots (100 × the instrument minimum) and amount < 100 × displayAmount
 *   (hidden-to-visible ratio below 100); only good_til_cancelled/good_til_day limit orders.
 * - A resting iceberg has FLAG_ICEBERG; its price level counts `extras.displayAmount` (the
 *   current display, 0 < display ≤ remaining) as visible instead of its remaining.
 * - A fill against it takes at most the current display. When the display is used up and
 *   lots remain, it refreshes to min(refreshAmount, remaining) and moves to the tail of its
 *   level: each refresh loses time priority.
 * - As a taker an iceberg trades its whole amount like any order.
 */
import type { CoreError } from '../core/events.ts';
import { FLAG_ICEBERG, type Order } from './order.ts';
import { refusal } from './state.ts';
import { extrasOf } from './triggers.ts';

/** The minimum display in lots (100 × the instrument minimum amount). */
export const MIN_DISPLAY_LOTS = 100;

export function validateIceberg(
  displayAmount: number,
  amount: number,
  orderType: string,
  timeInForce: string,
  hidden: boolean,
): CoreError | null {
  if (orderType !== 'limit' || (timeInForce !== 'good_til_cancelled' && timeInForce !== 'good_til_day'))
    return refusal('invalid_max_show_amount', 'displayAmount needs a resting limit order', {
      field: 'displayAmount',
    });
  if (hidden)
    return refusal('invalid_max_show_amount', 'an iceberg cannot be hidden', { field: 'displayAmount' });
  if (!Number.isSafeInteger(displayAmount) || displayAmount < MIN_DISPLAY_LOTS)
    return refusal('invalid_max_show_amount', 'displayAmount must be at least 100 times the minimum amount', {
      field: 'displayAmount',
      minimum: MIN_DISPLAY_LOTS,
    });
  if (displayAmount > amount)
    return refusal('invalid_max_show_amount', 'displayAmount exceeds the amount', { field: 'displayAmount' });
  // Spec 4.3: the hidden part (what the display does not show) below 100 times the display.
  if (amount - displayAmount >= displayAmount * 100)
    return refusal('invalid_max_show_amount', 'hidden-to-visible ratio must be below 100', {
      field: 'displayAmount',
    });
  return null;
}

/** Turns a just-rested order (at its level's tail) into an iceberg showing `display`. */
export function makeIceberg(order: Order, display: number): void {
  const x = extrasOf(order);
  const level = order.level;
  if (level !== null) level.remove(order);
  x.refreshAmount = display;
  x.displayAmount = Math.min(display, order.amount - order.filled);
  order.flags |= FLAG_ICEBERG;
  if (level !== null) level.append(order);
}

/** A fill of `lots` came out of the display (the level's visible total was reduced alike). */
export function consumeDisplay(maker: Order, lots: number): void {
  const x = maker.extras!;
  x.displayAmount = x.displayAmount! - lots;
}

/** After a partial fill: a used-up display refreshes at the tail of the level (priority lost). */
export function refreshDisplay(maker: Order): void {
  const x = maker.extras!;
  const remaining = maker.amount - maker.filled;
  if (x.displayAmount! > 0 || remaining === 0 || maker.level === null) return;
  const level = maker.level;
  level.remove(maker);
  x.displayAmount = Math.min(x.refreshAmount!, remaining);
  level.append(maker);
}
