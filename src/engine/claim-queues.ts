/**
 * Claim queues and reserve reviews: the reducing-order exemption.
 *
 * Lots of an order that only reduce the position need no margin (risk.ts); an order is granted
 * that when it is placed, against the position and the open orders then. The account's resting
 * orders on one side of an instrument claim the position's reducible lots in order-number order
 * (oldest first: a new order is granted only what older ones leave, as placing computes). When the
 * position shrinks, the newest claims lose their cover and those orders must reserve for opening;
 * when an option position grows, orders that now only reduce it need less (a long that open orders
 * would sell covers no short, so their reserve would count the short's naked margin twice). After
 * each command's fills (`clipReduceOnly`), the orders whose claim crossed the change are given their
 * exact reserve against the orders ahead of them (`reviewReserves`).
 *
 * Matching (matching.ts) moves orders' lots in and out of the queues (`changeOpenLots`,
 * `forEachClaimQueue`), notes each fill's change (`noteClaimChange`) and runs the reviews after the
 * command's fills (`runPendingReview`).
 */
import type { Account, ClaimQueue, ClaimQueues, Position, ReserveReview } from './accounts.ts';
import { comboLegs, legSide } from './combo-legs.ts';
import { FLAG_REDUCE_ONLY, Order } from './order.ts';
import { type Claim, carriedAtCost, futureReserve, orderReserve, plainReserve } from './risk.ts';
import type { InstrumentState, VenueState } from './state.ts';

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
export function forEachClaimQueue(
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

export function enqueueClaim(queue: ClaimQueue, order: Order): void {
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
export function idleClaim(queue: ClaimQueue, order: Order): void {
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
export function noteClaimChange(
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
  if (pushed === 0 && !carriedAtCost(instrument)) return 0;
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
      // With no mark, a future's reducing lots reserve their loss against the position's cost
      // (risk.ts `costLoss`): lots the position no longer has for it to reduce free that loss,
      // booked by the fill that closed them, so its reserve may fall as its exposure grows.
      const mayLower =
        exposed < exposedOf(end, low, lots) ||
        entered ||
        (mayRaise && order.instrumentId === instrument.id && carriedAtCost(instrument));
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

export function setReserve(account: Account, order: Order, amount: number): void {
  account.ledger(order.reserveCurrency).reserved += amount - order.reserved;
  order.reserved = amount;
}

/** Lots a reduce-only order may still trade against its account's current position. */
export function reducibleLots(position: { size: number }, side: 'buy' | 'sell'): number {
  return side === 'buy' ? Math.max(0, -position.size) : Math.max(0, position.size);
}

/**
 * Runs the position's review pending in the command whose queue of checks is `checks`
 * (`clipReduceOnly`), once: the review then points at no command's queue.
 */
export function runPendingReview(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  position: Position,
  checks: readonly unknown[],
): void {
  const review = position.review;
  if (review === null || review.queue !== checks) return;
  review.queue = DONE;
  reviewReserves(state, instrument, account, position, review);
}
