/**
 * The ReadPort over the engine's query methods, typed structurally (`VenueQueries`) so the
 * gateway never imports the engine: the composition root passes the engine's `Venue`, which
 * satisfies this interface as it is.
 *
 * Mapping notes: initialMargin = position margin + order margin, maintenanceMargin = position
 * margin; the ticker's IVs and underlying come from `tickerExtras` when the market is wired; an
 * expired instrument's ticker shows its settlement price as the mark; open interest and the 24 h
 * stats come from the engine (`tradeStats`), and spot has no open interest.
 */
import type { OrderView, PositionView, TradeView } from '../core/events.ts';
import type { SelfTradeMode } from '../core/types.ts';
import { type ErrorData, type ErrorName, VenueError } from '../domain/errors.ts';
import type { Instrument } from '../domain/instrument.ts';
import type {
  AccountSummaryView,
  OrderBookView,
  OrderFilter,
  OrderReserveView,
  PriceBandView,
  ReadPort,
  TickerView,
} from './ports.ts';

export interface VenueQueries {
  readonly now: number;
  getOrder(orderId: string): OrderView | null;
  openOrders(filter: {
    accountId: number;
    instrumentName?: string | null;
    currency?: string | null;
    kind?: string | null;
  }): OrderView[];
  positions(accountId: number, currency?: string | null, kind?: string | null): PositionView[];
  position(accountId: number, instrumentName: string): PositionView | null;
  valuedPosition(view: PositionView): PositionView;
  orderMargins(
    accountId: number,
    instrumentName: string,
    lots: number,
    price: number,
  ):
    | { ok: true; buy: OrderReserveView; sell: OrderReserveView }
    | { ok: false; error: { name: ErrorName; message: string; data: ErrorData } };
  accountSummary(
    accountId: number,
    currency: string,
  ): {
    readonly selfTradeMode: SelfTradeMode;
    readonly balance: number;
    readonly equity: number;
    readonly marginBalance: number;
    readonly positionMargin: number;
    readonly orderMargin: number;
    readonly availableFunds: number;
    readonly futuresPl: number;
    readonly optionsValue: number;
    readonly optionsPl: number;
  } | null;
  book(
    instrumentName: string,
    depth?: number,
  ): {
    readonly bids: readonly { readonly price: number; readonly amount: number }[];
    readonly asks: readonly { readonly price: number; readonly amount: number }[];
  } | null;
  instrument(name: string): VenueInstrumentInfo | null;
  /** The open instruments, or the recently expired ones when `expired` (the engine's horizon). */
  listedInstruments(expired: boolean): Instrument[];
  /** The currencies of every instrument ever listed, sorted. */
  currencies(): string[];
  /** USD per coin, null before the currency's first index price. */
  indexPrice(currency: string): number | null;
  /**
   * The part of an expiry's settlement average already fixed at `now` (share of the window past,
   * average so far); null outside its window.
   */
  settlementFixing?(
    currency: string,
    expiration: number,
    now: number,
  ): { readonly average: number; readonly fixedFraction: number } | null;
  /** Cancel-on-disconnect's `account` scope: on for the account's new connections. */
  accountCancelOnDisconnect(accountId: number): boolean;
  /** 24 h volume (lots), high and low (ticks) and open interest (lots; null for spot). */
  /** Newest last. */
  recentTrades(instrumentName: string, count: number): TradeView[];
  tradeStats?(instrumentName: string): {
    readonly volume: number;
    readonly high: number | null;
    readonly low: number | null;
    readonly openInterest: number | null;
  } | null;
}

export interface VenueInstrumentInfo {
  readonly instrument: Instrument;
  readonly status: 'open' | 'expired';
  readonly markPrice: number | null;
  readonly indexPrice: number | null;
  readonly lastPrice: number | null;
  /** Ticks, once expired by settlement. */
  readonly settlementPrice?: number | null;
  /** Ticks: the band orders must keep to (absent or null before the first mark). */
  readonly priceBand?: PriceBandView | null;
}

export interface VenueReadPortOptions {
  /** IVs, greeks and underlying from the market layer, when wired. */
  readonly tickerExtras?: (instrumentName: string) => Partial<TickerView> | undefined;
}

/** The settlement window (docs/decisions.md, "Settlement index"): the last 30 minutes before expiry. */
const SETTLEMENT_WINDOW_MS = 30 * 60 * 1000;

export function createVenueReadPort(venue: VenueQueries, options: VenueReadPortOptions = {}): ReadPort {
  const info = (name: string) => venue.instrument(name) ?? undefined;
  /** f × (average so far) + (1 − f) × index inside the expiry's window; the index otherwise. */
  const deliveryEstimate = (currency: string, expiration: number | null, index: number | null) => {
    if (index === null || expiration === null) return index;
    const fixing = venue.settlementFixing?.(currency, expiration, venue.now) ?? null;
    return fixing === null
      ? index
      : fixing.fixedFraction * fixing.average + (1 - fixing.fixedFraction) * index;
  };
  // An expired instrument takes no orders: no band.
  const liveBand = (entry: VenueInstrumentInfo | undefined) =>
    entry === undefined || entry.status === 'expired' ? null : (entry.priceBand ?? null);
  return {
    instrument: (name) => info(name)?.instrument,
    instruments: (expired) => venue.listedInstruments(expired),
    order: (orderId) => venue.getOrder(orderId) ?? undefined,
    openOrders: (accountId, filter: OrderFilter) =>
      venue.openOrders({
        accountId,
        instrumentName: filter.instrumentName ?? null,
        currency: filter.currency ?? null,
        kind: filter.kind ?? null,
      }),
    positions: (accountId, filter) =>
      venue.positions(accountId, filter.currency ?? null, filter.kind ?? null),
    position: (accountId, instrumentName) => {
      const position = venue.position(accountId, instrumentName);
      return position === null ? undefined : venue.valuedPosition(position);
    },
    valuedPosition: (view) => venue.valuedPosition(view),
    orderMargins: (accountId, instrumentName, lots, price) => {
      const margins = venue.orderMargins(accountId, instrumentName, lots, price);
      if (!margins.ok) throw new VenueError(margins.error.name, margins.error.message, margins.error.data);
      return { buy: margins.buy, sell: margins.sell, priceBand: liveBand(info(instrumentName)) };
    },
    accountSummary: (accountId, currency): AccountSummaryView | undefined => {
      const funds = venue.accountSummary(accountId, currency);
      if (funds === null) return undefined;
      return {
        accountId,
        currency,
        selfTradeMode: funds.selfTradeMode,
        balance: funds.balance,
        equity: funds.equity,
        marginBalance: funds.marginBalance,
        availableFunds: funds.availableFunds,
        initialMargin: funds.positionMargin + funds.orderMargin,
        maintenanceMargin: funds.positionMargin,
        futuresPl: funds.futuresPl,
        optionsPl: funds.optionsPl,
        optionsValue: funds.optionsValue,
      };
    },
    orderBook: (instrumentName, depth): OrderBookView | undefined => {
      const book = venue.book(instrumentName, depth);
      if (book === null) return undefined;
      return {
        instrumentName,
        timestamp: venue.now,
        bids: book.bids.map((level) => [level.price, level.amount] as const),
        asks: book.asks.map((level) => [level.price, level.amount] as const),
        priceBand: liveBand(info(instrumentName)),
      };
    },
    recentTrades: (instrumentName, count) => venue.recentTrades(instrumentName, count),
    ticker: (instrumentName): TickerView | undefined => {
      const entry = info(instrumentName);
      const book = venue.book(instrumentName, 1);
      if (entry === undefined || book === null) return undefined;
      const bid = book.bids[0];
      const ask = book.asks[0];
      const stats = venue.tradeStats?.(instrumentName) ?? null;
      return {
        instrumentName,
        timestamp: venue.now,
        state: entry.status,
        bestBidPrice: bid?.price ?? null,
        bestBidAmount: bid?.amount ?? 0,
        bestAskPrice: ask?.price ?? null,
        bestAskAmount: ask?.amount ?? 0,
        lastPrice: entry.lastPrice,
        // An expired instrument is worth its settlement price; its last mark is stale.
        markPrice: entry.status === 'expired' ? (entry.settlementPrice ?? entry.markPrice) : entry.markPrice,
        indexPrice: entry.indexPrice,
        ...(entry.status === 'open'
          ? {
              estimatedDeliveryPrice: deliveryEstimate(
                entry.instrument.currency,
                entry.instrument.spec.expiration,
                entry.indexPrice,
              ),
            }
          : {}),
        priceBand: liveBand(entry),
        ...(stats === null
          ? {}
          : {
              ...(stats.openInterest === null ? {} : { openInterest: stats.openInterest }),
              volume24h: stats.volume,
              high24h: stats.high,
              low24h: stats.low,
            }),
        ...options.tickerExtras?.(instrumentName),
      };
    },
    currencies: () => venue.currencies(),
    indexPrice: (currency) => venue.indexPrice(currency),
    estimatedDeliveryPrice: (currency) => {
      // The nearest open expiry of the currency whose window is open (every catalogue expiry is
      // at 08:00 UTC, so they share it).
      const now = venue.now;
      let next: number | null = null;
      for (const instrument of venue.listedInstruments(false)) {
        const expiration = instrument.spec.expiration;
        if (instrument.currency !== currency || expiration === null) continue;
        if (
          expiration > now &&
          expiration - now < SETTLEMENT_WINDOW_MS &&
          (next === null || expiration < next)
        )
          next = expiration;
      }
      return deliveryEstimate(currency, next, venue.indexPrice(currency));
    },
    accountCancelOnDisconnect: (accountId) => venue.accountCancelOnDisconnect(accountId),
  };
}
