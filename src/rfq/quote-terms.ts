/**
 * Validation of a maker's quote terms against its RFQ.
 *
 * "Consistent" (documented in the decisions): the quote names exactly the RFQ's legs (any
 * order), each with the RFQ's ratio and the RFQ's side (legs describe the structure; the
 * quote's `side` says whether the maker buys or sells it), and the strategy price is
 * Σ ±ratio × leg price (+ for legs bought with the structure). A `price` sent with the quote
 * must equal that sum exactly; without one the sum is the quote's price.
 */
import { LABEL_MAX_LENGTH } from '../core/types.ts';
import { type Refusal, strategyPrice } from './structure.ts';
import type { QuoteLeg, QuoteRecord, QuoteTerms, RfqRecord } from './types.ts';

export type TermsResult =
  | { readonly ok: true; readonly legs: QuoteLeg[]; readonly price: number }
  | { readonly ok: false; readonly error: Refusal };

function refuse(message: string, field: string, name: Refusal['name'] = 'invalid_arguments'): TermsResult {
  return { ok: false, error: { name, message, data: { field } } };
}

export function validateTerms(rfq: RfqRecord, terms: QuoteTerms, now: number): TermsResult {
  if (terms.label.length > LABEL_MAX_LENGTH)
    return refuse(`label is longer than ${LABEL_MAX_LENGTH}`, 'label');
  if (!Number.isSafeInteger(terms.quantity) || terms.quantity <= 0) {
    return refuse('quantity must be positive', 'quantity', 'invalid_amount');
  }
  if (terms.quantity < rfq.minTradeAmount)
    return refuse('quantity is below minTradeAmount', 'quantity', 'qty_too_low');
  if (terms.quantity > rfq.quantity)
    return refuse('quantity exceeds the RFQ quantity', 'quantity', 'invalid_amount');
  if (terms.expiresAt !== null && terms.expiresAt <= now)
    return refuse('expiresAt is in the past', 'expiresAt');
  if (terms.legs.length !== rfq.legs.length)
    return refuse('the quote must price every leg of the RFQ', 'legs');
  const prices: number[] = [];
  const legs: QuoteLeg[] = [];
  for (const [index, leg] of rfq.legs.entries()) {
    const quoted = terms.legs.filter((candidate) => candidate.instrumentName === leg.instrumentName);
    if (quoted.length !== 1) return refuse(`leg ${leg.instrumentName} must be quoted exactly once`, 'legs');
    const q = quoted[0]!;
    if (q.ratio !== leg.ratio)
      return refuse(`ratio of ${leg.instrumentName} must be ${leg.ratio}`, `legs[${index}].ratio`);
    if (q.side !== leg.side)
      return refuse(`side of ${leg.instrumentName} must be ${leg.side}`, `legs[${index}].side`);
    if (!Number.isSafeInteger(q.price))
      return refuse('leg price out of range', `legs[${index}].price`, 'invalid_price');
    prices.push(q.price);
    legs.push({ instrumentName: leg.instrumentName, side: leg.side, ratio: leg.ratio, price: q.price });
  }
  const price = strategyPrice(rfq.legs, rfq.legTickUnits, prices);
  if (terms.price !== null && terms.price !== price) {
    return refuse('price does not equal the strategy price of the legs', 'price', 'invalid_price');
  }
  if (terms.hedgePrice !== null && rfq.hedge === null) return refuse('the RFQ has no hedge leg', 'hedge');
  return { ok: true, legs, price };
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
