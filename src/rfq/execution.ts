/**
 * Executes a planned accept through the engine: one `block_trade` per quote filled, with one
 * trade per leg (and the hedge), at the quote's prices, between the taker and that maker.
 *
 * Invariants:
 * - A block trade is atomic in the engine (all legs or none), so no leg ever trades alone.
 * - Leg i of a fill of q RFQ lots trades q × lotsPerUnit[i] lots; the hedge trades its
 *   pro-rata share, floored, with cumulative flooring so the shares sum to the hedge amount
 *   when the whole RFQ trades.
 * - When the engine refuses a maker's block trade (that maker's funds, say), the quote is
 *   cancelled (`trade_refused`) and the remainder is re-planned against the other quotes;
 *   when it refuses for the taker, execution stops there.
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
  /** The engine's refusal that stopped execution, when it was the taker's. */
  readonly takerRefusal: Refusal | null;
}

/** True when the engine refused the block trade because of the maker's side (e.g. its funds). */
function makerRefused(result: CommandResult, makerAccountId: number): boolean {
  if (result.ok) return false;
  const data = result.error.data;
  return data.field === 'makerAccountId' || data.accountId === makerAccountId;
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
  let hedgeDone = 0;
  for (;;) {
    const need = requested - traded;
    if (need === 0) break;
    const plan = planFills(rankQuotes(quotes, takerSide, limit, stamp.ts), need);
    if (plan.covered < need) break;
    let replan = false;
    for (const planned of plan.fills) {
      const quote = planned.quote;
      const hedgeTarget =
        rfq.hedge === null
          ? 0
          : Math.floor((rfq.hedge.amount * (rfq.filledQuantity + traded + planned.quantity)) / rfq.quantity);
      const hedgeAmount = hedgeTarget - hedgeDone;
      const legs: BlockTradeLeg[] = rfq.legs.map((leg, index) => ({
        instrumentName: leg.instrumentName,
        side: takerSide === 'buy' ? leg.side : flip(leg.side),
        amount: planned.quantity * leg.lotsPerUnit,
        price: quote.legs[index]!.price,
      }));
      const hedgePrice = rfq.hedge === null ? null : (quote.hedgePrice ?? rfq.hedge.price);
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
        takerAccountId: rfq.takerAccountId,
        makerAccountId: quote.accountId,
        legs,
        blockRfqId: rfq.blockRfqId,
        blockRfqQuoteId: quote.quoteId,
        takerLabel: rfq.label,
        makerLabel: quote.label,
      });
      if (!result.ok) {
        if (makerRefused(result, quote.accountId)) {
          quote.status = 'cancelled';
          quote.statusReason = 'trade_refused';
          quote.lastUpdatedAt = stamp.ts;
          touched.push(quote);
          replan = true;
          break;
        }
        return {
          fills,
          traded,
          touched,
          takerRefusal: {
            name: result.error.name,
            message: result.error.message,
            data: { ...result.error.data },
          },
        };
      }
      traded += planned.quantity;
      hedgeDone = hedgeTarget;
      quote.filledQuantity += planned.quantity;
      quote.status = 'filled';
      quote.lastUpdatedAt = stamp.ts;
      touched.push(quote);
      fills.push({
        quoteId: quote.quoteId,
        desk: quote.desk,
        makerAccountId: quote.accountId,
        blockTradeId: result.blockTradeId ?? '',
        quantity: planned.quantity,
        price: quote.price,
        hedgeAmount,
        legPrices: quote.legs.map((leg) => leg.price),
        hedgePrice,
        tradeIds: (result.trades ?? []).map((trade) => trade.tradeId),
      });
    }
    if (!replan) break;
  }
  return { fills, traded, touched, takerRefusal: null };
}
