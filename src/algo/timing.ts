/**
 * The algorithms' fixed intervals, and the per-leg intervals derived from a leg's pricing.
 * Pure functions of the spec: replay derives the same times.
 */
import type { LegSpec } from './types.ts';

/** Reprice interval of a BALANCE DYNAMIC leg without `dynamicMs`. */
export const DEFAULT_BALANCE_DYNAMIC_MS = 1000;
/** How soon a leg waiting for market data (no price to place at) looks again. */
export const PRICE_RETRY_MS = 1000;

/** The reprice interval of a DYNAMIC leg, null for LIMIT and MARKET legs. */
export function legRepriceMs(leg: LegSpec): number | null {
  if (leg.pricing.priceType !== 'DYNAMIC') return null;
  return leg.pricing.dynamicMs ?? DEFAULT_BALANCE_DYNAMIC_MS;
}

/**
 * How long a leg waits after self-trade prevention cancelled its child: one reprice interval,
 * or PRICE_RETRY_MS for a leg that does not reprice.
 */
export function selfTradeHoldMs(leg: LegSpec): number {
  return legRepriceMs(leg) ?? PRICE_RETRY_MS;
}
