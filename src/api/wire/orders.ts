/**
 * Domain → wire for orders and trades (spec 2.6, 2.7): decimal strings from ticks/lots/minor
 * units, camelCase names, lowercase states; optional fields appear only when they apply.
 */
import type { OrderView, TradeParty, TradeView } from '../../core/events.ts';
import { formatMoney, isMarketLike } from '../../core/types.ts';
import { formatScaled } from '../../domain/decimal.ts';
import type { Instrument } from '../../domain/instrument.ts';
import { yearsBetween } from '../../market/black76.ts';
import { impliedVolPercent } from '../../market/conversions.ts';
import type {
  CancelReport,
  WireLegTrade,
  WireOrder,
  WirePublicTrade,
  WireTrade,
} from '../schemas/objects.ts';

export type InstrumentLookup = (name: string) => Instrument | undefined;

/** A fractional tick count (an average) as an exact-enough decimal string (8 extra places). */
export function formatAveragePrice(instrument: Instrument, notionalTicks: number, lots: number): string {
  if (lots === 0) return '0';
  const grid = instrument.priceGrid;
  const extra = 8;
  const units = (BigInt(notionalTicks) * grid.stepUnits * 10n ** BigInt(extra)) / BigInt(lots);
  return formatScaled(units, grid.scale + extra);
}

/**
 * The portfolio owning an order (its `owner` tag is the portfolio id, src/algo/children.ts), or
 * null for an order no portfolio owns.
 */
export function portfolioIdOf(owner: string | null): number | null {
  return owner !== null && /^\d+$/.test(owner) ? Number(owner) : null;
}

export function orderToWire(order: OrderView, instrument: Instrument): WireOrder {
  const wire: WireOrder = {
    orderId: order.orderId,
    instrumentName: order.instrumentName,
    side: order.side,
    orderType: order.orderType,
    orderState: order.orderState,
    price: order.price === null ? 'market_price' : instrument.formatPrice(order.price),
    quantity: instrument.formatQuantity(order.amount),
    contracts: instrument.formatContracts(order.amount),
    filledQuantity: instrument.formatQuantity(order.filledAmount),
    averagePrice: formatAveragePrice(instrument, order.filledNotional, order.filledAmount),
    timeInforce: order.timeInForce,
    timeInForce: order.timeInForce,
    createdAt: order.createdAt,
    lastUpdatedAt: order.lastUpdatedAt,
    label: order.label,
    api: order.api,
    web: order.web,
    mobile: order.mobile,
    postOnly: order.postOnly,
    ...(instrument.kind === 'spot' ? {} : { reduceOnly: order.reduceOnly }),
    replaced: order.replaced,
    mmp: order.mmp,
    riskReducing: order.riskReducing,
  };
  if (order.originalOrderType !== null) wire.originalOrderType = order.originalOrderType;
  if (order.cancelReason !== null) wire.cancelReason = order.cancelReason;
  if (order.postOnly) wire.rejectPostOnly = order.rejectPostOnly;
  // Spec 2.6: "options, advanced orders only" (a plain edit makes an advanced order plain).
  if (instrument.isOption && order.advanced !== null) wire.autoReplaced = order.autoReplaced;
  if (order.mmpCancelled) wire.mmpCancelled = true;
  if (order.advanced !== null) wire.advanced = order.advanced;
  if (order.usd != null) wire.usd = String(order.usd);
  if (order.implv != null) wire.implv = String(order.implv);
  if (order.isSecondaryOto) wire.isSecondaryOto = true;
  if (order.isPrimaryOtoco) wire.isPrimaryOtoco = true;
  if (order.displayAmount !== null) wire.displayAmount = instrument.formatQuantity(order.displayAmount);
  if (order.refreshAmount !== null) wire.refreshAmount = instrument.formatQuantity(order.refreshAmount);
  if (order.trigger !== null) wire.trigger = order.trigger;
  if (order.triggerPrice !== null) wire.triggerPrice = instrument.formatPrice(order.triggerPrice);
  if (order.triggerOffset !== null) wire.triggerOffset = instrument.formatPrice(order.triggerOffset);
  if (order.triggerReferencePrice !== null) {
    wire.triggerReferencePrice = instrument.formatPrice(order.triggerReferencePrice);
  }
  if (order.triggered !== null) wire.triggered = order.triggered;
  if (order.triggerOrderId !== null) wire.triggerOrderId = order.triggerOrderId;
  if (order.triggerFillCondition !== null) wire.triggerFillCondition = order.triggerFillCondition;
  if (order.otoOrderIds !== null) wire.otoOrderIds = [...order.otoOrderIds];
  if (order.primaryOrderId !== null) wire.primaryOrderId = order.primaryOrderId;
  if (order.ocoRef !== null) wire.ocoRef = order.ocoRef;
  if (order.blockTrade) wire.blockTrade = true;
  if (order.isLiquidation) wire.isLiquidation = true;
  return wire;
}

/** The sides of `trade` that belong to `accountId` (one, or two for a self-trade). */
export function partiesOf(trade: TradeView, accountId: number): TradeParty[] {
  return [trade.taker, trade.maker].filter((party) => party.accountId === accountId);
}

/**
 * The account's view of one side (`party`) of a trade. A trade on a combo's book lists its leg
 * trades under `legs`, each in its leg instrument's units (looked up by `lookup`) and seen from
 * the leg party of the same liquidity; a leg whose instrument is unknown is left out. A Block RFQ
 * trade's `tradeAllocations` are shown on the taker's side only.
 */
export function tradeToWire(
  trade: TradeView,
  party: TradeParty,
  instrument: Instrument,
  lookup: InstrumentLookup,
): WireTrade {
  const wire: WireTrade = tradeFieldsToWire(trade, party, instrument);
  // The RFQ's allocations are the taker's business: never on the maker's view.
  if (trade.tradeAllocations !== undefined && party === trade.taker) {
    wire.tradeAllocations = trade.tradeAllocations.map((a) => ({
      ...a,
      ...(a.clientInfo !== undefined ? { clientInfo: { ...a.clientInfo } } : {}),
    }));
  }
  if (trade.legs !== undefined) {
    const maker = party.liquidity === 'M';
    wire.legs = [];
    for (const leg of trade.legs) {
      const legInstrument = lookup(leg.instrumentName);
      if (legInstrument !== undefined) {
        wire.legs.push(tradeFieldsToWire(leg, maker ? leg.maker : leg.taker, legInstrument));
      }
    }
  }
  return wire;
}

/**
 * Spec 2.7: a trade's `orderType` is `limit`, `market` or `liquidation`. A trigger order trades as
 * the limit or market order it became; a market_limit order takes as a market order and rests
 * (then makes) as a limit. The venue liquidates no one, so `liquidation` never occurs.
 */
function tradeOrderType(party: TradeParty): 'limit' | 'market' {
  if (party.orderType === 'market_limit') return party.liquidity === 'M' ? 'limit' : 'market';
  return isMarketLike(party.orderType) ? 'market' : 'limit';
}

function tradeFieldsToWire(trade: TradeView, party: TradeParty, instrument: Instrument): WireLegTrade {
  const wire: WireLegTrade = {
    tradeId: trade.tradeId,
    tradeSeq: trade.tradeSeq,
    tickDirection: trade.tickDirection,
    timestamp: trade.timestamp,
    instrumentName: trade.instrumentName,
    orderId: party.orderId,
    orderType: tradeOrderType(party),
    state: party.state,
    side: party.side,
    price: instrument.formatPrice(trade.price),
    quantity: instrument.formatQuantity(trade.amount),
    contracts: instrument.formatContracts(trade.amount),
    liquidity: party.liquidity,
    fee: formatMoney(party.fee, party.feeCurrency),
    feeCurrency: party.feeCurrency,
    indexPrice: trade.indexPrice === null ? null : String(trade.indexPrice),
    markPrice: trade.markPrice === null ? null : instrument.formatPrice(trade.markPrice),
    profitLoss: formatMoney(party.profitLoss, instrument.spec.settlementCurrency),
    api: party.api,
    postOnly: party.postOnly,
    mmp: party.mmp,
    reduceOnly: party.reduceOnly,
    riskReducing: party.riskReducing,
    matchingId: null,
  };
  if (party.label !== '') wire.label = party.label;
  if (instrument.isOption && trade.indexPrice !== null) {
    wire.underlyingPrice = String(trade.underlyingPrice ?? trade.indexPrice);
    const iv = tradeIvPercent(trade, instrument);
    if (iv !== null) wire.iv = iv;
  }
  if (party.advanced !== null) wire.advanced = party.advanced;
  if (trade.blockTradeId !== null) wire.blockTradeId = trade.blockTradeId;
  const blockRfqId = party === trade.maker ? (trade.makerBlockRfqId ?? trade.blockRfqId) : trade.blockRfqId;
  if (blockRfqId !== null) wire.blockRfqId = blockRfqId;
  if (trade.blockRfqQuoteId !== null) wire.blockRfqQuoteId = trade.blockRfqQuoteId;
  if (trade.comboId != null) wire.comboId = trade.comboId;
  if (trade.comboTradeId != null) wire.comboTradeId = trade.comboTradeId;
  return wire;
}

/** A trade on the public tape: what everyone may see of it (no order, account, fee or label). */
export function publicTradeToWire(trade: TradeView, instrument: Instrument): WirePublicTrade {
  const wire: WirePublicTrade = {
    tradeId: trade.tradeId,
    tradeSeq: trade.tradeSeq,
    timestamp: trade.timestamp,
    tickDirection: trade.tickDirection,
    instrumentName: trade.instrumentName,
    direction: trade.taker.side,
    price: instrument.formatPrice(trade.price),
    quantity: instrument.formatQuantity(trade.amount),
    contracts: instrument.formatContracts(trade.amount),
    indexPrice: trade.indexPrice === null ? null : String(trade.indexPrice),
    markPrice: trade.markPrice === null ? null : instrument.formatPrice(trade.markPrice),
  };
  if (instrument.isOption && trade.indexPrice !== null) {
    wire.underlyingPrice = String(trade.underlyingPrice ?? trade.indexPrice);
    const iv = tradeIvPercent(trade, instrument);
    if (iv !== null) wire.iv = iv;
  }
  if (trade.blockTradeId !== null) wire.blockTradeId = trade.blockTradeId;
  if (trade.comboId != null) wire.comboId = trade.comboId;
  if (trade.comboTradeId != null) wire.comboTradeId = trade.comboTradeId;
  return wire;
}

/**
 * An option trade's implied volatility in percent (2 decimals), from its price on the forward of
 * its expiry at trade time, as the marks and `implv` orders use (the index for trades recorded
 * before the market published forwards); null when the price is outside what any volatility
 * gives (below intrinsic value) or the option had expired.
 */
function tradeIvPercent(trade: TradeView, instrument: Instrument): string | null {
  const spec = instrument.spec;
  const index = trade.indexPrice!;
  const forward = trade.underlyingPrice ?? index;
  const result = impliedVolPercent(
    {
      optionType: spec.optionType!,
      marginKind: spec.marginKind,
      strike: Number(spec.strike),
      forward,
      index,
      timeToExpiry: yearsBetween(trade.timestamp, spec.expiration ?? trade.timestamp),
    },
    Number(instrument.formatPrice(trade.price)),
  );
  return result.ok ? result.volatility.toFixed(2) : null;
}

/** The account's view of a list of trades, one entry per own side. */
export function tradesToWire(
  trades: readonly TradeView[],
  accountId: number,
  lookup: InstrumentLookup,
): WireTrade[] {
  const wire: WireTrade[] = [];
  for (const trade of trades) {
    const instrument = lookup(trade.instrumentName);
    if (instrument === undefined) continue;
    for (const party of partiesOf(trade, accountId)) wire.push(tradeToWire(trade, party, instrument, lookup));
  }
  return wire;
}

/**
 * A detailed cancel_all* answer: the cancelled orders grouped by currency, type (`trigger` for
 * orders cancelled before their trigger fired, else `limit`) and instrument, in the order the
 * groups first appear. Orders of instruments `lookup` no longer finds are left out.
 */
export function cancelReports(orders: readonly OrderView[], lookup: InstrumentLookup): CancelReport[] {
  const groups = new Map<string, CancelReport>();
  for (const order of orders) {
    const instrument = lookup(order.instrumentName);
    if (instrument === undefined) continue;
    const type = order.trigger !== null && order.triggered !== true ? 'trigger' : 'limit';
    const key = `${order.currency}|${type}|${order.instrumentName}`;
    let group = groups.get(key);
    if (group === undefined) {
      group = { currency: order.currency, type, instrumentName: order.instrumentName, result: [] };
      groups.set(key, group);
    }
    group.result.push(orderToWire(order, instrument));
  }
  return [...groups.values()];
}
