/**
 * Domain → wire for Block RFQ objects (spec 2.8, 2.9, 2.10, 4.9), and the reverse parsing of
 * RFQ-relative decimals (RFQ quantities, strategy prices).
 *
 * Views:
 * - taker: the taker's id, `makers` as sent, label, allocations, and once `open` the live
 *   quotes as `bids`/`asks`, one entry per price level (maker desk names only when disclosed,
 *   else `ANONYMOUS`; with a hedge, each entry's `hedgePrice`).
 * - Hedge quantities: a quote shows, and a fill books, the quote's share of the RFQ's hedge
 *   (`hedgeShare`); `trades[].hedgeQuantity` and the trade's `hedge.quantity` are the booked
 *   amounts.
 * - Trade prices: `trades[]` has one item per quote filled, at its strategy price; the trade's
 *   `legs[].price` and `hedge.price` are the fills' amount-weighted averages (`tradeAverages`),
 *   printed as an order's `averagePrice` is when off the tick grid (one quote's prices print as
 *   they are).
 * - maker: the desk's own maker-side id, `makers` empty, the taker alias when disclosed, and
 *   the desk's own quotes; never the label, allocations or other makers' quotes.
 * - Quote objects (`quoteToWire`) carry `appName`, the desk that placed the quote. They reach
 *   that desk only (quote answers, get_quotes, the maker view and push); the taker's bids and
 *   asks are not quote objects and name makers by the disclosure rule above.
 */
import { formatScaled, parseDecimal, toSafeInteger, toScale } from '../../domain/decimal.ts';
import { VenueError } from '../../domain/errors.ts';
import type { Instrument } from '../../domain/instrument.ts';
import { allocationList } from '../../rfq/allocations.ts';
import { formatRfqLots, rfqLotGrid } from '../../rfq/lots.ts';
import { hedgeShare } from '../../rfq/quote-terms.ts';
import { type PriceAverage, tradeAverages } from '../../rfq/trades.ts';
import type {
  QuoteRecord,
  RfqFill,
  RfqHedge,
  RfqRecord,
  RfqTradeRecord,
  RfqTrigger,
} from '../../rfq/types.ts';
import type { WireQuote, WireRfq, WireRfqInstrument, WireRfqTrade } from '../schemas/rfq.ts';
import { wireMarginKind } from './market.ts';

export type InstrumentLookup = (name: string) => Instrument | undefined;

export type RfqViewer = { readonly role: 'taker' } | { readonly role: 'maker'; readonly desk: string };

export function formatRfqQuantity(rfq: { quantityStep: string }, lots: number): string {
  return formatRfqLots(rfq, lots);
}

export function parseRfqQuantity(rfq: { quantityStep: string }, text: string, field = 'quantity'): number {
  const lots = rfqLotGrid(rfq.quantityStep).parse(text, field);
  if (lots <= 0) throw new VenueError('invalid_amount', `${field} must be positive`, { field });
  return lots;
}

export function formatStrategyPrice(rfq: { priceScale: number }, units: number): string {
  return formatScaled(units, rfq.priceScale);
}

export function parseStrategyPrice(rfq: { priceScale: number }, text: string, field = 'price'): number {
  return toSafeInteger(toScale(parseDecimal(text, field), rfq.priceScale, field), field);
}

function must(lookup: InstrumentLookup, name: string): Instrument {
  const instrument = lookup(name);
  if (instrument === undefined) throw new VenueError('internal_error', `instrument ${name} vanished`);
  return instrument;
}

function hedgeToWire(lookup: InstrumentLookup, hedge: RfqHedge, amount: number, price: number) {
  const instrument = must(lookup, hedge.instrumentName);
  return {
    instrumentName: hedge.instrumentName,
    quantity: instrument.formatQuantity(amount),
    side: hedge.side,
    price: instrument.formatPrice(price),
  };
}

export function quoteToWire(quote: QuoteRecord, rfq: RfqRecord, lookup: InstrumentLookup): WireQuote {
  const wire: WireQuote = {
    quoteId: quote.quoteId,
    blockRfqId: quote.makerRfqId,
    label: quote.label,
    quantity: formatRfqQuantity(rfq, quote.quantity),
    price: formatStrategyPrice(rfq, quote.price),
    side: quote.side,
    executionInstruction: quote.executionInstruction,
    filledQuantity: formatRfqQuantity(rfq, quote.filledQuantity),
    legs: quote.legs.map((leg) => ({
      instrumentName: leg.instrumentName,
      ratio: String(leg.ratio),
      side: leg.side,
      price: must(lookup, leg.instrumentName).formatPrice(leg.price),
    })),
    status: quote.status,
    statusReason: quote.statusReason,
    replaced: quote.replaced,
    createdAt: quote.createdAt,
    lastUpdatedAt: quote.lastUpdatedAt,
    expiresAt: quote.expiresAt,
    // Spec 2.8's `appName`: the quoting desk, kept on every quote record (nothing new journaled).
    appName: quote.desk,
  };
  if (rfq.hedge !== null) {
    wire.hedge = hedgeToWire(
      lookup,
      rfq.hedge,
      hedgeShare(rfq, quote.quantity),
      quote.hedgePrice ?? rfq.hedge.price,
    );
  }
  return wire;
}

/**
 * The taker's bids or asks, as Deribit shows them: one entry per level, the open quotes of one
 * price, execution instruction and hedge price together. Levels rank as the accept fills them:
 * best price, all-or-none before any-part-of, then the level's oldest quote. An entry's quantity
 * is the level's unfilled sum, `makers` its desks in time priority (one `ANONYMOUS` when the RFQ
 * is not disclosed, so the count of makers is not shown either), `expiresAt` the earliest expiry
 * of its quotes and `lastUpdatedAt` the latest change. With a hedge, each entry shows the hedge
 * price its quotes trade the hedge at (the maker's, or the RFQ's when the quote set none):
 * `hedgePrice`, an addition (Deribit's bids/asks show no hedge price) that the accept's
 * `hedge.price` bounds.
 */
function bookSide(
  rfq: RfqRecord,
  quotes: readonly QuoteRecord[],
  side: 'buy' | 'sell',
  lookup: InstrumentLookup,
) {
  const live = quotes.filter((q) => q.status === 'open' && q.side === side);
  const aonFirst = (q: QuoteRecord) => (q.executionInstruction === 'all_or_none' ? 0 : 1);
  live.sort(
    (a, b) =>
      (side === 'buy' ? b.price - a.price : a.price - b.price) ||
      aonFirst(a) - aonFirst(b) ||
      a.priority - b.priority,
  );
  const hedge =
    rfq.hedge === null ? null : { ...rfq.hedge, instrument: must(lookup, rfq.hedge.instrumentName) };
  interface Level {
    readonly price: number;
    readonly executionInstruction: QuoteRecord['executionInstruction'];
    readonly hedgePrice: number | null;
    quantity: number;
    readonly makers: string[];
    expiresAt: number | null;
    lastUpdatedAt: number;
  }
  const levels = new Map<string, Level>();
  for (const q of live) {
    const hedgePrice = hedge === null ? null : (q.hedgePrice ?? hedge.price);
    const key = `${q.price}|${q.executionInstruction}|${hedgePrice}`;
    const maker = rfq.disclosed ? q.desk : 'ANONYMOUS';
    const level = levels.get(key);
    if (level === undefined) {
      levels.set(key, {
        price: q.price,
        executionInstruction: q.executionInstruction,
        hedgePrice,
        quantity: q.quantity - q.filledQuantity,
        makers: [maker],
        expiresAt: q.expiresAt,
        lastUpdatedAt: q.lastUpdatedAt,
      });
      continue;
    }
    level.quantity += q.quantity - q.filledQuantity;
    if (!level.makers.includes(maker)) level.makers.push(maker);
    if (q.expiresAt !== null && (level.expiresAt === null || q.expiresAt < level.expiresAt)) {
      level.expiresAt = q.expiresAt;
    }
    level.lastUpdatedAt = Math.max(level.lastUpdatedAt, q.lastUpdatedAt);
  }
  return [...levels.values()].map((level) => ({
    price: formatStrategyPrice(rfq, level.price),
    quantity: formatRfqQuantity(rfq, level.quantity),
    executionInstruction: level.executionInstruction,
    makers: level.makers,
    expiresAt: level.expiresAt,
    lastUpdatedAt: level.lastUpdatedAt,
    ...(hedge === null || level.hedgePrice === null
      ? {}
      : { hedgePrice: hedge.instrument.formatPrice(level.hedgePrice) }),
  }));
}

function triggerHedgePrice(rfq: RfqRecord, trigger: RfqTrigger, lookup: InstrumentLookup) {
  if (trigger.hedgePrice === undefined || rfq.hedge === null) return {};
  return { hedgePrice: must(lookup, rfq.hedge.instrumentName).formatPrice(trigger.hedgePrice) };
}

/** A GTC accept's trigger as the accept answer and the taker view show it. */
export function triggerToWire(rfq: RfqRecord, trigger: RfqTrigger, lookup: InstrumentLookup) {
  return {
    side: trigger.side,
    price: formatStrategyPrice(rfq, trigger.price),
    quantity: formatRfqQuantity(rfq, trigger.quantity),
    ...triggerHedgePrice(rfq, trigger, lookup),
  };
}

export function rfqToWire(
  rfq: RfqRecord,
  quotes: readonly QuoteRecord[],
  viewer: RfqViewer,
  lookup: InstrumentLookup,
): WireRfq {
  const closed = rfq.status !== 'created' && rfq.status !== 'open';
  const makerId =
    viewer.role === 'maker' ? rfq.makerRecords.find((r) => r.desk === viewer.desk)?.blockRfqId : undefined;
  const wire: WireRfq = {
    blockRfqId: viewer.role === 'taker' ? rfq.blockRfqId : (makerId ?? ''),
    quantity: formatRfqQuantity(rfq, rfq.quantity),
    comboId: rfq.comboId,
    createdAt: rfq.createdAt,
    expiresAt: rfq.expiresAt,
    makers: viewer.role === 'taker' ? [...rfq.makers] : [],
    role: viewer.role,
    legs: rfq.legs.map((leg) => ({
      instrumentName: leg.instrumentName,
      ratio: String(leg.ratio),
      side: leg.side,
    })),
    disclosed: rfq.disclosed,
    status: rfq.status,
    closedReason: rfq.closedReason,
    minTradeAmount: formatRfqQuantity(rfq, rfq.minTradeAmount),
  };
  if (rfq.hedge !== null) wire.hedge = hedgeToWire(lookup, rfq.hedge, rfq.hedge.amount, rfq.hedge.price);
  if (viewer.role === 'taker') {
    wire.label = rfq.label;
    if (closed) wire.includedInTakerRating = true;
    wire.tradeAllocations = allocationList(rfq);
    wire.tradeTriggers = rfq.triggers.map((t) => ({
      side: t.side,
      price: formatStrategyPrice(rfq, t.price),
      quantity: formatRfqQuantity(rfq, t.quantity),
      createdAt: t.createdAt,
      ...triggerHedgePrice(rfq, t, lookup),
    }));
    if (rfq.status !== 'created') {
      wire.bids = bookSide(rfq, quotes, 'buy', lookup);
      wire.asks = bookSide(rfq, quotes, 'sell', lookup);
    }
  } else {
    wire.taker = rfq.disclosed ? rfq.takerAlias : null;
    wire.quotes = quotes.filter((q) => q.desk === viewer.desk).map((q) => quoteToWire(q, rfq, lookup));
  }
  return wire;
}

/**
 * One item per quote filled: a quote's fill split by allocation account is one maker trade, and
 * the split is the taker's own business (allocations are shown to the taker only).
 */
function fillsByQuote(fills: readonly RfqFill[]): { quantity: number; price: number; hedgeAmount: number }[] {
  const merged: { quoteId: string; quantity: number; price: number; hedgeAmount: number }[] = [];
  for (const fill of fills) {
    const last = merged.at(-1);
    if (last !== undefined && last.quoteId === fill.quoteId) {
      last.quantity += fill.quantity;
      last.hedgeAmount += fill.hedgeAmount;
    } else {
      merged.push({
        quoteId: fill.quoteId,
        quantity: fill.quantity,
        price: fill.price,
        hedgeAmount: fill.hedgeAmount,
      });
    }
  }
  return merged;
}

/**
 * An exact average price (ticks × lots over lots) as a wire decimal: a whole tick count prints as
 * the instrument prints prices (so one quote's prices come back as they are); any other is
 * printed as an order's `averagePrice` (src/api/wire/orders.ts): 8 decimals beyond the price
 * grid, truncated (prices are positive, so toward zero and down alike).
 */
function formatAverage(instrument: Instrument, average: PriceAverage): string {
  if (average.notional % average.weight === 0n) {
    return instrument.formatPrice(Number(average.notional / average.weight));
  }
  const extra = 8;
  const grid = instrument.priceGrid;
  const units = (average.notional * grid.stepUnits * 10n ** BigInt(extra)) / average.weight;
  return formatScaled(units, grid.scale + extra);
}

export function rfqTradeToWire(trade: RfqTradeRecord, lookup: InstrumentLookup): WireRfqTrade {
  const averages = tradeAverages(trade);
  const wire: WireRfqTrade = {
    blockRfqId: trade.blockRfqId,
    quantity: formatRfqQuantity(trade, trade.quantity),
    side: trade.side,
    legs: trade.legs.map((leg, index) => ({
      instrumentName: leg.instrumentName,
      side: leg.side,
      price: formatAverage(must(lookup, leg.instrumentName), averages.legs[index]!),
      ratio: String(leg.ratio),
    })),
    markPrice: trade.markPrice === null ? null : formatStrategyPrice(trade, trade.markPrice),
    timestamp: trade.timestamp,
    trades: fillsByQuote(trade.fills).map((fill) => ({
      quantity: formatRfqQuantity(trade, fill.quantity),
      side: trade.side,
      price: formatStrategyPrice(trade, fill.price),
      ...(trade.hedge !== null
        ? { hedgeQuantity: must(lookup, trade.hedge.instrumentName).formatQuantity(fill.hedgeAmount) }
        : {}),
    })),
  };
  if (trade.comboId !== null) wire.comboId = trade.comboId;
  if (trade.hedge !== null && averages.hedge !== null) {
    const total = trade.fills.reduce((sum, fill) => sum + fill.hedgeAmount, 0);
    const instrument = must(lookup, trade.hedge.instrumentName);
    wire.hedge = {
      instrumentName: trade.hedge.instrumentName,
      quantity: instrument.formatQuantity(total),
      side: trade.hedge.side,
      price: formatAverage(instrument, averages.hedge),
    };
  }
  return wire;
}

export function rfqInstrumentToWire(instrument: Instrument): WireRfqInstrument {
  const spec = instrument.spec;
  return {
    instrumentName: spec.name,
    baseCurrency: spec.baseCurrency,
    kind: spec.kind,
    marginKind: wireMarginKind(spec),
    optionKind: spec.optionType,
    strike: spec.strike,
    expiration: spec.expiration,
  };
}
