/**
 * Executes a planned accept through the engine: per quote filled, one `block_trade` per
 * receiving taker-side account (the taker, or an allocation's account), each with one trade per
 * leg (and the hedge) at the quote's prices.
 *
 * Invariants:
 * - A block trade is atomic in the engine (all legs or none), so no leg ever trades alone.
 * - Leg i of q RFQ lots trades q × lotsPerUnit[i] lots. The hedge trades its pro-rata share
 *   with cumulative flooring, so the shares sum to the hedge amount when the whole RFQ trades.
 * - Allocations with an account take the traded quantity in their listed order, up to their
 *   amounts; whatever is left is booked to the taker.
 * - When the engine refuses a maker's block trade (that maker's funds, say) before any of the
 *   quote traded, the quote is cancelled (`trade_refused`) and the remainder re-planned against
 *   the other quotes; any other refusal stops execution where it is (what traded stays traded;
 *   the desk then closes the RFQ as `traded`).
 */
import type { BlockTradeLeg, CommandStamp } from '../core/commands.ts';
import type { CommandResult } from '../core/events.ts';
import type { EnginePort } from '../core/submachine.ts';
import type { Side } from '../core/types.ts';
import { planFills, rankQuotes } from './matching.ts';
import { flip, type Refusal } from './structure.ts';
import type { QuoteRecord, RfqFill, RfqRecord } from './types.ts';

export interface AcceptOutcome {
  readonly fills: readonly RfqFill[];
  readonly traded: number;
  /** Quotes changed (filled or cancelled) during execution, in order. */
  readonly touched: readonly QuoteRecord[];
  /** The engine's refusal that stopped execution, when it was not a maker's. */
  readonly takerRefusal: Refusal | null;
}

/** True when the engine refused the block trade because of the maker's side (e.g. its funds). */
function makerRefused(result: CommandResult, makerAccountId: number): boolean {
  if (result.ok) return false;
  const data = result.error.data;
  return data.field === 'makerAccountId' || data.accountId === makerAccountId;
}

/** Splits `quantity` RFQ lots, the next ones after `tradedSoFar`, by receiving account. */
function splitByAccount(
  rfq: RfqRecord,
  tradedSoFar: number,
  quantity: number,
): { accountId: number; quantity: number }[] {
  const parts: { accountId: number; quantity: number }[] = [];
  let start = tradedSoFar;
  let left = quantity;
  let offset = 0;
  for (const allocation of rfq.tradeAllocations) {
    if (allocation.accountId === null || left === 0) continue;
    const from = Math.max(start, offset);
    const to = offset + allocation.amount;
    offset = to;
    if (from >= to) continue;
    const take = Math.min(left, to - from);
    parts.push({ accountId: allocation.accountId, quantity: take });
    left -= take;
    start += take;
  }
  if (left > 0) parts.push({ accountId: rfq.takerAccountId, quantity: left });
  return parts;
}

export function executeAccept(
  rfq: RfqRecord,
  quotes: readonly QuoteRecord[],
  takerSide: Side,
  limit: number,
  requested: number,
  stamp: CommandStamp,
  engine: EnginePort,
): AcceptOutcome {
  const fills: RfqFill[] = [];
  const touched: QuoteRecord[] = [];
  let traded = 0;
  let hedgeDone = rfq.hedge === null ? 0 : Math.floor((rfq.hedge.amount * rfq.filledQuantity) / rfq.quantity);
  const stop = (refusal: Refusal | null): AcceptOutcome => ({
    fills,
    traded,
    touched,
    takerRefusal: refusal,
  });
  for (;;) {
    const need = requested - traded;
    if (need === 0) break;
    const plan = planFills(rankQuotes(quotes, takerSide, limit, stamp.ts), need);
    if (plan.covered < need) break;
    let replan = false;
    for (const planned of plan.fills) {
      const quote = planned.quote;
      let quoteTraded = 0;
      for (const part of splitByAccount(rfq, traded, planned.quantity)) {
        const cumulative = rfq.filledQuantity + traded + part.quantity;
        const hedgeTarget =
          rfq.hedge === null ? 0 : Math.floor((rfq.hedge.amount * cumulative) / rfq.quantity);
        const hedgeAmount = hedgeTarget - hedgeDone;
        const hedgePrice = rfq.hedge === null ? null : (quote.hedgePrice ?? rfq.hedge.price);
        const legs: BlockTradeLeg[] = rfq.legs.map((leg, index) => ({
          instrumentName: leg.instrumentName,
          side: takerSide === 'buy' ? leg.side : flip(leg.side),
          amount: part.quantity * leg.lotsPerUnit,
          price: quote.legs[index]!.price,
        }));
        if (rfq.hedge !== null && hedgeAmount > 0) {
          legs.push({
            instrumentName: rfq.hedge.instrumentName,
            side: takerSide === 'buy' ? rfq.hedge.side : flip(rfq.hedge.side),
            amount: hedgeAmount,
            price: hedgePrice!,
          });
        }
        const result = engine.execute({
          type: 'block_trade',
          seq: stamp.seq,
          ts: stamp.ts,
          takerAccountId: part.accountId,
          makerAccountId: quote.accountId,
          legs,
          blockRfqId: rfq.blockRfqId,
          makerBlockRfqId: rfq.makerRecords.find((record) => record.desk === quote.desk)?.blockRfqId ?? null,
          blockRfqQuoteId: quote.quoteId,
          takerLabel: rfq.label,
          makerLabel: quote.label,
        });
        if (!result.ok) {
          if (quoteTraded === 0 && makerRefused(result, quote.accountId)) {
            quote.status = 'cancelled';
            quote.statusReason = 'trade_refused';
            quote.lastUpdatedAt = stamp.ts;
            touched.push(quote);
            replan = true;
            break;
          }
          if (quoteTraded > 0) touched.push(quote);
          return stop({
            name: result.error.name,
            message: result.error.message,
            data: { ...result.error.data },
          });
        }
        traded += part.quantity;
        quoteTraded += part.quantity;
        hedgeDone = hedgeTarget;
        quote.filledQuantity += part.quantity;
        quote.status = 'filled';
        quote.lastUpdatedAt = stamp.ts;
        fills.push({
          quoteId: quote.quoteId,
          desk: quote.desk,
          makerAccountId: quote.accountId,
          takerAccountId: part.accountId,
          blockTradeId: result.blockTradeId ?? '',
          quantity: part.quantity,
          price: quote.price,
          hedgeAmount,
          legPrices: quote.legs.map((leg) => leg.price),
          hedgePrice,
          tradeIds: (result.trades ?? []).map((trade) => trade.tradeId),
        });
      }
      if (replan) break;
      touched.push(quote);
    }
    if (!replan) break;
  }
  return stop(null);
}
