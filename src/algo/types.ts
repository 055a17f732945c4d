/**
 * Portfolio vocabulary in domain units: the validated portfolio a submit command carries, the
 * algorithm layer's own commands and events, and the read view `info` is built from.
 *
 * Units: quantities are lots of the leg's instrument, prices are finest ticks, times are ms since
 * epoch. Leg prices given by the client in `priceIn` units (USD, USDT, USDC, the base coin, IV in
 * percent) stay plain numbers here: they are converted inside the core, at the stamp of the step
 * that needs them, so replay converts them the same way.
 *
 * Invariants:
 * - Every command and event is plain JSON-serialisable data.
 * - A `PortfolioSpec` has already passed `validatePortfolioBody` (src/api/portfolios/validate.ts):
 *   the core re-checks only what depends on its own state (accounts, instruments, start time).
 */
import type { CommandStamp } from '../core/commands.ts';
import type { Side, TimeInForce } from '../core/types.ts';
import type { PortfolioState } from './portfolio-state.ts';

export type PortfolioType = 'BALANCE' | 'TWAP' | 'COMMON' | 'ICEBERG';
export type PriceType = 'LIMIT' | 'MARKET' | 'DYNAMIC';
export type DynamicStrategy = 'MID' | 'MARK' | 'MODEL' | 'BID' | 'ASK';
export type PriceIn = string;
export type TradeMode = 'CASH' | 'CROSS' | 'ISOLATED';
export type PositionSide = 'LONG' | 'SHORT' | 'NET';
export type InstrumentTypeName = 'OPTION' | 'PERPETUAL' | 'DELIVERY_FUTURES' | 'SPOT';

export interface PriceSnapshotEntry {
  readonly placePriceIn: string;
  readonly placePrice: number;
  readonly price: number;
  readonly priceIn: string;
}

export interface LegPricing {
  readonly priceType: PriceType;
  /** In `priceIn` units; for DYNAMIC the worst acceptable price; null for MARKET or no bound. */
  readonly price: number | null;
  readonly priceIn: PriceIn | null;
  readonly dynamicStrategy: DynamicStrategy | null;
  /** In `priceIn` units (IV: volatility points), may be negative. */
  readonly dynamicOffset: number;
  /** Reprice interval for DYNAMIC legs. */
  readonly dynamicMs: number | null;
  /**
   * `price` and `dynamicPriceOffset` exactly as the client sent them (a decimal string stays a
   * string), for `info` to echo. Absent from commands journaled before they were kept.
   */
  readonly priceAsSent?: string | number | null;
  readonly dynamicOffsetAsSent?: string | number;
}

export interface LegSpec {
  readonly instrumentName: string;
  readonly instrumentType: InstrumentTypeName;
  readonly side: Side;
  /** Lots, positive. */
  readonly amount: number;
  readonly pricing: LegPricing;
  readonly timeInForce: TimeInForce | null;
  readonly postOnly: boolean;
  readonly reduceOnly: boolean;
  readonly hidden: boolean;
  readonly tradeMode: TradeMode | null;
  readonly positionSide: PositionSide | null;
  /** Resolved: marked by the client, or a non-option leg of a mixed option + linear portfolio. */
  readonly hedge: boolean;
  readonly priority: boolean;
  /** TWAP: the leg's forCcy (sent, or derived from the instrument). */
  readonly forCcy: string | null;
  readonly priceSnapshot: readonly PriceSnapshotEntry[];
}

export interface BalanceSpec {
  readonly parts: number;
  readonly eachLimitMs: number;
  /** 0 = no total cap. */
  readonly totalLimitMs: number;
  readonly totalEndAction: 'CANCEL_REMAINING' | 'FILL_BY_MARKET';
}

export interface TwapSpec {
  /** null = start at the command's stamp. */
  readonly startTimestamp: number | null;
  readonly durationMs: number;
  readonly frequencyMs: number;
}

export interface IcebergSpec {
  /** Lots shown at a time. */
  readonly displayAmount: number;
  /** Lots of each refill after the first; null = displayAmount. */
  readonly refreshAmount: number | null;
}

export interface PortfolioSpec {
  readonly accountId: number;
  readonly portfolioType: PortfolioType;
  readonly strategy: string | null;
  readonly customizedNote: string | null;
  readonly legs: readonly LegSpec[];
  readonly balance: BalanceSpec | null;
  readonly twap: TwapSpec | null;
  readonly iceberg: IcebergSpec | null;
  /** Accounts (of the same user) the portfolio is mirrored into. */
  readonly mirrorAccountIds: readonly number[];
}

// ---------------------------------------------------------------------------------------------
// Commands

export interface SubmitPortfolio extends CommandStamp {
  readonly type: 'submit_portfolio';
  readonly portfolio: PortfolioSpec;
}

export interface CancelPortfolio extends CommandStamp {
  readonly type: 'cancel_portfolio';
  readonly portfolioId: number;
  /** When given, the portfolio must belong to this account. */
  readonly accountId: number | null;
}

export interface CancelAllPortfolios extends CommandStamp {
  readonly type: 'cancel_all_portfolios';
  readonly accountId: number;
  readonly portfolioType: PortfolioType | null;
}

export type AlgoCommand = SubmitPortfolio | CancelPortfolio | CancelAllPortfolios;

export const ALGO_COMMAND_TYPES: ReadonlySet<string> = new Set([
  'submit_portfolio',
  'cancel_portfolio',
  'cancel_all_portfolios',
]);

export type AlgoValue =
  | {
      readonly kind: 'submitted';
      readonly portfolioId: number;
      readonly mirrorPortfolioIds: readonly number[];
    }
  | { readonly kind: 'cancelled'; readonly portfolioIds: readonly number[] };

// ---------------------------------------------------------------------------------------------
// Status and events

export type PortfolioStatus =
  | 'PENDING'
  | 'WORKING'
  | 'CANCELLING'
  | 'COMPLETED'
  | 'CANCELLED'
  | 'EXPIRED'
  | 'FAILED';

export type TradeNewsType =
  | 'PORTFOLIO_SUBMITTED'
  | 'PORTFOLIO_WORKING'
  | 'PART_STARTED'
  | 'ORDER_PLACED'
  | 'ORDER_FILLED'
  | 'PORTFOLIO_CANCELLING'
  | 'PORTFOLIO_CANCELLED'
  | 'PORTFOLIO_COMPLETED'
  | 'PORTFOLIO_EXPIRED'
  | 'PORTFOLIO_FAILED';

/** One `trade-news` message; `type: 'portfolio'` tells it apart from engine events in a batch. */
export interface PortfolioEvent {
  readonly type: 'portfolio';
  readonly messageType: TradeNewsType;
  readonly portfolioId: number;
  readonly accountId: number;
  readonly portfolioType: PortfolioType;
  readonly status: PortfolioStatus;
  readonly timestamp: number;
  /** Leg index, for part/order messages. */
  readonly legIndex?: number;
  /** Part (BALANCE) or slice (TWAP) index, from 0. */
  readonly part?: number;
  readonly orderId?: string;
  readonly instrumentName?: string;
  /** Lots filled by this event (ORDER_FILLED) or placed (ORDER_PLACED). */
  readonly amount?: number;
  /** Ticks (null for market orders). */
  readonly price?: number | null;
  readonly endReason?: string;
  /** PORTFOLIO_FAILED: what went wrong (as `info`'s endMessage). */
  readonly endMessage?: string;
  /** ORDER_FILLED: Σ lots × ticks of this fill, exact (`price` is its float quotient). */
  readonly notional?: number;
  /** PORTFOLIO_SUBMITTED of a mirror: the original portfolio's id. */
  readonly linkedTo?: number;
}

/**
 * Not a `trade-news` message: a finished portfolio left the core (`FINISHED_RETENTION_MS` after
 * its group ended), carrying its final record so the read store can keep answering `info`.
 */
export interface PortfolioPruned {
  readonly type: 'portfolio_pruned';
  readonly portfolioId: number;
  readonly accountId: number;
  /** The pruning command's time. */
  readonly timestamp: number;
  /** The portfolio's final record, as `info` showed it (never mutated again). */
  readonly portfolio: PortfolioState;
}

/** What the algorithm layer emits: trade-news messages and prune notices. */
export type AlgoEvent = PortfolioEvent | PortfolioPruned;

export type EndReason =
  | 'filled'
  | 'duration_elapsed'
  | 'parts_elapsed'
  | 'total_limit'
  | 'user_cancel'
  | 'orders_closed'
  | 'child_rejected'
  | 'instrument_expired';

/** An algorithm command before the sequencer stamps it (what the gateway builds). */
export type UnstampedAlgoCommand = AlgoCommand extends infer C
  ? C extends AlgoCommand
    ? Omit<C, 'seq' | 'ts'>
    : never
  : never;
