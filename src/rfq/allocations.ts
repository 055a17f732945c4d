/**
 * A Block RFQ's allocation list as the RFQ shows it to its taker (spec 2.8 `tradeAllocations`):
 * amounts as the RFQ's quantity decimals, `userId` or `clientInfo` as given. The RFQ's taker view
 * (src/api/wire/rfq.ts) shows it, and an accept records it on every trade it books (the engine's
 * block terms), so the taker's trades show the same list however long after the RFQ is gone.
 */
import type { TradeAllocation } from '../core/commands.ts';
import { formatRfqLots } from './lots.ts';
import type { RfqRecord } from './types.ts';

export function allocationList(rfq: Pick<RfqRecord, 'quantityStep' | 'tradeAllocations'>): TradeAllocation[] {
  return rfq.tradeAllocations.map((a) => ({
    amount: formatRfqLots(rfq, a.amount),
    ...(a.userId !== null ? { userId: a.userId } : {}),
    ...(a.clientInfo !== null ? { clientInfo: { ...a.clientInfo } } : {}),
  }));
}
