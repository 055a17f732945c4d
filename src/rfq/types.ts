/**
 * The Block RFQ desk's contract: its journaled commands, its views and its events, in domain
 * units.
 *
 * Units:
 * - RFQ quantity ("rfq lots"): a count of the RFQ's `quantityStep` (a decimal, the smallest
 *   structure size for which every leg amount lands on its instrument's lot grid). Leg i trades
 *   `rfqLots × lotsPerUnit[i]` lots of its instrument.
 * - Strategy price ("strategy units"): a count of 10^-priceScale in the legs' common quote
 *   currency: Σ ±ratio_i × legPrice_i (+ for legs bought with the structure, − for legs sold).
 * - Leg and hedge prices: ticks of their instrument; hedge amount: lots of its instrument.
 *
 * Invariants: commands are plain JSON with the sequencer's stamp; views are fresh snapshots.
 */
import type { CommandStamp } from '../core/commands.ts';
import type { Side } from '../core/types.ts';

export type ExecutionInstruction = 'all_or_none' | 'any_part_of';
export type AcceptTimeInForce = 'fill_or_kill' | 'good_til_cancelled';

export type RfqStatus =
  | 'created'
  | 'open'
  | 'filled'
  | 'traded'
  | 'cancelled'
  | 'expired'
  | 'closed'
  | 'failed';
export type QuoteStatus = 'open' | 'filled' | 'cancelled' | 'expired';

export interface TradeAllocationInput {
  /** RFQ lots. */
  readonly amount: number;
  readonly userId?: number | null;
  /**
   * The engine account that receives this share (resolved at the edge from `userId`); null or
   * absent = booked to the taker's own account (broker clients without an account here).
   */
  readonly accountId?: number | null;
  readonly clientInfo?: {
    readonly clientId: number;
    readonly clientLinkId: number;
    readonly name?: number | null;
  } | null;
}

export interface RfqLegInput {
  readonly instrumentName: string;
  /** Direction of the leg when the structure is bought. */
  readonly side: Side;
  /** Lots of the instrument. */
  readonly amount: number;
}

export interface HedgeInput {
  readonly instrumentName: string;
  readonly side: Side;
  /** Lots. */
  readonly amount: number;
  /** Ticks. */
  readonly price: number;
}

// ---------------------------------------------------------------------------------------------
// Commands

export interface CreateRfq extends CommandStamp {
  readonly type: 'rfq_create';
  readonly accountId: number;
  readonly userId: number;
  /** The taker's desk name (shown to makers when disclosed), or null. */
  readonly takerAlias: string | null;
  /** Desk names as the taker sent them (empty = every maker desk). */
  readonly makers: readonly string[];
  /** The maker desks that get a maker-side record, resolved at the edge. */
  readonly targetDesks: readonly string[];
  readonly disclosed: boolean;
  readonly label: string;
  readonly legs: readonly RfqLegInput[];
  readonly hedge: HedgeInput | null;
  readonly tradeAllocations: readonly TradeAllocationInput[];
}

export interface CancelRfq extends CommandStamp {
  readonly type: 'rfq_cancel';
  readonly accountId: number;
  /** The taker's id. */
  readonly blockRfqId: string;
}

export interface QuoteLegInput {
  readonly instrumentName: string;
  readonly side: Side;
  /** Integer ratio as on the RFQ. */
  readonly ratio: number;
  /** Ticks. */
  readonly price: number;
}

/**
 * A quote's hedge: the RFQ's hedge restated (instrument, side, and either the RFQ's hedge amount
 * or the quote's pro-rata share of it) with the maker's price.
 */
export interface QuoteHedgeInput {
  readonly instrumentName: string;
  readonly side: Side;
  /** Lots of the hedge instrument. */
  readonly amount: number;
  /** Ticks, positive. */
  readonly price: number;
}

export interface QuoteTerms {
  readonly side: Side;
  /** RFQ lots. */
  readonly quantity: number;
  /** Strategy units; when given it must equal the price implied by the legs. */
  readonly price: number | null;
  readonly legs: readonly QuoteLegInput[];
  /** null: the quote trades the RFQ's hedge (if any) at the RFQ's hedge price. */
  readonly hedge: QuoteHedgeInput | null;
  readonly executionInstruction: ExecutionInstruction;
  readonly expiresAt: number | null;
  readonly label: string;
}

export interface CreateQuote extends CommandStamp, QuoteTerms {
  readonly type: 'rfq_quote_create';
  readonly accountId: number;
  /** The maker's user: a desk may not quote an RFQ of its own user (self-match prevention). */
  readonly userId: number;
  readonly desk: string;
  /** The maker-side id. */
  readonly blockRfqId: string;
}

/**
 * Replaces a quote's terms. An absent `expiresAt` or `label` keeps the quote's own, so an edit of
 * the price does not drop the maker's expiry; `expiresAt: null` (journaled before this existed,
 * when the API filled it in) removes the expiry.
 */
export interface EditQuote extends CommandStamp, Omit<QuoteTerms, 'expiresAt' | 'label'> {
  readonly expiresAt?: number | null;
  readonly label?: string;
  readonly type: 'rfq_quote_edit';
  readonly accountId: number;
  readonly desk: string;
  readonly quoteId: string;
}

export interface CancelQuote extends CommandStamp {
  readonly type: 'rfq_quote_cancel';
  readonly accountId: number;
  readonly desk: string;
  readonly quoteId: string;
}

export interface CancelAllQuotes extends CommandStamp {
  readonly type: 'rfq_quote_cancel_all';
  readonly accountId: number;
  readonly desk: string;
  /** Maker-side id; null = every RFQ. */
  readonly blockRfqId: string | null;
}

export interface AcceptRfq extends CommandStamp {
  readonly type: 'rfq_accept';
  readonly accountId: number;
  readonly blockRfqId: string;
  /** The taker's direction on the structure. */
  readonly side: Side;
  /** Worst acceptable strategy price (strategy units). */
  readonly price: number;
  /** RFQ lots; null = the whole RFQ. */
  readonly quantity: number | null;
  readonly timeInForce: AcceptTimeInForce;
  /**
   * The RFQ's hedge restated with the worst hedge price the taker takes: quotes whose hedge
   * price is worse are passed over. Absent or null: any hedge price (and in commands journaled
   * before it existed).
   */
  readonly hedge?: AcceptHedgeInput | null;
}

/**
 * An accept's hedge: the RFQ's hedge restated (instrument, side as on the RFQ, and the RFQ's hedge
 * amount or the accepted quantity's share of it) with the taker's worst hedge price.
 */
export interface AcceptHedgeInput {
  readonly instrumentName: string;
  /** The RFQ hedge's side (relative to the RFQ, as the accept's legs). */
  readonly side: Side;
  /** Lots of the hedge instrument. */
  readonly amount: number;
  /** Ticks, positive: the worst price of the taker's own hedge trade. */
  readonly price: number;
}

/** Withdraws the taker's waiting GTC accept (trade trigger) on one side, or on both. */
export interface CancelTrigger extends CommandStamp {
  readonly type: 'rfq_trigger_cancel';
  readonly accountId: number;
  readonly blockRfqId: string;
  /** null: every trigger of the RFQ. */
  readonly side: Side | null;
}

export type RfqCommand =
  | CreateRfq
  | CancelRfq
  | CreateQuote
  | EditQuote
  | CancelQuote
  | CancelAllQuotes
  | AcceptRfq
  | CancelTrigger;
export type RfqCommandType = RfqCommand['type'];

export const RFQ_COMMAND_TYPES: ReadonlySet<string> = new Set<RfqCommandType>([
  'rfq_create',
  'rfq_cancel',
  'rfq_quote_create',
  'rfq_quote_edit',
  'rfq_quote_cancel',
  'rfq_quote_cancel_all',
  'rfq_accept',
  'rfq_trigger_cancel',
]);

// ---------------------------------------------------------------------------------------------
// State records (also the views: they are copied out, never shared)

export interface RfqLeg {
  readonly instrumentName: string;
  readonly side: Side;
  /** Positive integer. */
  readonly ratio: number;
  /** Instrument lots per RFQ lot (ratio × quantityStep / lot size). */
  readonly lotsPerUnit: number;
}

export interface RfqHedge {
  readonly instrumentName: string;
  readonly side: Side;
  readonly amount: number;
  readonly price: number;
}

export interface RfqAllocation {
  readonly amount: number;
  readonly userId: number | null;
  readonly accountId: number | null;
  readonly clientInfo: {
    readonly clientId: number;
    readonly clientLinkId: number;
    readonly name: number | null;
  } | null;
}

export interface RfqTrigger {
  readonly side: Side;
  readonly price: number;
  readonly quantity: number;
  readonly createdAt: number;
  /**
   * Worst hedge price (ticks) of the waiting accept. Absent when the accept set none (and on
   * triggers saved before it was kept: a restored snapshot must hash as it was written).
   */
  readonly hedgePrice?: number;
}

export interface MakerRecord {
  readonly desk: string;
  readonly blockRfqId: string;
}

export interface RfqRecord {
  readonly blockRfqId: string;
  readonly number: number;
  readonly takerAccountId: number;
  readonly takerUserId: number;
  readonly takerAlias: string | null;
  readonly makers: readonly string[];
  readonly makerRecords: readonly MakerRecord[];
  readonly disclosed: boolean;
  readonly label: string;
  readonly currency: string;
  readonly quoteCurrency: string;
  readonly legs: readonly RfqLeg[];
  readonly hedge: RfqHedge | null;
  readonly comboId: string | null;
  /** RFQ lots. */
  readonly quantity: number;
  /** Decimal text of one RFQ lot. */
  readonly quantityStep: string;
  /**
   * RFQ lots: the smallest RFQ size at which every leg reaches its instrument's
   * `blockTradeMinTradeAmount`. The RFQ, each quote and each accept are at least this big.
   */
  readonly minTradeAmount: number;
  /** Decimal places of strategy units. */
  readonly priceScale: number;
  /** Per leg: strategy units per tick of the leg's instrument. */
  readonly legTickUnits: readonly number[];
  readonly tradeAllocations: readonly RfqAllocation[];
  readonly createdAt: number;
  readonly openAt: number;
  readonly expiresAt: number;
  status: RfqStatus;
  closedReason: string | null;
  lastUpdatedAt: number;
  filledQuantity: number;
  triggers: RfqTrigger[];
}

export interface QuoteLeg {
  readonly instrumentName: string;
  readonly side: Side;
  readonly ratio: number;
  readonly price: number;
}

export interface QuoteRecord {
  readonly quoteId: string;
  readonly number: number;
  /** The taker's RFQ id (internal key). */
  readonly rfqId: string;
  /** The quoting desk's own id of the RFQ (what the maker sees). */
  readonly makerRfqId: string;
  readonly desk: string;
  readonly accountId: number;
  side: Side;
  quantity: number;
  filledQuantity: number;
  /** Strategy units. */
  price: number;
  legs: QuoteLeg[];
  /** Ticks, null without a hedge. */
  hedgePrice: number | null;
  executionInstruction: ExecutionInstruction;
  expiresAt: number | null;
  label: string;
  status: QuoteStatus;
  statusReason: string | null;
  replaced: boolean;
  readonly createdAt: number;
  lastUpdatedAt: number;
  /** Time priority: lower is earlier; renewed on every edit. */
  priority: number;
}

/**
 * One engine block trade of an accept: a quote's fill, or the share of it booked to one
 * allocation account (a quote fill splits into one block trade per receiving account).
 */
export interface RfqFill {
  readonly quoteId: string;
  readonly desk: string;
  readonly makerAccountId: number;
  /** The taker-side account booked: the taker's, or an allocation's. */
  readonly takerAccountId: number;
  readonly blockTradeId: string;
  /** RFQ lots. */
  readonly quantity: number;
  /** Strategy units. */
  readonly price: number;
  /**
   * Hedge lots booked: the quote's share rule (RFQ hedge × quantity ÷ RFQ quantity, floored)
   * applied to the quote's fill, so a quote never books more hedge than it shows.
   */
  readonly hedgeAmount: number;
  readonly legPrices: readonly number[];
  readonly hedgePrice: number | null;
  readonly tradeIds: readonly string[];
}

/** A traded RFQ as listed by get_trades. */
export interface RfqTradeRecord {
  readonly blockRfqId: string;
  readonly number: number;
  readonly timestamp: number;
  readonly currency: string;
  readonly takerAccountId: number;
  /** The taker's direction. */
  readonly side: Side;
  readonly quantity: number;
  readonly quantityStep: string;
  readonly priceScale: number;
  readonly comboId: string | null;
  readonly legs: readonly RfqLeg[];
  readonly hedge: RfqHedge | null;
  /** Strategy mark at trade time (strategy units) or null when a leg had no mark. */
  readonly markPrice: number | null;
  readonly fills: readonly RfqFill[];
  /**
   * The legs' quote currency (the trade is listed under it and under `currency`). Absent on trades
   * saved by builds before it was kept: a restored snapshot must hash as it was written.
   */
  readonly quoteCurrency?: string;
}

// ---------------------------------------------------------------------------------------------
// Events and results

/**
 * Whose view of an RFQ a change touched: the taker's (its record, triggers, and the quotes once
 * they are visible to it) and the maker desks' (the shared record, and each desk's own quotes).
 */
export interface RfqAudience {
  readonly taker: boolean;
  readonly desks: readonly string[];
}

export interface RfqChangedEvent {
  readonly type: 'rfq_changed';
  readonly rfq: RfqRecord;
  readonly quotes: readonly QuoteRecord[];
  readonly audience: RfqAudience;
}
export interface QuoteChangedEvent {
  readonly type: 'rfq_quote_changed';
  readonly quote: QuoteRecord;
  readonly currency: string;
}
export interface RfqTradedEvent {
  readonly type: 'rfq_traded';
  readonly trade: RfqTradeRecord;
}

export type RfqEvent = RfqChangedEvent | QuoteChangedEvent | RfqTradedEvent;

export type RfqValue =
  | { readonly kind: 'rfq'; readonly rfq: RfqRecord; readonly quotes: readonly QuoteRecord[] }
  | { readonly kind: 'quote'; readonly quote: QuoteRecord }
  | { readonly kind: 'count'; readonly count: number; readonly quotes: readonly QuoteRecord[] }
  | {
      readonly kind: 'accept';
      readonly rfq: RfqRecord;
      readonly trade: RfqTradeRecord | null;
      readonly trigger: RfqTrigger | null;
    };

export interface RfqDeskConfig {
  /** ms after creation before the RFQ is open (taker cannot see quotes or trade). */
  readonly gracePeriodMs: number;
  /** ms after creation when an untraded RFQ expires. */
  readonly lifetimeMs: number;
  readonly maxLegs: number;
  /** Open quotes one maker desk may hold on one RFQ, both sides together (13905). */
  readonly maxQuotesPerMakerPerRfq: number;
  /** Open quotes one maker desk may hold on one side (bids or asks) of one RFQ (13906). */
  readonly maxQuotesPerMakerPerRfqSide: number;
  /** RFQs one taker account may have in `created` or `open` at once. */
  readonly maxOpenRfqsPerTaker: number;
  /** Distinct maker desks an anonymous (`disclosed: false`) RFQ must target. */
  readonly minMakersForAnonymous: number;
  /** How long closed RFQs, quotes and trades stay listed. */
  readonly retentionMs: number;
}

export const DEFAULT_RFQ_CONFIG: RfqDeskConfig = {
  gracePeriodMs: 5_000,
  lifetimeMs: 300_000,
  maxLegs: 20,
  maxQuotesPerMakerPerRfq: 10,
  // Half of the per-RFQ limit: a desk can fill both sides, and a ladder on one side stays short.
  maxQuotesPerMakerPerRfqSide: 5,
  maxOpenRfqsPerTaker: 20,
  // Deribit: anonymous RFQs only when at least 5 makers are targeted.
  minMakersForAnonymous: 5,
  retentionMs: 7 * 24 * 3_600_000,
};

/** An RFQ command before the sequencer stamps it (what the gateway builds). */
export type UnstampedRfqCommand = RfqCommand extends infer C
  ? C extends RfqCommand
    ? Omit<C, 'seq' | 'ts'>
    : never
  : never;
