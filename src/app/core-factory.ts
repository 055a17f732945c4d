/**
 * Builds the core machine: the engine plus the sub-machines, each reading the market through
 * the engine it runs beside. Used at start, in recovery (from a snapshot or empty) and in tests.
 */

import { PortfolioMachine } from '../algo/machine.ts';
import { venueMarketView } from '../algo/venue-market-view.ts';
import { type AnySubMachine, CoreMachine, type MachineSnapshot } from '../core/machine.ts';
import type { EngineConfig } from '../engine/config.ts';
import { Venue } from '../engine/venue.ts';
import { RfqDesk } from '../rfq/desk.ts';
import { marketOf } from '../rfq/market.ts';

export const RFQ_DESK = 'rfq';
export const PORTFOLIOS = 'portfolios';

export function createCoreMachine(
  snapshot: MachineSnapshot | null = null,
  engineConfig: Partial<EngineConfig> = {},
): CoreMachine {
  const venue = snapshot === null ? Venue.create(engineConfig) : Venue.restore(snapshot.venue);
  const subs = new Map<string, AnySubMachine>([
    [RFQ_DESK, new RfqDesk(marketOf(venue))],
    [PORTFOLIOS, new PortfolioMachine(venueMarketView(venue))],
  ]);
  const machine = new CoreMachine(venue, subs);
  if (snapshot !== null) machine.restoreSubs(snapshot);
  return machine;
}
