/** Public methods: time, test, instruments, order book, ticker, the trade tape. No key needed. */
import { Type } from '@sinclair/typebox';
import type { TradeView } from '../../core/events.ts';
import { matchesInstrument, RFQ_CURRENCIES } from '../../domain/currency.ts';
import { VenueError } from '../../domain/errors.ts';
import type { Instrument } from '../../domain/instrument.ts';
import type { ReadPort } from '../ports.ts';
import type { MethodRegistry } from '../registry.ts';
import {
  BookSummaryParams,
  IndexPriceParams,
  InstrumentsParams,
  LastTradesByCurrencyParams,
  LastTradesParams,
  OrderBookParams,
  PUBLIC_TRADES_KEPT,
  TestParams,
  TickerParams,
} from '../schemas/methods.ts';
import {
  BookSummarySchema,
  InstrumentSchema,
  OrderBookSchema,
  PublicTradeSchema,
  TickerSchema,
} from '../schemas/objects.ts';
import {
  bookSummaryToWire,
  decimalText,
  instrumentToWire,
  orderBookToWire,
  tickerToWire,
} from '../wire/market.ts';
import { publicTradeToWire } from '../wire/orders.ts';
import { instrumentOf, instrumentOrCombo, kindMatches, type MethodDeps } from './context.ts';

export const API_VERSION = '1.0.0';

export function registerPublicMethods(registry: MethodRegistry, deps: MethodDeps): void {
  const { commands, reads } = deps;
  /** The active (or recently expired) instruments filed under a currency, of a kind if given. */
  const filedUnder = (filter: { currency: string; kind?: string | null }, expired: boolean) => {
    const currency = instrumentsCurrency(reads, filter.currency);
    return reads
      .instruments(expired)
      .filter(
        (instrument) =>
          matchesInstrument(currency, instrument.spec) && kindMatches(filter.kind, instrument.kind),
      );
  };

  const tickerOf = (instrument: Instrument) => {
    const ticker = reads.ticker(instrument.name);
    if (ticker === undefined)
      throw new VenueError('invalid_instrument', undefined, { field: 'instrumentName' });
    return ticker;
  };

  registry.register({
    name: 'public/time',
    summary: 'Server time in ms since epoch (validUntil and signatures are checked against it).',
    access: 'public',
    params: Type.Object({}, { additionalProperties: false }),
    result: Type.Integer(),
    handler: () => commands.now(),
  });

  registry.register({
    name: 'public/test',
    summary:
      'Answers {version}; expectedResult "exception" forces an error. Also answers a heartbeat test_request.',
    access: 'public',
    params: TestParams,
    result: Type.Object({ version: Type.String() }),
    handler: (params) => {
      if (params.expectedResult === 'exception') {
        throw new VenueError('error', 'the test exception you asked for', { field: 'expectedResult' });
      }
      return { version: API_VERSION };
    },
  });

  registry.register({
    name: 'public/get_instruments',
    summary:
      'Instruments of a currency (base or settlement: USDC lists the USDC-margined ones; or any), optionally of one kind; expired=true lists the recently expired ones (expiration in the last 3 days).',
    access: 'public',
    params: InstrumentsParams,
    result: Type.Array(InstrumentSchema),
    handler: (params) => {
      const expired = params.expired ?? false;
      return filedUnder(params, expired).map((instrument) => instrumentToWire(instrument, !expired));
    },
  });

  registry.register({
    name: 'public/get_book_summary_by_currency',
    summary:
      "Every active instrument of a currency (as get_instruments files them), optionally of one kind: best bid and ask, mid, mark, last, the index, and an option's mark IV and underlying; with 24h volume, high, low and open interest.",
    access: 'public',
    params: BookSummaryParams,
    result: Type.Array(BookSummarySchema),
    handler: (params) =>
      filedUnder(params, false).flatMap((instrument) => {
        const ticker = reads.ticker(instrument.name);
        return ticker === undefined ? [] : [bookSummaryToWire(ticker, instrument)];
      }),
  });

  registry.register({
    name: 'public/get_book_summary_by_instrument',
    summary: "One instrument's line of get_book_summary_by_currency, as a list of one (as Deribit answers).",
    access: 'public',
    params: TickerParams,
    result: Type.Array(BookSummarySchema),
    handler: async (params, context) => {
      const instrument = await instrumentOrCombo(deps, params.instrumentName, context);
      return [bookSummaryToWire(tickerOf(instrument), instrument)];
    },
  });

  registry.register({
    name: 'public/get_instrument',
    summary:
      'One instrument as get_instruments lists it; an expired one too (isActive false), and a combo, listed by a signed call as for its ticker.',
    access: 'public',
    params: TickerParams,
    result: InstrumentSchema,
    handler: async (params, context) => {
      const instrument = await instrumentOrCombo(deps, params.instrumentName, context);
      return instrumentToWire(instrument, reads.ticker(instrument.name)?.state === 'open');
    },
  });

  registry.register({
    name: 'public/get_index_price_names',
    summary: 'The names get_index_price takes: one USD index per currency that has a price ({currency}_usd).',
    access: 'public',
    params: Type.Object({}, { additionalProperties: false }),
    result: Type.Array(Type.String()),
    handler: () => indexNames(reads),
  });

  registry.register({
    name: 'public/get_index_price',
    summary:
      "A currency's index, USD per coin (indexName btc_usd, eth_usd…): what marks, bands and settlements follow. estimatedDeliveryPrice is the settlement expected now: the index, except inside the last 30 minutes before an expiry, whose settlement averages the index over them (the part averaged so far weighted with the index for the rest).",
    access: 'public',
    params: IndexPriceParams,
    result: Type.Object({ indexPrice: Type.String(), estimatedDeliveryPrice: Type.String() }),
    handler: (params) => {
      const price = indexOf(reads, params.indexName);
      const currency = params.indexName.toUpperCase().split('_')[0]!;
      const estimate = reads.estimatedDeliveryPrice?.(currency) ?? null;
      return { indexPrice: price, estimatedDeliveryPrice: estimate === null ? price : decimalText(estimate) };
    },
  });

  registry.register({
    name: 'public/get_order_book',
    summary: 'Aggregated price levels of one instrument (default depth 20).',
    access: 'public',
    params: OrderBookParams,
    result: OrderBookSchema,
    handler: async (params, context) => {
      const instrument = await instrumentOrCombo(deps, params.instrumentName, context);
      const book = reads.orderBook(instrument.name, params.depth ?? 20);
      if (book === undefined)
        throw new VenueError('invalid_instrument', undefined, { field: 'instrumentName' });
      return orderBookToWire(book, instrument);
    },
  });

  registry.register({
    name: 'public/get_last_trades_by_instrument',
    summary: `The instrument's recent trades (of its last ${PUBLIC_TRADES_KEPT}), newest first unless sorting is asc.`,
    access: 'public',
    params: LastTradesParams,
    result: Type.Object({ trades: Type.Array(PublicTradeSchema), hasMore: Type.Boolean() }),
    handler: (params) => {
      // An unlisted combo has no trades: reading its tape lists nothing.
      const instrument = instrumentOf(reads, params.instrumentName);
      const matching = reads
        .recentTrades(instrument.name, PUBLIC_TRADES_KEPT)
        .filter(
          (trade) =>
            (params.startSeq == null || trade.tradeSeq >= params.startSeq) &&
            (params.endSeq == null || trade.tradeSeq <= params.endSeq) &&
            inWindow(trade, params),
        );
      return tapePage(matching, params, () => instrument);
    },
  });

  registry.register({
    name: 'public/get_last_trades_by_currency',
    summary: `The recent trades of every active instrument of a currency (as get_instruments files them; of each instrument's last ${PUBLIC_TRADES_KEPT}), optionally of one kind, in time order: newest first unless sorting is asc.`,
    access: 'public',
    params: LastTradesByCurrencyParams,
    result: Type.Object({ trades: Type.Array(PublicTradeSchema), hasMore: Type.Boolean() }),
    handler: (params) => {
      const instruments = new Map(
        filedUnder(params, false).map((instrument) => [instrument.name, instrument]),
      );
      const count = params.count ?? 10;
      const windowed = params.startTimestamp != null || params.endTimestamp != null;
      // Newest first without a window, each instrument's newest count + 1 trades decide the page
      // and whether more match (the capped sum exceeds count exactly when the full one does), so
      // a read of every tape copies a few trades of each, not all it keeps.
      const depth = params.sorting !== 'asc' && !windowed ? count + 1 : PUBLIC_TRADES_KEPT;
      // Only each instrument's `count` trades at the page's end can be on it: the rest are counted.
      let matching = 0;
      const candidates: TradeView[] = [];
      for (const name of instruments.keys()) {
        const kept = reads.recentTrades(name, depth);
        if (kept.length === 0) continue;
        const inRange = windowed ? kept.filter((trade) => inWindow(trade, params)) : kept;
        matching += inRange.length;
        candidates.push(...(params.sorting === 'asc' ? inRange.slice(0, count) : inRange.slice(-count)));
      }
      return tapePage(candidates.sort(byTime), params, (name) => instruments.get(name)!, matching);
    },
  });

  registry.register({
    name: 'public/ticker',
    summary: 'Best bid/ask, last, mark and index prices of one instrument.',
    access: 'public',
    params: TickerParams,
    result: TickerSchema,
    handler: async (params, context) => {
      const instrument = await instrumentOrCombo(deps, params.instrumentName, context);
      return tickerToWire(tickerOf(instrument), instrument);
    },
  });
}

/**
 * The index price named `{currency}_usd` (any letter case), as a decimal string: the venue keeps one
 * USD index per base currency. Another name, or an index not priced yet, is refused naming
 * `indexName` with the names it has.
 */
function indexOf(reads: ReadPort, indexName: string): string {
  const [currency = '', quote = ''] = indexName.toUpperCase().split('_');
  const price = quote === 'USD' ? reads.indexPrice(currency) : null;
  if (price === null) {
    const known = indexNames(reads);
    throw new VenueError('invalid_params', `unknown index ${indexName}; the venue has ${known.join(', ')}`, {
      field: 'indexName',
    });
  }
  return decimalText(price);
}

/** `{currency}_usd` of each currency with an index price. */
function indexNames(reads: ReadPort): string[] {
  return reads
    .currencies()
    .filter((currency) => reads.indexPrice(currency) !== null)
    .map((currency) => `${currency.toLowerCase()}_usd`);
}

type TapeWindow = { startTimestamp?: number | null; endTimestamp?: number | null };

function inWindow(trade: TradeView, window: TapeWindow): boolean {
  return (
    (window.startTimestamp == null || trade.timestamp >= window.startTimestamp) &&
    (window.endTimestamp == null || trade.timestamp <= window.endTimestamp)
  );
}

/** Oldest first: by time, then in the order the venue numbered them (one counter per currency). */
function byTime(a: TradeView, b: TradeView): number {
  return a.timestamp - b.timestamp || tradeNumber(a.tradeId) - tradeNumber(b.tradeId);
}

function tradeNumber(tradeId: string): number {
  return Number(tradeId.slice(tradeId.lastIndexOf('T') + 1));
}

/**
 * A page of trades in time order: with asc the oldest `count`, otherwise the newest, newest first;
 * more when `total` (the trades in range, by default all of `matching`) exceeds the page.
 */
function tapePage(
  matching: readonly TradeView[],
  params: { count?: number | null; sorting?: string | null },
  instrumentNamed: (name: string) => Instrument,
  total = matching.length,
) {
  const count = params.count ?? 10;
  const page = params.sorting === 'asc' ? matching.slice(0, count) : matching.slice(-count).reverse();
  return {
    trades: page.map((trade) => publicTradeToWire(trade, instrumentNamed(trade.instrumentName))),
    hasMore: total > count,
  };
}

/**
 * The `currency` filter of get_instruments, upper-cased: `ANY`, a currency the venue lists
 * instruments in, or one of the spec's currency symbols (4.10). An instrument is listed under the
 * currencies it is filed under everywhere (../../domain/currency.ts): its base currency and the
 * currency it is quoted and settled in (Deribit lists the USDC-margined products under USDC).
 * Another name is refused rather than answered with an empty list a typo would hide.
 */
export function instrumentsCurrency(reads: ReadPort, text: string): string {
  const currency = text.toUpperCase();
  const known = [...new Set([...reads.currencies(), ...RFQ_CURRENCIES])];
  if (currency !== 'ANY' && !known.includes(currency)) {
    throw new VenueError(
      'invalid_params',
      `unknown currency ${text}; use any or one of ${known.join(', ')}`,
      {
        field: 'currency',
      },
    );
  }
  return currency;
}
