/**
 * Liquidity simulator settings. Every number has a default that gives every listed instrument
 * a two-sided book at start-up; the simulator can be switched off (`enabled: false`).
 */

export interface MakerAccount {
  readonly accountId: number;
  /** Base currencies whose instruments this account quotes. */
  readonly currencies: readonly string[];
  /**
   * `options` (options and option combos; delta hedged with the inverse perpetual),
   * `delta_one` (futures, perpetuals, spot, future combos; inventory managed by skew), `all`.
   * Options makers hedge against another account's perpetual quotes, never their own
   * (self-trade prevention would cancel them).
   */
  readonly products: 'options' | 'delta_one' | 'all';
}

export interface SimulatorConfig {
  readonly enabled: boolean;
  readonly seed: number;
  readonly makers: readonly MakerAccount[];
  /** The account simulated takers trade from; null = no takers. */
  readonly takerAccountId: number | null;
  /** Price levels quoted on each side. */
  readonly levels: number;
  /** Size of the first level as a multiple of the minimum trade amount; level i is (1+i)×. */
  readonly sizeMultiple: number;
  /** Half-spread floor, in finest ticks. */
  readonly minHalfSpreadTicks: number;
  /** Futures/spot half-spread in basis points of price at the reference volatility. */
  readonly futureHalfSpreadBps: number;
  /** Options half-spread: a fraction of the premium plus some vol points of vega. */
  readonly optionHalfSpreadFraction: number;
  readonly optionHalfSpreadVolPoints: number;
  /** Spreads scale with (volatility / referenceVolatility). */
  readonly referenceVolatility: number;
  /** Gap between levels as a fraction of the half-spread (at least one tick). */
  readonly levelGapFraction: number;
  /**
   * Inventory: quotes shift against the position by `inventorySkew` half-spreads per
   * `inventoryLimit` first-level sizes held, and the side that would add to it widens.
   */
  readonly inventorySkew: number;
  readonly inventoryLimit: number;
  /** A resting quote is moved when the wanted price differs by more than this many half-spreads. */
  readonly refreshFraction: number;
  /** Simulated taker orders per minute across the catalogue. */
  readonly takerOrdersPerMinute: number;
  /** Taker order size, multiples of the minimum trade amount, uniform in [1, max]. */
  readonly takerMaxSizeMultiple: number;
  /** Hedge net delta beyond this many coins per currency with the inverse perpetual. */
  readonly hedgeThreshold: Readonly<Record<string, number>>;
  /** Money each maker and the taker receive at set-up, decimal units per currency. */
  readonly funding: Readonly<Record<string, number>>;
  readonly maxOpenOrders: number;
}

export const DEFAULT_SIMULATOR_CONFIG: SimulatorConfig = {
  enabled: true,
  seed: 1,
  makers: [
    { accountId: 900_001, currencies: ['BTC'], products: 'options' },
    { accountId: 900_002, currencies: ['ETH'], products: 'options' },
    { accountId: 900_003, currencies: ['BTC', 'ETH'], products: 'delta_one' },
  ],
  takerAccountId: 900_010,
  levels: 3,
  sizeMultiple: 5,
  minHalfSpreadTicks: 1,
  futureHalfSpreadBps: 2,
  optionHalfSpreadFraction: 0.02,
  optionHalfSpreadVolPoints: 0.5,
  referenceVolatility: 0.6,
  levelGapFraction: 0.5,
  inventorySkew: 1,
  inventoryLimit: 20,
  refreshFraction: 0.5,
  takerOrdersPerMinute: 30,
  takerMaxSizeMultiple: 3,
  hedgeThreshold: { BTC: 5, ETH: 50 },
  funding: { BTC: 10_000, ETH: 100_000, USDC: 1_000_000_000, USDT: 1_000_000_000 },
  maxOpenOrders: 50_000,
};

export function simulatorConfig(overrides: Partial<SimulatorConfig> = {}): SimulatorConfig {
  return { ...DEFAULT_SIMULATOR_CONFIG, ...overrides };
}
