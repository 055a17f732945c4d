/**
 * Validation of a maker's quote terms against its RFQ.
 *
 * "Consistent" (documented in the decisions): the quote names exactly the RFQ's legs (any
 * order), each with the RFQ's ratio and the RFQ's side (legs describe the structure; the
 * quote's `side` says whether the maker buys or sells it), at a positive price (RFQ legs are
 * options, futures or spot, never combos) on the leg's tick grid, and the strategy price is
 * Σ ±ratio × leg price (+ for legs bought with the structure; it may be negative for spreads).
 * A `price` sent with the quote must equal that sum exactly; without one the sum is the quote's
 * price. Prices off the tick grid (`priceOffTick`) are refused here, not only at the edge: the
 * engine refuses a block trade at them, so such a quote could only make accepts fail.
 *
 * A quote's hedge restates the RFQ's hedge: the same instrument and side, and as quantity the
 * RFQ's hedge quantity or the quote's pro-rata share of it (what the quote shows back), at a
 * positive price on the hedge's tick grid. Without a hedge the quote trades the RFQ's hedge at
 * the RFQ's hedge price.
 * Whichever quantity the quote restates, a fill of q lots books the share of q (`hedgeShare`),
 * what the quote shows. The hedge price and the price of a future leg lie within the band
 * around the mark (futurePriceOutsideBand in ./structure.ts): the taker's strategy limit does
 * not bound them; an accept's optional hedge limit (`checkAcceptHedge`) bounds the hedge price.
 * Errors name the field of the quote's own request (`legs[i]` is the quote's i-th leg).
 */
import { LABEL_MAX_LENGTH, labelTooLong } from '../core/types.ts';
import { formatRfqLots } from './lots.ts';
import {
  futurePriceOutsideBand,
  priceOffTick,
  type Refusal,
  type RfqMarket,
  strategyPrice,
} from './structure.ts';
import type {
  AcceptHedgeInput,
  QuoteHedgeInput,
  QuoteLeg,
  QuoteRecord,
  QuoteTerms,
  RfqRecord,
} from './types.ts';

export type TermsResult =
  | {
      readonly ok: true;
      readonly legs: QuoteLeg[];
      readonly price: number;
      /** Ticks of the RFQ's hedge instrument; null: the RFQ's hedge price. */
      readonly hedgePrice: number | null;
    }
  | { readonly ok: false; readonly error: Refusal };

type Refused = { readonly ok: false; readonly error: Refusal };

function refuse(
  message: string,
  field: string,
  name: Refusal['name'] = 'invalid_arguments',
  more: Record<string, unknown> = {},
): Refused {
  return { ok: false, error: { name, message, data: { field, ...more } } };
}

export function validateTerms(
  rfq: RfqRecord,
  terms: QuoteTerms,
  now: number,
  market: RfqMarket,
): TermsResult {
  if (labelTooLong(terms.label)) return refuse(`label is longer than ${LABEL_MAX_LENGTH}`, 'label');
  const size = checkQuantity(rfq, terms.quantity);
  if (size !== null) return size;
  if (terms.expiresAt !== null && terms.expiresAt <= now)
    return refuse('expiresAt is in the past', 'expiresAt');
  const legs = checkLegs(rfq, terms, market);
  if (!legs.ok) return legs;
  const prices = legs.legs.map((leg) => leg.price);
  const price = strategyPrice(rfq.legs, rfq.legTickUnits, prices);
  if (terms.price !== null && terms.price !== price) {
    return refuse('price does not equal the strategy price of the legs', 'price', 'invalid_price');
  }
  const hedge = checkHedge(rfq, hedgeOf(rfq, terms), terms.quantity, market);
  if (!hedge.ok) return hedge;
  return { ok: true, legs: legs.legs, price, hedgePrice: hedge.price };
}

function checkQuantity(rfq: RfqRecord, quantity: number): Refused | null {
  if (!Number.isSafeInteger(quantity) || quantity <= 0) {
    return refuse('quantity must be positive', 'quantity', 'invalid_amount');
  }
  if (quantity < rfq.minTradeAmount) {
    return refuse('quantity is below the RFQ minTradeAmount', 'quantity', 'qty_too_low', {
      minTradeAmount: formatRfqLots(rfq, rfq.minTradeAmount),
    });
  }
  if (quantity > rfq.quantity)
    return refuse('quantity exceeds the RFQ quantity', 'quantity', 'invalid_amount');
  return null;
}

/** The quote's legs in the RFQ's leg order, each checked against its RFQ leg. */
function checkLegs(
  rfq: RfqRecord,
  terms: QuoteTerms,
  market: RfqMarket,
): { readonly ok: true; readonly legs: QuoteLeg[] } | Refused {
  if (terms.legs.length !== rfq.legs.length)
    return refuse('the quote must price every leg of the RFQ', 'legs');
  const legs: QuoteLeg[] = [];
  for (const leg of rfq.legs) {
    const matches = terms.legs.filter((candidate) => candidate.instrumentName === leg.instrumentName);
    if (matches.length !== 1) return refuse(`leg ${leg.instrumentName} must be quoted exactly once`, 'legs');
    const quoted = matches[0]!;
    const field = `legs[${terms.legs.indexOf(quoted)}]`;
    if (quoted.ratio !== leg.ratio)
      return refuse(`ratio of ${leg.instrumentName} must be ${leg.ratio}`, `${field}.ratio`);
    if (quoted.side !== leg.side)
      return refuse(`side of ${leg.instrumentName} must be ${leg.side}`, `${field}.side`);
    if (!Number.isSafeInteger(quoted.price))
      return refuse('leg price out of range', `${field}.price`, 'invalid_price');
    if (quoted.price <= 0) return refuse('leg price must be positive', `${field}.price`, 'invalid_price');
    const offGrid = priceOffTick(market, leg.instrumentName, quoted.price, `${field}.price`);
    if (offGrid !== null) return { ok: false, error: offGrid };
    const band = futurePriceOutsideBand(market, leg.instrumentName, quoted.price, `${field}.price`);
    if (band !== null) return { ok: false, error: band };
    legs.push({ instrumentName: leg.instrumentName, side: leg.side, ratio: leg.ratio, price: quoted.price });
  }
  return { ok: true, legs };
}

/**
 * The quote's hedge. Commands journaled before quotes restated their hedge carry only a
 * `hedgePrice`: they restate the RFQ's hedge at that price, so a replay books what it booked.
 */
function hedgeOf(rfq: RfqRecord, terms: QuoteTerms): QuoteHedgeInput | null {
  if (terms.hedge !== undefined) return terms.hedge;
  const legacyPrice = (terms as { readonly hedgePrice?: number | null }).hedgePrice ?? null;
  if (legacyPrice === null) return null;
  if (rfq.hedge === null) return { instrumentName: '', side: 'buy', amount: 0, price: legacyPrice };
  return { ...rfq.hedge, price: legacyPrice };
}

/** The hedge share (lots) of `quantity` RFQ lots, floored to whole hedge lots. */
export function hedgeShare(rfq: RfqRecord, quantity: number): number {
  return rfq.hedge === null ? 0 : Math.floor((rfq.hedge.amount * quantity) / rfq.quantity);
}

function checkHedge(
  rfq: RfqRecord,
  hedge: QuoteHedgeInput | null,
  quantity: number,
  market: RfqMarket,
): { readonly ok: true; readonly price: number | null } | Refused {
  if (hedge === null) return { ok: true, price: null };
  const restated = restatesHedge(rfq, hedge, quantity, "the quote's");
  if (restated !== null) return restated;
  const offGrid = priceOffTick(market, hedge.instrumentName, hedge.price, 'hedge.price');
  if (offGrid !== null) return { ok: false, error: offGrid };
  const band = futurePriceOutsideBand(market, hedge.instrumentName, hedge.price, 'hedge.price');
  if (band !== null) return { ok: false, error: band };
  return { ok: true, price: hedge.price };
}

/**
 * An accept's hedge (the taker's worst hedge price): it restates the RFQ's hedge as a quote's
 * does (instrument, side, and the RFQ's hedge quantity or the accepted quantity's share of it),
 * at a positive price. No band: it is a limit, not a trade price. Gives the limit in ticks.
 */
export function checkAcceptHedge(
  rfq: RfqRecord,
  hedge: AcceptHedgeInput,
  quantity: number,
): { readonly ok: true; readonly limit: number } | Refused {
  const restated = restatesHedge(rfq, hedge, quantity, "the accepted quantity's");
  return restated ?? { ok: true, limit: hedge.price };
}

/**
 * A quote's or an accept's hedge restates the RFQ's: its instrument and side, the RFQ's hedge
 * quantity or the share of it for `quantity`, at a positive price. Null when it does.
 */
function restatesHedge(
  rfq: RfqRecord,
  hedge: AcceptHedgeInput,
  quantity: number,
  whose: string,
): Refused | null {
  const expected = rfq.hedge;
  if (expected === null) return refuse('the RFQ has no hedge leg', 'hedge');
  if (hedge.instrumentName !== expected.instrumentName) {
    return refuse(`the hedge must be the RFQ's hedge ${expected.instrumentName}`, 'hedge.instrumentName');
  }
  if (hedge.side !== expected.side) return refuse(`the hedge side must be ${expected.side}`, 'hedge.side');
  if (hedge.amount !== expected.amount && hedge.amount !== hedgeShare(rfq, quantity)) {
    return refuse(
      `the hedge quantity must be the RFQ's hedge quantity or ${whose} share of it`,
      'hedge.quantity',
      'invalid_amount',
    );
  }
  if (!Number.isSafeInteger(hedge.price) || hedge.price <= 0) {
    return refuse('hedge price must be positive', 'hedge.price', 'invalid_price');
  }
  return null;
}

/** True when a new/edited quote would cross one of the same desk's open quotes on the RFQ. */
export function crossesOwnQuote(
  quotes: readonly QuoteRecord[],
  desk: string,
  side: QuoteRecord['side'],
  price: number,
  exceptQuoteId: string | null,
): boolean {
  for (const other of quotes) {
    if (
      other.desk !== desk ||
      other.status !== 'open' ||
      other.quoteId === exceptQuoteId ||
      other.side === side
    )
      continue;
    if (side === 'buy' ? price >= other.price : price <= other.price) return true;
  }
  return false;
}
