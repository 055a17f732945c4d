/**
 * Commands: everything the deterministic core accepts, in domain units (see ./types.ts).
 *
 * Invariants:
 * - Every command carries the sequencer's stamp as fields: `seq` (strictly increasing per
 *   shard, assigned when journaled) and `ts` (ms since epoch, non-decreasing). The core reads no
 *   clock: `ts` is "now" for validUntil, good_til_day expiry, createdAt/lastUpdatedAt and trades.
 * - Commands are plain JSON-serialisable data (the journal stores them as they are), so replaying
 *   the journal into a fresh core gives the same events and the same `stateHash()`.
 * - Queries (get_order_state, get_open_orders, get_positions, get_account_summary, order book,
 *   ticker) are NOT commands: they are read methods on the engine and are not journaled.
 * - Additive evolution only: new optional fields and new variants; existing fields keep meaning.
 */
import type { InstrumentSpec } from '../domain/instrument.ts';
import type { OrderTypeFilter } from './order-type-filter.ts';
import type {
  AdvancedKind,
  LinkedOrderType,
  OrderType,
  SelfTradeMode,
  Side,
  TimeInForce,
  TriggerFillCondition,
  TriggerKind,
} from './types.ts';

/** The sequencer's stamp, present on every command. */
export interface CommandStamp {
  readonly seq: number;
  readonly ts: number;
}

// ---------------------------------------------------------------------------------------------
// Accounts

export interface CreateAccount extends CommandStamp {
  readonly type: 'create_account';
  readonly accountId: number;
  readonly userId?: number;
  /** Default `cancel_maker`. */
  readonly selfTradeMode?: SelfTradeMode;
  /** Overrides the engine's default per-account open-order limit. */
  readonly maxOpenOrders?: number;
}

export interface SetAccountSettings extends CommandStamp {
  readonly type: 'set_account_settings';
  readonly accountId: number;
  readonly selfTradeMode?: SelfTradeMode;
  readonly maxOpenOrders?: number;
}

export interface Deposit extends CommandStamp {
  readonly type: 'deposit';
  readonly accountId: number;
  readonly currency: string;
  /** Minor units (positive integer). */
  readonly amount: number;
  /**
   * Makes a retried deposit credit once (`DEPOSIT_ID_PATTERN`). A deposit whose id the venue
   * remembers (accounts.ts `DEPOSIT_IDS_PER_ACCOUNT`) with the same account, currency and amount
   * succeeds without crediting again; with anything else it is refused (invalid_params, field
   * depositId). Absent: every deposit credits, as before ids existed.
   */
  readonly depositId?: string;
}

/** A deposit id: 1 to 64 of A–Z a–z 0–9 . _ : - (no spaces, nothing to escape in a log line). */
export const DEPOSIT_ID_PATTERN = '^[A-Za-z0-9._:-]{1,64}$';
export const DEPOSIT_ID_MAX_LENGTH = 64;

export interface Withdraw extends CommandStamp {
  readonly type: 'withdraw';
  readonly accountId: number;
  readonly currency: string;
  /** Minor units (positive integer); refused with not_enough_funds beyond available funds. */
  readonly amount: number;
}

// ---------------------------------------------------------------------------------------------
// Market data and instrument lifecycle

export interface ListInstrument extends CommandStamp {
  readonly type: 'list_instrument';
  readonly spec: InstrumentSpec;
}

export interface IndexPriceUpdate {
  readonly currency: string;
  /** USD per coin, a plain number (display, fee for linear options, margin). */
  readonly price: number;
}

export interface MarkPriceUpdate {
  readonly instrumentName: string;
  /** Integer ticks of the instrument (the market rounds to the finest tick). */
  readonly markPrice: number;
  /** Options: delta and vega per unit of quantity (MMP delta/vega limits); optional. */
  readonly delta?: number;
  readonly vega?: number;
  /**
   * Options: the forward of the expiry over the index, so `advanced=implv` prices on the same
   * underlying as the marks; absent in commands journaled before it (the index is used then).
   */
  readonly forwardFactor?: number;
}

/** Latest index/mark prices; the engine keeps them as its price source (bands, trades, margin). */
export interface UpdatePrices extends CommandStamp {
  readonly type: 'update_prices';
  readonly indexPrices?: readonly IndexPriceUpdate[];
  readonly markPrices?: readonly MarkPriceUpdate[];
}

/**
 * Expiry: open orders cancelled (cancelReason `settlement`), positions closed at the settlement
 * price with PnL booked, then the instrument is expired (new orders: instrument_expired).
 */
export interface SettleInstrument extends CommandStamp {
  readonly type: 'settle_instrument';
  readonly instrumentName: string;
  /** Integer ticks. */
  readonly settlementPrice: number;
  /**
   * The settlement index (USD, an exact decimal string). When given, options and dated futures
   * settle exactly against it rather than at `settlementPrice`, which is rounded to a tick. Absent
   * in commands journaled before it existed.
   */
  readonly settlementIndex?: string;
}

// ---------------------------------------------------------------------------------------------
// Orders

export interface OtocoOrderConfig {
  readonly side: Side;
  readonly amount?: number;
  readonly orderType?: OrderType;
  readonly label?: string;
  readonly price?: number | null;
  readonly reduceOnly?: boolean;
  readonly timeInForce?: TimeInForce;
  readonly postOnly?: boolean;
  readonly rejectPostOnly?: boolean;
  readonly triggerPrice?: number | null;
  readonly triggerOffset?: number | null;
  readonly trigger?: TriggerKind | null;
}

export interface PlaceOrder extends CommandStamp {
  readonly type: 'place_order';
  readonly accountId: number;
  readonly instrumentName: string;
  readonly side: Side;
  readonly orderType: OrderType;
  /** Lots, positive. */
  readonly amount: number;
  /** Ticks; null for market orders. */
  readonly price: number | null;
  readonly timeInForce: TimeInForce;
  readonly postOnly: boolean;
  readonly rejectPostOnly: boolean;
  readonly reduceOnly: boolean;
  /** '' when none; at most 64 characters. */
  readonly label: string;
  /** ms; refused with `timed_out` when `ts > validUntil`. */
  readonly validUntil: number | null;
  readonly source: { readonly api: boolean; readonly web?: boolean; readonly mobile?: boolean };
  /** Free owner tag, e.g. the portfolio id of an algorithm's child order. */
  readonly owner?: string | null;
  /** Rests without showing in public book depth (TWAP `hidden`). */
  readonly hidden?: boolean;
  // Reserved for later issues (accepted by the contract; the engine may refuse until built).
  readonly displayAmount?: number | null;
  readonly mmp?: boolean;
  readonly trigger?: TriggerKind | null;
  readonly triggerPrice?: number | null;
  readonly triggerOffset?: number | null;
  readonly advanced?: AdvancedKind | null;
  readonly linkedOrderType?: LinkedOrderType | null;
  readonly triggerFillCondition?: TriggerFillCondition | null;
  readonly otocoConfig?: readonly OtocoOrderConfig[] | null;
  readonly isLiquidation?: boolean;
  /** With `advanced`: the order's price as USD (usd) or IV percent (implv); `price` is ignored. */
  readonly advancedValue?: number | null;
  /**
   * The cancel-on-disconnect session (`set_cancel_on_disconnect`) of the WebSocket connection that
   * placed it, while that session has it on; absent otherwise. The order and the orders it makes
   * belong to the session until they close.
   */
  readonly codSession?: string | null;
}

/** Omitted fields keep their value; priority is lost on a price change or a size increase. */
export interface EditOrder extends CommandStamp {
  readonly type: 'edit_order';
  readonly accountId: number;
  readonly orderId: string;
  /** New total amount in lots (including what is already filled). */
  readonly amount?: number;
  readonly price?: number | null;
  readonly postOnly?: boolean;
  readonly rejectPostOnly?: boolean;
  readonly reduceOnly?: boolean;
  readonly validUntil?: number | null;
  readonly triggerPrice?: number | null;
  readonly triggerOffset?: number | null;
  readonly advanced?: AdvancedKind | null;
  readonly mmp?: boolean;
  readonly displayAmount?: number | null;
  /** Set by the pricing engine for advanced orders (Order `autoReplaced`). */
  readonly autoReplaced?: boolean;
  /** With `advanced`: the new price as USD (usd) or IV percent (implv); `price` is ignored. */
  readonly advancedValue?: number | null;
  /**
   * The owner the edit is made for: set by a portfolio amending its own child (the order's
   * `owner`). An edit for anyone else (`private/edit`) may not raise an owned order's quantity.
   */
  readonly owner?: string | null;
}

export interface CancelOrder extends CommandStamp {
  readonly type: 'cancel_order';
  readonly accountId: number;
  readonly orderId: string;
  /** Default `user_request`; a portfolio passes `algorithm` for a child it withdraws itself. */
  readonly cancelReason?: CancelAll['cancelReason'];
}

/**
 * Cancels the account's open orders that match every given filter (none = all):
 * cancel_all, cancel_all_by_instrument, cancel_all_by_currency, by label, by owner (portfolio).
 */
export interface CancelAll extends CommandStamp {
  readonly type: 'cancel_all';
  readonly accountId: number;
  readonly instrumentName?: string | null;
  /**
   * A currency the order's instrument is filed under (`Instrument.filedUnder`: its base or its
   * settlement currency, so USDC finds the BTC_USDC products). Builds before USDC filters were
   * taken matched the base currency only; no instrument of theirs differs under BTC or ETH.
   */
  readonly currency?: string | null;
  /** InstrumentKind; 'any' or null = all kinds. */
  readonly kind?: string | null;
  readonly label?: string | null;
  readonly owner?: string | null;
  /** Only orders of these current types (ORDER_TYPE_FILTERS); absent = all. */
  readonly orderType?: OrderTypeFilter | null;
  /**
   * Only these orders and the orders they made (a triggered stop's order, an OTO's secondaries):
   * a WebSocket's cancel-on-disconnect cancels the orders that connection placed. Absent = all.
   */
  readonly orderIds?: readonly string[] | null;
  /** Only the orders of this cancel-on-disconnect session (the end of its connection). */
  readonly codSession?: string | null;
  /**
   * Default `user_request`; the gateway may pass e.g. `cancel_on_disconnect`, a portfolio
   * `algorithm` for the child orders it withdraws itself (src/algo/children.ts).
   */
  readonly cancelReason?:
    | 'user_request'
    | 'algorithm'
    | 'cancel_on_disconnect'
    | 'risk_mitigation'
    | 'mmp_trigger';
}

// ---------------------------------------------------------------------------------------------
// Cancel-on-disconnect sessions (a WebSocket connection's cancel-on-disconnect, kept in the core
// so that a restart after a crash can cancel the orders of connections the crash ended)

/**
 * A WebSocket connection turns cancel-on-disconnect on or off for the account. On: the account's
 * open and waiting orders among `orderIds` (those the connection placed before), and the orders
 * they made, join `session`; orders placed while it is on carry `codSession`. Off: the
 * session's orders leave it (they stay open).
 */
export interface SetCancelOnDisconnect extends CommandStamp {
  readonly type: 'set_cancel_on_disconnect';
  readonly accountId: number;
  /** Unique across runs (the gateway prefixes the run's start seq). */
  readonly session: string;
  readonly enabled: boolean;
  readonly orderIds?: readonly string[] | null;
}

/**
 * Deribit's `account` scope of cancel-on-disconnect: the account's default for WebSocket
 * connections that authenticate from now on (on: they start with cancel-on-disconnect on). It
 * changes no session and no order; connections already open keep theirs.
 */
export interface SetAccountCancelOnDisconnect extends CommandStamp {
  readonly type: 'set_account_cancel_on_disconnect';
  readonly accountId: number;
  readonly enabled: boolean;
}

/**
 * Cancels every open and waiting order that belongs to a cancel-on-disconnect session, of every
 * account (cancelReason `cancel_on_disconnect`). Submitted at start-up, before any request is
 * taken, when a run ended without its connections' cancel-on-disconnect (a crash): every session
 * then belongs to a connection that is gone.
 */
export interface CancelCodSessions extends CommandStamp {
  readonly type: 'cancel_cod_sessions';
}

// ---------------------------------------------------------------------------------------------
// Block trades (RFQ desk)

export interface BlockTradeLeg {
  readonly instrumentName: string;
  /** Direction of the taker on this leg; the maker takes the other side. */
  readonly side: Side;
  /** Lots, positive. */
  readonly amount: number;
  /** Ticks. */
  readonly price: number;
  /**
   * The combo the Block RFQ's legs form, on each of its legs' trades (not the hedge's), as
   * Deribit's block RFQ trades carry `combo_id`; absent otherwise.
   */
  readonly comboId?: string | null;
}

/** One block trade: a multi-leg trade between two accounts at given prices. */
export interface BlockTradeTerms {
  readonly takerAccountId: number;
  readonly makerAccountId: number;
  readonly legs: readonly BlockTradeLeg[];
  /** Assigned by the engine when absent. */
  readonly blockTradeId?: string | null;
  readonly blockRfqId?: string | null;
  /** The maker's own id of the RFQ (spec 4.8: it differs from the taker's); default blockRfqId. */
  readonly makerBlockRfqId?: string | null;
  readonly blockRfqQuoteId?: string | null;
  readonly takerLabel?: string;
  readonly makerLabel?: string;
  /**
   * The Block RFQ's allocation list, recorded on the block's trades for the taker's views; absent
   * (in commands journaled before it, too) or empty = none.
   */
  readonly tradeAllocations?: readonly TradeAllocation[];
}

/**
 * One entry of a Block RFQ's allocation list as the RFQ shows it (spec 2.8 `tradeAllocations`):
 * `amount` is the RFQ quantity as its decimal text (a trade does not know the RFQ's quantity
 * grid); a user's entry has `userId`, a broker client's `clientInfo`.
 */
export interface TradeAllocation {
  readonly amount: string;
  readonly userId?: number;
  readonly clientInfo?: {
    readonly clientId: number;
    readonly clientLinkId: number;
    readonly name: number | null;
  };
}

/**
 * An atomic multi-leg trade between two accounts at given prices: every leg is validated first
 * (instrument open, amounts on grid, prices positive and on tick, funds), then one trade per leg
 * is booked. Never partial.
 *
 * `batch` books further block trades atomically with this one (an RFQ accept filled by several
 * quotes): every block is validated, and each account's funds are checked against its needs
 * over all the blocks together, before any is booked; one refusal books nothing. The result's
 * `trades` hold every block's trades in order (each block's legs in order), and each trade
 * carries its block's `blockTradeId`.
 */
export interface BlockTrade extends CommandStamp, BlockTradeTerms {
  readonly type: 'block_trade';
  readonly batch?: readonly BlockTradeTerms[];
}

// ---------------------------------------------------------------------------------------------
// Market maker protection

/** private/set_mmp_config: `interval` 0 removes the config of that index. */
export interface SetMmpConfig extends CommandStamp {
  readonly type: 'set_mmp_config';
  readonly accountId: number;
  /** e.g. `btc_usd`. */
  readonly indexName: string;
  /** Seconds (0…3600) of the rolling window. */
  readonly interval: number;
  /** Seconds (0…3600) frozen after a breach; 0 = until reset_mmp. */
  readonly frozenTime: number;
  /** Σ|quantity| (instrument quantity units) of MMP fills in the window. */
  readonly quantityLimit: number;
  readonly deltaLimit?: number | null;
  readonly vegaLimit?: number | null;
}

/** private/reset_mmp: unfreezes the group and empties its window. */
export interface ResetMmp extends CommandStamp {
  readonly type: 'reset_mmp';
  readonly accountId: number;
  readonly indexName: string;
}

// ---------------------------------------------------------------------------------------------
// Time

/** Advances time only (good_til_day expiry and anything else due at `ts`). */
export interface Timer extends CommandStamp {
  readonly type: 'timer';
}

export type CoreCommand =
  | CreateAccount
  | SetAccountSettings
  | Deposit
  | Withdraw
  | ListInstrument
  | UpdatePrices
  | SettleInstrument
  | PlaceOrder
  | EditOrder
  | CancelOrder
  | CancelAll
  | SetCancelOnDisconnect
  | SetAccountCancelOnDisconnect
  | CancelCodSessions
  | BlockTrade
  | SetMmpConfig
  | ResetMmp
  | Timer;

export type CoreCommandType = CoreCommand['type'];

/** A command before the sequencer stamps it (what the gateway and algorithms build). */
export type UnstampedCommand = CoreCommand extends infer C
  ? C extends CoreCommand
    ? Omit<C, 'seq' | 'ts'>
    : never
  : never;
