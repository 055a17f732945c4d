/**
 * The algorithms' steps: start, time-driven steps (TWAP slices, BALANCE part deadlines and the
 * total cap, repricing ticks) and `evaluate`, which brings every leg's child order in line with
 * what the algorithm wants now. `evaluate` is idempotent: with nothing changed it does nothing,
 * so it may run after every command.
 *
 * Per type, the open lots a leg wants (its "desired open"):
 * - TWAP: the current slice's lots not yet filled (MARKET legs: until sent once); a resting child
 *   keeps its size (repriced only).
 * - BALANCE: allowance (planner.ts) − filled; hedge legs with market orders. A market leg with
 *   nothing to take looks again PRICE_RETRY_MS later, until its part's deadline.
 * - ICEBERG: one venue iceberg child of the leg's whole rest showing displayQuantity, when the
 *   engine accepts one (`icebergDisplay`); else plain slices: one visible child of displayQuantity,
 *   then refreshQuantity (or display) until done; a child closed with lots unfilled (self-trade
 *   prevention, a cancel by hand) is followed by exactly its unfilled rest. A MARKET leg with
 *   nothing to take looks again PRICE_RETRY_MS later.
 * - COMMON: one child per leg with the whole amount, placed once; when the legs form a listed
 *   combo (./combo.ts), one child on the combo for all of them instead, at the legs' net price.
 * Whatever the type, a leg never wants more open than it still needs (TWAP: than the slice still
 * needs): a child grown from outside (`private/edit` by hand) is cut back to that at once.
 * LIMIT prices are converted when a child is placed and then kept; DYNAMIC prices are
 * re-evaluated one `dynamicMs` of the leg after they were set (a fill is no tick), and the child is
 * amended when the price moved a tick. A BID, ASK or MID reference leaves out the resting orders of
 * the portfolio's accounts (its own and its mirrors'), so pegs of one desk never chase each other.
 *
 * A leg whose instrument expired with lots still to fill ends the portfolio FAILED
 * (`instrument_expired`): the machine does it at the settlement, `expiredLeg` at any later step.
 *
 * Self-trade (docs/decisions.md, "Portfolios of one account meeting on the book"): a limit child
 * is priced clear of its own account's resting orders on the other side; a leg whose child
 * self-trade prevention cancelled anyway (a market child met it, or a hand-placed order did)
 * places nothing for one reprice interval (PRICE_RETRY_MS for other legs), so opposing
 * portfolios of one account can never cancel each other in a loop inside one command.
 */
import type { ErrorName } from '../domain/errors.ts';
import type { Instrument } from '../domain/instrument.ts';
import { validateIceberg } from '../engine/iceberg.ts';
import { insideTouch } from '../engine/trading.ts';
import {
  amendChild,
  type ChildContext,
  cancelAllChildren,
  cancelChild,
  placeChild,
  placeComboChild,
  restsPostOnly,
} from './children.ts';
import { clearOfOwnCombo, commonComboPlan, netComboTicks } from './combo.ts';
import { applyTrigger, failOnExpiry, failPortfolio, finish } from './lifecycle.ts';
import type { AlgoMarketView, OwnAccounts } from './market-view.ts';
import {
  type BalanceLegInput,
  balanceAllowances,
  balanceCumulativeTarget,
  balancePartReached,
  twapSliceAmount,
  twapSliceAt,
  twapSliceCount,
} from './planner.ts';
import {
  type ChildState,
  childCovers,
  fullyFilled,
  type PortfolioState,
  remaining,
  stillHeld,
} from './portfolio-state.ts';
import {
  clearOfOwnOrders,
  convertToQuote,
  marketableBound,
  type ResolvedPrice,
  resolvePrice,
} from './pricing.ts';
import { DEFAULT_BALANCE_DYNAMIC_MS, legRepriceMs, PRICE_RETRY_MS, selfTradeHoldMs } from './timing.ts';
import type { LegPricing, LegSpec } from './types.ts';

export { DEFAULT_BALANCE_DYNAMIC_MS, PRICE_RETRY_MS };

/**
 * Child orders one portfolio may place within one command. An ICEBERG with a small display
 * against a deep crossing level refills after every fill; unbounded, one command placed
 * thousands of children until the core's reaction limit stopped the service. Past the budget the
 * portfolio goes on at its next wakeup (`retryAt` = now: the next timer command).
 */
export const MAX_PLACEMENTS_PER_COMMAND = 50;

export interface StepContext extends ChildContext {
  readonly market: AlgoMarketView;
  /** Takes one placement from the portfolio's budget for this command; false when spent. */
  placement(portfolio: PortfolioState): boolean;
  /**
   * The accounts whose resting orders the portfolio's references leave out (`OwnAccounts`): its
   * own and those of its group (the original and its mirrors).
   */
  ownAccounts(portfolio: PortfolioState): OwnAccounts;
}

function repriceInterval(portfolio: PortfolioState): number | null {
  let interval: number | null = null;
  for (const leg of portfolio.spec.legs) {
    const ms = legRepriceMs(leg);
    if (ms !== null) interval = interval === null ? ms : Math.min(interval, ms);
  }
  return interval;
}

/** The next time this portfolio needs a step, or null. */
export function wakeAt(portfolio: PortfolioState): number | null {
  if (portfolio.status === 'PENDING') return portfolio.startAt;
  if (portfolio.status !== 'WORKING') return null;
  let at = Number.POSITIVE_INFINITY;
  if (portfolio.nextSliceAt !== null && portfolio.nextSliceAt < at) at = portfolio.nextSliceAt;
  if (portfolio.endAt !== null && portfolio.endAt < at) at = portfolio.endAt;
  if (portfolio.partDeadline !== null && portfolio.partDeadline < at) at = portfolio.partDeadline;
  if (portfolio.totalDeadline !== null && portfolio.totalDeadline < at) at = portfolio.totalDeadline;
  if (portfolio.nextRepriceAt !== null && portfolio.nextRepriceAt < at) at = portfolio.nextRepriceAt;
  if (portfolio.retryAt !== null && portfolio.retryAt < at) at = portfolio.retryAt;
  for (let i = 0; i < portfolio.legs.length; i++) {
    const hold = portfolio.legs[i]!.selfTradeHoldUntil;
    if (hold != null && hold < at) at = hold;
    const due = repriceDueAt(portfolio, i);
    if (due !== null && due < at) at = due;
  }
  return at === Number.POSITIVE_INFINITY ? null : at;
}

/**
 * When leg i's resting DYNAMIC child is next re-evaluated: one reprice interval (its own
 * `dynamicMs`) after its price was last decided. Null for other legs and legs with no child.
 */
function repriceDueAt(portfolio: PortfolioState, i: number): number | null {
  const state = portfolio.legs[i]!;
  const ms = legRepriceMs(portfolio.spec.legs[i]!);
  if (ms === null || state.working === null || state.repricedAt == null) return null;
  return state.repricedAt + ms;
}

/**
 * Arrival price of each leg at submit (ticks, maybe fractional): the mid of the book, else the
 * client's first priceSnapshot price converted from its priceIn, else the mark.
 */
export function captureArrival(context: StepContext, portfolio: PortfolioState): void {
  const market = context.market;
  portfolio.spec.legs.forEach((leg, i) => {
    const bid = market.bestBid(leg.instrumentName);
    const ask = market.bestAsk(leg.instrumentName);
    let arrival: number | null = bid !== null && ask !== null ? (bid + ask) / 2 : null;
    const instrument = market.instrument(leg.instrumentName);
    const snapshot = leg.priceSnapshot[0];
    if (arrival === null && snapshot !== undefined && instrument !== undefined) {
      const quote = convertToQuote(
        market,
        instrument,
        snapshot.priceIn || null,
        snapshot.price,
        context.stamp.ts,
      );
      if (quote !== null) arrival = quote / Number(instrument.spec.tickSize);
    }
    portfolio.legs[i]!.arrivalPrice = arrival ?? market.markPrice(leg.instrumentName);
  });
}

export function startPortfolio(context: StepContext, portfolio: PortfolioState): void {
  const now = context.stamp.ts;
  portfolio.startedAt = now;
  applyTrigger(context, portfolio, 'start');
  const interval = repriceInterval(portfolio);
  if (interval !== null) portfolio.nextRepriceAt = now + interval;
  const spec = portfolio.spec;
  if (spec.twap !== null) {
    portfolio.endAt = portfolio.startAt + spec.twap.durationMs;
    beginSlice(
      context,
      portfolio,
      twapSliceAt(portfolio.startAt, spec.twap.frequencyMs, sliceCount(portfolio), now),
    );
  } else if (spec.balance !== null) {
    if (spec.balance.totalLimitMs > 0) portfolio.totalDeadline = now + spec.balance.totalLimitMs;
    beginPart(context, portfolio, 0);
  }
  evaluate(context, portfolio);
}

/**
 * The first leg with lots still to fill whose instrument has expired at `now` (the command's
 * time: from the expiry instant on, as the engine judges it, not only once settled), or null.
 * Such a leg can never fill: its portfolio ends FAILED (`instrument_expired`). A leg already
 * filled needs nothing more from its instrument.
 */
export function expiredLeg(market: AlgoMarketView, portfolio: PortfolioState, now: number): number | null {
  for (let i = 0; i < portfolio.spec.legs.length; i++) {
    if (remaining(portfolio, i) > 0 && market.expired(portfolio.spec.legs[i]!.instrumentName, now)) return i;
  }
  return null;
}

/**
 * Ends the portfolio when a leg's instrument has expired under it (`expiredLeg`); true if so. The
 * machine does this at the settlement itself (the engine's `instrument` event); this catches a
 * step between the expiry instant and the settlement (the engine would refuse its child), and a
 * portfolio restored from a snapshot saved before the settlement, at its first step.
 */
function endedByExpiry(context: StepContext, portfolio: PortfolioState): boolean {
  const leg = expiredLeg(context.market, portfolio, context.stamp.ts);
  if (leg === null) return false;
  failOnExpiry(context, portfolio, leg);
  return true;
}

/** Everything due at or before the stamp, then `evaluate`. */
export function onTime(context: StepContext, portfolio: PortfolioState): void {
  const now = context.stamp.ts;
  if (endedByExpiry(context, portfolio)) return;
  if (portfolio.status === 'PENDING') {
    if (portfolio.startAt <= now) startPortfolio(context, portfolio);
    return;
  }
  if (portfolio.status !== 'WORKING') return;
  const spec = portfolio.spec;
  if (spec.twap !== null) {
    if (portfolio.endAt !== null && portfolio.endAt <= now) {
      finish(context, portfolio, 'duration_elapsed');
      return;
    }
    if (portfolio.nextSliceAt !== null && portfolio.nextSliceAt <= now) {
      beginSlice(
        context,
        portfolio,
        twapSliceAt(portfolio.startAt, spec.twap.frequencyMs, sliceCount(portfolio), now),
      );
    }
  }
  if (spec.balance !== null) {
    if (portfolio.totalDeadline !== null && portfolio.totalDeadline <= now) {
      endAction(context, portfolio, 'total_limit');
      return;
    }
    if (portfolio.partDeadline !== null && portfolio.partDeadline <= now) {
      if (portfolio.part >= spec.balance.parts - 1) {
        endAction(context, portfolio, 'parts_elapsed');
        return;
      }
      beginPart(context, portfolio, portfolio.part + 1);
    }
  }
  if (portfolio.nextRepriceAt !== null && portfolio.nextRepriceAt <= now) {
    portfolio.nextRepriceAt = now + (repriceInterval(portfolio) ?? DEFAULT_BALANCE_DYNAMIC_MS);
  }
  if (portfolio.retryAt !== null && portfolio.retryAt <= now) portfolio.retryAt = null;
  for (const leg of portfolio.legs) stillHeld(leg, now);
  evaluate(context, portfolio);
}

function sliceCount(portfolio: PortfolioState): number {
  const twap = portfolio.spec.twap!;
  return twapSliceCount(twap.durationMs, twap.frequencyMs);
}

function closeCurrentPart(portfolio: PortfolioState, now: number): void {
  const current = portfolio.parts[portfolio.parts.length - 1];
  if (current !== undefined && current.endedAt === null) {
    current.endedAt = now;
    current.filledAtEnd = portfolio.legs.map((leg) => leg.filled);
  }
}

/** TWAP slice k: the previous slice's unfilled rest is cancelled and rolled into this one. */
function beginSlice(context: StepContext, portfolio: PortfolioState, slice: number): void {
  const now = context.stamp.ts;
  const count = sliceCount(portfolio);
  for (const child of portfolio.children) if (child.open) cancelChild(context, portfolio, child);
  closeCurrentPart(portfolio, now);
  portfolio.part = slice;
  const targets = portfolio.legs.map((leg, i) => {
    leg.slicePending = twapSliceAmount(remaining(portfolio, i), count, slice);
    return leg.slicePending;
  });
  portfolio.parts.push({ index: slice, startedAt: now, endedAt: null, targets, filledAtEnd: null });
  portfolio.nextSliceAt =
    slice + 1 < count ? portfolio.startAt + (slice + 1) * portfolio.spec.twap!.frequencyMs : null;
  context.event(portfolio, 'PART_STARTED', { part: slice });
}

function beginPart(context: StepContext, portfolio: PortfolioState, part: number): void {
  const now = context.stamp.ts;
  const balance = portfolio.spec.balance!;
  closeCurrentPart(portfolio, now);
  portfolio.part = part;
  const targets = portfolio.spec.legs.map((leg) => balanceCumulativeTarget(leg.amount, balance.parts, part));
  portfolio.parts.push({ index: part, startedAt: now, endedAt: null, targets, filledAtEnd: null });
  portfolio.partDeadline = now + balance.eachLimitMs;
  context.event(portfolio, 'PART_STARTED', { part });
}

/** BALANCE end: cancel what remains (1) or fill it with market orders (2), then end. */
function endAction(
  context: StepContext,
  portfolio: PortfolioState,
  reason: 'total_limit' | 'parts_elapsed',
): void {
  cancelAllChildren(context, portfolio);
  if (portfolio.spec.balance!.totalEndAction === 'FILL_BY_MARKET') {
    for (let i = 0; i < portfolio.legs.length; i++) {
      const rest = remaining(portfolio, i);
      if (rest <= 0) continue;
      const outcome = placeChild(context, portfolio, i, rest, null);
      if (!outcome.ok) {
        failPortfolio(context, portfolio, outcome.message);
        return;
      }
    }
  }
  finish(context, portfolio, reason);
}

function totalFilled(portfolio: PortfolioState): number {
  let sum = 0;
  for (const leg of portfolio.legs) sum += leg.filled;
  return sum;
}

/** Brings every leg's child in line with the algorithm; ends the portfolio when it is done. */
export function evaluate(context: StepContext, portfolio: PortfolioState): void {
  if (portfolio.status === 'WORKING' && endedByExpiry(context, portfolio)) return;
  for (let round = 0; round < 4 && portfolio.status === 'WORKING'; round++) {
    const before = totalFilled(portfolio);
    if (fullyFilled(portfolio)) {
      finish(context, portfolio, 'filled');
      return;
    }
    const balance = portfolio.spec.balance;
    if (balance !== null && portfolio.part < balance.parts - 1 && partReached(portfolio)) {
      beginPart(context, portfolio, portfolio.part + 1);
    }
    if (!reconcileLegs(context, portfolio)) return;
    if (fullyFilled(portfolio)) {
      finish(context, portfolio, 'filled');
      return;
    }
    if (portfolio.spec.portfolioType === 'COMMON' && commonExhausted(portfolio)) {
      finish(context, portfolio, 'orders_closed');
      return;
    }
    if (totalFilled(portfolio) === before) return;
  }
}

function partReached(portfolio: PortfolioState): boolean {
  const part = portfolio.parts[portfolio.parts.length - 1];
  if (part === undefined) return false;
  return balancePartReached(
    balanceLegs(portfolio),
    portfolio.spec.balance!.parts,
    portfolio.part,
    part.targets,
  );
}

function balanceLegs(portfolio: PortfolioState): BalanceLegInput[] {
  return portfolio.spec.legs.map((leg, i) => ({
    amount: leg.amount,
    filled: portfolio.legs[i]!.filled,
    hedge: leg.hedge,
    priority: leg.priority,
  }));
}

function commonExhausted(portfolio: PortfolioState): boolean {
  return portfolio.legs.every(
    (_, i) =>
      portfolio.children.some((child) => childCovers(child, i)) &&
      !portfolio.children.some((c) => childCovers(c, i) && c.open),
  );
}

/**
 * TWAP: lots of the current slice not yet filled. A limit leg works them until they fill, so a
 * child cancelled from outside (self-trade prevention, a cancel by hand) is placed again within
 * the slice; a market leg sends its slice once (`slicePending`) and rolls the rest forward.
 */
function twapSliceRest(portfolio: PortfolioState, i: number): number {
  const leg = portfolio.legs[i]!;
  if (portfolio.spec.legs[i]!.pricing.priceType === 'MARKET') return leg.slicePending;
  const k = portfolio.parts.length - 1;
  const part = portfolio.parts[k];
  if (part === undefined) return 0;
  const filledAtStart = k === 0 ? 0 : (portfolio.parts[k - 1]!.filledAtEnd?.[i] ?? 0);
  return Math.max(0, part.targets[i]! + filledAtStart - leg.filled);
}

/**
 * ICEBERG: lots of the next child. The first child shows displayQuantity; a child that filled
 * completely is followed by refreshQuantity (or the display). A child that closed with lots unfilled
 * (cancelled by self-trade prevention or by hand, a market child's unfilled rest) is followed by
 * exactly that rest: a slice is worked until it fills, never resized by a cancel. Derived from the
 * children alone, so a snapshot or a replay takes the same decision.
 */
function icebergSlice(portfolio: PortfolioState, before = portfolio.children.length): number {
  const iceberg = portfolio.spec.iceberg!;
  const last = portfolio.children[before - 1];
  if (last === undefined) return iceberg.displayAmount;
  if (last.filled < last.amount) return last.amount - last.filled;
  return iceberg.refreshAmount ?? iceberg.displayAmount;
}

/**
 * ICEBERG: the display of a venue iceberg child for the leg's whole rest, or null to slice with
 * plain orders: when the engine would refuse that order (validateIceberg: a display of at least
 * 100 lots, at most the rest, the rest beyond it below 100 displays; never hidden), for a MARKET leg (it
 * cannot rest), and when refreshQuantity differs from the display (the engine refreshes an
 * iceberg with its display). A function of the spec and the fills, so replay decides alike.
 */
function icebergDisplay(portfolio: PortfolioState): number | null {
  const spec = portfolio.spec;
  const leg = spec.legs[0]!;
  const iceberg = spec.iceberg!;
  if (leg.pricing.priceType === 'MARKET') return null;
  if (iceberg.refreshAmount !== null && iceberg.refreshAmount !== iceberg.displayAmount) return null;
  const rest = remaining(portfolio, 0);
  const refused = validateIceberg(iceberg.displayAmount, rest, 'limit', 'good_til_cancelled', leg.hidden);
  return refused === null ? iceberg.displayAmount : null;
}

/**
 * ICEBERG: open lots the working child may keep: what it was placed for (a venue iceberg: the
 * rest of the leg then; a plain child: the slice after the children before it, at most what
 * remained then) less its fills. A child grown from outside is cut back to that, so the book
 * never shows more than the slice and the leg never trades more than its total.
 */
function icebergWorkingOpen(portfolio: PortfolioState, childId: string, open: number): number {
  const index = portfolio.children.findIndex((c) => c.orderId === childId);
  const child = portfolio.children[index]!;
  const filledBefore = portfolio.legs[0]!.filled - child.filled;
  const restThen = portfolio.spec.legs[0]!.amount - filledBefore;
  const placedFor =
    child.iceberg !== undefined ? restThen : Math.min(icebergSlice(portfolio, index), restThen);
  return Math.min(open, placedFor - child.filled);
}

/** Desired open lots per leg, by algorithm. */
function desiredOpen(portfolio: PortfolioState): number[] {
  const spec = portfolio.spec;
  const openOf = (i: number): number | null => {
    const id = portfolio.legs[i]!.working;
    const child = id === null ? undefined : portfolio.children.find((c) => c.orderId === id && c.open);
    return child === undefined ? null : child.amount - child.filled;
  };
  switch (spec.portfolioType) {
    case 'TWAP':
      return portfolio.legs.map((_, i) => {
        const sliceRest = twapSliceRest(portfolio, i);
        return Math.min(openOf(i) ?? sliceRest, sliceRest, remaining(portfolio, i));
      });
    case 'BALANCE': {
      const allowed = balanceAllowances(balanceLegs(portfolio), spec.balance!.parts, portfolio.part);
      return allowed.map((lots, i) => Math.max(0, lots - portfolio.legs[i]!.filled));
    }
    case 'ICEBERG': {
      const open = openOf(0);
      const rest = remaining(portfolio, 0);
      const want =
        open !== null
          ? icebergWorkingOpen(portfolio, portfolio.legs[0]!.working!, open)
          : icebergDisplay(portfolio) !== null
            ? rest
            : icebergSlice(portfolio);
      return [Math.min(want, rest)];
    }
    case 'COMMON':
      return portfolio.legs.map((_, i) => {
        const rest = remaining(portfolio, i);
        return portfolio.children.some((child) => childCovers(child, i))
          ? Math.min(openOf(i) ?? 0, rest)
          : rest;
      });
    default: {
      const _exhaustive: never = spec.portfolioType;
      return _exhaustive;
    }
  }
}

/** Hedge legs of a BALANCE go first to market; main legs in order, the priority leg first. */
function legOrder(portfolio: PortfolioState): number[] {
  const legs = portfolio.spec.legs.map((_, i) => i);
  return legs.sort((a, b) => rank(portfolio, a) - rank(portfolio, b));
}

function rank(portfolio: PortfolioState, i: number): number {
  const leg = portfolio.spec.legs[i]!;
  return leg.priority ? 0 : leg.hedge ? 2 : 1;
}

function usesMarketForHedge(portfolio: PortfolioState, i: number): boolean {
  const spec = portfolio.spec;
  return spec.portfolioType === 'BALANCE' && spec.legs[i]!.hedge && spec.legs.some((leg) => !leg.hedge);
}

/** False when the portfolio failed (a child refused). */
function reconcileLegs(context: StepContext, portfolio: PortfolioState): boolean {
  if (portfolio.spec.portfolioType === 'COMMON' && portfolio.children.length === 0) {
    const combo = placeCommonCombo(context, portfolio);
    if (combo !== 'none') return true;
  }
  for (const i of legOrder(portfolio)) {
    const want = desiredOpen(portfolio)[i]!;
    if (!reconcileLeg(context, portfolio, i, want)) return false;
    if (portfolio.status !== 'WORKING') return false;
  }
  return true;
}

/**
 * COMMON whose legs form a listed, open combo (./combo.ts): one child on the combo for the legs'
 * whole quantity, at the net of the legs' converted limits (`netComboTicks`) kept clear of the
 * account's own resting combo orders, or at market. 'none': the legs go one order each (no
 * combo, no opposite combo order for a MARKET portfolio, or the engine refused the combo order:
 * the legs are then placed as if there were none). 'waiting': a leg price is not available yet
 * or the placement budget is spent; the portfolio looks again later, as a leg would.
 */
function placeCommonCombo(context: StepContext, portfolio: PortfolioState): 'placed' | 'waiting' | 'none' {
  const plan = commonComboPlan(portfolio.spec, context.market);
  if (plan === null) return 'none';
  const spec = portfolio.spec;
  const amount = spec.legs[plan.legs[0]!.leg]!.amount;
  let price: number | null = null;
  if (spec.legs[0]!.pricing.priceType === 'MARKET') {
    if (noOppositeLiquidity(context, plan.instrumentName, plan.side)) return 'none';
  } else {
    const instruments: Instrument[] = [];
    const ticks: number[] = [];
    for (const { leg: i } of plan.legs) {
      const leg = spec.legs[i]!;
      const instrument = context.market.instrument(leg.instrumentName)!;
      const resolved = resolvePrice(
        context.market,
        instrument,
        leg.side,
        leg.pricing,
        context.stamp.ts,
        bookReferenceOwn(context, portfolio, leg.pricing),
      );
      if (resolved.kind !== 'limit') {
        portfolio.retryAt ??= context.stamp.ts + PRICE_RETRY_MS;
        return 'waiting';
      }
      instruments.push(instrument);
      ticks.push(resolved.price);
    }
    const net = netComboTicks(plan, instruments, ticks);
    const opposite = plan.side === 'buy' ? 'sell' : 'buy';
    const own = context.market.accountBest(spec.accountId, plan.instrumentName, opposite);
    price = clearOfOwnCombo(plan.side, net, own);
  }
  if (!withinBudget(context, portfolio)) return 'waiting';
  const outcome = placeComboChild(context, portfolio, plan, amount, price);
  if (!outcome.ok) return 'none';
  // As a leg's own limit child would record it (a market child records nothing).
  if (price !== null) for (const { leg: i } of plan.legs) portfolio.legs[i]!.repricedAt = context.stamp.ts;
  return 'placed';
}

/**
 * The accounts a leg's DYNAMIC reference leaves out: every resting order of the group's accounts
 * (the leg's own child, a mirror's, another portfolio's of the account, a hand order), so a peg
 * never follows its own desk and two pegs of one desk never walk each other up. Only BID, ASK and
 * MID read the book, so only they pay for the look-up; null for every other price.
 */
function bookReferenceOwn(
  context: StepContext,
  portfolio: PortfolioState,
  pricing: LegPricing,
): OwnAccounts | null {
  if (pricing.priceType !== 'DYNAMIC') return null;
  const strategy = pricing.dynamicStrategy;
  return strategy === 'BID' || strategy === 'ASK' || strategy === 'MID'
    ? context.ownAccounts(portfolio)
    : null;
}

function priceFor(
  context: StepContext,
  portfolio: PortfolioState,
  i: number,
  child: ChildState | undefined,
): ResolvedPrice {
  const leg = portfolio.spec.legs[i]!;
  const instrument = context.market.instrument(leg.instrumentName);
  if (usesMarketForHedge(portfolio, i)) {
    // A hedge follows with marketable orders, never past the leg's own worst price.
    if (instrument === undefined) return { kind: 'market' };
    const bound = marketableBound(context.market, instrument, leg.side, leg.pricing, context.stamp.ts);
    return bound.kind === 'market' && bound.bound !== undefined
      ? { kind: 'market', bound: withinBand(context, leg, bound.bound) }
      : bound;
  }
  if (instrument === undefined) return { kind: 'unavailable', reason: 'instrument gone' };
  const own = bookReferenceOwn(context, portfolio, leg.pricing);
  const resolved = resolvePrice(context.market, instrument, leg.side, leg.pricing, context.stamp.ts, own);
  if (resolved.kind !== 'limit') return resolved;
  const price = withinBand(context, leg, resolved.price);
  // A resting child's own price crosses nothing (the book is never crossed): no need to look.
  if (price === child?.price) return { kind: 'limit', price };
  return clearOfOwnAccount(context, portfolio, i, instrument, price);
}

/**
 * A leg's limit inside the engine's price band: a buy above the band's max at the max, a sell
 * below its min at the min. The leg's price is its worst, and the engine refuses an order past
 * the band, which would fail the portfolio after other legs traded; at the edge the child trades
 * what the band allows and rests there, as a market child is bounded by the band.
 */
function withinBand(context: StepContext, leg: LegSpec, price: number): number {
  const band = context.market.priceBand(leg.instrumentName);
  if (band === null) return price;
  return leg.side === 'buy' ? Math.min(price, band.max) : Math.max(price, band.min);
}

/**
 * A limit child never crosses a resting order of its own account (another portfolio's child or
 * a hand-placed order): it rests one valid price short of it instead of letting self-trade
 * prevention cancel one of the two. Market children are not held back.
 */
function clearOfOwnAccount(
  context: StepContext,
  portfolio: PortfolioState,
  i: number,
  instrument: Instrument,
  price: number,
): ResolvedPrice {
  const leg = portfolio.spec.legs[i]!;
  const opposite = leg.side === 'buy' ? 'sell' : 'buy';
  const own = context.market.accountBest(portfolio.spec.accountId, leg.instrumentName, opposite);
  const clear = clearOfOwnOrders(instrument, leg.side, price, own);
  return clear === null
    ? { kind: 'unavailable', reason: 'every valid price crosses an own order' }
    : { kind: 'limit', price: clear };
}

/** False when the portfolio placed its budget in this command: it goes on at once, in the next. */
function withinBudget(context: StepContext, portfolio: PortfolioState): boolean {
  if (context.placement(portfolio)) return true;
  const now = context.stamp.ts;
  if (portfolio.retryAt === null || portfolio.retryAt > now) portfolio.retryAt = now;
  return false;
}

/**
 * True when a market leg that cannot trade must look again: ICEBERG (no deadline) and BALANCE
 * (its part waits up to eachLimitMs, and a hedge leg must follow the main legs) have no next
 * slice to roll the rest into. Such a leg places no child while the opposite side is empty, and
 * after a market child that filled nothing it looks again PRICE_RETRY_MS later, as a leg waiting
 * for a price does: a timer, since a new order in the book does not wake the portfolio. A TWAP
 * market leg sends each slice once and rolls its rest into the next slice; a COMMON one sends
 * its order once.
 */
function retriesUnfilledMarket(portfolio: PortfolioState): boolean {
  const type = portfolio.spec.portfolioType;
  return type === 'ICEBERG' || type === 'BALANCE';
}

/** True when the opposite side is empty, or holds nothing at or better than `bound` (ticks). */
function noOppositeLiquidity(
  context: StepContext,
  instrumentName: string,
  side: 'buy' | 'sell',
  bound?: number,
): boolean {
  const market = context.market;
  const best = side === 'buy' ? market.bestAsk(instrumentName) : market.bestBid(instrumentName);
  if (best === null) return true;
  return bound !== undefined && (side === 'buy' ? best > bound : best < bound);
}

function retryAfterPriceWait(context: StepContext, portfolio: PortfolioState): void {
  const at = context.stamp.ts + PRICE_RETRY_MS;
  if (portfolio.retryAt === null || portfolio.retryAt > at) portfolio.retryAt = at;
}

function reconcileLeg(context: StepContext, portfolio: PortfolioState, i: number, want: number): boolean {
  const legState = portfolio.legs[i]!;
  const leg = portfolio.spec.legs[i]!;
  const child =
    legState.working === null
      ? undefined
      : portfolio.children.find((c) => c.orderId === legState.working && c.open);
  if (want <= 0) {
    if (child !== undefined) cancelChild(context, portfolio, child);
    return true;
  }
  if (child === undefined && stillHeld(legState, context.stamp.ts)) return true;
  // A resting child keeps its price between reprice ticks (a fill is no tick): a DYNAMIC child
  // that took the best level waits `dynamicMs` before it follows the reference to the next one.
  const due = repriceDueAt(portfolio, i);
  const keep =
    child !== undefined && (leg.pricing.priceType === 'LIMIT' || (due !== null && due > context.stamp.ts));
  if (child !== undefined && !keep) legState.repricedAt = context.stamp.ts;
  const price = keep
    ? { kind: 'limit' as const, price: child.price! }
    : priceFor(context, portfolio, i, child);
  if (price.kind === 'unavailable') {
    if (child === undefined) portfolio.retryAt ??= context.stamp.ts + PRICE_RETRY_MS;
    return true;
  }
  if (price.kind === 'market') {
    if (child !== undefined) cancelChild(context, portfolio, child);
    if (legState.lastMarketSeq === context.stamp.seq && !legState.lastMarketFilled) return true;
    const retries = retriesUnfilledMarket(portfolio);
    if (retries && noOppositeLiquidity(context, leg.instrumentName, leg.side, price.bound)) {
      retryAfterPriceWait(context, portfolio);
      return true;
    }
    if (!withinBudget(context, portfolio)) return true;
    const filledBefore = legState.filled;
    const outcome =
      price.bound === undefined
        ? placeChild(context, portfolio, i, want, null)
        : placeChild(context, portfolio, i, want, price.bound, null, true);
    if (!outcome.ok) return refusedChild(context, portfolio, i, outcome);
    legState.lastMarketSeq = context.stamp.seq;
    legState.lastMarketFilled = legState.filled > filledBefore;
    legState.slicePending = 0;
    if (retries && !legState.lastMarketFilled) retryAfterPriceWait(context, portfolio);
    return true;
  }
  if (child === undefined) {
    if (!withinBudget(context, portfolio)) return true;
    const display =
      portfolio.spec.portfolioType === 'ICEBERG' && want === remaining(portfolio, i)
        ? icebergDisplay(portfolio)
        : null;
    const outcome = placeChild(context, portfolio, i, want, price.price, display);
    if (!outcome.ok) return refusedChild(context, portfolio, i, outcome);
    legState.slicePending = 0;
    legState.repricedAt = context.stamp.ts;
    return true;
  }
  // Unchanged when it rests where asked, or where the engine puts what it asked (read only then).
  if (
    child.amount - child.filled === want &&
    (child.price === price.price || child.price === restingPrice(context, portfolio, i, price.price))
  )
    return true;
  const outcome = amendChild(context, portfolio, child, want, price.price);
  if (!outcome.ok) return refusedChild(context, portfolio, i, outcome);
  return true;
}

/**
 * Where the engine would rest leg `i`'s limit child at `price`: a post-only child whose price
 * would take liquidity rests one tick inside the touch instead, hidden orders included
 * (src/engine/trading.ts `postOnlyPrice`). A child already resting there is not amended again: a reference beyond the
 * touch would otherwise edit it to the same place at every reprice (an update and its pushes
 * every `dynamicMs`, thousands in one turn after a long clock jump).
 */
function restingPrice(context: StepContext, portfolio: PortfolioState, i: number, price: number): number {
  if (!restsPostOnly(portfolio, i)) return price;
  const leg = portfolio.spec.legs[i]!;
  const buying = leg.side === 'buy';
  const touch = context.market.engineTouch(leg.instrumentName, leg.side);
  if (touch === null || (buying ? price < touch : price > touch)) return price;
  const instrument = context.market.instrument(leg.instrumentName);
  return instrument === undefined ? price : insideTouch(instrument, leg.side, touch);
}

/**
 * A child the engine refused. One that would trade with its own account's resting order in
 * `reject_taker` mode (`order_overlap`) holds the leg as a self-trade cancel does (the account's
 * order may leave); any other refusal fails the portfolio. False when the portfolio ended.
 */
function refusedChild(
  context: StepContext,
  portfolio: PortfolioState,
  i: number,
  outcome: { readonly name: ErrorName; readonly message: string },
): boolean {
  if (outcome.name === 'order_overlap') {
    portfolio.legs[i]!.selfTradeHoldUntil = context.stamp.ts + selfTradeHoldMs(portfolio.spec.legs[i]!);
    return true;
  }
  failPortfolio(context, portfolio, outcome.message);
  return false;
}
