/**
 * Block RFQ methods (`block/rfqs/*`) and push channels (`block_rfq.taker.{currency}`,
 * `block_rfq.maker.{currency}`, currency a symbol or `any`).
 *
 * Roles come from the key: create_rfq, cancel_rfq and accept need `taker`; quoting needs
 * `maker` and a desk name; get_rfqs answers by role; get_trades and get_instruments need any
 * authenticated key. A key acts on its own user's accounts only: trade allocations name the
 * taker's own user. Currency filters and channels follow one classification
 * (../../domain/currency.ts). Handlers parse decimals against the RFQ's own grids (read from the
 * desk) and submit domain-unit commands; the desk re-validates everything when the command applies.
 * An RFQ or quote of someone else is indistinguishable from a missing one (`not_found`).
 */
import { type Static, Type } from '@sinclair/typebox';
import type { SubResult } from '../../core/submachine.ts';
import type { Side } from '../../core/types.ts';
import {
  currenciesOf,
  isRfqCurrency,
  matchesCurrency,
  matchesInstrument,
  RFQ_CURRENCIES,
} from '../../domain/currency.ts';
import { DecimalGrid } from '../../domain/decimal.ts';
import { VenueError } from '../../domain/errors.ts';
import type { RfqDesk } from '../../rfq/desk.ts';
import { deriveStructure, type RfqMarket } from '../../rfq/structure.ts';
import { pageTrades, TRADES_DEFAULT_COUNT } from '../../rfq/trades.ts';
import {
  DEFAULT_RFQ_CONFIG,
  type QuoteHedgeInput,
  type QuoteLegInput,
  type QuoteRecord,
  type RfqEvent,
  type RfqRecord,
  type RfqValue,
  type UnstampedRfqCommand,
} from '../../rfq/types.ts';
import type { Principal } from '../auth/authenticator.ts';
import { type ChannelRegistry, topicFor } from '../channels.ts';
import type { ReadPort } from '../ports.ts';
import type { CallContext, MethodRegistry } from '../registry.ts';
import {
  AcceptParams,
  AcceptResultSchema,
  CancelAllQuotesParams,
  CancelTriggerParams,
  CreateQuoteParams,
  CreateRfqParams,
  EditQuoteParams,
  GetQuotesParams,
  GetRfqInstrumentsParams,
  GetRfqsParams,
  GetTradesParams,
  PageOf,
  QuoteIdParams,
  QuoteSchema,
  RfqIdParams,
  RfqInstrumentSchema,
  RfqSchema,
  RfqTradeSchema,
} from '../schemas/rfq.ts';
import {
  formatRfqQuantity,
  formatStrategyPrice,
  parseRfqQuantity,
  parseStrategyPrice,
  quoteToWire,
  rfqInstrumentToWire,
  rfqToWire,
  rfqTradeToWire,
  triggerToWire,
} from '../wire/rfq.ts';
import { instrumentOf, principalOf } from './context.ts';

/** The sub-machine name the composite core registers the desk under. */
export const RFQ_SUBMACHINE = 'rfq';

export type RfqDeskQueries = Pick<
  RfqDesk,
  'takerRfq' | 'makerRfq' | 'takerRfqs' | 'makerRfqs' | 'quotesOfRfq' | 'quote' | 'quotesOfDesk' | 'trades'
>;

export interface RfqMethodDeps {
  /** Stamps, applies and journals a desk command (CoreService.submitMachine). */
  submit(command: UnstampedRfqCommand): Promise<SubResult<RfqValue, RfqEvent>>;
  readonly desk: RfqDeskQueries;
  readonly reads: ReadPort;
  /** Desk names of every maker key (an RFQ without `makers` goes to all of them). */
  makerDesks(): readonly string[];
  now(): number;
}

async function submitOrThrow(deps: RfqMethodDeps, command: UnstampedRfqCommand): Promise<RfqValue> {
  const result = await deps.submit(command);
  if (!result.ok) throw new VenueError(result.error.name as never, result.error.message, result.error.data);
  return result.value;
}

function deskOf(context: CallContext): { principal: Principal; desk: string } {
  const principal = principalOf(context);
  if (principal.deskName === null)
    throw new VenueError('permission_denied', 'quoting needs a maker key with a desk name');
  return { principal, desk: principal.deskName };
}

function ownRfq(deps: RfqMethodDeps, context: CallContext, blockRfqId: string): RfqRecord {
  const rfq = deps.desk.takerRfq(principalOf(context).accountIds, blockRfqId);
  if (rfq === undefined)
    throw new VenueError('not_found', `no RFQ ${blockRfqId}`, { field: 'blockRfqId', blockRfqId });
  return rfq;
}

function makerRfq(deps: RfqMethodDeps, desk: string, blockRfqId: string): RfqRecord {
  const rfq = deps.desk.makerRfq(desk, blockRfqId);
  if (rfq === undefined)
    throw new VenueError('not_found', `no RFQ ${blockRfqId}`, { field: 'blockRfqId', blockRfqId });
  return rfq;
}

/**
 * The account an allocation to `userId` is booked to: the key's own account, since a key acts
 * only on its own user's accounts (an allocation to another user is refused).
 */
function allocationAccount(principal: Principal, userId: number, index: number): number {
  if (userId !== principal.userId) {
    throw new VenueError('account_not_owned', `user ${userId} is not this key's user`, {
      field: `tradeAllocations[${index}].userId`,
    });
  }
  return principal.defaultAccountId;
}

function marketOfReads(reads: ReadPort, now: number): RfqMarket {
  return {
    instrument: (name) => reads.instrument(name),
    isActive: (name) => {
      const instrument = reads.instrument(name);
      return (
        instrument !== undefined && (instrument.spec.expiration === null || instrument.spec.expiration > now)
      );
    },
    markPrice: () => null,
    priceBand: () => null,
  };
}

function parseRatio(text: string, field: string): number {
  const ratio = Number(text);
  if (!/^\d+(\.\d{1,2})?$/.test(text) || !Number.isInteger(ratio) || ratio <= 0) {
    throw new VenueError('invalid_arguments', `${field} must be the RFQ's integer ratio`, { field });
  }
  return ratio;
}

/** A currency filter of get_rfqs, get_trades and get_instruments: a spec symbol or `any`, any case. */
function checkedCurrency(text: string): string {
  if (!isRfqCurrency(text)) {
    throw new VenueError(
      'invalid_arguments',
      `unknown currency ${JSON.stringify(text)} (one of ${RFQ_CURRENCIES.join(', ')}, any)`,
      { field: 'currency' },
    );
  }
  return text;
}

/** A quote's hedge in the hedge instrument's units; the desk checks it against the RFQ's hedge. */
function quoteHedge(deps: RfqMethodDeps, hedge: NonNullable<QuoteParams['hedge']>): QuoteHedgeInput {
  const instrument = instrumentOf(deps.reads, hedge.instrumentName, 'hedge.instrumentName');
  return {
    instrumentName: instrument.name,
    side: hedge.side as Side,
    amount: instrument.parseQuantity(hedge.quantity, 'hedge.quantity'),
    price: instrument.parsePrice(hedge.price, 'hedge.price'),
  };
}

type QuoteParams = Pick<
  Static<typeof CreateQuoteParams>,
  'label' | 'executionInstruction' | 'legs' | 'hedge' | 'quantity' | 'side' | 'price' | 'expiresAt'
>;

function quoteTerms(deps: RfqMethodDeps, rfq: RfqRecord, params: QuoteParams) {
  const legs: QuoteLegInput[] = params.legs.map((leg, index) => ({
    instrumentName: leg.instrumentName,
    side: leg.side,
    ratio: parseRatio(leg.ratio, `legs[${index}].ratio`),
    price: instrumentOf(deps.reads, leg.instrumentName, `legs[${index}].instrumentName`).parsePrice(
      leg.price,
      `legs[${index}].price`,
    ),
  }));
  return {
    side: params.side as Side,
    quantity: parseRfqQuantity(rfq, params.quantity),
    price: params.price == null ? null : parseStrategyPrice(rfq, params.price),
    legs,
    hedge: params.hedge == null ? null : quoteHedge(deps, params.hedge),
    executionInstruction: params.executionInstruction,
    expiresAt: params.expiresAt ?? null,
    label: params.label ?? '',
  };
}

/** An edit that leaves out `expiresAt` or `label` (or sends null) keeps the quote's own. */
function keepOmitted(terms: ReturnType<typeof quoteTerms>, params: QuoteParams) {
  const { expiresAt, label, ...rest } = terms;
  return {
    ...rest,
    ...(params.expiresAt == null ? {} : { expiresAt }),
    ...(params.label == null ? {} : { label }),
  };
}

export function registerRfqMethods(registry: MethodRegistry, deps: RfqMethodDeps): void {
  const { reads, desk } = deps;
  const lookup = (name: string) => reads.instrument(name);
  /** The taker's view of the RFQ a taker command answered with. */
  const takerView = (value: RfqValue) => {
    if (value.kind !== 'rfq') throw new VenueError('internal_error');
    return rfqToWire(value.rfq, value.quotes, { role: 'taker' }, lookup);
  };
  const quoteWire = (quote: QuoteRecord) => {
    const rfq = desk.makerRfq(quote.desk, quote.makerRfqId);
    if (rfq === undefined) throw new VenueError('not_found', undefined, { field: 'quoteId' });
    return quoteToWire(quote, rfq, lookup);
  };

  registry.register({
    name: 'block/rfqs/create_rfq',
    summary: 'Creates a Block RFQ (takers). Ratios come from the leg quantities; status starts as created.',
    access: 'private',
    roles: ['taker'],
    params: CreateRfqParams,
    result: RfqSchema,
    handler: async (params, context) => {
      const principal = principalOf(context);
      const legs = params.legs.map((leg, index) => ({
        instrumentName: leg.instrumentName,
        side: leg.side as Side,
        amount: instrumentOf(reads, leg.instrumentName, `legs[${index}].instrumentName`).parseQuantity(
          leg.quantity,
          `legs[${index}].quantity`,
        ),
      }));
      let hedge = null;
      if (params.hedge != null) {
        const instrument = instrumentOf(reads, params.hedge.instrumentName, 'hedge.instrumentName');
        hedge = {
          instrumentName: instrument.name,
          side: params.hedge.side as Side,
          amount: instrument.parseQuantity(params.hedge.quantity, 'hedge.quantity'),
          price: instrument.parsePrice(params.hedge.price, 'hedge.price'),
        };
      }
      const structure = deriveStructure(
        legs,
        hedge,
        marketOfReads(reads, deps.now()),
        DEFAULT_RFQ_CONFIG.maxLegs,
      );
      if (!structure.ok)
        throw new VenueError(structure.error.name, structure.error.message, structure.error.data);
      const grid = new DecimalGrid(structure.structure.quantityStep);
      const tradeAllocations = (params.tradeAllocations ?? []).map((a, index) => ({
        amount: grid.parse(a.amount, `tradeAllocations[${index}].amount`),
        userId: a.userId ?? null,
        accountId: a.userId == null ? null : allocationAccount(principal, a.userId, index),
        clientInfo: a.clientInfo ?? null,
      }));
      const known = new Set(deps.makerDesks());
      const makers = params.makers ?? [];
      for (const [index, name] of makers.entries()) {
        if (!known.has(name)) {
          throw new VenueError('invalid_arguments', `unknown maker desk ${name}`, {
            field: `makers[${index}]`,
          });
        }
      }
      const value = await submitOrThrow(deps, {
        type: 'rfq_create',
        accountId: principal.defaultAccountId,
        userId: principal.userId,
        takerAlias: principal.deskName ?? `user${principal.userId}`,
        makers,
        targetDesks: makers.length > 0 ? makers : [...known],
        disclosed: params.disclosed ?? true,
        label: params.label ?? '',
        legs,
        hedge,
        tradeAllocations,
      });
      return takerView(value);
    },
  });

  registry.register({
    name: 'block/rfqs/cancel_rfq',
    summary: 'Cancels an open RFQ (takers); its open quotes are cancelled with it.',
    access: 'private',
    roles: ['taker'],
    params: RfqIdParams,
    result: RfqSchema,
    handler: async (params, context) => {
      const rfq = ownRfq(deps, context, params.blockRfqId);
      const value = await submitOrThrow(deps, {
        type: 'rfq_cancel',
        accountId: rfq.takerAccountId,
        blockRfqId: rfq.blockRfqId,
      });
      return takerView(value);
    },
  });

  registry.register({
    name: 'block/rfqs/cancel_trigger',
    summary:
      "Withdraws the taker's waiting good_til_cancelled accept on one side (or both); answers the RFQ.",
    access: 'private',
    roles: ['taker'],
    matching: true,
    params: CancelTriggerParams,
    result: RfqSchema,
    handler: async (params, context) => {
      const rfq = ownRfq(deps, context, params.blockRfqId);
      const value = await submitOrThrow(deps, {
        type: 'rfq_trigger_cancel',
        accountId: rfq.takerAccountId,
        blockRfqId: rfq.blockRfqId,
        side: (params.side as Side | null | undefined) ?? null,
      });
      return takerView(value);
    },
  });

  registry.register({
    name: 'block/rfqs/accept',
    summary:
      'Trades the RFQ against crossing quotes at the given worst strategy price (and, with `hedge`, worst hedge price): fill_or_kill (default) or good_til_cancelled (a trigger).',
    access: 'private',
    roles: ['taker'],
    matching: true,
    params: AcceptParams,
    result: AcceptResultSchema,
    handler: async (params, context) => {
      const rfq = ownRfq(deps, context, params.blockRfqId);
      if (params.legs != null) {
        // Ratios compare as numbers ("1.0" is 1), as create_quote reads them.
        const ratios = params.legs.map((p, index) => parseRatio(p.ratio, `legs[${index}].ratio`));
        const same =
          params.legs.length === rfq.legs.length &&
          rfq.legs.every((leg) =>
            params.legs!.some(
              (p, index) =>
                p.instrumentName === leg.instrumentName && p.side === leg.side && ratios[index] === leg.ratio,
            ),
          );
        if (!same) throw new VenueError('invalid_arguments', 'legs do not match the RFQ', { field: 'legs' });
      }
      const value = await submitOrThrow(deps, {
        type: 'rfq_accept',
        accountId: rfq.takerAccountId,
        blockRfqId: rfq.blockRfqId,
        side: params.side as Side,
        price: parseStrategyPrice(rfq, params.price),
        quantity: params.quantity == null ? null : parseRfqQuantity(rfq, params.quantity),
        timeInForce: params.timeInForce ?? 'fill_or_kill',
        // The RFQ's hedge restated with the taker's worst hedge price; the desk checks it.
        ...(params.hedge == null ? {} : { hedge: quoteHedge(deps, params.hedge) }),
      });
      if (value.kind !== 'accept') throw new VenueError('internal_error');
      const after = value.rfq;
      return {
        rfq: rfqToWire(after, desk.quotesOfRfq(after.blockRfqId), { role: 'taker' }, lookup),
        blockTrades: (value.trade?.fills ?? []).map((fill) => ({
          blockTradeId: fill.blockTradeId,
          quoteId: fill.quoteId,
          quantity: formatRfqQuantity(after, fill.quantity),
          price: formatStrategyPrice(after, fill.price),
          ...(after.hedge !== null
            ? {
                hedgeQuantity: instrumentOf(reads, after.hedge.instrumentName).formatQuantity(
                  fill.hedgeAmount,
                ),
              }
            : {}),
          timestamp: value.trade!.timestamp,
          tradeIds: [...fill.tradeIds],
        })),
        trigger: value.trigger === null ? null : triggerToWire(after, value.trigger, lookup),
      };
    },
  });

  registry.register({
    name: 'block/rfqs/get_rfqs',
    summary: 'RFQs of the caller, newest first: takers see theirs, makers their own maker-side records.',
    access: 'private',
    roles: ['taker', 'maker'],
    params: GetRfqsParams,
    result: PageOf(RfqSchema),
    handler: (params, context) => {
      const principal = principalOf(context);
      const rows: { number: number; wire: ReturnType<typeof rfqToWire> }[] = [];
      const wantTaker = principal.roles.has('taker') && params.role !== 'maker';
      const wantMaker =
        principal.roles.has('maker') && principal.deskName !== null && params.role !== 'taker';
      const currency = checkedCurrency(params.currency ?? 'any');
      const keep = (rfq: RfqRecord) =>
        (params.status == null || rfq.status === params.status) &&
        matchesCurrency(currency, rfq.currency, rfq.quoteCurrency);
      if (wantTaker) {
        for (const rfq of desk.takerRfqs(principal.accountIds)) {
          if (!keep(rfq) || (params.blockRfqId != null && rfq.blockRfqId !== params.blockRfqId)) continue;
          rows.push({
            number: rfq.number,
            wire: rfqToWire(rfq, desk.quotesOfRfq(rfq.blockRfqId), { role: 'taker' }, lookup),
          });
        }
      }
      if (wantMaker) {
        const deskName = principal.deskName!;
        for (const rfq of desk.makerRfqs(deskName)) {
          const own = rfq.makerRecords.find((r) => r.desk === deskName)!;
          if (!keep(rfq) || (params.blockRfqId != null && own.blockRfqId !== params.blockRfqId)) continue;
          rows.push({
            number: Number(own.blockRfqId),
            wire: rfqToWire(rfq, desk.quotesOfRfq(rfq.blockRfqId), { role: 'maker', desk: deskName }, lookup),
          });
        }
      }
      rows.sort((a, b) => b.number - a.number);
      const before = params.continuation == null ? Number.POSITIVE_INFINITY : Number(params.continuation);
      const page = rows.filter((row) => row.number < before);
      const count = params.count ?? TRADES_DEFAULT_COUNT;
      const results = page.slice(0, count);
      return {
        results: results.map((row) => row.wire),
        continuation: page.length > count ? String(results.at(-1)!.number) : null,
      };
    },
  });

  registry.register({
    name: 'block/rfqs/create_quote',
    summary:
      "Quotes an RFQ (makers) by the desk's own blockRfqId; legs must match the RFQ's and price the strategy.",
    access: 'private',
    roles: ['maker'],
    matching: true,
    params: CreateQuoteParams,
    result: QuoteSchema,
    handler: async (params, context) => {
      const { principal, desk: deskName } = deskOf(context);
      const rfq = makerRfq(deps, deskName, params.blockRfqId);
      const value = await submitOrThrow(deps, {
        type: 'rfq_quote_create',
        accountId: principal.defaultAccountId,
        userId: principal.userId,
        desk: deskName,
        blockRfqId: params.blockRfqId,
        ...quoteTerms(deps, rfq, params),
      });
      if (value.kind !== 'quote') throw new VenueError('internal_error');
      return quoteWire(value.quote);
    },
  });

  registry.register({
    name: 'block/rfqs/edit_quote',
    summary:
      'Replaces the terms of an open quote (makers); the quote is marked replaced and loses time priority. A left-out expiresAt or label keeps the quote’s own.',
    access: 'private',
    roles: ['maker'],
    matching: true,
    params: EditQuoteParams,
    result: QuoteSchema,
    handler: async (params, context) => {
      const { principal, desk: deskName } = deskOf(context);
      const quote = desk.quote(params.quoteId);
      if (quote === undefined || quote.desk !== deskName) {
        throw new VenueError('not_found', `no quote ${params.quoteId}`, { field: 'quoteId' });
      }
      const rfq = makerRfq(deps, deskName, quote.makerRfqId);
      const value = await submitOrThrow(deps, {
        type: 'rfq_quote_edit',
        accountId: principal.defaultAccountId,
        desk: deskName,
        quoteId: params.quoteId,
        ...keepOmitted(quoteTerms(deps, rfq, params), params),
      });
      if (value.kind !== 'quote') throw new VenueError('internal_error');
      return quoteWire(value.quote);
    },
  });

  registry.register({
    name: 'block/rfqs/cancel_quote',
    summary: 'Cancels one open quote (makers).',
    access: 'private',
    roles: ['maker'],
    matching: true,
    params: QuoteIdParams,
    result: QuoteSchema,
    handler: async (params, context) => {
      const { principal, desk: deskName } = deskOf(context);
      const value = await submitOrThrow(deps, {
        type: 'rfq_quote_cancel',
        accountId: principal.defaultAccountId,
        desk: deskName,
        quoteId: params.quoteId,
      });
      if (value.kind !== 'quote') throw new VenueError('internal_error');
      return quoteWire(value.quote);
    },
  });

  registry.register({
    name: 'block/rfqs/cancel_all_quotes',
    summary: "Cancels the desk's open quotes, on one RFQ or all; answers the count.",
    access: 'private',
    roles: ['maker'],
    matching: true,
    params: CancelAllQuotesParams,
    result: Type.Object({ count: Type.Integer() }),
    handler: async (params, context) => {
      const { principal, desk: deskName } = deskOf(context);
      const value = await submitOrThrow(deps, {
        type: 'rfq_quote_cancel_all',
        accountId: principal.defaultAccountId,
        desk: deskName,
        blockRfqId: params.blockRfqId ?? null,
      });
      if (value.kind !== 'count') throw new VenueError('internal_error');
      return { count: value.count };
    },
  });

  registry.register({
    name: 'block/rfqs/get_quotes',
    summary: "The desk's open quotes (or one quote by id in any status), filtered by RFQ and label.",
    access: 'private',
    roles: ['maker'],
    params: GetQuotesParams,
    result: Type.Array(QuoteSchema),
    handler: (params, context) => {
      const { desk: deskName } = deskOf(context);
      return desk
        .quotesOfDesk(deskName)
        .filter((q) => (params.quoteId != null ? q.quoteId === params.quoteId : q.status === 'open'))
        .filter((q) => params.blockRfqId == null || q.makerRfqId === params.blockRfqId)
        .filter((q) => params.label == null || q.label === params.label)
        .map(quoteWire);
    },
  });

  registry.register({
    name: 'block/rfqs/get_trades',
    summary: 'Traded RFQs of the past 7 days, newest first; continuation is <timestamp>:<blockRfqId>.',
    access: 'private',
    params: GetTradesParams,
    result: PageOf(RfqTradeSchema),
    handler: (params) => {
      const page = pageTrades(desk.trades(), {
        currency: checkedCurrency(params.currency),
        now: deps.now(),
        continuation: params.continuation ?? null,
        count: params.count ?? TRADES_DEFAULT_COUNT,
      });
      return { continuation: page.continuation, results: page.results.map((t) => rfqTradeToWire(t, lookup)) };
    },
  });

  registry.register({
    name: 'block/rfqs/get_instruments',
    summary:
      'Instruments available for RFQs by kind (spec 4.10): every kind when kind is omitted. RFQ legs are single instruments, so combos are never listed (a combo kind gives an empty list).',
    access: 'private',
    params: GetRfqInstrumentsParams,
    result: Type.Object({ results: Type.Array(RfqInstrumentSchema) }),
    handler: (params) => {
      const currency = checkedCurrency(params.currency);
      const results = reads
        .instruments(params.expired ?? false)
        // Only what create_rfq takes as a leg: single instruments, no combos (src/rfq/structure.ts).
        .filter((i) => i.kind !== 'future_combo' && i.kind !== 'option_combo')
        .filter((i) => matchesInstrument(currency, i.spec))
        .filter((i) => params.kind == null || i.kind === params.kind)
        .map(rfqInstrumentToWire);
      return { results };
    },
  });
}

// ---------------------------------------------------------------------------------------------
// Push channels

const TAKER_PATTERN = /^block_rfq\.taker\.([^.]*)$/;
const MAKER_PATTERN = /^block_rfq\.maker\.([^.]*)$/;

/** The channel's currency part as its topic spells it (`any` or upper case); refuses others. */
function channelCurrency(name: string, text: string): string {
  if (!isRfqCurrency(text)) {
    throw new VenueError(
      'invalid_arguments',
      `${name}: unknown currency ${JSON.stringify(text)} (one of ${RFQ_CURRENCIES.join(', ')}, any)`,
      { field: 'channels' },
    );
  }
  return text.toUpperCase() === 'ANY' ? 'any' : text.toUpperCase();
}

/** Maker topics are keyed by desk (a string topic), taker topics by account. */
function makerChannelKey(desk: string, channel: string): string {
  return `desk:${desk}|${channel}`;
}

function rfqEventsOf(subEvents: ReadonlyMap<string, readonly unknown[]> | undefined): RfqEvent[] {
  return (subEvents?.get(RFQ_SUBMACHINE) ?? []) as RfqEvent[];
}

/** The channel names an RFQ is pushed on for `role`: each currency it is filed under, and any. */
function rfqChannels(role: 'taker' | 'maker', rfq: RfqRecord): string[] {
  return [...currenciesOf(rfq.currency, rfq.quoteCurrency), 'any'].map((c) => `block_rfq.${role}.${c}`);
}

/**
 * Pushes go only to the parties whose own view changed (the event's audience): a desk never
 * hears of another desk's quotes, and the taker nothing of quotes it cannot see yet.
 */
export function registerRfqChannels(channels: ChannelRegistry, reads: ReadPort): void {
  const lookup = (name: string) => reads.instrument(name);
  channels.register({
    pattern: 'block_rfq.taker.{currency}',
    summary:
      "The RFQs of every account of the taker's user, on every change (status, quotes as bids/asks once open).",
    access: 'private',
    payload: RfqSchema,
    resolve(name, principal) {
      const match = TAKER_PATTERN.exec(name);
      if (match === null) return null;
      if (principal === null || !principal.roles.has('taker')) {
        throw new VenueError('permission_denied', `${name} needs a taker key`, { field: 'channels' });
      }
      const currency = channelCurrency(name, match[1]!);
      // Every account of the key's user, as get_rfqs lists and cancel_rfq acts on them all.
      const channel = `block_rfq.taker.${currency}`;
      return { channel, topics: [...principal.accountIds].map((accountId) => topicFor(channel, accountId)) };
    },
    produce(batch, emit) {
      for (const event of rfqEventsOf(batch.subEvents)) {
        if (event.type !== 'rfq_changed' || !event.audience.taker) continue;
        const rfq = event.rfq;
        let wire: unknown;
        const data = () => {
          wire ??= rfqToWire(rfq, event.quotes, { role: 'taker' }, lookup);
          return wire;
        };
        for (const channel of rfqChannels('taker', rfq)) emit(channel, rfq.takerAccountId, data);
      }
    },
  });
  channels.register({
    pattern: 'block_rfq.maker.{currency}',
    summary:
      "RFQs directed to the maker's desk (its own blockRfqId) with the desk's own quotes, on every change.",
    access: 'private',
    payload: RfqSchema,
    resolve(name, principal) {
      const match = MAKER_PATTERN.exec(name);
      if (match === null) return null;
      if (principal === null || !principal.roles.has('maker') || principal.deskName === null) {
        throw new VenueError('permission_denied', `${name} needs a maker key`, { field: 'channels' });
      }
      const currency = channelCurrency(name, match[1]!);
      const channel = `block_rfq.maker.${currency}`;
      return { channel, topics: [makerChannelKey(principal.deskName, channel)] };
    },
    produce(batch, emit) {
      for (const event of rfqEventsOf(batch.subEvents)) {
        if (event.type !== 'rfq_changed') continue;
        const rfq = event.rfq;
        for (const desk of event.audience.desks) {
          if (!rfq.makerRecords.some((record) => record.desk === desk)) continue;
          let wire: unknown;
          const data = () => {
            wire ??= rfqToWire(rfq, event.quotes, { role: 'maker', desk }, lookup);
            return wire;
          };
          for (const channel of rfqChannels('maker', rfq)) emit(makerChannelKey(desk, channel), null, data);
        }
      }
    },
  });
}
