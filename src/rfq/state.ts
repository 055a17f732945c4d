/**
 * The desk's whole mutable state and its JSON snapshot.
 *
 * Invariants:
 * - `rfqs` is keyed by the taker's id, in creation order; `makerIds` maps every maker-side id
 *   to its RFQ and desk; `active` holds exactly the RFQs in `created` or `open`.
 * - `quotes` is keyed by quote id in creation order; `quotesByRfq` lists each RFQ's quotes.
 * - `trades` is ordered by (timestamp, RFQ number), oldest first.
 * - Ids come from counters: RFQ ids (taker and maker-side alike) from `rfqCounter`, quote ids
 *   from `quoteCounter`, time priority from `priorityCounter`.
 */
import type { QuoteRecord, RfqRecord, RfqTradeRecord } from './types.ts';

export interface DeskSnapshot {
  readonly version: 1;
  readonly rfqCounter: number;
  readonly quoteCounter: number;
  readonly priorityCounter: number;
  readonly lastPruneAt: number;
  readonly rfqs: readonly RfqRecord[];
  readonly quotes: readonly QuoteRecord[];
  readonly trades: readonly RfqTradeRecord[];
}

export const PRUNE_INTERVAL_MS = 60_000;

export class DeskState {
  rfqCounter = 0;
  quoteCounter = 0;
  priorityCounter = 0;
  /** Stamp of the last retention sweep (sweeps run at most once per `PRUNE_INTERVAL_MS`). */
  lastPruneAt = 0;
  readonly rfqs = new Map<string, RfqRecord>();
  readonly makerIds = new Map<string, { readonly rfqId: string; readonly desk: string }>();
  readonly active = new Set<string>();
  readonly quotes = new Map<string, QuoteRecord>();
  readonly quotesByRfq = new Map<string, QuoteRecord[]>();
  trades: RfqTradeRecord[] = [];

  addRfq(rfq: RfqRecord): void {
    this.rfqs.set(rfq.blockRfqId, rfq);
    for (const record of rfq.makerRecords)
      this.makerIds.set(record.blockRfqId, { rfqId: rfq.blockRfqId, desk: record.desk });
    if (rfq.status === 'created' || rfq.status === 'open') this.active.add(rfq.blockRfqId);
    if (!this.quotesByRfq.has(rfq.blockRfqId)) this.quotesByRfq.set(rfq.blockRfqId, []);
  }

  addQuote(quote: QuoteRecord): void {
    this.quotes.set(quote.quoteId, quote);
    let list = this.quotesByRfq.get(quote.rfqId);
    if (list === undefined) {
      list = [];
      this.quotesByRfq.set(quote.rfqId, list);
    }
    list.push(quote);
  }

  quotesOf(rfqId: string): readonly QuoteRecord[] {
    return this.quotesByRfq.get(rfqId) ?? [];
  }

  /** Forgets closed RFQs (with their quotes) and trades last touched before `now − retention`. */
  prune(now: number, retentionMs: number): void {
    if (now - this.lastPruneAt < PRUNE_INTERVAL_MS) return;
    this.lastPruneAt = now;
    const cutoff = now - retentionMs;
    for (const [id, rfq] of this.rfqs) {
      if (this.active.has(id) || rfq.lastUpdatedAt >= cutoff) continue;
      this.rfqs.delete(id);
      for (const record of rfq.makerRecords) this.makerIds.delete(record.blockRfqId);
      for (const quote of this.quotesOf(id)) this.quotes.delete(quote.quoteId);
      this.quotesByRfq.delete(id);
    }
    let keep = 0;
    while (keep < this.trades.length && this.trades[keep]!.timestamp < cutoff) keep++;
    if (keep > 0) this.trades = this.trades.slice(keep);
  }

  snapshot(): DeskSnapshot {
    return structuredClone({
      version: 1 as const,
      rfqCounter: this.rfqCounter,
      quoteCounter: this.quoteCounter,
      priorityCounter: this.priorityCounter,
      lastPruneAt: this.lastPruneAt,
      rfqs: [...this.rfqs.values()],
      quotes: [...this.quotes.values()],
      trades: this.trades,
    });
  }

  static restore(snapshot: DeskSnapshot): DeskState {
    const copy = structuredClone(snapshot);
    const state = new DeskState();
    state.rfqCounter = copy.rfqCounter;
    state.quoteCounter = copy.quoteCounter;
    state.priorityCounter = copy.priorityCounter;
    state.lastPruneAt = copy.lastPruneAt;
    for (const rfq of copy.rfqs) state.addRfq(rfq);
    for (const quote of copy.quotes) state.addQuote(quote);
    state.trades = [...copy.trades];
    return state;
  }
}

/** A 53-bit string hash (cyrb53): cheap, stable, good enough to compare replicas. */
export function hashText(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, '0');
}
