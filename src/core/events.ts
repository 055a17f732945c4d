/**
 * Events and command results: everything the deterministic core emits, in domain units.
 *
 * Invariants:
 * - Every event object is a fresh immutable snapshot; consumers may keep it.
 * - Events of one command appear in the order things happened: expiries due at `ts` first, then
 *   the command's own effects (per fill: maker order, taker order, trade, positions, balances).
 * - An `order` event carries the full order view after the change; the order's last event is
 *   its final state (`filled`, `cancelled`, `rejected`).
 * - A refusal is a result (`ok: false`) whose events hold exactly one `rejection` event (after
 *   any expiries due at `ts`); nothing else changed.
 */
import type { ErrorData, ErrorName } from '../domain/errors.ts';
import type { CoreCommandType, TradeAllocation } from './commands.ts';
import type {
  AdvancedKind,
  CancelReason,
  Liquidity,
  OrderState,
  OrderType,
  Side,
  TickDirection,
  TimeInForce,
  TriggerFillCondition,
  TriggerKind,
} from './types.ts';

/** The Order of spec 2.6 in domain units; the gateway formats ticks/lots as decimal strings. */
export interface OrderView {
  readonly orderId: string;
  readonly accountId: number;
  readonly instrumentName: string;
  /** Base currency of the instrument (order-history `currency` filter). */
  readonly currency: string;
  readonly side: Side;
  readonly orderType: OrderType;
  readonly originalOrderType: OrderType | null;
  readonly orderState: OrderState;
  /** Ticks; null for market orders (printed as `market_price` where the spec says so). */
  readonly price: number | null;
  /** Lots. */
  readonly amount: number;
  readonly filledAmount: number;
  /** Σ(filled lots × price ticks), exact. averagePrice = filledNotional / filledAmount. */
  readonly filledNotional: number;
  /** Ticks, possibly fractional (display only); 0 when nothing filled. */
  readonly averagePrice: number;
  readonly timeInForce: TimeInForce;
  readonly createdAt: number;
  readonly lastUpdatedAt: number;
  readonly cancelReason: CancelReason | null;
  readonly label: string;
  /** Owner tag (portfolio id of an algorithm's child order), or null. */
  readonly owner: string | null;
  readonly api: boolean;
  readonly web: boolean;
  readonly mobile: boolean;
  readonly postOnly: boolean;
  readonly rejectPostOnly: boolean;
  readonly reduceOnly: boolean;
  readonly replaced: boolean;
  readonly autoReplaced: boolean;
  readonly mmp: boolean;
  readonly mmpCancelled: boolean;
  readonly hidden: boolean;
  readonly displayAmount: number | null;
  readonly refreshAmount: number | null;
  readonly advanced: AdvancedKind | null;
  readonly trigger: TriggerKind | null;
  readonly triggerPrice: number | null;
  readonly triggerOffset: number | null;
  readonly triggerReferencePrice: number | null;
  readonly triggered: boolean | null;
  readonly triggerOrderId: string | null;
  readonly triggerFillCondition: TriggerFillCondition | null;
  readonly otoOrderIds: readonly string[] | null;
  readonly primaryOrderId: string | null;
  readonly ocoRef: string | null;
  /** Advanced option orders: the USD price (advanced usd) or IV percent (advanced implv). */
  readonly usd?: number | null;
  readonly implv?: number | null;
  /** Linked orders: a primary of an OTOCO / a secondary waiting for or released by its primary. */
  readonly isPrimaryOtoco?: boolean;
  readonly isSecondaryOto?: boolean;
  readonly blockTrade: boolean;
  readonly isLiquidation: boolean;
  readonly riskReducing: boolean;
}

/** One account's side of a trade (spec 2.7 fields that differ per side). */
export interface TradeParty {
  readonly accountId: number;
  readonly orderId: string;
  readonly orderType: OrderType;
  readonly side: Side;
  readonly liquidity: Liquidity;
  /** Order state after this trade. */
  readonly state: OrderState;
  /** Minor units of feeCurrency; negative = rebate. */
  readonly fee: number;
  readonly feeCurrency: string;
  /** Realised PnL of this fill, minor units of the settlement currency. */
  readonly profitLoss: number;
  readonly label: string;
  readonly owner: string | null;
  readonly api: boolean;
  readonly postOnly: boolean;
  readonly mmp: boolean;
  readonly reduceOnly: boolean;
  readonly riskReducing: boolean;
  readonly advanced: AdvancedKind | null;
}

/** A trade with both sides; `tradeForParty` (engine) gives the per-user spec 2.7 view. */
export interface TradeView {
  readonly tradeId: string;
  /** 1, 2, 3… per instrument. */
  readonly tradeSeq: number;
  readonly instrumentName: string;
  readonly currency: string;
  readonly timestamp: number;
  /** Ticks. */
  readonly price: number;
  /** Lots. */
  readonly amount: number;
  readonly tickDirection: TickDirection;
  /** USD per coin, or null when no index was published yet. */
  readonly indexPrice: number | null;
  /** Ticks, or null when no mark was published yet. */
  readonly markPrice: number | null;
  /**
   * Options: the forward of the expiry at trade time (USD per coin), the underlying of the marks
   * and of the trade's IV; absent before the market published one (and in older records).
   */
  readonly underlyingPrice?: number | null;
  readonly taker: TradeParty;
  readonly maker: TradeParty;
  readonly blockTradeId: string | null;
  /** The taker's id of the Block RFQ. */
  readonly blockRfqId: string | null;
  /** The maker's own id of the same Block RFQ (what the maker's views show). */
  readonly makerBlockRfqId?: string | null;
  readonly blockRfqQuoteId: string | null;
  /**
   * A leg trade of a combo trade: the combo's name and the combo trade's id. Absent on every
   * other trade.
   */
  readonly comboId?: string;
  readonly comboTradeId?: string;
  /**
   * A trade on a combo's book: its leg trades, one per leg, which carry the positions, fees and
   * cash (the parties' fee and profitLoss here are the legs' sums). Absent on every other trade.
   */
  readonly legs?: readonly TradeView[];
  /**
   * A Block RFQ's trade whose RFQ had allocations: the RFQ's list, shown to the taker only. Set
   * on the trades the block booked (a combo's trade, not its leg trades); absent on every other.
   */
  readonly tradeAllocations?: readonly TradeAllocation[];
}

export interface PositionView {
  readonly accountId: number;
  readonly instrumentName: string;
  /** Signed lots: positive long, negative short. */
  readonly size: number;
  /** Cost of the open size in settlement minor units (signed like size). */
  readonly openCost: number;
  /** Ticks, possibly fractional (display only); 0 when flat. */
  readonly averagePrice: number;
  /** Cumulative realised PnL, settlement minor units. */
  readonly realisedPnl: number;
  readonly settlementCurrency: string;
  /** Reads only (not in events): the mark in ticks, null before the first one. */
  readonly markPrice?: number | null;
  /** Reads only: PnL of the open size at the mark, settlement minor units; null without a mark. */
  readonly floatingPnl?: number | null;
}

export type BalanceReason = 'deposit' | 'withdraw' | 'trade' | 'settlement';

export interface OrderEvent {
  readonly type: 'order';
  readonly order: OrderView;
}
export interface TradeEvent {
  readonly type: 'trade';
  readonly trade: TradeView;
}
export interface PositionEvent {
  readonly type: 'position';
  readonly position: PositionView;
}
export interface BalanceEvent {
  readonly type: 'balance';
  readonly accountId: number;
  readonly currency: string;
  /** New balance, minor units. */
  readonly balance: number;
  /** Signed change, minor units. */
  readonly change: number;
  readonly reason: BalanceReason;
  /** Reason `settlement`: the position that settled and how (the settlement history's entry). */
  readonly settlement?: SettlementDetail;
  /**
   * Reason `trade`: the trade that booked it (a combo's leg trade), whose event comes earlier in
   * the same command: the transaction log's cause.
   */
  readonly tradeId?: string;
  /** Reason `deposit`: the deposit's id, when it was given one. */
  readonly depositId?: string;
}

/** What a settlement booked for one holder of the settled instrument (reason `settlement`). */
export interface SettlementDetail {
  readonly instrumentName: string;
  /** Signed lots held when it settled: positive long, negative short. */
  readonly size: number;
  /** The settlement price, ticks (the command's `settlementPrice`). */
  readonly settlementPrice: number;
  /**
   * The settlement index (USD, exact decimal) the position was closed against, or null when it
   * settled at `settlementPrice` (a command without an index).
   */
  readonly settlementIndex: string | null;
  /** Realised PnL of the settlement (exit value − cost of the open size), settlement minor units. */
  readonly profitLoss: number;
}
export interface AccountEvent {
  readonly type: 'account';
  readonly accountId: number;
  readonly change: 'created' | 'settings';
}
/** MMP fired for an account and index (Deribit `user.mmp_trigger.{index_name}`). */
export interface MmpTriggerEvent {
  readonly type: 'mmp_trigger';
  readonly accountId: number;
  readonly indexName: string;
  /** ms until which new MMP orders are refused; 0 = until reset_mmp. */
  readonly frozenUntil: number;
}

export interface InstrumentEvent {
  readonly type: 'instrument';
  readonly instrumentName: string;
  readonly state: 'open' | 'expired';
  /** Ticks, when expired by settlement. */
  readonly settlementPrice: number | null;
}
export interface RejectionEvent {
  readonly type: 'rejection';
  readonly commandType: CoreCommandType;
  readonly accountId: number | null;
  readonly error: CoreError;
}

export type CoreEvent =
  | OrderEvent
  | TradeEvent
  | PositionEvent
  | BalanceEvent
  | AccountEvent
  | InstrumentEvent
  | MmpTriggerEvent
  | RejectionEvent;

export interface CoreError {
  readonly name: ErrorName;
  readonly message: string;
  readonly data: ErrorData;
}

export interface CommandSuccess {
  readonly ok: true;
  readonly events: readonly CoreEvent[];
  /** place_order, edit_order, cancel_order: the order after the command. */
  readonly order?: OrderView;
  /** place_order, edit_order, block_trade: trades made by the command, in order. */
  readonly trades?: readonly TradeView[];
  /** cancel_all: the orders cancelled. */
  readonly orders?: readonly OrderView[];
  /** block_trade: its id. */
  readonly blockTradeId?: string;
}

export interface CommandFailure {
  readonly ok: false;
  readonly error: CoreError;
  readonly events: readonly CoreEvent[];
  /** Never set on a failure; declared so `result.order` reads on either branch. */
  readonly order?: undefined;
  readonly trades?: undefined;
  readonly orders?: undefined;
  readonly blockTradeId?: undefined;
}

export type CommandResult = CommandSuccess | CommandFailure;
