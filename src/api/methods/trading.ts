/**
 * Single-order and account methods (spec 4.2–4.5 and SEMANTICS.md, Orders): buy, sell, edit,
 * cancel, cancel_all*, order state, open orders, positions and the account summary. Writes go
 * through the command port; reads through the read port. The history reads are in ./history.ts.
 */
import { type Static, Type } from '@sinclair/typebox';
import type { CommandSuccess, OrderView, PositionView } from '../../core/events.ts';
import { ORDER_TYPE_FILTERS, type OrderTypeFilter } from '../../core/order-type-filter.ts';
import { formatMoney, type Side } from '../../core/types.ts';
import { VenueError } from '../../domain/errors.ts';
import type { Instrument } from '../../domain/instrument.ts';
import type { MethodRegistry, SessionHandle } from '../registry.ts';
import {
  AccountSummaryParams,
  CancelAllParams,
  CancelByCurrencyParams,
  CancelByInstrumentParams,
  CancelByLabelParams,
  ClosePositionParams,
  EditByLabelParams,
  EditOrderParams,
  EmptyParams,
  MarginsParams,
  OpenOrdersByCurrencyParams,
  OpenOrdersByInstrumentParams,
  OpenOrdersByLabelParams,
  OpenOrdersParams,
  OrderIdParams,
  PlaceOrderParams,
  PositionParams,
  PositionsParams,
} from '../schemas/methods.ts';
import {
  AccountSummarySchema,
  type CancelReport,
  CancelReportSchema,
  MarginsSchema,
  OrderSchema,
  OrderWithTradesSchema,
  PositionSchema,
} from '../schemas/objects.ts';
import { accountSummaryToWire, positionToWire } from '../wire/market.ts';
import { cancelReports, orderToWire, tradesToWire } from '../wire/orders.ts';
import {
  accountOf,
  currencyOf,
  instrumentOf,
  instrumentOrCombo,
  kindMatches,
  type MethodDeps,
  ownedOrder,
  ownedOrderAnywhere,
  principalOf,
  submitOrThrow,
} from './context.ts';
import { resolveLots, toEditOrder, toPlaceOrder } from './order-params.ts';

export function registerTradingMethods(registry: MethodRegistry, deps: MethodDeps): void {
  const { commands, reads, history } = deps;
  const instrumentNamed = (name: string) => reads.instrument(name);
  const wireOrder = (order: OrderView) => orderToWire(order, instrumentOf(reads, order.instrumentName));
  const wireOrders = (orders: readonly OrderView[]) =>
    orders.flatMap((order) => {
      const instrument = reads.instrument(order.instrumentName);
      return instrument ? [orderToWire(order, instrument)] : [];
    });

  /**
   * Places the order on a known instrument (no closure per call: this is the hottest path). A
   * WebSocket session is told of the order, for its cancel-on-disconnect.
   */
  const place = (
    params: Static<typeof PlaceOrderParams>,
    side: Side,
    accountId: number,
    instrument: Instrument,
    session: SessionHandle | null,
  ) => {
    const command = toPlaceOrder(params, side, accountId, instrument);
    // Cancel-on-disconnect on: the order belongs to the connection's session in the core (nothing
    // is added to the command when it is off).
    const codSession = session === null ? null : session.codSession;
    if (codSession !== null) (command as { codSession?: string }).codSession = codSession;
    return submitOrThrow(commands, command).then((result) => {
      const joined = session?.placed(result.order!.orderId, codSession);
      if (joined === undefined) return placedAnswer(result, accountId, instrument);
      return joined.then(() => placedAnswer(result, accountId, instrument));
    });
  };
  const placedAnswer = (result: CommandSuccess, accountId: number, instrument: Instrument) => ({
    order: orderToWire(result.order!, instrument),
    trades: tradesToWire(result.trades ?? [], accountId, instrumentNamed),
  });

  for (const side of ['buy', 'sell'] as const satisfies readonly Side[]) {
    registry.register({
      name: `private/${side}`,
      summary: `Places a ${side} order (spec 4.3).`,
      access: 'private',
      roles: ['trade'],
      matching: true,
      params: PlaceOrderParams,
      result: OrderWithTradesSchema,
      // Not async (the hottest handler; an async frame is about 400 bytes a call).
      handler: (params, context) => {
        const accountId = accountOf(context);
        const instrument = reads.instrument(params.instrumentName);
        if (instrument !== undefined) return place(params, side, accountId, instrument, context.session);
        // A combo id not listed yet is listed first (off the hot path: only unknown names wait).
        return instrumentOrCombo(deps, params.instrumentName, context).then((listed) =>
          place(params, side, accountId, listed, context.session),
        );
      },
    });
  }

  registry.register({
    name: 'private/edit',
    summary: 'Edits an open order (spec 4.4).',
    access: 'private',
    roles: ['trade'],
    matching: true,
    params: EditOrderParams,
    result: OrderWithTradesSchema,
    handler: (params, context) => editOrder(ownedOrder(reads, context, params.orderId), params),
  });

  registry.register({
    name: 'private/edit_by_label',
    summary:
      "Edits the one open order of the key's account on the instrument that carries the label, as private/edit does; none is order_not_found, several non_unique_order_label (edit those by orderId).",
    access: 'private',
    roles: ['trade'],
    matching: true,
    params: EditByLabelParams,
    result: OrderWithTradesSchema,
    handler: (params, context) => {
      const { label, instrumentName, ...fields } = params;
      instrumentOf(reads, instrumentName);
      const labelled = reads
        .openOrders(accountOf(context), { instrumentName })
        .filter((order) => order.label === label);
      if (labelled.length === 0) {
        throw new VenueError('order_not_found', `no open order on ${instrumentName} carries label ${label}`, {
          field: 'label',
          label,
        });
      }
      if (labelled.length > 1) {
        throw new VenueError(
          'non_unique_order_label',
          `${labelled.length} open orders on ${instrumentName} carry label ${label}: edit one by orderId`,
          { field: 'label', label, orderIds: labelled.map((order) => order.orderId) },
        );
      }
      const order = labelled[0]!;
      return editOrder(order, { ...fields, orderId: order.orderId });
    },
  });

  async function editOrder(order: OrderView, params: EditOrderParams) {
    const instrument = instrumentOf(reads, order.instrumentName);
    // The type as read: of an open or untriggered order it does not change before the engine
    // runs the edit (a triggered stop is no longer open, and the engine refuses it as such).
    const orderType =
      order.orderState === 'open' || order.orderState === 'untriggered' ? order.orderType : undefined;
    const result = await submitOrThrow(commands, toEditOrder(params, order.accountId, instrument, orderType));
    // A crossing post-only edit with rejectPostOnly cancels the order (journaled) and is refused,
    // as Deribit does: the caller must not read it as an edit that went through.
    if (result.order!.cancelReason === 'edit_post_only_reject') {
      throw new VenueError(
        'post_only_reject',
        'the post-only edit would take liquidity: the order is cancelled',
        {
          field: 'price',
          orderId: result.order!.orderId,
          orderState: result.order!.orderState,
          cancelReason: 'edit_post_only_reject',
        },
      );
    }
    return {
      order: orderToWire(result.order!, instrument),
      trades: tradesToWire(result.trades ?? [], order.accountId, instrumentNamed),
    };
  }

  registry.register({
    name: 'private/cancel',
    summary: 'Cancels an open order; returns it with cancelReason user_request.',
    access: 'private',
    roles: ['trade'],
    matching: true,
    params: OrderIdParams,
    result: OrderSchema,
    handler: async (params, context) => {
      const order = ownedOrder(reads, context, params.orderId);
      const result = await submitOrThrow(commands, {
        type: 'cancel_order',
        accountId: order.accountId,
        orderId: order.orderId,
      });
      return wireOrder(result.order!);
    },
  });

  const cancelAll = async (
    accountId: number,
    filter: {
      instrumentName?: string;
      currency?: string;
      kind?: string | null;
      label?: string;
      type?: OrderTypeFilter | null;
      detailed?: boolean | null;
    },
  ): Promise<number | CancelReport[]> => {
    const result = await submitOrThrow(commands, {
      type: 'cancel_all',
      accountId,
      instrumentName: filter.instrumentName ?? null,
      currency: filter.currency ?? null,
      kind: filter.kind ?? null,
      label: filter.label ?? null,
      orderType: filter.type ?? null,
      cancelReason: 'user_request',
    });
    const orders = result.orders ?? [];
    return filter.detailed === true ? cancelReports(orders, (name) => reads.instrument(name)) : orders.length;
  };
  const CancelAllResult = Type.Union([
    Type.Integer({ description: 'number of orders cancelled' }),
    Type.Array(CancelReportSchema, { description: 'with detailed: the cancelled orders, grouped' }),
  ]);

  registry.register({
    name: 'private/cancel_all',
    summary: "Cancels every open order of the key's account; returns the count (or, detailed, the orders).",
    access: 'private',
    roles: ['trade'],
    matching: true,
    params: CancelAllParams,
    result: CancelAllResult,
    handler: (params, context) => cancelAll(accountOf(context), { detailed: params.detailed ?? null }),
  });
  registry.register({
    name: 'private/cancel_all_by_instrument',
    summary:
      'Cancels every open order (of a type) on one instrument; returns the count (or, detailed, the orders).',
    access: 'private',
    roles: ['trade'],
    matching: true,
    params: CancelByInstrumentParams,
    result: CancelAllResult,
    handler: (params, context) => {
      instrumentOf(reads, params.instrumentName);
      return cancelAll(accountOf(context), {
        instrumentName: params.instrumentName,
        type: params.type ?? null,
        detailed: params.detailed ?? null,
      });
    },
  });
  registry.register({
    name: 'private/cancel_all_by_currency',
    summary:
      'Cancels every open order in a currency (of a kind and type); returns the count (or, detailed, the orders).',
    access: 'private',
    roles: ['trade'],
    matching: true,
    params: CancelByCurrencyParams,
    result: CancelAllResult,
    handler: (params, context) =>
      cancelAll(accountOf(context), {
        currency: currencyOf(reads, params.currency),
        kind: params.kind ?? null,
        type: params.type ?? null,
        detailed: params.detailed ?? null,
      }),
  });

  registry.register({
    name: 'private/cancel_by_label',
    summary:
      'Cancels every open order with this label (in a currency); returns the count (or, detailed, the orders).',
    access: 'private',
    roles: ['trade'],
    matching: true,
    params: CancelByLabelParams,
    result: CancelAllResult,
    handler: (params, context) =>
      cancelAll(accountOf(context), {
        label: params.label,
        ...(params.currency != null ? { currency: currencyOf(reads, params.currency) } : {}),
        detailed: params.detailed ?? null,
      }),
  });

  registry.register({
    name: 'private/get_order_state',
    summary: 'One order by id (spec 4.5).',
    access: 'private',
    params: OrderIdParams,
    result: OrderSchema,
    handler: async (params, context) =>
      wireOrder(await ownedOrderAnywhere(reads, history, context, params.orderId)),
  });

  const openOrders = (
    accountId: number,
    filter: {
      instrumentName?: string;
      currency?: string;
      kind?: string | null;
      type?: string | null;
      label?: string;
    },
  ) => {
    const typeFilter = ORDER_TYPE_FILTERS[(filter.type ?? 'all') as OrderTypeFilter];
    const orders = reads
      .openOrders(accountId, {
        ...(filter.instrumentName ? { instrumentName: filter.instrumentName } : {}),
        ...(filter.currency ? { currency: filter.currency } : {}),
      })
      .filter((order) => {
        const instrument = reads.instrument(order.instrumentName);
        return (
          instrument !== undefined &&
          kindMatches(filter.kind, instrument.kind) &&
          typeFilter(order.orderType) &&
          (filter.label === undefined || order.label === filter.label)
        );
      });
    return wireOrders(orders);
  };

  registry.register({
    name: 'private/get_open_orders',
    summary: "Open orders of the key's account.",
    access: 'private',
    params: OpenOrdersParams,
    result: Type.Array(OrderSchema),
    handler: (params, context) => openOrders(accountOf(context), { kind: params.kind, type: params.type }),
  });
  registry.register({
    name: 'private/get_open_orders_by_currency',
    summary: 'Open orders in one currency.',
    access: 'private',
    params: OpenOrdersByCurrencyParams,
    result: Type.Array(OrderSchema),
    handler: (params, context) =>
      openOrders(accountOf(context), {
        currency: currencyOf(reads, params.currency),
        kind: params.kind,
        type: params.type,
      }),
  });
  registry.register({
    name: 'private/get_open_orders_by_instrument',
    summary: 'Open orders on one instrument.',
    access: 'private',
    params: OpenOrdersByInstrumentParams,
    result: Type.Array(OrderSchema),
    handler: (params, context) =>
      openOrders(accountOf(context), {
        instrumentName: instrumentOf(reads, params.instrumentName).name,
        type: params.type,
      }),
  });

  registry.register({
    name: 'private/get_open_orders_by_label',
    summary: 'Open orders in one currency with this label.',
    access: 'private',
    params: OpenOrdersByLabelParams,
    result: Type.Array(OrderSchema),
    handler: (params, context) =>
      openOrders(accountOf(context), { currency: currencyOf(reads, params.currency), label: params.label }),
  });

  registry.register({
    name: 'private/get_positions',
    summary: "Open positions of the key's account.",
    access: 'private',
    params: PositionsParams,
    result: Type.Array(PositionSchema),
    handler: (params, context) => {
      const filter = params.currency ? { currency: currencyOf(reads, params.currency) } : {};
      return reads.positions(accountOf(context), filter).flatMap((position) => {
        const instrument = reads.instrument(position.instrumentName);
        if (instrument === undefined || !kindMatches(params.kind, instrument.kind)) return [];
        return [positionToWire(position, instrument)];
      });
    },
  });

  /**
   * The account's position in one instrument, flat when it holds none. A combo's trades are booked
   * on its legs, so a combo holds no position of its own: it is refused naming the field.
   */
  const positionIn = (accountId: number, instrumentName: string): [PositionView, Instrument] => {
    const instrument = instrumentOf(reads, instrumentName);
    if (instrument.spec.legs !== null) {
      throw new VenueError(
        'invalid_instrument',
        `${instrument.name} is a combo: its trades are booked on its legs, which hold the positions`,
        { field: 'instrumentName' },
      );
    }
    const held = reads.position(accountId, instrument.name);
    if (held !== undefined) return [held, instrument];
    const mark = reads.ticker(instrument.name)?.markPrice ?? null;
    const flat: PositionView = {
      accountId,
      instrumentName: instrument.name,
      size: 0,
      openCost: 0,
      averagePrice: 0,
      realisedPnl: 0,
      settlementCurrency: instrument.spec.settlementCurrency,
      markPrice: mark,
      floatingPnl: mark === null ? null : 0,
    };
    return [flat, instrument];
  };

  registry.register({
    name: 'private/get_position',
    summary: "The key's account's position in one instrument; direction zero when it holds none.",
    access: 'private',
    params: PositionParams,
    result: PositionSchema,
    handler: (params, context) => positionToWire(...positionIn(accountOf(context), params.instrumentName)),
  });

  registry.register({
    name: 'private/get_margins',
    summary:
      "What a limit order would reserve now on each side, against the key's account's positions and open orders (an order that reduces a position reserves less), and the price band.",
    access: 'private',
    params: MarginsParams,
    result: MarginsSchema,
    handler: async (params, context) => {
      const instrument = await instrumentOrCombo(deps, params.instrumentName, context);
      const lots = resolveLots(instrument, params.quantity, params.contracts);
      const price = instrument.parsePrice(params.price, 'price');
      const margins = reads.orderMargins(accountOf(context), instrument.name, lots, price);
      const band = margins.priceBand;
      return {
        buy: formatMoney(margins.buy.amount, margins.buy.currency),
        buyCurrency: margins.buy.currency,
        sell: formatMoney(margins.sell.amount, margins.sell.currency),
        sellCurrency: margins.sell.currency,
        minPrice: band === null ? null : instrument.formatPrice(band.min),
        maxPrice: band === null ? null : instrument.formatPrice(band.max),
      };
    },
  });

  registry.register({
    name: 'private/close_position',
    summary:
      'Closes the position in one instrument with a reduce-only order for its whole size, at market or at a limit price.',
    access: 'private',
    roles: ['trade'],
    matching: true,
    params: ClosePositionParams,
    result: OrderWithTradesSchema,
    handler: (params, context) => {
      if (params.type === 'limit' && params.price == null)
        throw new VenueError('value_required', 'price is required with type limit', { field: 'price' });
      if (params.type === 'market' && params.price != null)
        throw new VenueError('invalid_params', 'price is not allowed with type market', { field: 'price' });
      const accountId = accountOf(context);
      const [position, instrument] = positionIn(accountId, params.instrumentName);
      if (position.size === 0)
        throw new VenueError('not_found', `no open position in ${instrument.name}`, {
          field: 'instrumentName',
        });
      // Reduce-only: should the position shrink before the order runs, it cannot turn it round.
      const order = {
        instrumentName: instrument.name,
        quantity: instrument.formatQuantity(Math.abs(position.size)),
        type: params.type,
        reduceOnly: true,
        ...(params.price == null ? {} : { price: params.price }),
      };
      return place(order, position.size > 0 ? 'sell' : 'buy', accountId, instrument, context.session);
    },
  });

  registry.register({
    name: 'private/get_account_summary',
    summary: "Balance, equity and margins of the key's account in one currency.",
    access: 'private',
    params: AccountSummaryParams,
    result: AccountSummarySchema,
    handler: (params, context) => {
      const principal = principalOf(context);
      const currency = params.currency.toUpperCase();
      // Funds are held in instruments' base and settlement currencies, the currencies the filters
      // take (USDC: the USDC ledger, which margins and settles the BTC_USDC products); any other
      // name is a typo, refused rather than answered with zeros.
      const held = reads.currencies();
      const summary = held.includes(currency)
        ? reads.accountSummary(principal.defaultAccountId, currency)
        : undefined;
      if (summary === undefined) {
        throw new VenueError(
          'invalid_params',
          `unknown currency ${params.currency}; the venue holds ${held.join(', ')}`,
          { field: 'currency' },
        );
      }
      return accountSummaryToWire(summary);
    },
  });

  registry.register({
    name: 'private/get_account_summaries',
    summary:
      "The key's account in every currency the venue holds funds in, each as get_account_summary answers it (Deribit's get_account_summaries).",
    access: 'private',
    params: EmptyParams,
    result: Type.Object({ accountId: Type.Integer(), summaries: Type.Array(AccountSummarySchema) }),
    handler: (_params, context) => {
      const accountId = principalOf(context).defaultAccountId;
      return {
        accountId,
        summaries: reads.currencies().flatMap((currency) => {
          const summary = reads.accountSummary(accountId, currency);
          return summary === undefined ? [] : [accountSummaryToWire(summary)];
        }),
      };
    },
  });
}
