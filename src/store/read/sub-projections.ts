/**
 * The projections of the core's sub-machines (Block RFQ desk, portfolio algorithms) that the
 * service registers next to the built-in orders/trades/positions: `openStores({ projections:
 * subMachineProjections() })`. They read `CommittedEvents.subEvents`, so the service must pass
 * the core machine's `subEvents` with every pushed command (live and during recovery).
 */
import { PORTFOLIO_SUBMACHINE, portfolioProjection } from './portfolio-projection.ts';
import type { Projection } from './projection.ts';
import { RFQ_SUBMACHINE, rfqProjection } from './rfq-projection.ts';

export function subMachineProjections(
  names: { readonly rfq?: string; readonly portfolios?: string } = {},
): Projection[] {
  return [
    rfqProjection(names.rfq ?? RFQ_SUBMACHINE),
    portfolioProjection(names.portfolios ?? PORTFOLIO_SUBMACHINE),
  ];
}
