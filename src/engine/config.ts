/**
 * Engine settings. Every value is part of the snapshot, so a restored engine behaves the same.
 * Rates are basis points (1 bp = 0.01%).
 */
export interface EngineConfig {
  /** Default limit of open orders per account (CreateAccount may override). */
  readonly maxOpenOrdersPerAccount: number;
  /** Closed orders kept for getOrder (oldest dropped first). */
  readonly recentClosedOrders: number;
  /** Recent trades kept per instrument for queries. */
  readonly recentTradesPerInstrument: number;
  /** Futures/perpetuals initial margin, bps of notional (500 = 5%, 20× leverage). */
  readonly futureInitialMarginBps: number;
  /** Short options initial margin, bps of the underlying notional. */
  readonly optionShortMarginBps: number;
  /** Price band around the mark, bps of the mark, per kind (futures/spot vs options). */
  readonly futureBandBps: number;
  readonly optionBandBps: number;
  /** The band is never narrower than this many finest ticks on either side. */
  readonly minBandTicks: number;
}

export const DEFAULT_ENGINE_CONFIG: EngineConfig = Object.freeze({
  maxOpenOrdersPerAccount: 1000,
  recentClosedOrders: 10_000,
  recentTradesPerInstrument: 100,
  futureInitialMarginBps: 500,
  optionShortMarginBps: 1500,
  futureBandBps: 500,
  optionBandBps: 5000,
  minBandTicks: 10,
});

export function engineConfig(overrides: Partial<EngineConfig> = {}): EngineConfig {
  return Object.freeze({ ...DEFAULT_ENGINE_CONFIG, ...overrides });
}
