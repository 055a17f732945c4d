/** Domain → wire for positions, account summaries, order books, tickers and instruments. */
import type { Static } from '@sinclair/typebox';
import type { PositionView } from '../../core/events.ts';
import { formatMoney } from '../../core/types.ts';
import { formatScaled, parseDecimal } from '../../domain/decimal.ts';
import type { Instrument } from '../../domain/instrument.ts';
import type {
  AccountSummaryView,
  OrderBookView,
  PriceBandView,
  SettlementRecord,
  TickerView,
  TransactionRecord,
} from '../ports.ts';
import type { BookSummarySchema, WireSettlement, WireTransaction } from '../schemas/objects.ts';

type BookSummary = Static<typeof BookSummarySchema>;

export function positionToWire(position: PositionView, instrument: Instrument) {
  const size = position.size;
  const magnitude = instrument.formatQuantity(Math.abs(size));
  const averageTicks = position.averagePrice;
  return {
    instrumentName: position.instrumentName,
    kind: instrument.kind,
    direction: size > 0 ? ('buy' as const) : size < 0 ? ('sell' as const) : ('zero' as const),
    size: size < 0 ? `-${magnitude}` : magnitude,
    averagePrice: formatFractionalTicks(averageTicks, instrument),
    realizedProfitLoss: formatMoney(position.realisedPnl, position.settlementCurrency),
    ...floatingToWire(position, instrument),
    settlementCurrency: position.settlementCurrency,
  };
}

/** A settlement history entry (domain units) on the wire. */
export function settlementToWire(record: SettlementRecord, instrument: Instrument): WireSettlement {
  const magnitude = instrument.formatQuantity(Math.abs(record.size));
  return {
    type: record.type,
    timestamp: record.timestamp,
    instrumentName: record.instrumentName,
    position: record.size < 0 ? `-${magnitude}` : magnitude,
    markPrice: instrument.formatPrice(record.settlementPrice),
    indexPrice: record.settlementIndex,
    profitLoss: formatMoney(record.profitLoss, record.currency),
    cashflow: formatMoney(record.cashflow, record.currency),
    currency: record.currency,
  };
}

/**
 * A transaction log entry (domain units) on the wire; `instrument` formats its trade's or
 * delivery's price and quantity (absent: those fields are left out, never the entry).
 */
export function transactionToWire(
  record: TransactionRecord,
  instrument: Instrument | undefined,
): WireTransaction {
  const money = (units: number) => formatMoney(units, record.currency);
  const fee = record.trade?.fee ?? 0;
  const wire: WireTransaction = {
    id: record.id,
    timestamp: record.timestamp,
    type: record.type,
    currency: record.currency,
    change: money(record.change),
    balance: money(record.balance),
    cashflow: money(record.change + fee),
    commission: money(fee),
  };
  const trade = record.trade;
  if (trade !== undefined) {
    wire.instrumentName = trade.instrumentName;
    wire.tradeId = trade.tradeId;
    wire.orderId = trade.orderId;
    wire.side = trade.side;
    wire.liquidity = trade.liquidity;
    if (instrument !== undefined) {
      wire.price = instrument.formatPrice(trade.price);
      wire.amount = instrument.formatQuantity(trade.amount);
    }
    if (trade.blockTradeId !== null) wire.blockTradeId = trade.blockTradeId;
    if (trade.comboId !== undefined) wire.comboId = trade.comboId;
  }
  const settled = record.settlement;
  if (settled !== undefined) {
    wire.instrumentName = settled.instrumentName;
    if (instrument !== undefined) {
      const magnitude = instrument.formatQuantity(Math.abs(settled.size));
      wire.position = settled.size < 0 ? `-${magnitude}` : magnitude;
      wire.price = instrument.formatPrice(settled.settlementPrice);
    }
    wire.indexPrice = settled.settlementIndex;
    wire.profitLoss = money(settled.profitLoss);
  }
  if (record.depositId !== undefined) wire.depositId = record.depositId;
  return wire;
}

/** Deribit's mark_price, floating_profit_loss and total_profit_loss; null without a mark. */
function floatingToWire(position: PositionView, instrument: Instrument) {
  const mark = position.markPrice ?? null;
  const floating = position.floatingPnl ?? null;
  const money = (value: number) => formatMoney(value, position.settlementCurrency);
  return {
    markPrice: mark === null ? null : instrument.formatPrice(mark),
    floatingProfitLoss: floating === null ? null : money(floating),
    totalProfitLoss: floating === null ? null : money(position.realisedPnl + floating),
  };
}

/** A display-only fractional tick count as a decimal string (rounded to 8 extra places). */
export function formatFractionalTicks(ticks: number, instrument: Instrument): string {
  if (ticks === 0) return '0';
  const scaled = Math.round(ticks * 1e8);
  const whole = BigInt(scaled) * instrument.priceGrid.stepUnits;
  const negative = whole < 0n;
  const digits = (negative ? -whole : whole).toString().padStart(instrument.priceGrid.scale + 9, '0');
  const cut = digits.length - (instrument.priceGrid.scale + 8);
  const fraction = digits.slice(cut).replace(/0+$/, '');
  return `${negative ? '-' : ''}${digits.slice(0, cut)}${fraction ? `.${fraction}` : ''}`;
}

export function accountSummaryToWire(summary: AccountSummaryView) {
  const money = (value: number) => formatMoney(value, summary.currency);
  return {
    accountId: summary.accountId,
    currency: summary.currency,
    balance: money(summary.balance),
    equity: money(summary.equity),
    marginBalance: money(summary.marginBalance),
    availableFunds: money(summary.availableFunds),
    initialMargin: money(summary.initialMargin),
    maintenanceMargin: money(summary.maintenanceMargin),
    futuresPl: money(summary.futuresPl),
    optionsPl: money(summary.optionsPl),
    optionsValue: money(summary.optionsValue),
    totalPl: money(summary.futuresPl + summary.optionsPl),
    selfTradingRejectMode: summary.selfTradeMode,
    // Self-trade prevention is per account: set_self_trading_config refuses true.
    selfTradingExtendedToSubaccounts: false,
  };
}

export function orderBookToWire(book: OrderBookView, instrument: Instrument) {
  const level = ([price, amount]: readonly [number, number]): [string, string] => [
    instrument.formatPrice(price),
    instrument.formatQuantity(amount),
  ];
  const bestBid = book.bids[0];
  const bestAsk = book.asks[0];
  return {
    instrumentName: book.instrumentName,
    timestamp: book.timestamp,
    bids: book.bids.map(level),
    asks: book.asks.map(level),
    bestBidPrice: bestBid ? instrument.formatPrice(bestBid[0]) : null,
    bestAskPrice: bestAsk ? instrument.formatPrice(bestAsk[0]) : null,
    ...bandToWire(book.priceBand, instrument),
  };
}

/** Deribit's max_price / min_price: the band a new order's price must keep to now. */
function bandToWire(band: PriceBandView | null | undefined, instrument: Instrument) {
  return {
    minPrice: band ? instrument.formatPrice(band.min) : null,
    maxPrice: band ? instrument.formatPrice(band.max) : null,
  };
}

/**
 * A plain number as a decimal string, never in exponent form: `String` writes 1.9e-8 for a
 * near-expiry gamma, which no decimal parser of the wire's other figures reads. Digits as
 * `String` gives them otherwise.
 */
export function decimalText(value: number): string {
  const text = String(value);
  if (!text.includes('e')) return text;
  if (Math.abs(value) >= 1e21) {
    // toFixed writes exponent form from 1e21 up too: String's digits, shifted out with zeros.
    const [mantissa = '', exponent = '0'] = text.split('e');
    const [whole = '', fraction = ''] = mantissa.replace('-', '').split('.');
    return `${value < 0 ? '-' : ''}${whole}${fraction}${'0'.repeat(Number(exponent) - fraction.length)}`;
  }
  const fixed = value.toFixed(20).replace(/\.?0+$/, '');
  return fixed === '-0' ? '0' : fixed;
}

/** Ticks as the instrument's price text; null when there is none. */
function priceOrNull(instrument: Instrument, ticks: number | null | undefined): string | null {
  return ticks === null || ticks === undefined ? null : instrument.formatPrice(ticks);
}

/** A plain number (an index, an IV) as decimal text; null when there is none. */
function plain(value: number | null | undefined): string | null {
  return value === null || value === undefined ? null : decimalText(value);
}

export function tickerToWire(ticker: TickerView, instrument: Instrument) {
  const price = (ticks: number | null | undefined) => priceOrNull(instrument, ticks);
  const wire: Record<string, unknown> = {
    instrumentName: ticker.instrumentName,
    timestamp: ticker.timestamp,
    state: ticker.state,
    bestBidPrice: price(ticker.bestBidPrice),
    bestBidAmount: instrument.formatQuantity(ticker.bestBidAmount),
    bestAskPrice: price(ticker.bestAskPrice),
    bestAskAmount: instrument.formatQuantity(ticker.bestAskAmount),
    lastPrice: price(ticker.lastPrice),
    markPrice: price(ticker.markPrice),
    indexPrice: plain(ticker.indexPrice),
    ...bandToWire(ticker.priceBand, instrument),
  };
  if (instrument.isOption) {
    wire.markIv = plain(ticker.markIv);
    wire.bidIv = plain(ticker.bidIv);
    wire.askIv = plain(ticker.askIv);
    wire.underlyingPrice = plain(ticker.underlyingPrice);
    if (ticker.greeks) {
      const { delta, gamma, vega, theta, rho } = ticker.greeks;
      wire.greeks = {
        delta: decimalText(delta),
        gamma: decimalText(gamma),
        vega: decimalText(vega),
        theta: decimalText(theta),
        rho: decimalText(rho),
      };
    }
  }
  if (ticker.openInterest !== undefined) wire.openInterest = instrument.formatQuantity(ticker.openInterest);
  if (ticker.volume24h !== undefined) {
    wire.stats = {
      volume: instrument.formatQuantity(ticker.volume24h),
      high: price(ticker.high24h),
      low: price(ticker.low24h),
    };
  }
  return wire as {
    instrumentName: string;
    timestamp: number;
    state: string;
    bestBidPrice: string | null;
    bestBidAmount: string;
    bestAskPrice: string | null;
    bestAskAmount: string;
    lastPrice: string | null;
    markPrice: string | null;
    indexPrice: string | null;
    minPrice: string | null;
    maxPrice: string | null;
  };
}

/** One line of public/get_book_summary_by_currency: the ticker's prices in Deribit's summary names. */
export function bookSummaryToWire(ticker: TickerView, instrument: Instrument): BookSummary {
  const price = (ticks: number | null | undefined) => priceOrNull(instrument, ticks);
  const bid = ticker.bestBidPrice;
  const ask = ticker.bestAskPrice;
  const wire: { -readonly [K in keyof BookSummary]: BookSummary[K] } = {
    instrumentName: ticker.instrumentName,
    baseCurrency: instrument.spec.baseCurrency,
    quoteCurrency: instrument.spec.quoteCurrency,
    creationTimestamp: ticker.timestamp,
    bidPrice: price(bid),
    askPrice: price(ask),
    midPrice: bid === null || ask === null ? null : halfOf(instrument.formatPrice(bid + ask)),
    markPrice: price(ticker.markPrice),
    last: price(ticker.lastPrice),
    estimatedDeliveryPrice: plain(ticker.estimatedDeliveryPrice ?? ticker.indexPrice),
  };
  if (instrument.isOption) {
    wire.markIv = plain(ticker.markIv);
    wire.underlyingPrice = plain(ticker.underlyingPrice);
  }
  if (ticker.openInterest !== undefined) wire.openInterest = instrument.formatQuantity(ticker.openInterest);
  if (ticker.volume24h !== undefined) {
    wire.volume = instrument.formatQuantity(ticker.volume24h);
    wire.high = price(ticker.high24h);
    wire.low = price(ticker.low24h);
  }
  return wire;
}

/** Half of a decimal string, exactly: one more decimal place at most. */
function halfOf(text: string): string {
  const value = parseDecimal(text, 'price');
  return formatScaled(value.units * 5n, value.scale + 1);
}

/** Spec 2.10's words (Deribit's instrument_type): an inverse instrument is `reversed`. */
export function wireMarginKind(spec: Instrument['spec']): 'linear' | 'reversed' {
  return spec.marginKind === 'inverse' ? 'reversed' : 'linear';
}

export function instrumentToWire(instrument: Instrument, isActive: boolean) {
  const spec = instrument.spec;
  return {
    instrumentName: spec.name,
    kind: spec.kind,
    baseCurrency: spec.baseCurrency,
    quoteCurrency: spec.quoteCurrency,
    counterCurrency: spec.counterCurrency,
    settlementCurrency: spec.settlementCurrency,
    marginKind: wireMarginKind(spec),
    settlementPeriod: spec.settlementPeriod,
    optionType: spec.optionType,
    strike: spec.strike,
    expiration: spec.expiration,
    tickSize: spec.tickSize,
    tickSizeSteps: spec.tickSizeSteps.map((step) => ({
      abovePrice: step.abovePrice,
      tickSize: step.tickSize,
    })),
    minTradeAmount: spec.minTradeAmount,
    contractSize: spec.contractSize,
    makerCommission: spec.makerCommission,
    takerCommission: spec.takerCommission,
    blockTradeMinTradeAmount: spec.blockTradeMinTradeAmount,
    createdAt: spec.createdAt,
    isActive,
    ...(spec.legs === null
      ? {}
      : { legs: spec.legs.map((leg) => ({ instrumentName: leg.instrumentName, ratio: leg.ratio })) }),
  };
}

/** A combo as Deribit's combo books describe it; `active` as the ticker's state says. */
export function comboToWire(instrument: Instrument, active: boolean) {
  const spec = instrument.spec;
  return {
    id: spec.name,
    state: active ? ('active' as const) : ('inactive' as const),
    stateTimestamp: active ? spec.createdAt : (spec.expiration ?? spec.createdAt),
    creationTimestamp: spec.createdAt,
    legs: (spec.legs ?? []).map((leg) => ({ instrumentName: leg.instrumentName, amount: leg.ratio })),
  };
}
