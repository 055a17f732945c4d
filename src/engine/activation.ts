/**
 * Activation: a waiting order (a trigger order that fired, or a released linked secondary)
 * enters the market as a new arrival.
 *
 * Invariants:
 * - The order keeps its id; it goes untriggered → open (`trigger`), then trades and rests like a
 *   new order: limit types at `price` with their time in force (post-only re-priced just inside
 *   the spread, or rejected with rejectPostOnly), market types up to the band with the rest
 *   cancelled (`immediate_or_cancel`).
 * - A limit type's price is clamped into the price band of the moment it goes live (a buy to at
 *   most the band's max, a sell to at least its min, on the tick grid), as Deribit clamps: it was
 *   placed under an earlier band, or none, and is not checked against the band until now. The
 *   order keeps and shows the clamped price.
 * - Funds and reduce-only are checked at this moment; failing them rejects the order
 *   (state `rejected`), as does an expired instrument. Its event is emitted last, its cancelReason
 *   naming the refusal placing it then would have met (`not_enough_funds`,
 *   `reduce_only_violation`, `instrument_expired`, `post_only_reject`, …). The funds check
 *   is placing's (trading.ts): a market type trades and reserves by `marketTerms` (without a band,
 *   down to the deepest level it needs, affording the worse of that level and the touch), a limit
 *   type crossing with no band by `limitTerms` (the worse of its limit and the touch), and an
 *   order that would close lots older resting orders claimed also pays for what they then need
 *   (`closingExtra`). Resting ahead of younger orders of its account (it keeps its number), it has
 *   their claims reviewed (`noteClaimEntry`).
 * - The open-order limit is checked like a new placement: an order that could rest (limit types,
 *   good_til_cancelled/good_til_day) is rejected before trading, with cancelReason
 *   `max_open_orders`, when its account already has `maxOpenOrders` resting orders. Waiting
 *   orders hold no slot, so the limit is never exceeded.
 * - An OCO member reacts on its group as soon as its activation ends (oco.ts): a taker fill
 *   cancels or cuts its partners before anything else can fire them.
 */
import type { TradeView } from '../core/events.ts';
import { type CancelReason, isMarketLike } from '../core/types.ts';
import type { Account } from './accounts.ts';
import { closingExtra, entryExtra, grownReserve, noteClaimEntry, reducibleLots } from './claim-queues.ts';
import { closeOrder, match, rest } from './matching.ts';
import { reactMember } from './oco.ts';
import { FLAG_POST_ONLY, FLAG_REDUCE_ONLY, FLAG_REJECT_POST_ONLY, type Order } from './order.ts';
import { transition } from './order-state.ts';
import { availableFunds, coverRelease, orderReserve, type PriceBand, priceBand } from './risk.ts';
import type { InstrumentState, VenueState } from './state.ts';
import { limitTerms, marketTerms, pastExpiry, postOnlyReprice, sessionEnd } from './trading.ts';

/**
 * The price a market-type order shows once it has executed: the band edge it could trade to, or
 * without a band (no mark price yet) its last and worst fill; 0 (shown as `market_price`) if
 * neither exists.
 */
export function executedMarketPrice(limit: number, trades: readonly TradeView[], orderId: string): number {
  if (Number.isFinite(limit)) return limit;
  for (let i = trades.length - 1; i >= 0; i--) {
    const trade = trades[i]!;
    if (trade.taker.orderId === orderId) return trade.price;
  }
  return 0;
}

/**
 * A limit price moved into the band: a buy down to its max, a sell up to its min, then further
 * inward to the next price on the instrument's tick grid (the band's edge need not be on it).
 * A price already inside is returned as it is.
 */
function clampToBand(instrument: InstrumentState, buying: boolean, price: number, band: PriceBand): number {
  if (buying ? price <= band.max : price >= band.min) return price;
  const tool = instrument.instrument;
  let clamped = buying ? band.max : band.min;
  while (!tool.isOnTick(clamped)) clamped += buying ? -1 : 1;
  return clamped;
}

/**
 * Whether a resting order of `order`'s account younger than it (a higher number) may share one of
 * its claim queues: one on its instrument and side, or any combo order (its legs' queues), or any
 * at all for a combo. Otherwise `order` is the last claim in each of its queues. A review of its
 * entry then would move no claim, only re-reserve older orders at today's mark (which a mark move
 * does not do to resting orders), so it is skipped.
 */
function restsAheadOfYounger(state: VenueState, account: Account, order: Order): boolean {
  const combo = state.instrumentList[order.instrumentId]!.instrument.spec.legs !== null;
  for (const other of account.openOrders) {
    if (other === order || other.number < order.number) continue;
    if (combo || state.instrumentList[other.instrumentId]!.instrument.spec.legs !== null) return true;
    if (other.instrumentId === order.instrumentId && other.side === order.side) return true;
  }
  return false;
}

/**
 * Sends a waiting order (untriggered, or a released linked secondary) to the book as a new
 * arrival: funds/reduce-only checked, matched, remainder rested or cancelled. Emits its event.
 */
export function activate(state: VenueState, order: Order, trades: TradeView[] = []): void {
  enterMarket(state, order, trades);
  // An OCO member that traded as taker (or was rejected) acts on its partners now, before the
  // trigger loop or its release round can send one of them out too (a maker reacts in `match`).
  const group = state.advanced.linkOf.get(order.id);
  if (group?.members.includes(order.id)) reactMember(state, group, order);
}

function enterMarket(state: VenueState, order: Order, trades: TradeView[]): void {
  state.advanced.removeUntriggered(order);
  const instrument = state.instrumentList[order.instrumentId]!;
  const account = state.accounts.get(order.accountId)!;
  const x = order.extras;
  if (x !== null && x.trigger !== null) {
    x.triggered = true;
    x.triggerOrderId = order.id;
  }
  order.lastUpdatedAt = state.now;
  const reject = (reason: CancelReason) => {
    closeOrder(state, order, 'reject', reason);
    state.events.push({ type: 'order', order: order.toView() });
  };
  // Settled, or its expiry instant has come (trading.ts `pastExpiry`).
  if (pastExpiry(state, instrument)) {
    reject('instrument_expired');
    return;
  }
  const market = isMarketLike(order.orderType);
  const rests =
    !market && (order.timeInForce === 'good_til_cancelled' || order.timeInForce === 'good_til_day');
  if (rests && account.openOrderCount >= account.maxOpenOrders) {
    reject('max_open_orders');
    return;
  }
  if (order.has(FLAG_REDUCE_ONLY)) {
    const position = instrument.position(account);
    const pending = order.side === 'buy' ? position.reduceOnlyBuys : position.reduceOnlySells;
    const reducible = reducibleLots(position, order.side) - pending;
    if (reducible <= 0) {
      reject('reduce_only_violation');
      return;
    }
    if (order.amount - order.filled > reducible) order.amount = order.filled + reducible;
  }
  const band = priceBand(state, instrument);
  const buying = order.side === 'buy';
  if (!market && band !== null) order.price = clampToBand(instrument, buying, order.price, band);
  if (!market && order.has(FLAG_POST_ONLY)) {
    // Post-only (linked secondaries): rest just inside the spread, or reject when asked to.
    const touch = buying ? instrument.book.bestAsk() : instrument.book.bestBid();
    if (touch !== null && (buying ? order.price >= touch : order.price <= touch)) {
      if (order.has(FLAG_REJECT_POST_ONLY)) {
        reject('post_only_reject');
        return;
      }
      // One tick inside the touch, if that is a valid price (a combo's: one its legs can split).
      const repriced = postOnlyReprice(state, instrument, order.side, touch);
      if (repriced === null) {
        reject('post_only_price_modification_not_possible');
        return;
      }
      order.price = repriced;
    }
  }
  const lots = order.amount - order.filled;
  // A market type trades and reserves as a placed market order (trading.ts `marketTerms`): up to
  // the band's edge, or without a band down to the deepest level it needs, affording the worse
  // of that level and the touch.
  const terms = market ? marketTerms(state, instrument, account, order.side, lots) : null;
  const limit = terms === null ? order.price : terms.limit;
  // A limit type crossing with no band: at the worse of its limit and the touch (`limitTerms`).
  const reserve =
    terms?.reserve ?? limitTerms(state, instrument, account, order.side, lots, order.price).reserve;
  // As placing: lots that close what older resting orders claimed pay up front for what those
  // orders then need (claim-queues.ts `closingExtra`).
  // Resting with the number it got when placed, ahead of younger orders of its account: it pays
  // the larger of its reserve there and as the newest, and what the younger orders it pushes out
  // of the position's reducible lots then need (claim-queues.ts `grownReserve`, `entryExtra`).
  const ahead = rests && restsAheadOfYounger(state, account, order);
  const own = ahead
    ? Math.max(reserve.amount, grownReserve(state, instrument, account, order, lots, order.price))
    : reserve.amount;
  const required =
    own +
    coverRelease(state, instrument, account, order.side, lots) +
    closingExtra(state, instrument, account, order.side, lots, terms?.price ?? order.price, reserve.amount) +
    (ahead ? entryExtra(state, instrument, account, order, lots) : 0);
  if (required > 0 && required > availableFunds(state, account, reserve.currency)) {
    reject('not_enough_funds');
    return;
  }
  order.state = transition(order.state, 'trigger');
  const stopped = match(state, instrument, order, account, limit, trades);
  if (terms !== null) order.price = executedMarketPrice(terms.shownLimit, trades, order.id);
  if (order.state === 'filled') state.retire(order);
  else if (stopped) closeOrder(state, order, 'cancel', 'self_trade_prevention');
  else if (!rests) closeOrder(state, order, 'cancel', 'immediate_or_cancel');
  else {
    const hold = orderReserve(
      state,
      instrument,
      account,
      order.side,
      order.amount - order.filled,
      order.price,
    );
    order.reserved = hold.amount;
    order.reserveCurrency = hold.currency;
    // The session it goes live in: an OTO secondary released days after it was made (with its
    // primary) lives to the end of today's session, not of the session it was made in.
    order.expiresAt = order.timeInForce === 'good_til_day' ? sessionEnd(state.now) : 0;
    rest(state, instrument, account, order);
    // It rests with the number it got when placed, ahead of younger orders already in its claim
    // queues: those pushed past the reducible lots are reviewed (claim-queues.ts `noteClaimEntry`).
    // With none younger it is the last claim in its queues, as a new order is: nothing moved.
    if (ahead) noteClaimEntry(state, instrument, account, order, order.amount - order.filled);
  }
  state.events.push({ type: 'order', order: order.toView() });
}
