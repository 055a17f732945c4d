/** Fixtures for the RFQ desk's unit tests. */
import type { QuoteRecord } from './types.ts';

/** An open quote of desk `d` (account 2) on RFQ 1, priority by id, with no legs. */
export function quoteRecord(
  id: number,
  side: 'buy' | 'sell',
  price: number,
  quantity: number,
  aon = false,
): QuoteRecord {
  return {
    quoteId: String(id),
    number: id,
    rfqId: '1',
    makerRfqId: '2',
    desk: 'd',
    accountId: 2,
    side,
    quantity,
    filledQuantity: 0,
    price,
    legs: [],
    hedgePrice: null,
    executionInstruction: aon ? 'all_or_none' : 'any_part_of',
    expiresAt: null,
    label: '',
    status: 'open',
    statusReason: null,
    replaced: false,
    createdAt: 0,
    lastUpdatedAt: 0,
    priority: id,
  };
}
