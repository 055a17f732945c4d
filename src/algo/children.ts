/**
 * Child order I/O of the algorithm layer: place, amend and cancel a leg's child order through the
 * engine, stamped with the outer command's stamp, and absorb every order event the engine returns
 * at once (delta-based, so seeing the same events again in `react` changes nothing).
 *
 * Child orders are ordinary venue orders: `owner` = the portfolio id, label `portfolio:<id>`,
 * source api. Limit children are good-til-cancelled (COMMON legs keep their own time in force);
 * market children are immediate-or-cancel. An ICEBERG child may be a venue iceberg
 * (`displayAmount`); an amend keeps its display (the engine keeps an iceberg's display on edit).
 * A COMMON portfolio whose legs form a listed combo places one child on the combo instead
 * (`placeComboChild`), with the flags and time in force its legs share.
 */
import type { CommandStamp } from '../core/commands.ts';
import type { CommandResult, CoreEvent, OrderView } from '../core/events.ts';
import type { EnginePort } from '../core/submachine.ts';
import type { Side, TimeInForce } from '../core/types.ts';
import type { ErrorName } from '../domain/errors.ts';
import type { ComboPlan } from './combo.ts';
import {
  absorbOrderView,
  type ChildState,
  childLegs,
  closeChild,
  type PortfolioState,
} from './portfolio-state.ts';
import type { PortfolioEvent } from './types.ts';

/** What the machine lends to the child-order helpers for one command. */
export interface ChildContext {
  readonly stamp: CommandStamp;
  readonly engine: EnginePort;
  readonly out: PortfolioEvent[];
  /** orderId → (portfolio, child), kept by the machine. */
  registerChild(portfolio: PortfolioState, child: ChildState): void;
  /** Routes engine events to the portfolios they concern (delta-based accounting). */
  absorb(events: readonly CoreEvent[]): void;
  event(
    portfolio: PortfolioState,
    messageType: PortfolioEvent['messageType'],
    extra?: Partial<PortfolioEvent>,
  ): void;
}

export function ownerTag(portfolioId: number): string {
  return String(portfolioId);
}

export type ChildOutcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly name: ErrorName; readonly message: string };

function failure(result: CommandResult): ChildOutcome {
  return result.ok
    ? { ok: true }
    : { ok: false, name: result.error.name, message: `${result.error.name}: ${result.error.message}` };
}

interface ChildTerms {
  readonly instrumentName: string;
  readonly side: Side;
  readonly amount: number;
  /** Ticks; null for a market child. */
  readonly price: number | null;
  readonly timeInForce: TimeInForce;
  readonly postOnly: boolean;
  readonly reduceOnly: boolean;
  readonly hidden: boolean;
  /** A venue iceberg's display, or null. */
  readonly display: number | null;
}

/** The portfolio's child order through the engine, within the deciding command and its stamp. */
function placeOrder(context: ChildContext, portfolio: PortfolioState, terms: ChildTerms): CommandResult {
  const market = terms.price === null;
  return context.engine.execute({
    type: 'place_order',
    seq: context.stamp.seq,
    ts: context.stamp.ts,
    accountId: portfolio.spec.accountId,
    instrumentName: terms.instrumentName,
    side: terms.side,
    orderType: market ? 'market' : 'limit',
    amount: terms.amount,
    price: terms.price,
    timeInForce: terms.timeInForce,
    postOnly: !market && terms.postOnly && terms.timeInForce === 'good_til_cancelled',
    rejectPostOnly: false,
    reduceOnly: terms.reduceOnly,
    label: `portfolio:${portfolio.id}`,
    validUntil: null,
    source: { api: true },
    owner: ownerTag(portfolio.id),
    hidden: !market && terms.hidden,
    ...(terms.display !== null && !market ? { displayAmount: terms.display } : {}),
  });
}

/**
 * Places one combo order for a COMMON portfolio's legs (`plan`): `amount` lots of the combo on the
 * plan's side at `price` (ticks, the legs' net) or at market, with the first leg's flags and time
 * in force (the legs share them). Its fills reach the legs through the combo's leg trades.
 */
export function placeComboChild(
  context: ChildContext,
  portfolio: PortfolioState,
  plan: ComboPlan,
  amount: number,
  price: number | null,
): ChildOutcome {
  const legs = plan.legs.map((l) => l.leg).sort((a, b) => a - b);
  const first = portfolio.spec.legs[legs[0]!]!;
  const market = price === null;
  const timeInForce: TimeInForce = market
    ? 'immediate_or_cancel'
    : (first.timeInForce ?? 'good_til_cancelled');
  const result = placeOrder(context, portfolio, {
    instrumentName: plan.instrumentName,
    side: plan.side,
    amount,
    price,
    timeInForce,
    postOnly: first.postOnly,
    reduceOnly: false,
    hidden: first.hidden,
    display: null,
  });
  if (!result.ok || result.order === undefined) return failure(result);
  const child: ChildState = {
    ...newChild(result.order, legs[0]!, 0, market, context.stamp.ts),
    combo: { instrumentName: plan.instrumentName, legs, tradeSeq: 0 },
  };
  // One message for the one order: no leg index, the combo as its instrument.
  adoptChild(context, portfolio, child, result, {
    orderId: child.orderId,
    instrumentName: plan.instrumentName,
    amount,
    price,
  });
  return { ok: true };
}

/** A leg's child order's time in force: a market child's is immediate-or-cancel. */
export function childTimeInForce(portfolio: PortfolioState, legIndex: number, market: boolean): TimeInForce {
  const leg = portfolio.spec.legs[legIndex]!;
  if (market) return 'immediate_or_cancel';
  return portfolio.spec.portfolioType === 'COMMON' && leg.timeInForce !== null
    ? leg.timeInForce
    : 'good_til_cancelled';
}

/** True when a leg's limit children are post-only orders (placeOrder sets the flag so). */
export function restsPostOnly(portfolio: PortfolioState, legIndex: number): boolean {
  return (
    portfolio.spec.legs[legIndex]!.postOnly &&
    childTimeInForce(portfolio, legIndex, false) === 'good_til_cancelled'
  );
}

/**
 * Places leg `legIndex`'s child: at market (`price` null) or a limit at `price`; `immediate`
 * makes the limit a marketable one (immediate-or-cancel, never post-only or hidden), as a bounded
 * hedge leg trades.
 */
export function placeChild(
  context: ChildContext,
  portfolio: PortfolioState,
  legIndex: number,
  amount: number,
  price: number | null,
  display: number | null = null,
  immediate = false,
): ChildOutcome {
  const leg = portfolio.spec.legs[legIndex]!;
  const market = price === null;
  const timeInForce = immediate ? 'immediate_or_cancel' : childTimeInForce(portfolio, legIndex, market);
  const result = placeOrder(context, portfolio, {
    instrumentName: leg.instrumentName,
    side: leg.side,
    amount,
    price,
    timeInForce,
    postOnly: leg.postOnly && !immediate,
    reduceOnly: leg.reduceOnly,
    hidden: leg.hidden && !immediate,
    display,
  });
  if (!result.ok || result.order === undefined) return failure(result);
  const view = result.order;
  const child = newChild(view, legIndex, Math.max(0, portfolio.part), market, context.stamp.ts);
  // A venue iceberg child records what it shows (absent on plain children, as in older records).
  if (display !== null && !market) child.iceberg = view.displayAmount ?? 0;
  adoptChild(context, portfolio, child, result, {
    legIndex,
    orderId: view.orderId,
    instrumentName: leg.instrumentName,
    amount,
    price,
  });
  return { ok: true };
}

/** A just-placed order as a child record (fields in the order snapshots have them). */
function newChild(view: OrderView, leg: number, part: number, market: boolean, placedAt: number): ChildState {
  return {
    orderId: view.orderId,
    leg,
    part,
    market,
    placedAt,
    amount: view.amount,
    filled: 0,
    notional: 0,
    price: view.price,
    open: true,
  };
}

/**
 * Files a placed child: the portfolio's record, the working child of each leg it works (limit
 * children), its ORDER_PLACED message, then the placing command's events and the result's order
 * view, which is the order after the command even if no event named it.
 */
function adoptChild(
  context: ChildContext,
  portfolio: PortfolioState,
  child: ChildState,
  result: Extract<CommandResult, { ok: true }>,
  placed: Record<string, unknown>,
): void {
  portfolio.children.push(child);
  context.registerChild(portfolio, child);
  if (!child.market) for (const i of childLegs(child)) portfolio.legs[i]!.working = child.orderId;
  context.event(portfolio, 'ORDER_PLACED', placed);
  context.absorb(result.events);
  absorbOrderView(portfolio, child, result.order!, context.stamp.ts);
}

/** Re-prices and/or re-sizes a resting child; `amount` is its new open (unfilled) lots. */
export function amendChild(
  context: ChildContext,
  portfolio: PortfolioState,
  child: ChildState,
  openAmount: number,
  price: number,
): ChildOutcome {
  const result = context.engine.execute({
    type: 'edit_order',
    seq: context.stamp.seq,
    ts: context.stamp.ts,
    accountId: portfolio.spec.accountId,
    orderId: child.orderId,
    amount: child.filled + openAmount,
    price,
    // The portfolio sizes its own child: only an edit for the owner may raise its quantity.
    owner: ownerTag(portfolio.id),
  });
  if (!result.ok) return failure(result);
  context.absorb(result.events);
  if (result.order !== undefined) absorbOrderView(portfolio, child, result.order, context.stamp.ts);
  return { ok: true };
}

/**
 * Why the portfolio withdraws its children now. A user's `/cancel` or `/cancel-all` of the
 * portfolio (lifecycle `cancelPortfolio`: end reason `user_cancel`, set before its children are
 * cancelled) is the user's request; every other cancel (a TWAP slice roll-over, a re-price by
 * cancel, the end of a TWAP or BALANCE, an end action, FAILED cleanup) is the algorithm's own.
 */
function childCancelReason(portfolio: PortfolioState): 'user_request' | 'algorithm' {
  return portfolio.endReason === 'user_cancel' ? 'user_request' : 'algorithm';
}

export function cancelChild(
  context: ChildContext,
  portfolio: PortfolioState,
  child: ChildState,
): ChildOutcome {
  if (!child.open) return { ok: true };
  const result = context.engine.execute({
    type: 'cancel_order',
    seq: context.stamp.seq,
    ts: context.stamp.ts,
    accountId: portfolio.spec.accountId,
    orderId: child.orderId,
    cancelReason: childCancelReason(portfolio),
  });
  context.absorb(result.events);
  if (result.ok && result.order !== undefined)
    absorbOrderView(portfolio, child, result.order, context.stamp.ts);
  // A child the engine no longer knows as open is gone either way.
  closeChild(portfolio, child);
  return { ok: true };
}

/** Cancels every open child of the portfolio (one engine cancel_all by owner). */
export function cancelAllChildren(context: ChildContext, portfolio: PortfolioState): void {
  if (!portfolio.children.some((child) => child.open)) return;
  const result = context.engine.execute({
    type: 'cancel_all',
    seq: context.stamp.seq,
    ts: context.stamp.ts,
    accountId: portfolio.spec.accountId,
    owner: ownerTag(portfolio.id),
    cancelReason: childCancelReason(portfolio),
  });
  context.absorb(result.events);
  for (const child of portfolio.children) if (child.open) closeChild(portfolio, child);
}
