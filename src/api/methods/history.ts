/**
 * History reads: order history, user trades (by currency, instrument, order, and Deribit's
 * `*_and_time` names), settlement history and the transaction log, all from the read store
 * (HistoryPort) for the key's account.
 */
import { type Static, Type } from '@sinclair/typebox';
import type { OrderView } from '../../core/events.ts';
import { VenueError } from '../../domain/errors.ts';
import type { UserTrade } from '../ports.ts';
import type { CallContext, MethodRegistry } from '../registry.ts';
import {
  OrderHistoryByInstrumentParams,
  OrderHistoryParams,
  SettlementHistoryByInstrumentParams,
  SettlementHistoryParams,
  TransactionLogParams,
  UserTradesAndTimeParams,
  UserTradesByInstrumentAndTimeParams,
  UserTradesByInstrumentParams,
  UserTradesByOrderParams,
  UserTradesParams,
} from '../schemas/methods.ts';
import { OrderSchema, SettlementPageSchema, TradeSchema, TransactionLogSchema } from '../schemas/objects.ts';
import { settlementToWire, transactionToWire } from '../wire/market.ts';
import { orderToWire, tradeToWire } from '../wire/orders.ts';
import { accountOf, currencyOf, instrumentOf, type MethodDeps, ownedOrderAnywhere } from './context.ts';

/** The read store signals a bad count, offset or continuation token with a RangeError. */
export async function historyQuery<T>(query: () => Promise<T>): Promise<T> {
  try {
    return await query();
  } catch (error) {
    if (error instanceof RangeError) {
      const field = /^(count|offset|query)\b/.exec(error.message)?.[1] ?? 'continuation';
      throw new VenueError('invalid_params', error.message, { field });
    }
    throw error;
  }
}

export function registerHistoryMethods(registry: MethodRegistry, deps: MethodDeps): void {
  const { commands, reads, history } = deps;
  const instrumentNamed = (name: string) => reads.instrument(name);
  const wireOrders = (orders: readonly OrderView[]) =>
    orders.flatMap((order) => {
      const instrument = reads.instrument(order.instrumentName);
      return instrument ? [orderToWire(order, instrument)] : [];
    });

  const OrderHistoryResult = Type.Union([
    Type.Array(OrderSchema),
    Type.Object({
      orders: Type.Array(OrderSchema),
      continuation: Type.Union([Type.String(), Type.Null()]),
    }),
  ]);
  const orderHistory = async (
    accountId: number,
    filter: { currency: string; instrumentName?: string; kind?: string | null },
    params: Omit<OrderHistoryParams, 'currency' | 'kind'>,
  ) => {
    // A token already says where the page starts: an offset on top of it would skip rows on
    // every page of a walk that repeats its query with each new token.
    if (params.continuation != null && params.continuation !== '' && (params.offset ?? 0) > 0)
      throw new VenueError('invalid_params', 'offset cannot be combined with continuation', {
        field: 'offset',
      });
    const page = await historyQuery(() =>
      history.orderHistory({
        accountId,
        currency: filter.currency,
        ...(filter.instrumentName !== undefined ? { instrumentName: filter.instrumentName } : {}),
        ...(filter.kind != null ? { kind: filter.kind } : {}),
        ...(params.count != null ? { count: params.count } : {}),
        ...(params.offset != null ? { offset: params.offset } : {}),
        includeOld: params.includeOld ?? false,
        includeUnfilled: params.includeUnfilled ?? false,
        historical: params.historical ?? false,
        continuation: params.continuation ?? null,
        now: commands.now(),
      }),
    );
    const orders = wireOrders(page.orders);
    return params.withContinuation ? { orders, continuation: page.continuation } : orders;
  };

  registry.register({
    name: 'private/get_order_history_by_currency',
    summary: 'Order history (spec 4.2); withContinuation gives {orders, continuation}.',
    access: 'private',
    params: OrderHistoryParams,
    result: OrderHistoryResult,
    handler: (params, context) =>
      orderHistory(
        accountOf(context),
        { currency: currencyOf(reads, params.currency), kind: params.kind },
        params,
      ),
  });
  registry.register({
    name: 'private/get_order_history_by_instrument',
    summary: "One instrument's order history, with the paging and windows of the currency's (spec 4.2).",
    access: 'private',
    params: OrderHistoryByInstrumentParams,
    result: OrderHistoryResult,
    handler: (params, context) => {
      const instrument = instrumentOf(reads, params.instrumentName);
      // Rows are filed under the instrument's base coin (history-queries.ts): its arm finds them.
      return orderHistory(
        accountOf(context),
        { currency: instrument.spec.baseCurrency, instrumentName: instrument.name },
        params,
      );
    },
  });

  /** The account's side of each trade, on the wire (a trade of an instrument gone is left out). */
  const wireUserTrades = (found: readonly UserTrade[]) =>
    found.flatMap(({ trade, liquidity }) => {
      const instrument = reads.instrument(trade.instrumentName);
      const party = liquidity === 'T' ? trade.taker : trade.maker;
      return instrument ? [tradeToWire(trade, party, instrument, instrumentNamed)] : [];
    });

  const UserTradesResult = Type.Object({
    trades: Type.Array(TradeSchema),
    hasMore: Type.Boolean(),
    continuation: Type.Union([Type.String(), Type.Null()]),
  });
  const userTrades = async (
    accountId: number,
    filter: { currency?: string; instrumentName?: string; kind?: string | null },
    params: Omit<UserTradesParams, 'currency' | 'kind'>,
  ) => {
    const page = await historyQuery(() =>
      history.userTrades({
        accountId,
        ...(filter.currency !== undefined ? { currency: filter.currency } : {}),
        ...(filter.instrumentName !== undefined ? { instrumentName: filter.instrumentName } : {}),
        ...(filter.kind != null ? { kind: filter.kind } : {}),
        ...(params.startTimestamp != null ? { startTimestamp: params.startTimestamp } : {}),
        ...(params.endTimestamp != null ? { endTimestamp: params.endTimestamp } : {}),
        ...(params.count != null ? { count: params.count } : {}),
        ...(params.sorting != null ? { sorting: params.sorting } : {}),
        historical: params.historical ?? false,
        includeOld: params.includeOld ?? false,
        continuation: params.continuation ?? null,
        now: commands.now(),
      }),
    );
    return { trades: wireUserTrades(page.trades), hasMore: page.hasMore, continuation: page.continuation };
  };

  const ofCurrency = (params: UserTradesParams, context: CallContext) =>
    userTrades(
      accountOf(context),
      { currency: currencyOf(reads, params.currency), kind: params.kind },
      params,
    );
  const ofInstrument = (params: Static<typeof UserTradesByInstrumentParams>, context: CallContext) =>
    userTrades(
      accountOf(context),
      { instrumentName: instrumentOf(reads, params.instrumentName).name },
      params,
    );
  registry.register({
    name: 'private/get_user_trades_by_currency',
    summary: "The account's trades in one currency: {trades, hasMore, continuation}.",
    access: 'private',
    params: UserTradesParams,
    result: UserTradesResult,
    handler: ofCurrency,
  });
  registry.register({
    name: 'private/get_user_trades_by_currency_and_time',
    summary: 'get_user_trades_by_currency with startTimestamp and endTimestamp required (Deribit’s name).',
    access: 'private',
    params: UserTradesAndTimeParams,
    result: UserTradesResult,
    handler: ofCurrency,
  });
  registry.register({
    name: 'private/get_user_trades_by_instrument',
    summary: "The account's trades on one instrument: {trades, hasMore, continuation}.",
    access: 'private',
    params: UserTradesByInstrumentParams,
    result: UserTradesResult,
    handler: ofInstrument,
  });
  registry.register({
    name: 'private/get_user_trades_by_instrument_and_time',
    summary: 'get_user_trades_by_instrument with startTimestamp and endTimestamp required (Deribit’s name).',
    access: 'private',
    params: UserTradesByInstrumentAndTimeParams,
    result: UserTradesResult,
    handler: ofInstrument,
  });

  /**
   * The account's settled positions (src/store/read/settlement-queries.ts), each with the cash
   * the settlement booked: what explains a balance change at an expiry.
   */
  const settlementHistory = async (
    accountId: number,
    filter: { currency?: string; instrumentName?: string },
    params: Omit<SettlementHistoryParams, 'currency'>,
  ) => {
    const page = await historyQuery(() =>
      history.settlements({
        accountId,
        ...filter,
        ...(params.type != null ? { type: params.type } : {}),
        ...(params.count != null ? { count: params.count } : {}),
        ...(params.searchStartTimestamp != null ? { searchStartTimestamp: params.searchStartTimestamp } : {}),
        continuation: params.continuation ?? null,
      }),
    );
    return {
      settlements: page.settlements.flatMap((record) => {
        const instrument = reads.instrument(record.instrumentName);
        return instrument ? [settlementToWire(record, instrument)] : [];
      }),
      continuation: page.continuation,
    };
  };
  registry.register({
    name: 'private/get_settlement_history_by_currency',
    summary:
      "The account's settled positions in one currency, newest first, each with the cash its expiry booked: {settlements, continuation}.",
    access: 'private',
    params: SettlementHistoryParams,
    result: SettlementPageSchema,
    handler: (params, context) =>
      settlementHistory(accountOf(context), { currency: currencyOf(reads, params.currency) }, params),
  });
  registry.register({
    name: 'private/get_settlement_history_by_instrument',
    summary: "The account's settlement of one instrument (an expired one too): {settlements, continuation}.",
    access: 'private',
    params: SettlementHistoryByInstrumentParams,
    result: SettlementPageSchema,
    handler: (params, context) =>
      settlementHistory(
        accountOf(context),
        { instrumentName: instrumentOf(reads, params.instrumentName).name },
        params,
      ),
  });

  registry.register({
    name: 'private/get_transaction_log',
    summary:
      "The account's balance changes in one currency between two times, newest first, each with its cause and the balance after it: {logs, continuation}.",
    access: 'private',
    params: TransactionLogParams,
    result: TransactionLogSchema,
    handler: async (params, context) => {
      const page = await historyQuery(() =>
        history.transactions({
          accountId: accountOf(context),
          currency: currencyOf(reads, params.currency),
          startTimestamp: params.startTimestamp,
          endTimestamp: params.endTimestamp,
          ...(params.query != null ? { query: params.query } : {}),
          ...(params.count != null ? { count: params.count } : {}),
          continuation: params.continuation ?? null,
        }),
      );
      return {
        logs: page.logs.map((record) => {
          const name = record.trade?.instrumentName ?? record.settlement?.instrumentName;
          return transactionToWire(record, name === undefined ? undefined : reads.instrument(name));
        }),
        continuation: page.continuation,
      };
    },
  });

  registry.register({
    name: 'private/get_user_trades_by_order',
    summary: "One order's trades (the account's side of each), newest first unless sorting is asc.",
    access: 'private',
    params: UserTradesByOrderParams,
    result: Type.Array(TradeSchema),
    handler: async (params, context) => {
      const order = await ownedOrderAnywhere(reads, history, context, params.orderId);
      const found = await historyQuery(() =>
        history.orderTrades({
          accountId: order.accountId,
          orderId: order.orderId,
          instrumentName: order.instrumentName,
          since: order.createdAt,
          filled: order.filledAmount,
        }),
      );
      if (params.sorting === 'asc') found.reverse();
      return wireUserTrades(found);
    },
  });
}
