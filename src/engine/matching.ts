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
import {
  type Account,
  applyFill,
  type ClaimQueue,
  type ClaimQueues,
  type Position,
  type ReserveReview,
} from './accounts.ts';
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
  Order,
} from './order.ts';
import { transition } from './order-state.ts';
import { availableFunds, type Claim, futureReserve, orderReserve, plainReserve } from './risk.ts';
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

/**
 * Moves a resting order's open lots on its position by `lots` (negative: fewer), and for a combo
 * order the account's open lots on each leg too, each on the leg's own side; and its lots in the
 * claim queues. `order`: the order whose lots move (null: its claim queues read them again later).
 */
export function changeOpenLots(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  position: Position,
  side: 'buy' | 'sell',
  lots: number,
  order: Order | null = null,
): void {
  if (side === 'buy') position.openBuys += lots;
  else position.openSells += lots;
  // A long option's lots an order would sell cover no short (risk.ts): the margin changes.
  if (side === 'sell' && position.size > 0 && instrument.economics.isOption) staleMargin(account, instrument);
  if (instrument.instrument.spec.legs === null) {
    if (!instrument.economics.isSpot) {
      position.claims ??= claimQueues(account, instrument.id);
      claimLots(side === 'buy' ? position.claims.buys : position.claims.sells, order, lots);
    }
    return;
  }
  changeLegLots(state, instrument, account, side, lots, order);
}

/** `changeOpenLots` of a combo order: the account's open lots on each leg, on the leg's own side. */
function changeLegLots(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  side: 'buy' | 'sell',
  lots: number,
  order: Order | null,
): void {
  for (const leg of comboLegs(state, instrument)!.legs) {
    let open = account.comboOpen.get(leg.instrument.id);
    if (open === undefined) {
      open = { buys: 0, sells: 0 };
      account.comboOpen.set(leg.instrument.id, open);
    }
    const queues = claimQueues(account, leg.instrument.id);
    if (legSide(side, leg.ratio) === 'buy') {
      open.buys += lots;
      claimLots(queues.buys, order, lots);
    } else {
      open.sells += lots;
      claimLots(queues.sells, order, lots);
      if (leg.instrument.economics.isOption) staleMargin(account, leg.instrument);
    }
  }
}

function staleMargin(account: Account, instrument: InstrumentState): void {
  const ledger = account.ledgers.get(instrument.economics.settlementCurrency);
  if (ledger !== undefined) ledger.cachedEpoch = -1;
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

// ---- The reducing-order exemption: claim queues and reserve reviews ----------------------------
//
// Lots of an order that only reduce the position need no margin (risk.ts); an order is granted
// that when it is placed, against the position and the open orders then. The account's resting
// orders on one side of an instrument claim the position's reducible lots in order-number order
// (oldest first: a new order is granted only what older ones leave, as placing computes). When the
// position shrinks, the newest claims lose their cover and those orders must reserve for opening;
// when an option position grows, orders that now only reduce it need less (a long that open orders
// would sell covers no short, so their reserve would count the short's naked margin twice). After
// each command's fills (`clipReduceOnly`), the orders whose claim crossed the change are given their
// exact reserve against the orders ahead of them (`reviewReserves`).

/**
 * Forgets what `account` derived from its resting orders on an instrument that settled
 * (lifecycle.ts): its claim queues on it and its combo orders' lots on it as a leg. The settlement
 * cancelled those orders first, so the queues hold only idle entries and the lots are none.
 */
export function forgetSettledClaims(account: Account, instrumentId: number): void {
  account.claimQueues.delete(instrumentId);
  forgetIdleLegLots(account, instrumentId);
}

/** Drops the account's combo lots on a leg once none are left (an entry of none is no entry). */
export function forgetIdleLegLots(account: Account, legId: number): void {
  const open = account.comboOpen.get(legId);
  if (open !== undefined && open.buys === 0 && open.sells === 0) account.comboOpen.delete(legId);
}

/** `account`'s claim queues on `instrumentId`, made when missing. */
function claimQueues(account: Account, instrumentId: number): ClaimQueues {
  let queues = account.claimQueues.get(instrumentId);
  if (queues === undefined) {
    const queue = (): ClaimQueue => ({
      orders: [],
      numbers: [],
      idle: 0,
      cutNumber: Number.POSITIVE_INFINITY,
      cutAhead: 0,
      cutIndex: 0,
      stale: false,
    });
    queues = { buys: queue(), sells: queue() };
    account.claimQueues.set(instrumentId, queues);
  }
  return queues;
}

/** The claim queues on a position's instrument (plain orders' and combo legs'), null when none. */
function queuesOf(account: Account, position: Position): ClaimQueues | null {
  position.claims ??= account.claimQueues.get(position.instrumentId) ?? null;
  return position.claims;
}

/**
 * The index of the first entry numbered `number` or more (`numbers` ascending). Order numbers are
 * spread about evenly over a queue, so the search starts where `number` would fall between the
 * first and last, gallops to bracket it and halves from there: a few reads of a long queue instead
 * of a full binary search (an order leaving the book searches its queue).
 */
export function claimIndex(numbers: readonly number[], number: number): number {
  let lo = 0;
  let hi = numbers.length;
  if (hi > 16) {
    const first = numbers[0]!;
    const last = numbers[hi - 1]!;
    if (number <= first) return 0;
    if (number > last) return hi;
    // The answer is in [lo, hi] throughout, as in the halving below.
    const guess = Math.min(hi - 1, Math.floor(((number - first) / (last - first)) * (hi - 1)));
    if (numbers[guess]! < number) {
      lo = guess + 1;
      for (let step = 1; ; step *= 2) {
        const probe = guess + step;
        if (probe >= hi) break;
        if (numbers[probe]! >= number) {
          hi = probe;
          break;
        }
        lo = probe + 1;
      }
    } else {
      hi = guess;
      for (let step = 1; ; step *= 2) {
        const probe = guess - step;
        if (probe < lo) break;
        if (numbers[probe]! < number) {
          lo = probe + 1;
          break;
        }
        hi = probe;
      }
    }
  }
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (numbers[mid]! < number) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** An order's lots claimed in a queue moved by `delta` (null: some order's, unknown). */
function claimLots(queue: ClaimQueue, order: Order | null, delta: number): void {
  if (order === null) queue.stale = true;
  else if (order.number < queue.cutNumber) queue.cutAhead += delta;
}

/**
 * Visits the claim queue of each side the order trades (a combo's: each leg's, on the leg's own
 * side), with the order. `visit` is a module function, so no closure is made per call.
 */
function forEachClaimQueue(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  position: Position,
  order: Order,
  visit: (queue: ClaimQueue, order: Order) => void,
): void {
  if (instrument.instrument.spec.legs === null) {
    // `changeOpenLots` looked the queues up.
    const queues = position.claims!;
    visit(order.side === 'buy' ? queues.buys : queues.sells, order);
    return;
  }
  for (const leg of comboLegs(state, instrument)!.legs) {
    const queues = claimQueues(account, leg.instrument.id);
    visit(legSide(order.side, leg.ratio) === 'buy' ? queues.buys : queues.sells, order);
  }
}

/**
 * Holds the place of an order that left the book in its claim queues (`level` null: it claims
 * nothing), so a finished order is not kept alive until the queue is compacted.
 */
const LEFT = new Order('', 0, 0, 0, '', '', 'buy', 'limit', 0, 0, 'good_til_cancelled', 0, '', null, 0);

function enqueueClaim(queue: ClaimQueue, order: Order): void {
  const { orders, numbers } = queue;
  const length = numbers.length;
  const number = order.number;
  if (length === 0 || numbers[length - 1]! < number) {
    orders.push(order);
    numbers.push(number);
    if (queue.idle > 64 && queue.idle > 2 * (length - queue.idle)) compactClaims(queue);
    return;
  }
  // An older number: back in the book (an edit), going live late (activation), or restored.
  const i = claimIndex(numbers, number);
  if (numbers[i] === number) {
    orders[i] = order;
    queue.idle--;
  } else {
    orders.splice(i, 0, order);
    numbers.splice(i, 0, number);
  }
}

/** The order's entry holds `LEFT` until it rests again or the queue is compacted. */
function idleClaim(queue: ClaimQueue, order: Order): void {
  const { orders, numbers } = queue;
  const number = order.number;
  const last = numbers.length - 1;
  // Most orders that leave are among the newest: look at the end before searching.
  const i = last >= 0 && numbers[last] === number ? last : claimIndex(numbers, number);
  if (orders[i] === order) orders[i] = LEFT;
  queue.idle++;
}

/** Drops the idle entries (the cut's count is unchanged: they claim nothing). */
function compactClaims(queue: ClaimQueue): void {
  const { orders, numbers } = queue;
  let kept = 0;
  for (let i = 0; i < orders.length; i++) {
    const order = orders[i]!;
    if (order === LEFT) continue;
    orders[kept] = order;
    numbers[kept++] = numbers[i]!;
  }
  orders.length = kept;
  numbers.length = kept;
  queue.idle = 0;
}

/** Lots a resting order claims (0 once it left the book). */
function claimOf(order: Order): number {
  return order.level === null ? 0 : order.amount - order.filled;
}

/** The account's claim queue on `position`'s instrument for `side`, null when it has none. */
function sideQueue(account: Account, position: Position, side: 'buy' | 'sell'): ClaimQueue | null {
  const queues = queuesOf(account, position);
  return queues === null ? null : side === 'buy' ? queues.buys : queues.sells;
}

/** Lots `queue`'s orders older than `order` (a lower number) claim, not `order`'s own. */
function claimedBefore(queue: ClaimQueue, order: Order): number {
  const { orders, numbers } = queue;
  let ahead = 0;
  for (let i = 0; i < orders.length && numbers[i]! < order.number; i++) {
    if (orders[i] !== order) ahead += claimOf(orders[i]!);
  }
  return ahead;
}

// Where a walk of a claim queue stands: the entry, and the lots claimed by the orders before it.
let walkIndex = 0;
let walkAhead = 0;

/** Positions the walk at the last entry of `queue` with at most `lots` claimed ahead of it. */
function walkTo(queue: ClaimQueue, lots: number): void {
  const orders = queue.orders;
  if (queue.stale) {
    let ahead = 0;
    const numbers = queue.numbers;
    for (let i = 0; i < orders.length && numbers[i]! < queue.cutNumber; i++) ahead += claimOf(orders[i]!);
    queue.cutAhead = ahead;
    queue.stale = false;
  }
  let i = queue.cutIndex;
  if (!(i < orders.length && queue.numbers[i] === queue.cutNumber))
    i = claimIndex(queue.numbers, queue.cutNumber);
  let ahead = queue.cutAhead;
  while (i > 0 && ahead > lots) ahead -= claimOf(orders[--i]!);
  walkIndex = i;
  walkAhead = ahead;
}

/** Keeps the walk's place at entry `i` (`ahead` lots before it) as the queue's cut. */
function cutAt(queue: ClaimQueue, i: number, ahead: number): void {
  queue.cutIndex = i;
  queue.cutNumber = i < queue.numbers.length ? queue.numbers[i]! : Number.POSITIVE_INFINITY;
  queue.cutAhead = ahead;
}

/** Whether the open orders on `side` claim more than `lots` of the position (plain and combo shares). */
function claimsBeyond(account: Account, position: Position, side: 'buy' | 'sell', lots: number): boolean {
  const plain = side === 'buy' ? position.openBuys : position.openSells;
  if (plain > lots) return true;
  if (account.comboOpen.size === 0) return false;
  const combo = account.comboOpen.get(position.instrumentId);
  return combo !== undefined && plain + (side === 'buy' ? combo.buys : combo.sells) > lots;
}

/** The position's review pending in this command, opened (and queued for `clipReduceOnly`) when none. */
function openReview(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  position: Position,
): ReserveReview {
  const queue = state.reduceOnlyChecks;
  let review = position.review;
  if (review !== null && review.queue === queue) return review;
  if (review === null) {
    review = {
      instrument,
      account,
      queue,
      buysLow: 0,
      buysHigh: 0,
      sellsLow: 0,
      sellsHigh: 0,
      entered: null,
    };
    position.review = review;
  }
  // A review left from an earlier command (run, or dropped with a refused command) is reused.
  review.queue = queue;
  review.buysLow = Number.POSITIVE_INFINITY;
  review.buysHigh = 0;
  review.sellsLow = Number.POSITIVE_INFINITY;
  review.sellsHigh = 0;
  review.entered = null;
  // The review is the queue's entry for the position (no object made per command).
  queue.push(review);
  return review;
}

/**
 * A fill moved a position from `before`: when the lots it lets orders reduce (sells reduce a long,
 * buys a short) shrank below what open orders claim, or grew for an option with more claimed than
 * before, the change is noted for `reviewReserves`. Every fill passes here: the usual case (no
 * claims beyond the position, a future growing) returns after a few comparisons.
 */
function noteClaimChange(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  position: Position,
  before: number,
): void {
  const after = position.size;
  const sellsBefore = Math.max(before, 0);
  const sellsAfter = Math.max(after, 0);
  const buysBefore = Math.max(-before, 0);
  const buysAfter = Math.max(-after, 0);
  // Futures orders that come to only reduce keep their reserve (conservative, and cheap).
  const growing = instrument.economics.isOption;
  const sells =
    sellsAfter !== sellsBefore &&
    (growing || sellsAfter < sellsBefore) &&
    claimsBeyond(account, position, 'sell', Math.min(sellsBefore, sellsAfter));
  const buys =
    buysAfter !== buysBefore &&
    (growing || buysAfter < buysBefore) &&
    claimsBeyond(account, position, 'buy', Math.min(buysBefore, buysAfter));
  if (!sells && !buys) return;
  const review = openReview(state, instrument, account, position);
  if (sells) {
    review.sellsLow = Math.min(review.sellsLow, sellsBefore, sellsAfter);
    review.sellsHigh = Math.max(review.sellsHigh, sellsBefore, sellsAfter);
  }
  if (buys) {
    review.buysLow = Math.min(review.buysLow, buysBefore, buysAfter);
    review.buysHigh = Math.max(review.buysHigh, buysBefore, buysAfter);
  }
}

/**
 * `order` rested again out of number order, with `lots` more than it claimed before (an edit that
 * grew it and lost priority; a trigger or linked order going live with the number it got when
 * placed, all its lots): the younger orders behind it in its claim queues now claim after `lots`
 * more, so those pushed past the position's reducible lots have their reserves reviewed, and the
 * order itself, reserved as the newest when it entered, may be lowered to what its place asks.
 * Activation (activation.ts) must call this after `rest` for an order that rests.
 */
export function noteClaimEntry(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  order: Order,
  lots: number,
): void {
  if (lots <= 0 || instrument.economics.isSpot) return;
  const combo = comboLegs(state, instrument);
  if (combo === null) {
    noteEntryOn(state, instrument, account, order, order.side, lots);
    return;
  }
  for (const leg of combo.legs) {
    noteEntryOn(state, leg.instrument, account, order, legSide(order.side, leg.ratio), lots);
  }
}

function noteEntryOn(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  order: Order,
  side: 'buy' | 'sell',
  lots: number,
): void {
  const position = account.positions.get(instrument.id);
  if (position === undefined) return;
  const reducible = reducibleLots(position, side);
  // Nothing to reduce, or every claim inside it: no reserve depends on the order of claims.
  if (reducible === 0 || !claimsBeyond(account, position, side, reducible)) return;
  // The orders older than it claim what they did: the review starts at its place in the queue, so
  // they are not re-reserved at today's mark (a mark move does not do that to resting orders).
  const queue = sideQueue(account, position, side);
  if (queue === null) return;
  const low = Math.max(reducible, claimedBefore(queue, order));
  const review = openReview(state, instrument, account, position);
  if (side === 'buy') {
    review.buysLow = Math.min(review.buysLow, low);
    review.buysHigh = Math.max(review.buysHigh, reducible + lots);
  } else {
    review.sellsLow = Math.min(review.sellsLow, low);
    review.sellsHigh = Math.max(review.sellsHigh, reducible + lots);
  }
  review.entered ??= [];
  review.entered.push(order);
}

/**
 * What more than `reserve` (its own reserve as the newest claim, as placing computes) an order of
 * `lots` crossing the book at `price` on `side` needs when it reduces the position first, as it
 * does when it fills: the lots it takes no longer cover the account's resting orders that claimed
 * them, which then reserve for opening, at their own prices. Its funds check adds this, so a
 * closing order the account cannot follow through is refused up front; the reserves themselves
 * move after the fills (`reviewReserves`). 0 when it does not cross, when nothing is pushed out, or
 * for a combo or spot. `skip`: an order being edited, which is not one of the others. Activation
 * (activation.ts) must add it as placing does.
 */
export function closingExtra(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  side: 'buy' | 'sell',
  lots: number,
  price: number,
  reserve: number,
  skip: Order | null = null,
): number {
  if (instrument.economics.isSpot || instrument.instrument.spec.legs !== null) return 0;
  const position = account.positions.get(instrument.id);
  if (position === undefined) return 0;
  const reducible = reducibleLots(position, side);
  if (reducible === 0) return 0;
  const shift = Math.min(lots, reducible);
  const after = reducible - shift;
  if (!claimsBeyond(account, position, side, after)) return 0;
  // An order that does not cross rests without trading: it reduces nothing now.
  const touch = side === 'buy' ? instrument.book.bestAsk() : instrument.book.bestBid();
  if (touch === null || (side === 'buy' ? price < touch : price > touch)) return 0;
  const queue = sideQueue(account, position, side);
  if (queue === null) return 0;
  const orders = queue.orders;
  walkTo(queue, after);
  let i = walkIndex;
  let ahead = walkAhead;
  // The order being edited is no claim of the others: out of the count.
  if (skip !== null && skip.number < (i < orders.length ? orders[i]!.number : Number.POSITIVE_INFINITY))
    ahead -= claimOf(skip);
  let pushed = 0;
  for (; i < orders.length && ahead < reducible; i++) {
    const order = orders[i]!;
    const remaining = claimOf(order);
    if (remaining === 0 || order === skip) continue;
    const end = ahead + remaining;
    if (
      end > after &&
      exposedOf(end, after, remaining) > exposedOf(end, reducible, remaining) &&
      (order.flags & FLAG_REDUCE_ONLY) === 0
    ) {
      const exposed = exposedOf(end, after, remaining);
      const exact = claimReserve(state, account, order, instrument.id, ahead + shift, exposed);
      if (exact > order.reserved) pushed += exact - order.reserved;
    }
    ahead = end;
  }
  // With no mark, the lots it closes first realise their loss against the position's cost (risk.ts
  // `costLoss`), which its reserve as the newest claim (opening those lots) does not hold.
  if (pushed === 0 && (instrument.markPrice !== null || instrument.economics.isOption)) return 0;
  const first = orderReserve(state, instrument, account, side, lots, price, 0, {
    instrumentId: instrument.id,
    lots: 0,
  });
  return Math.max(0, first.amount + pushed - reserve);
}

/**
 * What more the account's younger resting orders need, up front, when `order` claims `lots` more
 * at its number than it did (an edit that grows it; a waiting order going live with the number it
 * got when placed): the claims behind it move back by `lots`, and those pushed past the position's
 * reducible lots reserve for opening. `noteClaimEntry` moves their reserves after the command; a
 * funds check adds this so the command is refused when the account cannot pay for them (before, an
 * edit growing an older combo order took an account below zero). Reduce-only orders never open.
 */
export function entryExtra(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  order: Order,
  lots: number,
): number {
  if (lots <= 0 || instrument.economics.isSpot) return 0;
  const combo = comboLegs(state, instrument);
  if (combo === null) return entryExtraOn(state, instrument, account, order, order.side, lots);
  let extra = 0;
  for (const leg of combo.legs) {
    extra += entryExtraOn(state, leg.instrument, account, order, legSide(order.side, leg.ratio), lots);
  }
  return extra;
}

function entryExtraOn(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  order: Order,
  side: 'buy' | 'sell',
  lots: number,
): number {
  const position = account.positions.get(instrument.id);
  if (position === undefined) return 0;
  const reducible = reducibleLots(position, side);
  if (reducible === 0 || !claimsBeyond(account, position, side, 0)) return 0;
  const queue = sideQueue(account, position, side);
  if (queue === null) return 0;
  const { orders, numbers } = queue;
  let ahead = 0;
  let pushed = 0;
  for (let i = 0; i < orders.length && ahead < reducible; i++) {
    const other = orders[i]!;
    const remaining = claimOf(other);
    if (remaining === 0) continue;
    const end = ahead + remaining;
    if (numbers[i]! > order.number && other !== order && (other.flags & FLAG_REDUCE_ONLY) === 0) {
      const exposed = exposedOf(end + lots, reducible, remaining);
      if (exposed > exposedOf(end, reducible, remaining)) {
        const exact = claimReserve(state, account, other, instrument.id, ahead + lots, exposed);
        if (exact > other.reserved) pushed += exact - other.reserved;
      }
    }
    ahead = end;
  }
  return pushed;
}

/**
 * What `order`, grown to `lots` remaining at `price`, reserves at its own number in its claim
 * queues once the review after the command has run (only the orders ahead of it claiming): the
 * largest over the queues it claims in (a combo's legs), 0 where it claims in none. The edit's
 * funds check takes the larger of this and its reserve as the newest claim: an option's lots
 * that only reduce can cost more than opening ones, so reserving as the newest could ask less.
 */
export function grownReserve(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  order: Order,
  lots: number,
  price: number,
): number {
  if (lots <= 0 || instrument.economics.isSpot) return 0;
  const combo = comboLegs(state, instrument);
  const amount = order.amount;
  const oldPrice = order.price;
  order.amount = order.filled + lots;
  order.price = price;
  try {
    if (combo === null) return grownReserveOn(state, instrument, account, order, order.side, lots);
    let most = 0;
    for (const leg of combo.legs) {
      const side = legSide(order.side, leg.ratio);
      most = Math.max(most, grownReserveOn(state, leg.instrument, account, order, side, lots));
    }
    return most;
  } finally {
    order.amount = amount;
    order.price = oldPrice;
  }
}

function grownReserveOn(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  order: Order,
  side: 'buy' | 'sell',
  lots: number,
): number {
  const position = account.positions.get(instrument.id);
  if (position === undefined) return 0;
  const reducible = reducibleLots(position, side);
  if (reducible === 0) return 0;
  const queue = sideQueue(account, position, side);
  if (queue === null) return 0;
  const ahead = claimedBefore(queue, order);
  if (ahead >= reducible) return 0;
  return Math.max(
    0,
    claimReserve(state, account, order, instrument.id, ahead, exposedOf(ahead + lots, reducible, lots)),
  );
}

/** Lots of a claim ending at `end` (cumulative, in queue order) beyond `reducible`, of its `lots`. */
export function exposedOf(end: number, reducible: number, lots: number): number {
  return Math.min(lots, Math.max(0, end - reducible));
}

/** The queue a review that has run points at: no command's. */
const DONE: readonly unknown[] = [];

/** Runs a position's pending review (`noteClaimChange`, `noteClaimEntry`) on both sides. */
function reviewReserves(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  position: Position,
  review: ReserveReview,
): void {
  const queues = queuesOf(account, position);
  if (queues === null) return;
  if (review.sellsLow < review.sellsHigh) {
    const reducible = reducibleLots(position, 'sell');
    reviewSide(
      state,
      instrument,
      account,
      queues.sells,
      reducible,
      review.sellsLow,
      review.sellsHigh,
      review,
    );
  }
  if (review.buysLow < review.buysHigh) {
    const reducible = reducibleLots(position, 'buy');
    reviewSide(state, instrument, account, queues.buys, reducible, review.buysLow, review.buysHigh, review);
  }
}

/**
 * The orders of one claim queue whose claim overlaps the reducible lots' range since the review
 * opened (`low`..`high`): each now needs what it would reserve with only the orders ahead of it
 * claiming the position. An order whose exposed lots may have grown is raised to that, one whose
 * exposed lots may have shrunk (or that entered out of order, reserved as the newest) lowered to
 * it; reduce-only orders never open a position and keep theirs. Orders behind `high` claimed
 * nothing the change touched.
 */
function reviewSide(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  queue: ClaimQueue,
  reducible: number,
  low: number,
  high: number,
  review: ReserveReview,
): void {
  const orders = queue.orders;
  let i = 0;
  let ahead = 0;
  // Orders that entered out of order may sit anywhere before `high`: walk from the start then.
  if (review.entered === null) {
    walkTo(queue, Math.min(low, reducible));
    i = walkIndex;
    ahead = walkAhead;
  }
  let cut = false;
  for (; i < orders.length && ahead < high; i++) {
    const order = orders[i]!;
    const lots = claimOf(order);
    if (lots === 0) continue;
    const end = ahead + lots;
    if (!cut && end > reducible) {
      cutAt(queue, i, ahead);
      cut = true;
    }
    const entered = review.entered?.includes(order) === true;
    if ((end > low || entered) && (order.flags & FLAG_REDUCE_ONLY) === 0) {
      const exposed = exposedOf(end, reducible, lots);
      const mayRaise = exposed > exposedOf(end, high, lots);
      const mayLower = exposed < exposedOf(end, low, lots) || entered;
      if (mayRaise || mayLower) {
        const exact = claimReserve(state, account, order, instrument.id, ahead, exposed);
        if (exact >= 0 && (exact > order.reserved ? mayRaise : mayLower)) {
          if (exact > order.reserved) state.raisedReserves.push(order);
          setReserve(account, order, exact);
        }
      }
    }
    ahead = end;
  }
}

/**
 * What a resting order's remaining lots need now, as if placed again: its own open lots are no
 * other order's claim (a combo's other legs included); `claim` puts the orders ahead of it in its
 * claim queue in place of all open orders on that instrument.
 */
export function exactReserve(
  state: VenueState,
  account: Account,
  order: Order,
  claim: Claim | null,
): { currency: string; amount: number } {
  const instrument = state.instrumentList[order.instrumentId]!;
  const lots = order.amount - order.filled;
  // A plain order's own lots matter only through the claims, which `claim` replaces.
  if (claim !== null && instrument.instrument.spec.legs === null)
    return orderReserve(state, instrument, account, order.side, lots, order.price, 0, claim);
  const position = instrument.position(account);
  changeOpenLots(state, instrument, account, position, order.side, -lots, order);
  const reserve = orderReserve(state, instrument, account, order.side, lots, order.price, 0, claim);
  changeOpenLots(state, instrument, account, position, order.side, lots, order);
  return reserve;
}

/**
 * `exactReserve` with the orders ahead in `order`'s claim queue on `instrumentId` claiming `claimed`
 * lots, which leaves `exposed` of its lots opening the position: the amount, or -1 when it is in
 * another currency than the order's reserve. A plain order's is computed without allocating
 * (`plainReserve`, `futureReserve`).
 */
function claimReserve(
  state: VenueState,
  account: Account,
  order: Order,
  instrumentId: number,
  claimed: number,
  exposed: number,
): number {
  const instrument = state.instrumentList[order.instrumentId]!;
  if (instrument.instrument.spec.legs === null) {
    // In a claim queue: not spot, and on its own instrument.
    const economics = instrument.economics;
    if (economics.settlementCurrency !== order.reserveCurrency) return -1;
    const lots = order.amount - order.filled;
    // A future's reserve depends on its position only through the exposed lots, known here; with
    // no mark, also through the cost its reducing lots close at (risk.ts `costLoss`).
    if (!economics.isOption && instrument.id === instrumentId && instrument.markPrice !== null)
      return futureReserve(state, instrument, order.side, lots, order.price, exposed);
    const own = instrument.id === instrumentId ? claimed : undefined;
    return plainReserve(state, instrument, account, order.side, lots, order.price, 0, own);
  }
  const exact = exactReserve(state, account, order, { instrumentId, lots: claimed });
  return exact.currency === order.reserveCurrency ? exact.amount : -1;
}

function setReserve(account: Account, order: Order, amount: number): void {
  account.ledger(order.reserveCurrency).reserved += amount - order.reserved;
  order.reserved = amount;
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

/** Lots a reduce-only order may still trade against its account's current position. */
export function reducibleLots(position: { size: number }, side: 'buy' | 'sell'): number {
  return side === 'buy' ? Math.max(0, -position.size) : Math.max(0, position.size);
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
    const review = position.review;
    if (review !== null && review.queue === checks) {
      review.queue = DONE;
      reviewReserves(state, instrument, account, position, review);
    }
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
    (instrument.instrument.spec.legs !== null ||
      (instrument.markPrice === null && !instrument.economics.isOption && !instrument.economics.isSpot))
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
    state.events.push(balanceEvent(account.id, base.currency, base.balance, delivered));
  } else {
    cash = economics.isOption ? -sign * economics.value(lots, price) : pnl;
  }
  const change = cash - fee + 0;
  ledger.balance += change;
  state.events.push(balanceEvent(account.id, currency, ledger.balance, change));
}

function balanceEvent(accountId: number, currency: string, balance: number, change: number) {
  return { type: 'balance' as const, accountId, currency, balance, change, reason: 'trade' as const };
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
