/**
 * The engine's public surface: the deterministic venue state machine and its helpers.
 * Commands and events are defined in src/core (commands.ts, events.ts, types.ts).
 */
export { DEFAULT_ENGINE_CONFIG, type EngineConfig, engineConfig } from './config.ts';
export { divRound, Economics, mulDivRound } from './economics.ts';
export { type PriceBand, priceBand } from './risk.ts';
export type { OrderRecord, VenueSnapshot } from './snapshot.ts';
export { sessionEnd } from './trading.ts';
export {
  type AccountInfo,
  type AccountSummary,
  type BookLevelView,
  type BookView,
  type InstrumentInfo,
  type OpenOrderFilter,
  tradeForParty,
  Venue,
} from './venue.ts';
