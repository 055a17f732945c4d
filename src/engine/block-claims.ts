/**
 * Block trades and the reducing-order exemption (docs/decisions.md, "The reducing exemption follows
 * the position"). An account's resting orders on one side of an instrument claim the position's
 * reducible lots oldest first. A block trade does not cross the book: its lots reduce the position
 * at once, ahead of every claim, so the orders whose claimed lots it closes then reserve for
 * opening (the review after the command, claim-queues.ts `reviewReserves`, moves their reserves).
 * The block's funds check must include what those orders then need, as an order crossing the book
 * does (`closingExtra`, claim-queues.ts): otherwise the account could end with negative available
 * funds.
 *
 * As `closingExtra`, the orders' new reserves are valued against the positions before the block
 * (the claim moved by the lots the block reduces): exact for futures, an estimate for options,
 * whose book the block also changes.
 *
 * A bought option leg covers the block's sold ones by the lower of its price and its mark
 * (risk.ts `legsReserve`, shared with combo orders).
 */
import type { Account } from './accounts.ts';
import { exactReserve, exposedOf, reducibleLots } from './claim-queues.ts';
import { comboLegs, legSide } from './combo-legs.ts';
import { FLAG_REDUCE_ONLY } from './order.ts';
import { legsReserve, type ReserveLeg } from './risk.ts';
import type { InstrumentState, VenueState } from './state.ts';

/**
 * What one account needs, per currency, for its legs of a block trade (every block of a batch
 * together): what the legs reserve as the newest claim (`legsReserve`, as before), or, when the
 * legs close lots its resting orders claim, at least what the legs need reducing first plus what
 * those orders' reserves must rise by.
 */
export function blockLegsNeed(
  state: VenueState,
  account: Account,
  legs: readonly ReserveLeg[],
): Map<string, number> {
  const newest = legsReserve(state, account, legs);
  const pushed = claimsPushed(state, account, legs);
  if (pushed.size === 0) return newest;
  // The legs close the position first: no open order's claim comes before them.
  const first = legsReserve(
    state,
    account,
    legs.map((leg) => ({ ...leg, claimed: 0 })),
  );
  const need = new Map(newest);
  for (const [currency, extra] of pushed) {
    need.set(currency, Math.max(newest.get(currency) ?? 0, (first.get(currency) ?? 0) + extra));
  }
  return need;
}

/**
 * How much the reserves of the account's resting orders must rise, per currency, once the legs
 * have reduced the positions they trade: per instrument and side (a combo's legs on their own
 * instruments), the lots the legs trade close that many of the reducible lots, so the orders that
 * claimed them reserve for opening. Empty when no order's reserve rises.
 */
export function claimsPushed(
  state: VenueState,
  account: Account,
  legs: readonly ReserveLeg[],
): Map<string, number> {
  const lots = new Map<string, { instrument: InstrumentState; side: 'buy' | 'sell'; lots: number }>();
  const add = (instrument: InstrumentState, side: 'buy' | 'sell', amount: number) => {
    if (instrument.economics.isSpot) return;
    const key = `${instrument.id}|${side}`;
    const entry = lots.get(key);
    if (entry === undefined) lots.set(key, { instrument, side, lots: amount });
    else entry.lots += amount;
  };
  for (const leg of legs) {
    const combo = comboLegs(state, leg.instrument);
    if (combo === null) add(leg.instrument, leg.side, leg.lots);
    else for (const part of combo.legs) add(part.instrument, legSide(leg.side, part.ratio), leg.lots);
  }
  const pushed = new Map<string, number>();
  for (const { instrument, side, lots: traded } of lots.values()) {
    pushOn(state, account, instrument, side, traded, pushed);
  }
  return pushed;
}

/** Adds to `pushed` the rises of the orders on `side` of `instrument` once `traded` lots reduce it. */
function pushOn(
  state: VenueState,
  account: Account,
  instrument: InstrumentState,
  side: 'buy' | 'sell',
  traded: number,
  pushed: Map<string, number>,
): void {
  const position = account.positions.get(instrument.id);
  if (position === undefined) return;
  const reducible = reducibleLots(position, side);
  if (reducible === 0) return;
  const queues = account.claimQueues.get(instrument.id);
  if (queues === undefined) return;
  const shift = Math.min(traded, reducible);
  const after = reducible - shift;
  let ahead = 0;
  // The queue is in number order: the claims, oldest first (orders that left the book claim 0).
  for (const order of side === 'buy' ? queues.buys.orders : queues.sells.orders) {
    if (ahead >= reducible) break;
    const claimed = order.level === null ? 0 : order.amount - order.filled;
    if (claimed === 0) continue;
    const end = ahead + claimed;
    if (
      end > after &&
      (order.flags & FLAG_REDUCE_ONLY) === 0 &&
      exposedOf(end, after, claimed) > exposedOf(end, reducible, claimed)
    ) {
      const exact = exactReserve(state, account, order, { instrumentId: instrument.id, lots: ahead + shift });
      if (exact.currency === order.reserveCurrency && exact.amount > order.reserved) {
        pushed.set(exact.currency, (pushed.get(exact.currency) ?? 0) + exact.amount - order.reserved);
      }
    }
    ahead = end;
  }
}
