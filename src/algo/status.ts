/**
 * The portfolio status machine as one table (SEMANTICS: PENDING → WORKING → (CANCELLING →)
 * COMPLETED | CANCELLED | EXPIRED | FAILED). Anything not in the table is refused by `transition`.
 *
 * Rows:
 * - PENDING waits for a future TWAP start; it may be cancelled or fail before it starts.
 * - CANCELLING ends in CANCELLED once every child order is gone; FAILED only if a cancel fails.
 * - Terminal states have no way out.
 */
import type { PortfolioStatus } from './types.ts';

export type StatusTrigger = 'start' | 'cancel' | 'children_gone' | 'complete' | 'expire' | 'fail';

const TABLE: Readonly<Record<PortfolioStatus, Partial<Record<StatusTrigger, PortfolioStatus>>>> = {
  PENDING: { start: 'WORKING', cancel: 'CANCELLING', fail: 'FAILED' },
  WORKING: { cancel: 'CANCELLING', complete: 'COMPLETED', expire: 'EXPIRED', fail: 'FAILED' },
  CANCELLING: { children_gone: 'CANCELLED', fail: 'FAILED' },
  COMPLETED: {},
  CANCELLED: {},
  EXPIRED: {},
  FAILED: {},
};

/** The next status, or null when the trigger is not allowed from `from`. */
export function transition(from: PortfolioStatus, trigger: StatusTrigger): PortfolioStatus | null {
  return TABLE[from][trigger] ?? null;
}

export function isTerminal(status: PortfolioStatus): boolean {
  return status === 'COMPLETED' || status === 'CANCELLED' || status === 'EXPIRED' || status === 'FAILED';
}

/** Working portfolios may place, edit and cancel child orders. */
export function isActive(status: PortfolioStatus): boolean {
  return status === 'PENDING' || status === 'WORKING';
}
