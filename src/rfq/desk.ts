/**
 * The Block RFQ desk: a sub-machine of the deterministic core (see ../core/submachine.ts).
 *
 * Lifecycle (decisions in the module docs of ./types.ts and the final report):
 * - RFQ: `created` → `open` at createdAt + grace → `filled` (whole quantity traded) or
 *   `traded` (part traded) on accept; `cancelled` by the taker; `expired` at createdAt +
 *   lifetime; `closed` when a leg or hedge instrument expires. `failed` is reserved.
 * - Quote: `open` → `filled` (traded in an accept), `cancelled` (maker, or the RFQ closed:
 *   statusReason says why), `expired` (its expiresAt).
 * - An accept closes the RFQ; quotes still open then are cancelled (`rfq_closed`).
 * - A GTC accept that cannot fill now leaves a trigger (one per side, a new one replaces it)
 *   re-checked whenever a quote on the RFQ is created or edited; it keeps the accept's hedge
 *   limit (the worst hedge price of its optional `hedge`).
 * - An accept books its whole quantity or nothing: all its block trades go to the engine as one
 *   atomic batch (./execution.ts).
 * - Who may trade with whom: trade allocations go only to accounts of the taker's own user; a
 *   maker desk may not quote an RFQ of its own user (self-match prevention, per user).
 * - Pushes: every `rfq_changed` names its audience, the parties whose view changed: the shared
 *   record (status, …) concerns the taker and every maker desk, triggers only the taker, a quote
 *   its own desk and, once the RFQ is open (quotes visible to the taker), the taker.
 * - Limits (RfqDeskConfig): an anonymous RFQ targets at least `minMakersForAnonymous` desks;
 *   a taker account has at most `maxOpenRfqsPerTaker` RFQs created/open; a desk has at most
 *   `maxQuotesPerMakerPerRfq` open quotes on an RFQ and `maxQuotesPerMakerPerRfqSide` on one
 *   side of it (also checked when an edit moves a quote to the other side). The counts are
 *   derived from the records, so the snapshot and state hash cover them.
 *
 * Invariants: pure (time from stamps, ids from counters); every change emits an event with a
 * copy of the changed record (nested arrays are replaced, never mutated in place, so shallow
 * copies are immutable views); refusals are results.
 */
import type { CommandStamp } from '../core/commands.ts';
import type { CoreEvent } from '../core/events.ts';
import type { EnginePort, SubMachine, SubResult } from '../core/submachine.ts';
import { LABEL_MAX_LENGTH, labelTooLong } from '../core/types.ts';
import { ERROR_CATALOGUE } from '../domain/errors.ts';
import { executeAccept } from './execution.ts';
import { formatRfqLots } from './lots.ts';
import { checkAcceptHedge, crossesOwnQuote, validateTerms } from './quote-terms.ts';
import { type DeskSnapshot, DeskState, hashText } from './state.ts';
import { deriveStructure, type Refusal, type RfqMarket } from './structure.ts';
import {
  type AcceptRfq,
  type CancelAllQuotes,
  type CancelQuote,
  type CancelRfq,
  type CancelTrigger,
  type CreateQuote,
  type CreateRfq,
  DEFAULT_RFQ_CONFIG,
  type EditQuote,
  type QuoteRecord,
  RFQ_COMMAND_TYPES,
  type RfqAllocation,
  type RfqAudience,
  type RfqCommand,
  type RfqDeskConfig,
  type RfqEvent,
  type RfqRecord,
  type RfqTradeRecord,
  type RfqTrigger,
  type RfqValue,
} from './types.ts';

type Result = SubResult<RfqValue, RfqEvent>;

/**
 * A snapshot of a record: records are only ever changed in their own scalar fields; nested
 * arrays and objects (legs, triggers, allocations, fills) are replaced, never mutated in place,
 * so a shallow copy is an immutable view.
 */
const clone = <T extends object>(value: T): T => ({ ...value });

/** Shared by the steps that change nothing; frozen so no caller can add to it. */
const NO_EVENTS: RfqEvent[] = Object.freeze([]) as unknown as RfqEvent[];

/** Who saw an RFQ change during the current step (see RfqAudience). */
interface PendingAudience {
  taker: boolean;
  readonly desks: Set<string>;
}

export class RfqDesk implements SubMachine<RfqCommand, RfqValue, RfqEvent> {
  readonly commandTypes = RFQ_COMMAND_TYPES;
  private state = new DeskState();
  private events: RfqEvent[] = [];
  /** RFQs changed by the current step, with their audience: one `rfq_changed` each, after the quote events. */
  private dirty = new Map<string, PendingAudience>();
  private tradedEvents: RfqEvent[] = [];

  constructor(
    private readonly market: RfqMarket,
    readonly config: RfqDeskConfig = DEFAULT_RFQ_CONFIG,
  ) {}

  // -------------------------------------------------------------------------------------------
  // SubMachine

  execute(command: RfqCommand, engine: EnginePort): Result {
    switch (command.type) {
      case 'rfq_create':
        return this.createRfq(command);
      case 'rfq_cancel':
        return this.cancelRfq(command);
      case 'rfq_quote_create':
        return this.createQuote(command, engine);
      case 'rfq_quote_edit':
        return this.editQuote(command, engine);
      case 'rfq_quote_cancel':
        return this.cancelQuote(command);
      case 'rfq_quote_cancel_all':
        return this.cancelAllQuotes(command);
      case 'rfq_accept':
        return this.accept(command, engine);
      case 'rfq_trigger_cancel':
        return this.cancelTrigger(command);
      default: {
        const _exhaustive: never = command;
        return _exhaustive;
      }
    }
  }

  react(engineEvents: readonly CoreEvent[], stamp: CommandStamp, _engine: EnginePort): readonly RfqEvent[] {
    for (const event of engineEvents) {
      if (event.type !== 'instrument' || event.state !== 'expired') continue;
      for (const id of [...this.state.active]) {
        const rfq = this.state.rfqs.get(id)!;
        const uses =
          rfq.legs.some((leg) => leg.instrumentName === event.instrumentName) ||
          rfq.hedge?.instrumentName === event.instrumentName;
        if (uses) this.closeRfq(rfq, 'closed', 'instrument_expired', stamp.ts, 'rfq_closed');
      }
    }
    return this.flush();
  }

  advance(stamp: CommandStamp, _engine: EnginePort): readonly RfqEvent[] {
    const now = stamp.ts;
    for (const id of [...this.state.active]) {
      const rfq = this.state.rfqs.get(id)!;
      for (const quote of this.state.quotesOf(id)) {
        if (quote.status === 'open' && quote.expiresAt !== null && quote.expiresAt <= now) {
          quote.status = 'expired';
          quote.statusReason = 'expired';
          quote.lastUpdatedAt = quote.expiresAt;
          this.quoteChanged(quote, rfq);
        }
      }
      if (now >= rfq.expiresAt) {
        this.closeRfq(rfq, 'expired', 'expired', rfq.expiresAt, 'rfq_expired');
      } else if (rfq.status === 'created' && now >= rfq.openAt) {
        rfq.status = 'open';
        rfq.lastUpdatedAt = rfq.openAt;
        this.rfqChanged(rfq);
      }
    }
    this.state.prune(now, this.config.retentionMs);
    return this.flush();
  }

  nextWakeup(): number | null {
    let next = Number.POSITIVE_INFINITY;
    for (const id of this.state.active) {
      const rfq = this.state.rfqs.get(id)!;
      next = Math.min(next, rfq.status === 'created' ? rfq.openAt : rfq.expiresAt);
      for (const quote of this.state.quotesOf(id)) {
        if (quote.status === 'open' && quote.expiresAt !== null) next = Math.min(next, quote.expiresAt);
      }
    }
    return next === Number.POSITIVE_INFINITY ? null : next;
  }

  snapshot(): DeskSnapshot {
    return this.state.snapshot();
  }

  restore(snapshot: unknown): void {
    this.state = DeskState.restore(snapshot as DeskSnapshot);
  }

  stateHash(): string {
    return hashText(JSON.stringify(this.state.snapshot()));
  }

  // -------------------------------------------------------------------------------------------
  // Queries (not journaled): copies of the records

  /** The RFQ by the taker's id, if it belongs to one of `accountIds`. */
  takerRfq(accountIds: ReadonlySet<number>, blockRfqId: string): RfqRecord | undefined {
    const rfq = this.state.rfqs.get(blockRfqId);
    return rfq !== undefined && accountIds.has(rfq.takerAccountId) ? clone(rfq) : undefined;
  }

  /** The RFQ by a desk's own maker-side id. */
  makerRfq(desk: string, makerRfqId: string): RfqRecord | undefined {
    const entry = this.state.makerIds.get(makerRfqId);
    if (entry === undefined || entry.desk !== desk) return undefined;
    const rfq = this.state.rfqs.get(entry.rfqId);
    return rfq === undefined ? undefined : clone(rfq);
  }

  takerRfqs(accountIds: ReadonlySet<number>): RfqRecord[] {
    return [...this.state.rfqs.values()].filter((rfq) => accountIds.has(rfq.takerAccountId)).map(clone);
  }

  makerRfqs(desk: string): RfqRecord[] {
    return [...this.state.rfqs.values()]
      .filter((rfq) => rfq.makerRecords.some((r) => r.desk === desk))
      .map(clone);
  }

  quotesOfRfq(blockRfqId: string): QuoteRecord[] {
    return this.state.quotesOf(blockRfqId).map(clone);
  }

  quote(quoteId: string): QuoteRecord | undefined {
    const quote = this.state.quotes.get(quoteId);
    return quote === undefined ? undefined : clone(quote);
  }

  quotesOfDesk(desk: string): QuoteRecord[] {
    return [...this.state.quotes.values()].filter((quote) => quote.desk === desk).map(clone);
  }

  /**
   * The RFQ id an account should see on its block-trade records: the maker-side id of the
   * desk whose quote that account filled, else the taker's id (for `user.trades` formatting).
   */
  rfqIdForAccount(blockRfqId: string, accountId: number): string {
    const rfq = this.state.rfqs.get(blockRfqId);
    if (rfq === undefined || rfq.takerAccountId === accountId) return blockRfqId;
    const fill = this.state.trades
      .find((t) => t.blockRfqId === blockRfqId)
      ?.fills.find((f) => f.makerAccountId === accountId);
    const record = fill === undefined ? undefined : rfq.makerRecords.find((r) => r.desk === fill.desk);
    return record?.blockRfqId ?? blockRfqId;
  }

  /** Traded RFQs, oldest first. */
  trades(): readonly RfqTradeRecord[] {
    return this.state.trades;
  }

  // -------------------------------------------------------------------------------------------
  // Commands

  private createRfq(command: CreateRfq): Result {
    if (labelTooLong(command.label)) {
      return this.refuse('invalid_arguments', `label is longer than ${LABEL_MAX_LENGTH}`, { field: 'label' });
    }
    const derived = deriveStructure(command.legs, command.hedge, this.market, this.config.maxLegs);
    if (!derived.ok) return this.refuseWith(derived.error);
    const structure = derived.structure;
    const allocations = checkAllocations(command, structure.quantity);
    if (!allocations.ok) return this.refuseWith(allocations.error);
    const repeated = command.makers.findIndex((name, index) => command.makers.indexOf(name) !== index);
    if (repeated >= 0) {
      return this.refuse('invalid_arguments', `maker ${command.makers[repeated]} is listed twice`, {
        field: `makers[${repeated}]`,
      });
    }
    const desks = [...new Set(command.targetDesks)].sort();
    if (!command.disclosed && desks.length < this.config.minMakersForAnonymous) {
      return this.refuse(
        'anonymous_rfq_too_few_makers',
        `an anonymous RFQ must target at least ${this.config.minMakersForAnonymous} makers (it targets ${desks.length})`,
        { field: 'disclosed', min: this.config.minMakersForAnonymous, targeted: desks.length },
      );
    }
    // No request field is at fault: the account already holds its quota of open RFQs.
    if (this.openRfqsOf(command.accountId) >= this.config.maxOpenRfqsPerTaker) {
      return this.refuse('too_many_open_block_rfqs', undefined, { max: this.config.maxOpenRfqsPerTaker });
    }
    const state = this.state;
    const id = String(++state.rfqCounter);
    const rfq: RfqRecord = {
      blockRfqId: id,
      number: state.rfqCounter,
      takerAccountId: command.accountId,
      takerUserId: command.userId,
      takerAlias: command.takerAlias,
      makers: [...command.makers],
      makerRecords: desks.map((desk) => ({ desk, blockRfqId: String(++state.rfqCounter) })),
      disclosed: command.disclosed,
      label: command.label,
      currency: structure.currency,
      quoteCurrency: structure.quoteCurrency,
      legs: structure.legs,
      hedge: structure.hedge,
      comboId: structure.comboId,
      quantity: structure.quantity,
      quantityStep: structure.quantityStep,
      minTradeAmount: structure.minTradeAmount,
      priceScale: structure.priceScale,
      legTickUnits: structure.legTickUnits,
      tradeAllocations: allocations.allocations,
      createdAt: command.ts,
      openAt: command.ts + this.config.gracePeriodMs,
      expiresAt: command.ts + this.config.lifetimeMs,
      status: 'created',
      closedReason: null,
      lastUpdatedAt: command.ts,
      filledQuantity: 0,
      triggers: [],
    };
    state.addRfq(rfq);
    this.rfqChanged(rfq);
    return this.ok({ kind: 'rfq', rfq: clone(rfq), quotes: [] });
  }

  private cancelRfq(command: CancelRfq): Result {
    const rfq = this.state.rfqs.get(command.blockRfqId);
    if (rfq === undefined || rfq.takerAccountId !== command.accountId)
      return this.rfqNotFound(command.blockRfqId);
    if (!this.state.active.has(rfq.blockRfqId)) {
      return this.refuse('rfq_not_open', `RFQ is ${rfq.status}`, { field: 'blockRfqId', status: rfq.status });
    }
    this.closeRfq(rfq, 'cancelled', 'user_request', command.ts, 'rfq_cancelled');
    return this.ok({ kind: 'rfq', rfq: clone(rfq), quotes: this.quotesOfRfq(rfq.blockRfqId) });
  }

  private cancelTrigger(command: CancelTrigger): Result {
    const rfq = this.state.rfqs.get(command.blockRfqId);
    if (rfq === undefined || rfq.takerAccountId !== command.accountId)
      return this.rfqNotFound(command.blockRfqId);
    const kept = rfq.triggers.filter((t) => command.side !== null && t.side !== command.side);
    if (kept.length === rfq.triggers.length) {
      const which = command.side === null ? 'no trade trigger' : `no ${command.side} trade trigger`;
      return this.refuse('not_found', `RFQ ${rfq.blockRfqId} has ${which}`, {
        field: command.side === null ? 'blockRfqId' : 'side',
      });
    }
    rfq.triggers = kept;
    rfq.lastUpdatedAt = command.ts;
    this.triggersChanged(rfq);
    return this.ok({ kind: 'rfq', rfq: clone(rfq), quotes: this.quotesOfRfq(rfq.blockRfqId) });
  }

  private createQuote(command: CreateQuote, engine: EnginePort): Result {
    const entry = this.state.makerIds.get(command.blockRfqId);
    if (entry === undefined || entry.desk !== command.desk) return this.rfqNotFound(command.blockRfqId);
    const rfq = this.state.rfqs.get(entry.rfqId)!;
    if (!this.state.active.has(rfq.blockRfqId)) {
      return this.refuse('rfq_not_open', `RFQ is ${rfq.status}`, { field: 'blockRfqId', status: rfq.status });
    }
    // Self-match prevention covers every account of the taker's user, not only its own account.
    if (command.accountId === rfq.takerAccountId || command.userId === rfq.takerUserId) {
      return this.refuse('order_overlap', 'a maker cannot quote an RFQ of its own user', {
        field: 'blockRfqId',
      });
    }
    const terms = validateTerms(rfq, command, command.ts, this.market);
    if (!terms.ok) return this.refuseWith(terms.error);
    const quotes = this.state.quotesOf(rfq.blockRfqId);
    const own = quotes.filter((quote) => quote.desk === command.desk && quote.status === 'open').length;
    if (own >= this.config.maxQuotesPerMakerPerRfq) {
      return this.refuse('too_many_quotes_per_block_rfq', undefined, {
        field: 'blockRfqId',
        max: this.config.maxQuotesPerMakerPerRfq,
      });
    }
    const ownSide = this.openQuotesOnSide(quotes, command.desk, command.side, null);
    if (ownSide >= this.config.maxQuotesPerMakerPerRfqSide) {
      return this.refuse('too_many_quotes_per_block_rfq_side', undefined, {
        field: 'side',
        max: this.config.maxQuotesPerMakerPerRfqSide,
      });
    }
    if (crossesOwnQuote(quotes, command.desk, command.side, terms.price, null)) {
      return this.refuse('quote_crossed', undefined, { field: 'price' });
    }
    const state = this.state;
    const quote: QuoteRecord = {
      quoteId: String(++state.quoteCounter),
      number: state.quoteCounter,
      rfqId: rfq.blockRfqId,
      makerRfqId: command.blockRfqId,
      desk: command.desk,
      accountId: command.accountId,
      side: command.side,
      quantity: command.quantity,
      filledQuantity: 0,
      price: terms.price,
      legs: terms.legs,
      hedgePrice: terms.hedgePrice,
      executionInstruction: command.executionInstruction,
      expiresAt: command.expiresAt,
      label: command.label,
      status: 'open',
      statusReason: null,
      replaced: false,
      createdAt: command.ts,
      lastUpdatedAt: command.ts,
      priority: ++state.priorityCounter,
    };
    state.addQuote(quote);
    this.quoteChanged(quote, rfq);
    this.fireTriggers(rfq, command, engine);
    return this.ok({ kind: 'quote', quote: clone(quote) });
  }

  private editQuote(command: EditQuote, engine: EnginePort): Result {
    const quote = this.state.quotes.get(command.quoteId);
    if (quote === undefined || quote.desk !== command.desk) return this.quoteNotFound(command.quoteId);
    if (quote.status !== 'open') {
      return this.refuse('quote_not_open', `quote is ${quote.status}`, {
        field: 'quoteId',
        status: quote.status,
      });
    }
    const rfq = this.state.rfqs.get(quote.rfqId)!;
    const expiresAt = command.expiresAt === undefined ? quote.expiresAt : command.expiresAt;
    const label = command.label ?? quote.label;
    const terms = validateTerms(rfq, { ...command, expiresAt, label }, command.ts, this.market);
    if (!terms.ok) return this.refuseWith(terms.error);
    if (
      command.side !== quote.side &&
      this.openQuotesOnSide(this.state.quotesOf(rfq.blockRfqId), command.desk, command.side, quote.quoteId) >=
        this.config.maxQuotesPerMakerPerRfqSide
    ) {
      return this.refuse('too_many_quotes_per_block_rfq_side', undefined, {
        field: 'side',
        max: this.config.maxQuotesPerMakerPerRfqSide,
      });
    }
    if (
      crossesOwnQuote(
        this.state.quotesOf(rfq.blockRfqId),
        command.desk,
        command.side,
        terms.price,
        quote.quoteId,
      )
    ) {
      return this.refuse('quote_crossed', undefined, { field: 'price' });
    }
    quote.side = command.side;
    quote.quantity = command.quantity;
    quote.price = terms.price;
    quote.legs = terms.legs;
    quote.hedgePrice = terms.hedgePrice;
    quote.executionInstruction = command.executionInstruction;
    quote.expiresAt = expiresAt;
    quote.label = label;
    quote.replaced = true;
    quote.lastUpdatedAt = command.ts;
    quote.priority = ++this.state.priorityCounter;
    this.quoteChanged(quote, rfq);
    this.fireTriggers(rfq, command, engine);
    return this.ok({ kind: 'quote', quote: clone(quote) });
  }

  private cancelQuote(command: CancelQuote): Result {
    const quote = this.state.quotes.get(command.quoteId);
    if (quote === undefined || quote.desk !== command.desk) return this.quoteNotFound(command.quoteId);
    if (quote.status !== 'open') {
      return this.refuse('quote_not_open', `quote is ${quote.status}`, {
        field: 'quoteId',
        status: quote.status,
      });
    }
    this.endQuote(quote, 'cancelled', 'user_request', command.ts);
    return this.ok({ kind: 'quote', quote: clone(quote) });
  }

  private cancelAllQuotes(command: CancelAllQuotes): Result {
    let rfqId: string | null = null;
    if (command.blockRfqId !== null) {
      const entry = this.state.makerIds.get(command.blockRfqId);
      if (entry === undefined || entry.desk !== command.desk) return this.rfqNotFound(command.blockRfqId);
      rfqId = entry.rfqId;
    }
    const cancelled: QuoteRecord[] = [];
    for (const quote of this.state.quotes.values()) {
      if (quote.desk !== command.desk || quote.status !== 'open') continue;
      if (rfqId !== null && quote.rfqId !== rfqId) continue;
      this.endQuote(quote, 'cancelled', 'user_request', command.ts);
      cancelled.push(clone(quote));
    }
    return this.ok({ kind: 'count', count: cancelled.length, quotes: cancelled });
  }

  private accept(command: AcceptRfq, engine: EnginePort): Result {
    const rfq = this.state.rfqs.get(command.blockRfqId);
    if (rfq === undefined || rfq.takerAccountId !== command.accountId)
      return this.rfqNotFound(command.blockRfqId);
    if (rfq.status !== 'open') {
      const message = rfq.status === 'created' ? 'RFQ is in its grace period' : `RFQ is ${rfq.status}`;
      return this.refuse('rfq_not_open', message, { field: 'blockRfqId', status: rfq.status });
    }
    const quantity = command.quantity ?? rfq.quantity;
    if (!Number.isSafeInteger(quantity) || quantity <= 0 || quantity > rfq.quantity) {
      return this.refuse('invalid_amount', 'quantity must be positive and at most the RFQ quantity', {
        field: 'quantity',
      });
    }
    if (quantity < rfq.minTradeAmount) {
      return this.refuse('qty_too_low', 'quantity is below the RFQ minTradeAmount', {
        field: 'quantity',
        minTradeAmount: formatRfqLots(rfq, rfq.minTradeAmount),
      });
    }
    let hedgeLimit: number | null = null;
    if (command.hedge != null) {
      const hedge = checkAcceptHedge(rfq, command.hedge, quantity);
      if (!hedge.ok) return this.refuseWith(hedge.error);
      hedgeLimit = hedge.limit;
    }
    const trade = this.tryTrade(rfq, command.side, command.price, quantity, command, engine, hedgeLimit);
    if (trade.kind === 'traded')
      return this.ok({ kind: 'accept', rfq: clone(rfq), trade: trade.trade, trigger: null });
    if (trade.kind === 'refused') return this.refuseWith(trade.refusal);
    if (command.timeInForce === 'fill_or_kill') {
      return this.refuse('not_fully_filled', undefined, {
        field: 'price',
        available: formatRfqLots(rfq, trade.available),
      });
    }
    const trigger: RfqTrigger = {
      side: command.side,
      price: command.price,
      quantity,
      createdAt: command.ts,
      ...(hedgeLimit === null ? {} : { hedgePrice: hedgeLimit }),
    };
    rfq.triggers = [...rfq.triggers.filter((t) => t.side !== command.side), trigger];
    rfq.lastUpdatedAt = command.ts;
    this.triggersChanged(rfq);
    return this.ok({ kind: 'accept', rfq: clone(rfq), trade: null, trigger: { ...trigger } });
  }

  // -------------------------------------------------------------------------------------------
  // Trading

  private tryTrade(
    rfq: RfqRecord,
    side: RfqTrigger['side'],
    limit: number,
    quantity: number,
    stamp: CommandStamp,
    engine: EnginePort,
    hedgeLimit: number | null,
  ):
    | { kind: 'traded'; trade: RfqTradeRecord }
    | { kind: 'refused'; refusal: Refusal }
    | { kind: 'unfilled'; available: number } {
    const quotes = this.state.quotesOf(rfq.blockRfqId);
    const outcome = executeAccept(rfq, quotes, side, limit, quantity, stamp, engine, hedgeLimit);
    for (const quote of outcome.touched) if (quote.status !== 'filled') this.quoteChanged(quote, rfq);
    if (outcome.kind === 'refused') return { kind: 'refused', refusal: outcome.refusal };
    if (outcome.kind === 'unfilled') return { kind: 'unfilled', available: outcome.available };
    const traded = outcome.fills.reduce((sum, fill) => sum + fill.quantity, 0);
    rfq.filledQuantity += traded;
    const trade: RfqTradeRecord = {
      blockRfqId: rfq.blockRfqId,
      number: rfq.number,
      timestamp: stamp.ts,
      currency: rfq.currency,
      takerAccountId: rfq.takerAccountId,
      side,
      quantity: traded,
      quantityStep: rfq.quantityStep,
      priceScale: rfq.priceScale,
      comboId: rfq.comboId,
      legs: rfq.legs,
      hedge: rfq.hedge,
      markPrice: this.strategyMark(rfq),
      fills: outcome.fills,
      quoteCurrency: rfq.quoteCurrency,
    };
    insertTrade(this.state.trades, trade);
    for (const quote of outcome.touched) if (quote.status === 'filled') this.quoteChanged(quote, rfq);
    const full = rfq.filledQuantity === rfq.quantity;
    this.closeRfq(rfq, full ? 'filled' : 'traded', full ? 'filled' : 'traded', stamp.ts, 'rfq_closed');
    this.tradedEvents.push({ type: 'rfq_traded', trade });
    return { kind: 'traded', trade };
  }

  /** Re-checks the RFQ's GTC triggers after a quote change; the first that fills trades. */
  private fireTriggers(rfq: RfqRecord, stamp: CommandStamp, engine: EnginePort): void {
    for (const trigger of [...rfq.triggers]) {
      if (rfq.status !== 'open') return;
      const result = this.tryTrade(
        rfq,
        trigger.side,
        trigger.price,
        trigger.quantity,
        stamp,
        engine,
        trigger.hedgePrice ?? null,
      );
      if (result.kind === 'refused') {
        rfq.triggers = rfq.triggers.filter((t) => t !== trigger);
        rfq.lastUpdatedAt = stamp.ts;
        this.triggersChanged(rfq);
      }
    }
  }

  /** RFQs of the taker account still `created` or `open` (derived: no extra state). */
  private openRfqsOf(accountId: number): number {
    let count = 0;
    for (const id of this.state.active) if (this.state.rfqs.get(id)!.takerAccountId === accountId) count++;
    return count;
  }

  private openQuotesOnSide(
    quotes: readonly QuoteRecord[],
    desk: string,
    side: QuoteRecord['side'],
    exceptQuoteId: string | null,
  ): number {
    let count = 0;
    for (const quote of quotes) {
      if (
        quote.desk === desk &&
        quote.side === side &&
        quote.status === 'open' &&
        quote.quoteId !== exceptQuoteId
      )
        count++;
    }
    return count;
  }

  private strategyMark(rfq: RfqRecord): number | null {
    let total = 0;
    for (const [index, leg] of rfq.legs.entries()) {
      const mark = this.market.markPrice(leg.instrumentName);
      if (mark === null) return null;
      total += (leg.side === 'buy' ? 1 : -1) * leg.ratio * mark * rfq.legTickUnits[index]!;
    }
    return total;
  }

  // -------------------------------------------------------------------------------------------
  // State changes and events

  private closeRfq(
    rfq: RfqRecord,
    status: RfqRecord['status'],
    reason: string,
    ts: number,
    quoteReason: string,
  ): void {
    rfq.status = status;
    rfq.closedReason = reason;
    rfq.lastUpdatedAt = ts;
    rfq.triggers = [];
    this.state.active.delete(rfq.blockRfqId);
    for (const quote of this.state.quotesOf(rfq.blockRfqId)) {
      if (quote.status === 'open') this.endQuote(quote, 'cancelled', quoteReason, ts);
    }
    this.rfqChanged(rfq);
  }

  private endQuote(quote: QuoteRecord, status: QuoteRecord['status'], reason: string, ts: number): void {
    quote.status = status;
    quote.statusReason = reason;
    quote.lastUpdatedAt = ts;
    this.quoteChanged(quote, this.state.rfqs.get(quote.rfqId)!);
  }

  /** The RFQ's shared record changed (status, …): every party's view changed. */
  private rfqChanged(rfq: RfqRecord): void {
    const audience = this.audienceOf(rfq);
    audience.taker = true;
    for (const record of rfq.makerRecords) audience.desks.add(record.desk);
  }

  /** Only the taker's triggers changed: makers never see them. */
  private triggersChanged(rfq: RfqRecord): void {
    this.audienceOf(rfq).taker = true;
  }

  /** A quote changed: its own desk sees it, the taker only once quotes are visible to it. */
  private quoteChanged(quote: QuoteRecord, rfq: RfqRecord): void {
    this.events.push({ type: 'rfq_quote_changed', quote: clone(quote), currency: rfq.currency });
    const audience = this.audienceOf(rfq);
    audience.desks.add(quote.desk);
    if (rfq.status !== 'created') audience.taker = true;
  }

  private audienceOf(rfq: RfqRecord): PendingAudience {
    let audience = this.dirty.get(rfq.blockRfqId);
    if (audience === undefined) {
      audience = { taker: false, desks: new Set() };
      this.dirty.set(rfq.blockRfqId, audience);
    }
    return audience;
  }

  /** The step's events: quote changes, then each changed RFQ once, then trades. */
  private flush(): RfqEvent[] {
    // Most steps (every engine command the desk only watches) change nothing: no allocation.
    if (this.events.length === 0 && this.dirty.size === 0 && this.tradedEvents.length === 0) return NO_EVENTS;
    const events = this.events;
    for (const [id, pending] of this.dirty) {
      const rfq = this.state.rfqs.get(id);
      if (rfq === undefined) continue;
      const audience: RfqAudience = { taker: pending.taker, desks: [...pending.desks].sort() };
      events.push({ type: 'rfq_changed', rfq: clone(rfq), quotes: this.quotesOfRfq(id), audience });
    }
    for (const traded of this.tradedEvents) events.push(traded);
    // A new Map, not clear(): docs/decisions.md, "No Map churn on the hot path".
    if (this.dirty.size > 0) this.dirty = new Map();
    this.tradedEvents = [];
    this.events = [];
    return events;
  }

  private ok(value: RfqValue): Result {
    return { ok: true, value, events: this.flush() };
  }

  private refuse(name: Refusal['name'], message: string | undefined, data: Record<string, unknown>): Result {
    return {
      ok: false,
      error: { name, message: message ?? ERROR_CATALOGUE[name].message, data },
      events: this.flush(),
    };
  }

  private refuseWith(refusal: Refusal): Result {
    return {
      ok: false,
      error: { name: refusal.name, message: refusal.message, data: refusal.data },
      events: this.flush(),
    };
  }

  private rfqNotFound(blockRfqId: string): Result {
    return this.refuse('not_found', `no RFQ ${blockRfqId}`, { field: 'blockRfqId', blockRfqId });
  }

  private quoteNotFound(quoteId: string): Result {
    return this.refuse('not_found', `no quote ${quoteId}`, { field: 'quoteId', quoteId });
  }
}

/** Keeps trades ordered by (timestamp, RFQ number) with stamps non-decreasing. */
function insertTrade(trades: RfqTradeRecord[], trade: RfqTradeRecord): void {
  let at = trades.length;
  while (at > 0 && trades[at - 1]!.timestamp === trade.timestamp && trades[at - 1]!.number > trade.number)
    at--;
  trades.splice(at, 0, trade);
}

/**
 * The RFQ's trade allocations, checked: each names either a user or a broker client, takes a
 * positive amount, and together they take at most the RFQ quantity. A key acts only on its own
 * user's accounts, so a `userId` allocation must name the taker's own user (the edge resolves it
 * to one of that user's accounts); `clientInfo` allocations are booked to the taker.
 */
function checkAllocations(
  command: CreateRfq,
  quantity: number,
):
  | { readonly ok: true; readonly allocations: RfqAllocation[] }
  | { readonly ok: false; readonly error: Refusal } {
  const refused = (name: Refusal['name'], message: string, field: string) => ({
    ok: false as const,
    error: { name, message, data: { field } },
  });
  const allocations: RfqAllocation[] = [];
  let allocated = 0;
  for (const [index, allocation] of command.tradeAllocations.entries()) {
    const field = `tradeAllocations[${index}]`;
    if (!Number.isSafeInteger(allocation.amount) || allocation.amount <= 0) {
      return refused('invalid_amount', 'allocation amount must be positive', `${field}.amount`);
    }
    const hasUser = allocation.userId != null;
    if (hasUser === (allocation.clientInfo != null)) {
      return refused('invalid_arguments', 'an allocation names either userId or clientInfo', field);
    }
    if (hasUser && allocation.userId !== command.userId) {
      return refused(
        'account_not_owned',
        `user ${allocation.userId} is not the taker's user: allocations go to the taker's own accounts`,
        `${field}.userId`,
      );
    }
    allocated += allocation.amount;
    allocations.push({
      amount: allocation.amount,
      userId: allocation.userId ?? null,
      accountId: allocation.accountId ?? null,
      clientInfo:
        allocation.clientInfo == null
          ? null
          : {
              clientId: allocation.clientInfo.clientId,
              clientLinkId: allocation.clientInfo.clientLinkId,
              name: allocation.clientInfo.name ?? null,
            },
    });
  }
  if (allocated > quantity) {
    return refused('invalid_amount', 'trade allocations exceed the RFQ quantity', 'tradeAllocations');
  }
  return { ok: true, allocations };
}
