/**
 * Method and push types of the API, derived from the server's TypeBox schemas (the single
 * source): `Methods[name]` gives `params` and `result`. `methods-parity.test.ts` fails when a
 * server method is missing here.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import type * as AS from '../src/api/methods/account-settings.ts';
import type * as M from '../src/api/methods/mmp.ts';
import type * as PF from '../src/api/portfolios/schemas.ts';
import type { PortfolioInfoWire } from '../src/api/portfolios/wire.ts';
import type * as P from '../src/api/schemas/methods.ts';
import type * as O from '../src/api/schemas/objects.ts';
import type * as R from '../src/api/schemas/rfq.ts';

type Call<Params extends TSchema, Result> = { params: Static<Params>; result: Result };
type Empty = typeof P.EmptyParams;
type CancelOnDisconnectScope = typeof P.CancelOnDisconnectParams;

export type Order = Static<typeof O.OrderSchema>;
export type Trade = Static<typeof O.TradeSchema>;
/** A leg trade of a combo trade (an element of `Trade.legs`). */
export type LegTrade = Static<typeof O.LegTradeSchema>;
export type Position = Static<typeof O.PositionSchema>;
export type AccountSummary = Static<typeof O.AccountSummarySchema>;
export type OrderBook = Static<typeof O.OrderBookSchema>;
export type Ticker = Static<typeof O.TickerSchema>;
/** A trade on the public tape (`public/get_last_trades_by_instrument`, `trades.{instrument}`). */
export type PublicTrade = Static<typeof O.PublicTradeSchema>;
export type InstrumentInfo = Static<typeof O.InstrumentSchema>;
/** A combo's details (`private/create_combo`, `public/get_combo_details`, `public/get_combos`). */
export type Combo = Static<typeof O.ComboSchema>;
/** One line of `public/get_book_summary_by_currency`. */
export type BookSummary = Static<typeof O.BookSummarySchema>;
export type OrderWithTrades = { order: Order; trades: Trade[] };
/** A group of a detailed cancel_all* answer. */
export type CancelReport = O.CancelReport;
export type BlockRfq = Static<typeof R.RfqSchema>;
export type BlockRfqQuote = Static<typeof R.QuoteSchema>;
export type BlockRfqTrade = Static<typeof R.RfqTradeSchema>;
export type BlockRfqInstrument = Static<typeof R.RfqInstrumentSchema>;
export type MmpConfig = ReturnType<typeof M.mmpToWire>;
export type Page<T> = { continuation: string | null; results: T[] };
export type UserTradesPage = { trades: Trade[]; hasMore: boolean; continuation: string | null };
/** One entry of the settlement history: a position an expiry closed, with the cash it booked. */
export type Settlement = Static<typeof O.SettlementSchema>;
export type SettlementPage = { settlements: Settlement[]; continuation: string | null };
/** One entry of the transaction log: a balance change, its cause and the balance after it. */
export type Transaction = Static<typeof O.TransactionSchema>;
export type TransactionLog = { logs: Transaction[]; continuation: string | null };

/** Body of `submitPortfolio` (spec 2.1): one shape per `portfolioType`, with its own block. */
export type SubmitPortfolioBody = PF.SubmitPortfolioBody;
/** Body of `cancelPortfolio`. */
export type CancelPortfolioBody = PF.CancelPortfolioBody;
/** Body of `cancelAllPortfolios`. */
export type CancelAllPortfoliosBody = PF.CancelAllPortfoliosBody;
/** A portfolio as `portfolioInfo` answers it: status, legs, parts and child orders. */
export type PortfolioInfo = PortfolioInfoWire;
export type PortfolioType = SubmitPortfolioBody['portfolioType'];

export interface AuthResult {
  userId: number;
  accountIds: number[];
  defaultAccountId: number;
  roles: string[];
  deskName: string | null;
}

export interface Methods {
  'public/time': Call<Empty, number>;
  'public/test': Call<typeof P.TestParams, { version: string }>;
  'public/get_instruments': Call<typeof P.InstrumentsParams, InstrumentInfo[]>;
  'public/get_order_book': Call<typeof P.OrderBookParams, OrderBook>;
  'public/ticker': Call<typeof P.TickerParams, Ticker>;
  'public/get_book_summary_by_currency': Call<typeof P.BookSummaryParams, BookSummary[]>;
  'public/get_book_summary_by_instrument': Call<typeof P.TickerParams, BookSummary[]>;
  'public/get_instrument': Call<typeof P.TickerParams, InstrumentInfo>;
  'public/get_index_price_names': Call<Empty, string[]>;
  'public/get_combo_ids': Call<typeof P.ComboIdsParams, string[]>;
  'public/get_combos': Call<typeof P.CombosParams, Combo[]>;
  'public/get_combo_details': Call<typeof P.ComboIdParams, Combo>;
  'private/create_combo': Call<typeof P.CreateComboParams, Combo>;
  'public/get_index_price': Call<
    typeof P.IndexPriceParams,
    { indexPrice: string; estimatedDeliveryPrice: string }
  >;
  'public/get_last_trades_by_instrument': Call<
    typeof P.LastTradesParams,
    { trades: PublicTrade[]; hasMore: boolean }
  >;
  'public/get_last_trades_by_currency': Call<
    typeof P.LastTradesByCurrencyParams,
    { trades: PublicTrade[]; hasMore: boolean }
  >;
  'public/auth': Call<typeof P.AuthParams, AuthResult>;
  'public/set_heartbeat': Call<typeof P.HeartbeatParams, 'ok'>;
  'public/disable_heartbeat': Call<Empty, 'ok'>;
  'public/subscribe': Call<typeof P.ChannelsParams, string[]>;
  'public/unsubscribe': Call<typeof P.ChannelsParams, string[]>;
  'public/unsubscribe_all': Call<Empty, 'ok'>;
  'private/buy': Call<typeof P.PlaceOrderParams, OrderWithTrades>;
  'private/sell': Call<typeof P.PlaceOrderParams, OrderWithTrades>;
  'private/edit': Call<typeof P.EditOrderParams, OrderWithTrades>;
  'private/edit_by_label': Call<typeof P.EditByLabelParams, OrderWithTrades>;
  'private/cancel': Call<typeof P.OrderIdParams, Order>;
  /** The count, or with `detailed: true` the cancelled orders in groups. */
  'private/cancel_all': Call<typeof P.CancelAllParams, number | CancelReport[]>;
  'private/cancel_all_by_instrument': Call<typeof P.CancelByInstrumentParams, number | CancelReport[]>;
  'private/cancel_all_by_currency': Call<typeof P.CancelByCurrencyParams, number | CancelReport[]>;
  'private/cancel_by_label': Call<typeof P.CancelByLabelParams, number | CancelReport[]>;
  'private/get_order_state': Call<typeof P.OrderIdParams, Order>;
  'private/get_open_orders': Call<typeof P.OpenOrdersParams, Order[]>;
  'private/get_open_orders_by_currency': Call<typeof P.OpenOrdersByCurrencyParams, Order[]>;
  'private/get_open_orders_by_instrument': Call<typeof P.OpenOrdersByInstrumentParams, Order[]>;
  'private/get_open_orders_by_label': Call<typeof P.OpenOrdersByLabelParams, Order[]>;
  'private/get_order_history_by_currency': Call<
    typeof P.OrderHistoryParams,
    Order[] | { orders: Order[]; continuation: string | null }
  >;
  'private/get_order_history_by_instrument': Call<
    typeof P.OrderHistoryByInstrumentParams,
    Order[] | { orders: Order[]; continuation: string | null }
  >;
  'private/get_user_trades_by_currency': Call<typeof P.UserTradesParams, UserTradesPage>;
  'private/get_user_trades_by_currency_and_time': Call<typeof P.UserTradesAndTimeParams, UserTradesPage>;
  'private/get_user_trades_by_instrument': Call<typeof P.UserTradesByInstrumentParams, UserTradesPage>;
  'private/get_user_trades_by_instrument_and_time': Call<
    typeof P.UserTradesByInstrumentAndTimeParams,
    UserTradesPage
  >;
  'private/get_user_trades_by_order': Call<typeof P.UserTradesByOrderParams, Trade[]>;
  'private/get_settlement_history_by_currency': Call<typeof P.SettlementHistoryParams, SettlementPage>;
  'private/get_transaction_log': Call<typeof P.TransactionLogParams, TransactionLog>;
  'private/get_settlement_history_by_instrument': Call<
    typeof P.SettlementHistoryByInstrumentParams,
    SettlementPage
  >;
  'private/get_positions': Call<typeof P.PositionsParams, Position[]>;
  'private/get_position': Call<typeof P.PositionParams, Position>;
  'private/get_margins': Call<typeof P.MarginsParams, Static<typeof O.MarginsSchema>>;
  'private/close_position': Call<typeof P.ClosePositionParams, OrderWithTrades>;
  'private/get_account_summary': Call<typeof P.AccountSummaryParams, AccountSummary>;
  'private/get_account_summaries': Call<Empty, { accountId: number; summaries: AccountSummary[] }>;
  'private/enable_cancel_on_disconnect': Call<CancelOnDisconnectScope, 'ok'>;
  'private/disable_cancel_on_disconnect': Call<CancelOnDisconnectScope, 'ok'>;
  /** `scope` answers the one asked (`connection` by default, or `account`). */
  'private/get_cancel_on_disconnect': Call<
    CancelOnDisconnectScope,
    { scope: 'connection' | 'account'; enabled: boolean }
  >;
  'private/subscribe': Call<typeof P.ChannelsParams, string[]>;
  'private/unsubscribe': Call<typeof P.ChannelsParams, string[]>;
  'private/unsubscribe_all': Call<Empty, 'ok'>;
  'private/set_mmp_config': Call<typeof M.SetMmpConfigParams, MmpConfig[]>;
  'private/get_mmp_config': Call<typeof M.GetMmpConfigParams, MmpConfig[]>;
  'private/reset_mmp': Call<typeof M.ResetMmpParams, 'ok'>;
  /** Self-trade prevention mode of the key's default account (or `accountId`), once durable. */
  'private/set_self_trading_config': Call<typeof AS.SetSelfTradingConfigParams, 'ok'>;
  'block/rfqs/create_rfq': Call<typeof R.CreateRfqParams, BlockRfq>;
  'block/rfqs/cancel_rfq': Call<typeof R.RfqIdParams, BlockRfq>;
  'block/rfqs/accept': Call<typeof R.AcceptParams, Static<typeof R.AcceptResultSchema>>;
  'block/rfqs/cancel_trigger': Call<typeof R.CancelTriggerParams, BlockRfq>;
  'block/rfqs/get_rfqs': Call<typeof R.GetRfqsParams, Page<BlockRfq>>;
  'block/rfqs/create_quote': Call<typeof R.CreateQuoteParams, BlockRfqQuote>;
  'block/rfqs/edit_quote': Call<typeof R.EditQuoteParams, BlockRfqQuote>;
  'block/rfqs/cancel_quote': Call<typeof R.QuoteIdParams, BlockRfqQuote>;
  'block/rfqs/cancel_all_quotes': Call<typeof R.CancelAllQuotesParams, { count: number }>;
  'block/rfqs/get_quotes': Call<typeof R.GetQuotesParams, BlockRfqQuote[]>;
  'block/rfqs/get_trades': Call<typeof R.GetTradesParams, Page<BlockRfqTrade>>;
  'block/rfqs/get_instruments': Call<typeof R.GetRfqInstrumentsParams, { results: BlockRfqInstrument[] }>;
}

export type MethodName = keyof Methods;
export type ParamsOf<M extends string> = M extends MethodName
  ? Methods[M]['params']
  : Record<string, unknown>;
export type ResultOf<M extends string> = M extends MethodName ? Methods[M]['result'] : unknown;

/** The names above, at runtime (the parity test compares them with the server's registry). */
export const METHOD_NAMES: readonly MethodName[] = [
  'public/time',
  'public/test',
  'public/get_instruments',
  'public/get_order_book',
  'public/ticker',
  'public/get_book_summary_by_currency',
  'public/get_book_summary_by_instrument',
  'public/get_instrument',
  'public/get_index_price_names',
  'public/get_combo_ids',
  'public/get_combos',
  'public/get_combo_details',
  'private/create_combo',
  'public/get_index_price',
  'public/get_last_trades_by_instrument',
  'public/get_last_trades_by_currency',
  'public/auth',
  'public/set_heartbeat',
  'public/disable_heartbeat',
  'public/subscribe',
  'public/unsubscribe',
  'public/unsubscribe_all',
  'private/buy',
  'private/sell',
  'private/edit',
  'private/edit_by_label',
  'private/cancel',
  'private/cancel_all',
  'private/cancel_all_by_instrument',
  'private/cancel_all_by_currency',
  'private/cancel_by_label',
  'private/get_order_state',
  'private/get_open_orders',
  'private/get_open_orders_by_currency',
  'private/get_open_orders_by_instrument',
  'private/get_open_orders_by_label',
  'private/get_order_history_by_currency',
  'private/get_order_history_by_instrument',
  'private/get_user_trades_by_currency',
  'private/get_user_trades_by_currency_and_time',
  'private/get_user_trades_by_instrument',
  'private/get_user_trades_by_instrument_and_time',
  'private/get_user_trades_by_order',
  'private/get_settlement_history_by_currency',
  'private/get_settlement_history_by_instrument',
  'private/get_transaction_log',
  'private/get_positions',
  'private/get_position',
  'private/get_margins',
  'private/close_position',
  'private/get_account_summary',
  'private/get_account_summaries',
  'private/enable_cancel_on_disconnect',
  'private/disable_cancel_on_disconnect',
  'private/get_cancel_on_disconnect',
  'private/subscribe',
  'private/unsubscribe',
  'private/unsubscribe_all',
  'private/set_mmp_config',
  'private/get_mmp_config',
  'private/reset_mmp',
  'private/set_self_trading_config',
  'block/rfqs/create_rfq',
  'block/rfqs/cancel_rfq',
  'block/rfqs/accept',
  'block/rfqs/cancel_trigger',
  'block/rfqs/get_rfqs',
  'block/rfqs/create_quote',
  'block/rfqs/edit_quote',
  'block/rfqs/cancel_quote',
  'block/rfqs/cancel_all_quotes',
  'block/rfqs/get_quotes',
  'block/rfqs/get_trades',
  'block/rfqs/get_instruments',
];

export interface WireErrorBody {
  code: number;
  message: string;
  data?: Record<string, unknown>;
}

export interface SubscriptionPush<T = unknown> {
  channel: string;
  seq: number;
  snapshot?: true;
  data: T;
}
