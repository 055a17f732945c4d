/**
 * The gateway's ports: the only ways it reaches the rest of the service. The lead's composition
 * root (`src/app/main.ts`) implements them over the sequencer and the engine; tests use fakes.
 *
 * Invariants:
 * - Writes go through `CommandPort.submit` only: the sequencer stamps, applies, journals and
 *   resolves after durability. The gateway never touches the engine.
 * - Reads (`ReadPort`) are synchronous views of the current state in domain units (ticks, lots,
 *   minor units); the gateway formats them for the wire.
 * - `EventPort` delivers every committed command's events, in sequence order, after durability.
 */
import type { UnstampedCommand } from '../core/commands.ts';
import type { CommandResult, CoreEvent, OrderView, PositionView, TradeView } from '../core/events.ts';
import type { SelfTradeMode } from '../core/types.ts';
import type { Instrument } from '../domain/instrument.ts';
import type {
  OrderHistoryPage,
  OrderHistoryQuery,
  OrderTradesQuery,
  UserTrade,
  UserTradesPage,
  UserTradesQuery,
} from '../store/read/history-queries.ts';
import type {
  SettlementHistoryPage,
  SettlementHistoryQuery,
  SettlementRecord,
} from '../store/read/settlement-queries.ts';
import type {
  TransactionLogPage,
  TransactionLogQuery,
  TransactionRecord,
} from '../store/read/transaction-queries.ts';

export type {
  OrderHistoryPage,
  OrderHistoryQuery,
  OrderTradesQuery,
  SettlementHistoryPage,
  SettlementHistoryQuery,
  SettlementRecord,
  TransactionLogPage,
  TransactionLogQuery,
  TransactionRecord,
  UserTrade,
  UserTradesPage,
  UserTradesQuery,
};

/**
 * Lists combos on first use by their Deribit-style ids (`BTC-CS-27DEC26-70000_75000`): the market
 * layer builds the spec from the listed legs and journals its listing.
 */
export interface ComboPort {
  /** Resolves once `name` is listed; refuses an id whose legs are not listed (`invalid_instrument`). */
  list(name: string): Promise<void>;
}

export interface CommandPort {
  submit(command: UnstampedCommand): Promise<CommandResult>;
  /** Server time in ms, as the next command would be stamped (public/time, validUntil). */
  now(): number;
}

export interface OrderFilter {
  readonly instrumentName?: string;
  /** A currency the instrument is filed under (`Instrument.filedUnder`). */
  readonly currency?: string;
  /** An InstrumentKind, or 'any'/undefined for all kinds. */
  readonly kind?: string;
}

/**
 * Money of one account in one currency, minor units (`currencyDecimals`), and the account's
 * self-trade prevention mode (per account, not per currency).
 */
export interface AccountSummaryView {
  readonly accountId: number;
  readonly currency: string;
  readonly selfTradeMode: SelfTradeMode;
  readonly balance: number;
  readonly equity: number;
  /** Equity less what is no collateral: long options' value beyond the shorts they cover. */
  readonly marginBalance: number;
  readonly availableFunds: number;
  readonly initialMargin: number;
  readonly maintenanceMargin: number;
  /** Equity's parts, as the engine values the positions settled in the currency (risk.ts `funds`): equity = balance + futuresPl + optionsValue. */
  readonly futuresPl: number;
  readonly optionsPl: number;
  readonly optionsValue: number;
}

/** What an order reserves: minor units of the currency it draws on. */
export interface OrderReserveView {
  readonly currency: string;
  readonly amount: number;
}

export interface OrderMarginsView {
  readonly buy: OrderReserveView;
  readonly sell: OrderReserveView;
  /** Ticks; null before the instrument's first mark, or once expired. */
  readonly priceBand: PriceBandView | null;
}

/** A price level: [price ticks, amount lots]. */
export type BookLevel = readonly [number, number];

export interface OrderBookView {
  readonly instrumentName: string;
  readonly timestamp: number;
  /** Best first. */
  readonly bids: readonly BookLevel[];
  readonly asks: readonly BookLevel[];
  /** The price band orders must keep to now, in ticks (null before the first mark, or expired). */
  readonly priceBand?: PriceBandView | null;
}

export interface PriceBandView {
  readonly min: number;
  readonly max: number;
}

export interface TickerView {
  readonly instrumentName: string;
  readonly timestamp: number;
  readonly state: 'open' | 'expired';
  readonly bestBidPrice: number | null;
  readonly bestBidAmount: number;
  readonly bestAskPrice: number | null;
  readonly bestAskAmount: number;
  readonly lastPrice: number | null;
  /** Ticks. */
  readonly markPrice: number | null;
  /** USD per coin (a plain number). */
  readonly indexPrice: number | null;
  /**
   * USD per coin the instrument is expected to settle at: inside its expiry's settlement window
   * the part of the 30-minute average already fixed, weighted with the index for the rest; the
   * index otherwise (absent: the index).
   */
  readonly estimatedDeliveryPrice?: number | null;
  /** The price band orders must keep to now, in ticks (null before the first mark, or expired). */
  readonly priceBand?: PriceBandView | null;
  /** Implied volatilities in percent, options only, when a pricing model is wired. */
  readonly markIv?: number | null;
  readonly bidIv?: number | null;
  readonly askIv?: number | null;
  readonly underlyingPrice?: number | null;
  /** Option greeks from the pricing model (USD: vega per vol point, theta per day). */
  readonly greeks?: {
    readonly delta: number;
    readonly gamma: number;
    readonly vega: number;
    readonly theta: number;
    readonly rho: number;
  } | null;
  /** Lots of open long positions (src/engine/trade-stats.ts); absent for spot. */
  readonly openInterest?: number;
  /** 24h stats: lots traded, high/low ticks (null without a trade in the window). */
  readonly volume24h?: number;
  readonly high24h?: number | null;
  readonly low24h?: number | null;
}

export interface ReadPort {
  instrument(name: string): Instrument | undefined;
  /** Active instruments, or recently expired ones when `expired`. */
  instruments(expired: boolean): readonly Instrument[];
  order(orderId: string): OrderView | undefined;
  openOrders(accountId: number, filter: OrderFilter): readonly OrderView[];
  /** The account's non-flat positions in the filter's currency and kind, with marks and floating PnL. */
  positions(accountId: number, filter: OrderFilter): readonly PositionView[];
  /**
   * The account's position in one instrument, flat ones too (size 0, with the PnL they realised),
   * with its mark and floating PnL; undefined when the account never held one.
   */
  position(accountId: number, instrumentName: string): PositionView | undefined;
  /**
   * What an order of `lots` at `price` on the instrument would reserve now on each side, against
   * the account's positions and open orders, and the band its price must keep to. Throws the
   * VenueError placing any order there would get (an unknown or expired instrument, a price off
   * the grid or not positive).
   */
  orderMargins(accountId: number, instrumentName: string, lots: number, price: number): OrderMarginsView;
  /**
   * A position as a command left it (an event's view), with the instrument's mark now and the
   * floating PnL at it (null without a mark, 0 when flat).
   */
  valuedPosition(position: PositionView): PositionView;
  accountSummary(accountId: number, currency: string): AccountSummaryView | undefined;
  orderBook(instrumentName: string, depth: number): OrderBookView | undefined;
  ticker(instrumentName: string): TickerView | undefined;
  /**
   * The instrument's most recent trades, at most `count` (the venue keeps at least the last
   * 100), newest last; leg trades of combo trades are on their legs' instruments.
   */
  recentTrades(instrumentName: string, count: number): readonly TradeView[];
  /**
   * The currencies instruments are filed under (base and settlement currencies, see
   * src/domain/currency.ts), sorted: the names `currency` filters take.
   */
  currencies(): readonly string[];
  /** The index of a currency (USD per coin), null before its first price or for a currency without one. */
  indexPrice(currency: string): number | null;
  /**
   * The currency's next settlement as now expected (USD per coin): inside the settlement window
   * of its nearest open expiry, the fixed part of the average weighted with the index for the rest;
   * the index otherwise. Absent: the index.
   */
  estimatedDeliveryPrice?(currency: string): number | null;
  /**
   * The account's cancel-on-disconnect default (`account` scope): WebSocket connections that
   * authenticate for it start with cancel-on-disconnect on. False for an unknown account.
   */
  accountCancelOnDisconnect(accountId: number): boolean;
}

/**
 * History (order history, user trades) from the read store: windows, includeOld/includeUnfilled,
 * paging and continuation tokens are the store's (src/store/read/history-queries.ts). A
 * `RangeError` means a bad count or continuation token and is answered as invalid_params.
 */
export interface HistoryPort {
  /** The latest view of any order ever recorded (open or closed), or null. */
  order(orderId: string): Promise<OrderView | null>;
  orderHistory(query: OrderHistoryQuery): Promise<OrderHistoryPage>;
  userTrades(query: UserTradesQuery): Promise<UserTradesPage>;
  /** One order's trades on the account, newest first (see `OrderTradesQuery`). */
  orderTrades(query: OrderTradesQuery): Promise<UserTrade[]>;
  /** The account's settled positions, newest first (src/store/read/settlement-queries.ts). */
  settlements(query: SettlementHistoryQuery): Promise<SettlementHistoryPage>;
  /** The account's balance changes in one currency, newest first (src/store/read/transaction-queries.ts). */
  transactions(query: TransactionLogQuery): Promise<TransactionLogPage>;
}

export interface CommittedBatch {
  readonly seq: number;
  readonly ts: number;
  /** Every engine event of the command (child orders, block trades and expiries included). */
  readonly events: readonly CoreEvent[];
  /** Sub-machine events by sub-machine name (RFQ desk, algorithms), for their channel families. */
  readonly subEvents?: ReadonlyMap<string, readonly unknown[]>;
}

export interface EventPort {
  /** Called for every committed command, in sequence order; returns an unsubscribe function. */
  onCommitted(listener: (batch: CommittedBatch) => void): () => void;
  /**
   * The seq of the last command applied to the state `ReadPort` shows. A command is applied at
   * once and published once durable, so this may be ahead of the last published batch: a
   * subscription's snapshot shows every command up to it (src/api/channels.ts).
   */
  readonly sequence: number;
}
