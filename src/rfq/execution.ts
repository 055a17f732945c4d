/**
 * Executes an accept through the engine, all or nothing: the plan's quote fills become one
 * engine `block_trade` command holding one block per quote fill and receiving taker-side
 * account (the taker, or an allocation's account), each with one trade per leg (and the hedge)
 * at the quote's prices. The engine checks every block, and every account's funds over all of
 * them, before it books any, so an accept either books its whole quantity or nothing.
 *
 * Invariants:
 * - Leg i of q RFQ lots trades q × lotsPerUnit[i] lots. A quote's fill of q lots books the
 *   hedge the quote shows for q: its share floor(hedge × q ÷ RFQ quantity) (quote-terms
 *   `hedgeShare`), cumulated over the quote's own fill when it splits by receiving account. So a
 *   maker never books more hedge than its quote states; the rounding remainder of the RFQ's
 *   hedge is booked to no one (the taker's hedge falls short of it by less than one hedge lot
 *   per quote filled).
 * - With a hedge limit (the accept's `hedge.price`), quotes whose hedge price (theirs, or the
 *   RFQ's when they set none) is worse for the taker's own hedge trade are passed over, as
 *   quotes whose strategy price is worse are.
 * - Allocations with an account take the traded quantity in their listed order, up to their
 *   amounts; whatever is left is booked to the taker. The RFQ's whole allocation list (as its
 *   taker view shows it) goes on every block, so each trade booked records it for the taker.
 * - When the engine refuses because of a maker (its funds, its account), every quote of that
 *   maker account in the plan is cancelled (`trade_refused`) and the accept is re-planned
 *   against the others; nothing was booked. Any other refusal refuses the accept. Each round
 *   cancels at least one quote, so re-planning ends.
 */
import type { BlockTrade, BlockTradeLeg, BlockTradeTerms, CommandStamp } from '../core/commands.ts';
import type { CommandResult, TradeView } from '../core/events.ts';
import type { EnginePort } from '../core/submachine.ts';
import { formatMoney, type Side } from '../core/types.ts';
import { allocationList } from './allocations.ts';
import { type PlannedFill, planFills, rankQuotes } from './matching.ts';
import { hedgeShare } from './quote-terms.ts';
import { flip, type Refusal } from './structure.ts';
import type { QuoteRecord, RfqFill, RfqRecord } from './types.ts';

export type AcceptOutcome =
  | {
      readonly kind: 'traded';
      readonly fills: readonly RfqFill[];
      /** Quotes changed (cancelled makers, then the filled quotes), in order. */
      readonly touched: readonly QuoteRecord[];
    }
  | { readonly kind: 'refused'; readonly refusal: Refusal; readonly touched: readonly QuoteRecord[] }
  | {
      readonly kind: 'unfilled';
      /** RFQ lots the crossing quotes could cover. */
      readonly available: number;
      readonly touched: readonly QuoteRecord[];
    };

/** One block of the accept: a quote's fill, or the share of it booked to one taker-side account. */
interface PlannedBlock {
  readonly quote: QuoteRecord;
  readonly takerAccountId: number;
  /** RFQ lots. */
  readonly quantity: number;
  readonly hedgeAmount: number;
  readonly hedgePrice: number | null;
  readonly legs: readonly BlockTradeLeg[];
}

export function executeAccept(
  rfq: RfqRecord,
  quotes: readonly QuoteRecord[],
  takerSide: Side,
  limit: number,
  requested: number,
  stamp: CommandStamp,
  engine: EnginePort,
  hedgeLimit: number | null = null,
): AcceptOutcome {
  const dropped: QuoteRecord[] = [];
  const eligible =
    hedgeLimit === null ? quotes : quotes.filter((quote) => hedgeWithin(rfq, quote, takerSide, hedgeLimit));
  // Each round cancels at least one eligible quote; a round past that bound is a broken
  // invariant, which must fail the command rather than spin the event loop forever.
  for (let round = 0; ; round += 1) {
    if (round > eligible.length) throw new Error(`accept re-planning did not end within ${round} rounds`);
    const plan = planFills(rankQuotes(eligible, takerSide, limit, stamp.ts), requested, rfq.minTradeAmount);
    if (plan.covered < requested) return { kind: 'unfilled', available: plan.covered, touched: dropped };
    const blocks = planBlocks(rfq, plan.fills, takerSide);
    const result = engine.execute(blockTradeCommand(rfq, blocks, stamp));
    if (result.ok) {
      const fills = bookFills(blocks, result.trades ?? [], stamp.ts);
      return { kind: 'traded', fills, touched: [...dropped, ...new Set(blocks.map((b) => b.quote))] };
    }
    const maker = refusedMakerAccount(result, plan.fills);
    if (maker === null) {
      return { kind: 'refused', refusal: acceptRefusal(result), touched: dropped };
    }
    for (const planned of plan.fills) {
      if (planned.quote.accountId !== maker) continue;
      cancelRefused(planned.quote, stamp.ts);
      dropped.push(planned.quote);
    }
  }
}

/** The taker's own direction on the RFQ's hedge when it takes `takerSide` of the structure. */
export function takerHedgeSide(hedgeSide: Side, takerSide: Side): Side {
  return takerSide === 'buy' ? hedgeSide : flip(hedgeSide);
}

/**
 * True when the quote's hedge price (its own, or the RFQ's) is no worse than `limit` for the
 * taker's hedge trade: at most the limit when the taker buys the hedge, at least it when it sells.
 */
export function hedgeWithin(rfq: RfqRecord, quote: QuoteRecord, takerSide: Side, limit: number): boolean {
  if (rfq.hedge === null) return true;
  const price = quote.hedgePrice ?? rfq.hedge.price;
  return takerHedgeSide(rfq.hedge.side, takerSide) === 'buy' ? price <= limit : price >= limit;
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

/**
 * The plan's fills as blocks, in plan order. Each quote's fill books the quote's own hedge share
 * of what it fills (counted from the quote's earlier fills), split cumulatively over its blocks.
 */
function planBlocks(rfq: RfqRecord, fills: readonly PlannedFill[], takerSide: Side): PlannedBlock[] {
  const blocks: PlannedBlock[] = [];
  let traded = rfq.filledQuantity;
  for (const planned of fills) {
    const quote = planned.quote;
    const hedgePrice = rfq.hedge === null ? null : (quote.hedgePrice ?? rfq.hedge.price);
    let quoteFilled = quote.filledQuantity;
    for (const part of splitByAccount(rfq, traded - rfq.filledQuantity, planned.quantity)) {
      const hedgeAmount = hedgeShare(rfq, quoteFilled + part.quantity) - hedgeShare(rfq, quoteFilled);
      quoteFilled += part.quantity;
      traded += part.quantity;
      const legs: BlockTradeLeg[] = rfq.legs.map((leg, index) => ({
        instrumentName: leg.instrumentName,
        side: takerSide === 'buy' ? leg.side : flip(leg.side),
        amount: part.quantity * leg.lotsPerUnit,
        price: quote.legs[index]!.price,
        ...(rfq.comboId === null ? {} : { comboId: rfq.comboId }),
      }));
      if (rfq.hedge !== null && hedgeAmount > 0) {
        legs.push({
          instrumentName: rfq.hedge.instrumentName,
          side: takerHedgeSide(rfq.hedge.side, takerSide),
          amount: hedgeAmount,
          price: hedgePrice!,
        });
      }
      blocks.push({
        quote,
        takerAccountId: part.accountId,
        quantity: part.quantity,
        hedgeAmount,
        hedgePrice,
        legs,
      });
    }
  }
  return blocks;
}

function blockTradeCommand(rfq: RfqRecord, blocks: readonly PlannedBlock[], stamp: CommandStamp): BlockTrade {
  const allocations = rfq.tradeAllocations.length === 0 ? {} : { tradeAllocations: allocationList(rfq) };
  const terms = blocks.map(
    (block): BlockTradeTerms => ({
      takerAccountId: block.takerAccountId,
      makerAccountId: block.quote.accountId,
      legs: block.legs,
      blockRfqId: rfq.blockRfqId,
      makerBlockRfqId:
        rfq.makerRecords.find((record) => record.desk === block.quote.desk)?.blockRfqId ?? null,
      blockRfqQuoteId: block.quote.quoteId,
      takerLabel: rfq.label,
      makerLabel: block.quote.label,
      ...allocations,
    }),
  );
  const [first, ...batch] = terms;
  return { type: 'block_trade', seq: stamp.seq, ts: stamp.ts, ...first!, batch };
}

/** Marks the blocks' quotes filled and records one fill per block (its trades in leg order). */
function bookFills(blocks: readonly PlannedBlock[], trades: readonly TradeView[], now: number): RfqFill[] {
  const fills: RfqFill[] = [];
  let next = 0;
  for (const block of blocks) {
    const own = trades.slice(next, next + block.legs.length);
    next += block.legs.length;
    const quote = block.quote;
    quote.filledQuantity += block.quantity;
    quote.status = 'filled';
    quote.lastUpdatedAt = now;
    fills.push({
      quoteId: quote.quoteId,
      desk: quote.desk,
      makerAccountId: quote.accountId,
      takerAccountId: block.takerAccountId,
      blockTradeId: own[0]?.blockTradeId ?? '',
      quantity: block.quantity,
      price: quote.price,
      hedgeAmount: block.hedgeAmount,
      legPrices: quote.legs.map((leg) => leg.price),
      hedgePrice: block.hedgePrice,
      tradeIds: own.map((trade) => trade.tradeId),
    });
  }
  return fills;
}

/**
 * The maker account the engine refused the batch for (it names the party: a maker's field and
 * its account), when that account is one of the plan's makers; null for any other refusal.
 */
function refusedMakerAccount(result: CommandResult, fills: readonly PlannedFill[]): number | null {
  if (result.ok) return null;
  const { field, accountId } = result.error.data;
  if (typeof field !== 'string' || !field.endsWith('makerAccountId') || typeof accountId !== 'number')
    return null;
  return fills.some((planned) => planned.quote.accountId === accountId) ? accountId : null;
}

/**
 * The engine's refusal as the accept's: a taker short of funds is refused for the accept's
 * `quantity` (the engine names its own command's account field), in wire decimals.
 */
function acceptRefusal(result: CommandResult): Refusal {
  if (result.ok) throw new Error('not a refusal');
  const { name, message, data } = result.error;
  const { field, required, available, currency } = data;
  if (typeof field !== 'string' || !field.endsWith('takerAccountId'))
    return { name, message, data: { ...data } };
  const money = (value: unknown) =>
    typeof value === 'number' && typeof currency === 'string' ? formatMoney(value, currency) : value;
  return {
    name,
    message,
    data: { ...data, field: 'quantity', required: money(required), available: money(available) },
  };
}

function cancelRefused(quote: QuoteRecord, now: number): void {
  quote.status = 'cancelled';
  quote.statusReason = 'trade_refused';
  quote.lastUpdatedAt = now;
}
