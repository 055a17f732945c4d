/**
 * Status changes of a portfolio, all through the one transition table (./status.ts), each
 * announced on `trade-news`. Ending a portfolio always cancels its open children first, so a
 * terminal portfolio never leaves an order behind.
 */
import { type ChildContext, cancelAllChildren } from './children.ts';
import { fullyFilled, type PortfolioState } from './portfolio-state.ts';
import { type StatusTrigger, transition } from './status.ts';
import type { EndReason, PortfolioStatus, TradeNewsType } from './types.ts';

const MESSAGE_OF: Partial<Record<PortfolioStatus, TradeNewsType>> = {
  WORKING: 'PORTFOLIO_WORKING',
  CANCELLING: 'PORTFOLIO_CANCELLING',
  CANCELLED: 'PORTFOLIO_CANCELLED',
  COMPLETED: 'PORTFOLIO_COMPLETED',
  EXPIRED: 'PORTFOLIO_EXPIRED',
  FAILED: 'PORTFOLIO_FAILED',
};

/** Applies a trigger; false (and no change) when the table does not allow it. */
export function applyTrigger(
  context: ChildContext,
  portfolio: PortfolioState,
  trigger: StatusTrigger,
): boolean {
  const next = transition(portfolio.status, trigger);
  if (next === null) return false;
  portfolio.status = next;
  portfolio.updatedAt = context.stamp.ts;
  if (next !== 'WORKING' && next !== 'CANCELLING') {
    portfolio.endedAt = context.stamp.ts;
    clearTimers(portfolio);
  }
  const message = MESSAGE_OF[next];
  if (message !== undefined) context.event(portfolio, message, endDetails(portfolio));
  return true;
}

function endDetails(portfolio: PortfolioState): { endReason?: string; endMessage?: string } {
  return {
    ...(portfolio.endReason === null ? {} : { endReason: portfolio.endReason }),
    ...(portfolio.endMessage === null ? {} : { endMessage: portfolio.endMessage }),
  };
}

function clearTimers(portfolio: PortfolioState): void {
  portfolio.nextSliceAt = null;
  portfolio.endAt = null;
  portfolio.partDeadline = null;
  portfolio.totalDeadline = null;
  portfolio.nextRepriceAt = null;
  portfolio.retryAt = null;
  const part = portfolio.parts[portfolio.parts.length - 1];
  if (part !== undefined && part.endedAt === null) {
    part.endedAt = portfolio.endedAt;
    part.filledAtEnd = portfolio.legs.map((leg) => leg.filled);
  }
}

/** Ends a working portfolio: COMPLETED when every leg is filled, else EXPIRED with `reason`. */
export function finish(context: ChildContext, portfolio: PortfolioState, reason: EndReason): void {
  cancelAllChildren(context, portfolio);
  const done = fullyFilled(portfolio);
  portfolio.endReason = done ? 'filled' : reason;
  applyTrigger(context, portfolio, done ? 'complete' : 'expire');
}

export function failPortfolio(context: ChildContext, portfolio: PortfolioState, message: string): void {
  cancelAllChildren(context, portfolio);
  portfolio.endReason = 'child_rejected';
  portfolio.endMessage = message;
  applyTrigger(context, portfolio, 'fail');
}

/**
 * A leg's instrument expired with lots still to fill: the portfolio can never do what it was
 * asked, so it ends FAILED (`instrument_expired`) at once, its other children cancelled. PENDING
 * and WORKING may fail; anything else is left as it is.
 */
export function failOnExpiry(context: ChildContext, portfolio: PortfolioState, leg: number): void {
  if (transition(portfolio.status, 'fail') === null) return;
  const name = portfolio.spec.legs[leg]!.instrumentName;
  cancelAllChildren(context, portfolio);
  portfolio.endReason = 'instrument_expired';
  portfolio.endMessage = `legs[${leg}] instrument ${name} expired before the leg was filled`;
  applyTrigger(context, portfolio, 'fail');
}

/** CANCELLING at once, every child cancelled, then CANCELLED (children go synchronously). */
export function cancelPortfolio(context: ChildContext, portfolio: PortfolioState): boolean {
  if (transition(portfolio.status, 'cancel') === null) return false;
  portfolio.endReason = 'user_cancel';
  applyTrigger(context, portfolio, 'cancel');
  cancelAllChildren(context, portfolio);
  if (!portfolio.children.some((child) => child.open)) applyTrigger(context, portfolio, 'children_gone');
  return true;
}
