/**
 * Matching: an incoming order against the opposite ladder, fills, and resting-order bookkeeping.
 *
 * Invariants:
 * - Strict price-time priority: the best level first, oldest order first within a level.
 * - A taker never trades beyond its limit; the trade price is always the maker's price.
 * - Self-trade prevention: `cancel_maker` cancels the taker's own resting order and goes on;
 *   `reject_taker` stops matching (the caller cancels the rest or refuses the order).
 * - A fill moves exactly `lots` from both orders' remaining into filled, updates both
 *   positions (or spot balances), books fees and cash, and emits: maker order, trade,
 *   positions, balances. The taker's order event is emitted once by the caller at the end.
 * - A resting order is counted in its level totals, its account's open set, its position's
 *   openBuys/openSells (a combo order: and its account's `comboOpen` on each leg), its reduce-only
 *   counters and its ledger's reserve, and leaves all of them together (`unrest`).
 */
import type { OrderView, TradeParty, TradeView } from '../core/events.ts';
import type { CancelReason, TickDirection } from '../core/types.ts';
import { type Account, applyFill, type Position } from './accounts.ts';
import {
  changeOpenLots,
  enqueueClaim,
  exactReserve,
  forEachClaimQueue,
  idleClaim,
  noteClaimChange,
  reducibleLots,
  runPendingReview,
  setReserve,
} from './claim-queues.ts';
import { type ComboBook, comboLegPrices, comboLegs, legSide } from './combo-legs.ts';
import { consumeDisplay, refreshDisplay } from './iceberg.ts';
import { reactMember } from './oco.ts';
import {
  FLAG_API,
  FLAG_HIDDEN,
  FLAG_ICEBERG,
  FLAG_MMP,
  FLAG_POST_ONLY,
  FLAG_REDUCE_ONLY,
  FLAG_RISK_REDUCING,
  type Order,
} from './order.ts';
import { transition } from './order-state.ts';
import { availableFunds, carriedAtCost } from './risk.ts';
import type { InstrumentState, VenueState } from './state.ts';
import { noteOpenInterest, recordTrade } from './trade-stats.ts';

/** Adds an open order with remaining > 0 to its book and to every per-account total. */
export function rest(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  order: Order,
  queueExpiry = true,
): void {
  instrument.book.ladder(order.side).add(order);
  account.openOrders.add(order);
  account.openOrderCount++;
  const position = instrument.position(account);
  const remaining = order.amount - order.filled;
  changeOpenLots(state, instrument, account, position, order.side, remaining, order);
  if ((order.flags & FLAG_REDUCE_ONLY) !== 0) {
    if (order.side === 'buy') position.reduceOnlyBuys += remaining;
    else position.reduceOnlySells += remaining;
  }
  if (order.reserved !== 0) account.ledger(order.reserveCurrency).reserved += order.reserved;
  // A resting order joins the claim queues of what it trades.
  if (!instrument.economics.isSpot)
    forEachClaimQueue(state, instrument, account, position, order, enqueueClaim);
  if (queueExpiry && order.expiresAt !== 0) state.expiries.push(order);
}

/** Removes a resting order from its book and every per-account total (state unchanged). */
export function unrest(state: VenueState, instrument: InstrumentState, order: Order): void {
  const account = state.accounts.get(order.accountId)!;
  instrument.book.ladder(order.side).remove(order);
  account.openOrders.delete(order);
  account.openOrderCount--;
  const position = instrument.position(account);
  const remaining = order.amount - order.filled;
  changeOpenLots(state, instrument, account, position, order.side, -remaining, order);
  if ((order.flags & FLAG_REDUCE_ONLY) !== 0) {
    if (order.side === 'buy') position.reduceOnlyBuys -= remaining;
    else position.reduceOnlySells -= remaining;
  }
  if (order.reserved !== 0) {
    account.ledger(order.reserveCurrency).reserved -= order.reserved;
    order.reserved = 0;
  }
  // It left the book: its entries stay, idle (`LEFT`), until it rests again or a compaction.
  if (!instrument.economics.isSpot) forEachClaimQueue(state, instrument, account, position, order, idleClaim);
}

/** Cancels an open resting order: out of the book, state cancelled, event emitted; returns its view. */
export function cancelResting(
  state: VenueState,
  instrument: InstrumentState,
  order: Order,
  reason: CancelReason,
): OrderView {
  unrest(state, instrument, order);
  closeOrder(state, order, 'cancel', reason);
  const view = order.toView();
  state.events.push({ type: 'order', order: view });
  return view;
}

/** Moves an order (not in a book) to its final state and keeps it among the recent closed. */
export function closeOrder(
  state: VenueState,
  order: Order,
  event: 'cancel' | 'fill_complete' | 'reject',
  reason: CancelReason | null,
): void {
  order.state = transition(order.state, event);
  order.cancelReason = reason;
  order.lastUpdatedAt = state.now;
  state.retire(order);
}

/**
 * Matches `taker` (not resting) against the book up to `limit` (ticks; ±Infinity for market).
 * Returns true when stopped by self-trade prevention in reject mode.
 */
export function match(
  state: VenueState,
  instrument: InstrumentState,
  taker: Order,
  takerAccount: Account,
  limit: number,
  trades: TradeView[],
): boolean {
  const buying = taker.side === 'buy';
  const ladder = instrument.book.opposite(taker.side);
  const cancelMaker = takerAccount.selfTradeMode === 'cancel_maker';
  while (taker.amount > taker.filled) {
    const level = ladder.best();
    if (level === null || (buying ? level.price > limit : level.price < limit)) return false;
    let maker = level.head;
    while (maker !== null && taker.amount > taker.filled) {
      const next = maker.next;
      const lastInLevel = next === null;
      if (maker.accountId === taker.accountId) {
        if (!cancelMaker) return true;
        cancelResting(state, instrument, maker, 'self_trade_prevention');
      } else {
        let lots = Math.min(taker.amount - taker.filled, maker.amount - maker.filled);
        if ((maker.flags & FLAG_ICEBERG) !== 0) lots = Math.min(lots, maker.extras!.displayAmount!);
        if ((maker.flags & FLAG_REDUCE_ONLY) !== 0) {
          const makerAccount = state.accounts.get(maker.accountId)!;
          lots = Math.min(lots, reducibleLots(instrument.position(makerAccount), maker.side));
          if (lots === 0) {
            cancelResting(state, instrument, maker, 'reduce_only');
            if (lastInLevel) break;
            maker = next;
            continue;
          }
        }
        fill(state, instrument, taker, takerAccount, maker, level.price, lots, trades);
        // One-cancels-other within the sweep: the maker's fill cancels (or cuts) the other members
        // before the taker can reach them. Their levels may change, so the book is read again.
        const group = state.advanced.linkOf.get(maker.id);
        if (group?.members.includes(maker.id)) {
          const eventsBefore = state.events.length;
          reactMember(state, group, maker);
          if (state.events.length !== eventsBefore) break;
        }
      }
      if (lastInLevel) break;
      maker = next;
    }
  }
  return false;
}

/** Queues the position for `clipReduceOnly` when its reduce-only orders now exceed it. */
function noteReduceOnly(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  position: Position,
): void {
  // Most positions have no resting reduce-only order: nothing to compare (every fill passes here).
  if (position.reduceOnlyBuys === 0 && position.reduceOnlySells === 0) return;
  if (
    position.reduceOnlyBuys > reducibleLots(position, 'buy') ||
    position.reduceOnlySells > reducibleLots(position, 'sell')
  )
    state.reduceOnlyChecks.push({ instrument, account });
}

/**
 * After matching: resting reduce-only orders on a position that shrank (or flipped) are clipped
 * to what it still allows, newest first, keeping their place in the book; one left with nothing
 * is cancelled (`reduce_only`). Each change is an order event. Deribit: a reduce-only order
 * "shrinks automatically when the position shrinks". Then the reserves of the orders whose claim
 * on the position's reducible lots changed are reviewed (`reviewReserves`; no event).
 */
export function clipReduceOnly(state: VenueState): void {
  const checks = state.reduceOnlyChecks;
  if (checks.length === 0) return;
  state.reduceOnlyChecks = [];
  for (const { instrument, account } of checks) {
    const position = instrument.position(account);
    // A review's position may hold no reduce-only order: nothing to clip.
    if (position.reduceOnlyBuys !== 0 || position.reduceOnlySells !== 0)
      clipPosition(state, instrument, account, position);
    runPendingReview(state, instrument, account, position, checks);
  }
  if (state.raisedReserves.length !== 0) cancelUnfunded(state);
}

/**
 * Cancels the orders whose reserve the reviews raised, newest first, while their account's
 * available funds in the reserve's currency are below zero (`risk_mitigation`). A fill that
 * reduced a position uncovers the orders that claimed the lots it closed: they now open it. A
 * taker paid for that up front (`closingExtra`), a maker cannot be asked to, so an order its
 * account cannot fund is not left resting on credit.
 */
function cancelUnfunded(state: VenueState): void {
  const raised = state.raisedReserves;
  state.raisedReserves = [];
  raised.sort((a, b) => b.number - a.number);
  for (const order of raised) {
    // Cancelled already, or raised twice in the command.
    if (order.level === null) continue;
    const account = state.accounts.get(order.accountId)!;
    if (availableFunds(state, account, order.reserveCurrency) >= 0) continue;
    cancelResting(state, state.instrumentList[order.instrumentId]!, order, 'risk_mitigation');
  }
}

/** Clips the resting reduce-only orders on `position` to what it allows (`clipReduceOnly`). */
function clipPosition(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  position: Position,
): void {
  for (const side of ['buy', 'sell'] as const) {
    let excess =
      (side === 'buy' ? position.reduceOnlyBuys : position.reduceOnlySells) - reducibleLots(position, side);
    if (excess <= 0) continue;
    const orders: Order[] = [];
    for (const order of account.openOrders) {
      if (
        order.instrumentId === instrument.id &&
        order.side === side &&
        (order.flags & FLAG_REDUCE_ONLY) !== 0 &&
        order.level !== null
      )
        orders.push(order);
    }
    // Newest by placing: the account's list is in book-entry order, which a snapshot restore
    // rebuilds in price priority instead, so it cannot decide.
    orders.sort((a, b) => a.number - b.number);
    for (let i = orders.length - 1; i >= 0 && excess > 0; i--) {
      const order = orders[i]!;
      const remaining = order.amount - order.filled;
      if (remaining <= excess) {
        excess -= remaining;
        cancelResting(state, instrument, order, 'reduce_only');
      } else {
        shrinkResting(state, instrument, account, order, excess);
        excess = 0;
      }
    }
  }
}

/** Takes `lots` off a resting order's remaining in place (time priority kept); emits the order. */
function shrinkResting(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  order: Order,
  lots: number,
): void {
  const remainingBefore = order.amount - order.filled;
  const level = order.level!;
  if ((order.flags & FLAG_ICEBERG) !== 0) {
    const x = order.extras!;
    const display = Math.min(x.displayAmount!, remainingBefore - lots);
    level.total -= lots;
    if ((order.flags & FLAG_HIDDEN) === 0) level.visible -= x.displayAmount! - display;
    x.displayAmount = display;
  } else level.reduce(order, lots);
  const position = instrument.position(account);
  changeOpenLots(state, instrument, account, position, order.side, -lots, order);
  if (order.side === 'buy') position.reduceOnlyBuys -= lots;
  else position.reduceOnlySells -= lots;
  if (order.reserved !== 0) {
    const released = Math.floor((order.reserved * lots) / remainingBefore);
    order.reserved -= released;
    account.ledger(order.reserveCurrency).reserved -= released;
  }
  order.amount -= lots;
  order.lastUpdatedAt = state.now;
  state.events.push({ type: 'order', order: order.toView() });
}

function tickDirection(instrument: InstrumentState, price: number): TickDirection {
  const last = instrument.lastPrice;
  let direction: TickDirection;
  if (last === null || price > last) direction = 0;
  else if (price < last) direction = 2;
  else direction = instrument.lastDirection === 0 || instrument.lastDirection === 1 ? 1 : 3;
  instrument.lastPrice = price;
  instrument.lastDirection = direction;
  return direction;
}

/** One trade between a taker and a resting maker at the maker's price. */
function fill(
  state: VenueState,
  instrument: InstrumentState,
  taker: Order,
  takerAccount: Account,
  maker: Order,
  price: number,
  lots: number,
  trades: TradeView[],
): void {
  const makerAccount = state.accounts.get(maker.accountId)!;
  const level = maker.level!;
  const makerRemainingBefore = maker.amount - maker.filled;
  const makerReservedBefore = maker.reserved;
  // Maker bookkeeping: level totals, open lots, reserve released pro rata.
  level.reduce(maker, lots);
  if ((maker.flags & FLAG_ICEBERG) !== 0) consumeDisplay(maker, lots);
  const makerPosition = instrument.position(makerAccount);
  changeOpenLots(state, instrument, makerAccount, makerPosition, maker.side, -lots, maker);
  if ((maker.flags & FLAG_REDUCE_ONLY) !== 0) {
    if (maker.side === 'buy') makerPosition.reduceOnlyBuys -= lots;
    else makerPosition.reduceOnlySells -= lots;
  }
  if (maker.reserved !== 0) {
    const released =
      lots === makerRemainingBefore
        ? maker.reserved
        : Math.floor((maker.reserved * lots) / makerRemainingBefore);
    maker.reserved -= released;
    makerAccount.ledger(maker.reserveCurrency).reserved -= released;
  }
  maker.filled += lots;
  maker.filledNotional += lots * price;
  maker.lastUpdatedAt = state.now;
  taker.filled += lots;
  taker.filledNotional += lots * price;
  taker.lastUpdatedAt = state.now;
  if (maker.filled === maker.amount) {
    unrest(state, instrument, maker);
    closeOrder(state, maker, 'fill_complete', null);
  } else {
    maker.state = transition(maker.state, 'fill_partial');
    if ((maker.flags & FLAG_ICEBERG) !== 0) refreshDisplay(maker);
  }
  if (taker.filled === taker.amount) taker.state = transition(taker.state, 'fill_complete');
  else taker.state = transition(taker.state, 'fill_partial');

  const trade = settleTrade(state, instrument, taker, takerAccount, maker, makerAccount, price, lots, null);
  trades.push(trade);
  // A combo's reserve is not linear in its lots: its long legs' first lots go to open orders that
  // sell them (they cover no short), and legs may reduce positions. What is left of it needs what
  // it would reserve now, never more than the whole order held.
  // So is a future's with no mark: lots that close the position at a loss against its cost reserve
  // that loss (risk.ts `costLoss`), and they fill first.
  if (
    makerReservedBefore !== 0 &&
    maker.level !== null &&
    (instrument.instrument.spec.legs !== null || carriedAtCost(instrument))
  )
    keepComboReserve(state, makerAccount, maker, makerReservedBefore);
}

function keepComboReserve(state: VenueState, account: Account, maker: Order, reservedBefore: number): void {
  const exact = exactReserve(state, account, maker, null);
  if (exact.currency === maker.reserveCurrency)
    setReserve(account, maker, Math.min(reservedBefore, exact.amount));
}

type BlockTerms = {
  blockTradeId: string;
  blockRfqId: string | null;
  makerBlockRfqId: string | null;
  blockRfqQuoteId: string | null;
  /** A Block RFQ leg's trade: the combo the RFQ's legs form, if any. */
  comboId?: string | null;
};

/**
 * Books one trade's money and positions for both sides, emits maker order, trade, positions
 * and balances, and returns the trade. Shared with block trades. A trade on a combo's book is
 * booked on its legs (`settleComboTrade`).
 */
export function settleTrade(
  state: VenueState,
  instrument: InstrumentState,
  taker: Order,
  takerAccount: Account,
  maker: Order,
  makerAccount: Account,
  price: number,
  lots: number,
  block: BlockTerms | null,
): TradeView {
  const combo = comboLegs(state, instrument);
  if (combo !== null) {
    const prices = comboLegPrices(combo, price);
    // Prices that cannot split are refused when orders are placed (comboPriceRange) and when a
    // block trade is checked; the combo holds no position, so nothing may be booked on it.
    if (prices === null)
      throw new Error(`combo ${instrument.instrument.name} traded at ${price}, which its legs cannot split`);
    return settleComboTrade(
      state,
      instrument,
      combo.legs,
      prices,
      taker,
      takerAccount,
      maker,
      makerAccount,
      price,
      lots,
      block,
    );
  }
  const tradeId = state.nextTradeId(instrument.instrument.currency);
  const booked = bookTrade(
    state,
    instrument,
    taker,
    takerAccount,
    maker,
    makerAccount,
    taker.side,
    price,
    lots,
    tradeId,
    block,
    block?.comboId ? { comboId: block.comboId } : null,
  );
  if (block === null) state.events.push({ type: 'order', order: maker.toView() });
  state.events.push({ type: 'trade', trade: booked.trade });
  emitPositions(state, instrument, booked);
  bookCashOf(state, instrument, booked);
  return booked.trade;
}

/** One side-pair of a trade as booked: the view and what the parties' cash still needs. */
interface BookedTrade {
  readonly trade: TradeView;
  readonly takerAccount: Account;
  readonly makerAccount: Account;
  readonly takerSign: 1 | -1;
  readonly takerFee: number;
  readonly makerFee: number;
  readonly takerPnl: number;
  readonly makerPnl: number;
}

/**
 * A trade's positions, fees and stats on `instrument` (the taker trading `takerSide`), without
 * events or cash: the trade view, with `combo` set on a combo's leg trade.
 */
function bookTrade(
  state: VenueState,
  instrument: InstrumentState,
  taker: Order,
  takerAccount: Account,
  maker: Order,
  makerAccount: Account,
  takerSide: 'buy' | 'sell',
  price: number,
  lots: number,
  tradeId: string,
  block: BlockTerms | null,
  combo: Pick<TradeView, 'comboId' | 'comboTradeId'> | null,
): BookedTrade {
  const economics = instrument.economics;
  const index = state.indexPrice(economics.baseCurrency);
  const takerFee = economics.fee(lots, price, 'T', index);
  const makerFee = economics.fee(lots, price, 'M', index);
  const takerSign: 1 | -1 = takerSide === 'buy' ? 1 : -1;
  const makerSign: 1 | -1 = takerSign === 1 ? -1 : 1;
  let takerPnl = 0;
  let makerPnl = 0;
  if (!economics.isSpot) {
    const takerPosition = instrument.position(takerAccount);
    const makerPosition = instrument.position(makerAccount);
    const takerBefore = takerPosition.size;
    const makerBefore = makerPosition.size;
    takerPnl = applyFill(takerPosition, takerSign, lots, price);
    makerPnl = applyFill(makerPosition, makerSign, lots, price);
    noteOpenInterest(instrument, takerPosition, takerBefore);
    noteOpenInterest(instrument, makerPosition, makerBefore);
    noteReduceOnly(state, instrument, takerAccount, takerPosition);
    noteReduceOnly(state, instrument, makerAccount, makerPosition);
    noteClaimChange(state, instrument, takerAccount, takerPosition, takerBefore);
    noteClaimChange(state, instrument, makerAccount, makerPosition, makerBefore);
  }
  const makerSide = takerSide === 'buy' ? 'sell' : 'buy';
  const currency = economics.settlementCurrency;
  const trade = newTrade(
    state,
    instrument,
    tradeId,
    price,
    lots,
    party(taker, takerSide, 'T', takerFee, currency, takerPnl),
    party(maker, makerSide, 'M', makerFee, currency, makerPnl),
    block,
    combo,
  );
  return { trade, takerAccount, makerAccount, takerSign, takerFee, makerFee, takerPnl, makerPnl };
}

/** An option's forward at trade time: the index × the forward factor last published with its mark. */
function optionForward(state: VenueState, instrument: InstrumentState): number | null {
  if (!instrument.economics.isOption) return null;
  const index = state.indexPrice(instrument.economics.baseCurrency);
  const factor = state.advanced.greeks.get(instrument.instrument.name)?.forwardFactor;
  return index === null || factor === undefined ? null : index * factor;
}

/**
 * A new trade on `instrument` (its next trade seq and tick direction), noted in its 24 h stats
 * and recent trades; `extra` carries a leg trade's combo ids or a combo trade's legs.
 */
function newTrade(
  state: VenueState,
  instrument: InstrumentState,
  tradeId: string,
  price: number,
  lots: number,
  taker: TradeParty,
  maker: TradeParty,
  block: BlockTerms | null,
  extra: Pick<TradeView, 'comboId' | 'comboTradeId' | 'legs'> | null,
): TradeView {
  const base: TradeView = {
    tradeId,
    tradeSeq: ++instrument.tradeSeq,
    instrumentName: instrument.instrument.name,
    currency: instrument.instrument.currency,
    timestamp: state.now,
    price,
    amount: lots,
    tickDirection: tickDirection(instrument, price),
    indexPrice: state.indexPrice(instrument.economics.baseCurrency),
    markPrice: instrument.markPrice,
    underlyingPrice: optionForward(state, instrument),
    taker,
    maker,
    blockTradeId: block?.blockTradeId ?? null,
    blockRfqId: block?.blockRfqId ?? null,
    makerBlockRfqId: block?.makerBlockRfqId ?? null,
    blockRfqQuoteId: block?.blockRfqQuoteId ?? null,
  };
  const trade = extra === null ? base : { ...base, ...extra };
  noteTrade(state, instrument, trade);
  return trade;
}

/** A trade in its instrument's 24 h stats and recent trades. */
function noteTrade(state: VenueState, instrument: InstrumentState, trade: TradeView): void {
  recordTrade(state, instrument, trade.price, trade.amount);
  const recent = instrument.recentTrades;
  recent.push(trade);
  if (recent.length > state.config.recentTradesPerInstrument * 2) {
    recent.splice(0, recent.length - state.config.recentTradesPerInstrument);
  }
}

/**
 * A trade on a combo's book: one leg trade per leg at `prices` (which net to the combo price),
 * carrying the positions, fees and cash; the combo trade itself carries the legs and their sums
 * and counts in the combo's stats. Events: maker order, the combo trade, the legs' positions,
 * the legs' balances.
 */
function settleComboTrade(
  state: VenueState,
  instrument: InstrumentState,
  legs: ComboBook['legs'],
  prices: readonly number[],
  taker: Order,
  takerAccount: Account,
  maker: Order,
  makerAccount: Account,
  price: number,
  lots: number,
  block: BlockTerms | null,
): TradeView {
  const comboTradeId = state.nextTradeId(instrument.instrument.currency);
  const combo = { comboId: instrument.instrument.name, comboTradeId };
  const booked = legs.map((leg, i) =>
    bookTrade(
      state,
      leg.instrument,
      taker,
      takerAccount,
      maker,
      makerAccount,
      legSide(taker.side, leg.ratio),
      prices[i]!,
      lots,
      state.nextTradeId(leg.instrument.instrument.currency),
      null,
      combo,
    ),
  );
  let takerFee = 0;
  let makerFee = 0;
  let takerPnl = 0;
  let makerPnl = 0;
  for (const leg of booked) {
    takerFee += leg.takerFee;
    makerFee += leg.makerFee;
    takerPnl += leg.takerPnl;
    makerPnl += leg.makerPnl;
  }
  const currency = instrument.economics.settlementCurrency;
  const trade = newTrade(
    state,
    instrument,
    comboTradeId,
    price,
    lots,
    party(taker, taker.side, 'T', takerFee, currency, takerPnl),
    party(maker, maker.side, 'M', makerFee, currency, makerPnl),
    block,
    { legs: booked.map((leg) => leg.trade) },
  );
  if (block === null) state.events.push({ type: 'order', order: maker.toView() });
  state.events.push({ type: 'trade', trade });
  for (let i = 0; i < legs.length; i++) emitPositions(state, legs[i]!.instrument, booked[i]!);
  for (let i = 0; i < legs.length; i++) bookCashOf(state, legs[i]!.instrument, booked[i]!);
  return trade;
}

function emitPositions(state: VenueState, instrument: InstrumentState, booked: BookedTrade): void {
  if (instrument.economics.isSpot) return;
  state.events.push({ type: 'position', position: instrument.position(booked.takerAccount).toView() });
  state.events.push({ type: 'position', position: instrument.position(booked.makerAccount).toView() });
}

function bookCashOf(state: VenueState, instrument: InstrumentState, booked: BookedTrade): void {
  const { trade, takerSign } = booked;
  const makerSign: 1 | -1 = takerSign === 1 ? -1 : 1;
  bookCash(
    state,
    instrument,
    booked.takerAccount,
    takerSign,
    trade.amount,
    trade.price,
    booked.takerFee,
    booked.takerPnl,
    trade.tradeId,
  );
  bookCash(
    state,
    instrument,
    booked.makerAccount,
    makerSign,
    trade.amount,
    trade.price,
    booked.makerFee,
    booked.makerPnl,
    trade.tradeId,
  );
}

/** Cash and fee of one side of a trade (futures PnL, option premium, spot delivery); emits balances. */
function bookCash(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  sign: 1 | -1,
  lots: number,
  price: number,
  fee: number,
  pnl: number,
  tradeId: string,
): void {
  const economics = instrument.economics;
  const currency = economics.settlementCurrency;
  const ledger = account.ledger(currency);
  ledger.cachedEpoch = -1;
  let cash: number;
  if (economics.isSpot) {
    cash = -sign * economics.value(lots, price);
    const base = account.ledger(economics.baseCurrency);
    const delivered = sign * economics.baseAmount(lots) + 0;
    base.balance += delivered;
    base.cachedEpoch = -1;
    state.events.push(balanceEvent(account.id, base.currency, base.balance, delivered, tradeId));
  } else {
    cash = economics.isOption ? -sign * economics.value(lots, price) : pnl;
  }
  const change = cash - fee + 0;
  ledger.balance += change;
  state.events.push(balanceEvent(account.id, currency, ledger.balance, change, tradeId));
}

function balanceEvent(accountId: number, currency: string, balance: number, change: number, tradeId: string) {
  return {
    type: 'balance' as const,
    accountId,
    currency,
    balance,
    change,
    reason: 'trade' as const,
    tradeId,
  };
}

function party(
  order: Order,
  side: 'buy' | 'sell',
  liquidity: 'M' | 'T',
  fee: number,
  feeCurrency: string,
  pnl: number,
): TradeParty {
  const flags = order.flags;
  return {
    accountId: order.accountId,
    orderId: order.id,
    orderType: order.orderType,
    side,
    liquidity,
    state: order.state,
    fee,
    feeCurrency,
    profitLoss: pnl,
    label: order.label,
    owner: order.owner,
    api: (flags & FLAG_API) !== 0,
    postOnly: (flags & FLAG_POST_ONLY) !== 0,
    mmp: (flags & FLAG_MMP) !== 0,
    reduceOnly: (flags & FLAG_REDUCE_ONLY) !== 0,
    riskReducing: (flags & FLAG_RISK_REDUCING) !== 0,
    advanced: order.extras?.advanced ?? null,
  };
}
