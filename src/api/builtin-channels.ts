/**
 * The gateway's own channel families: `user.orders.{kind}.{currency}`,
 * `user.trades.{kind}.{currency}` and one instrument's `user.orders.{instrument}` and
 * `user.trades.{instrument}` (the key's default account; each committed command's trades a
 * channel shows as one array, as `trades.{instrument}` does; a portfolio's child order, and its
 * fills, with `portfolioId`), `book.{instrument}`,
 * `ticker.{instrument}` and `trades.{instrument}` (public). Kind: future, option, spot, future_combo, option_combo, combo,
 * any; currency: one the venue files instruments under (any case; base or settlement currency,
 * so `USDC` carries the BTC_USDC products and `BTC` them too, src/domain/currency.ts), or any.
 * The spellings of a currency are one channel, whose canonical name has it upper case (or
 * `any`); kinds and instrument names are matched exactly (instrument names are upper case).
 * Book and ticker pushes are full snapshots of the state when they are published (so none is
 * older than a subscription's snapshot), at most one per instrument per committed command, and
 * only when what they show changed (the timestamp aside). The ticker also follows the prices:
 * index, mark, IVs and greeks move with `update_prices`, which has no events, so the subscribed
 * tickers are re-read after every batch without events and at least once a second; a book shows
 * the price band, which moves with the marks, so at the same moments a book whose band moved is
 * re-rendered. Deribit's interval suffixes name the same channels (src/api/channels.ts): every
 * family takes `.raw`, and all but `user.orders` (one order a push, where Deribit's aggregated
 * pushes are arrays) `.100ms` and `.agg2` too.
 */
import { Type } from '@sinclair/typebox';
import type { OrderView, TradeView } from '../core/events.ts';
import { VenueError } from '../domain/errors.ts';
import type { Instrument } from '../domain/instrument.ts';
import { parseComboName } from '../market/combos.ts';
import type { Principal } from './auth/authenticator.ts';
import { type ChannelFamily, type ChannelRegistry, type Interval, topicFor } from './channels.ts';
import type { OrderFilter, PriceBandView, ReadPort } from './ports.ts';
import {
  OrderBookSchema,
  OrderSchema,
  PublicTradeSchema,
  TickerSchema,
  TradeSchema,
} from './schemas/objects.ts';
import { orderBookToWire, tickerToWire } from './wire/market.ts';
import { orderToWire, partiesOf, portfolioIdOf, publicTradeToWire, tradeToWire } from './wire/orders.ts';

const KINDS = new Set(['future', 'option', 'spot', 'future_combo', 'option_combo', 'combo', 'any']);
const BOOK_DEPTH = 20;
/** Full-state and array pushes read right under any of Deribit's intervals. */
const ALL_INTERVALS: readonly Interval[] = ['raw', '100ms', 'agg2'];

function kindsOf(instrument: Instrument): string[] {
  const kinds = [instrument.kind, 'any'];
  if (instrument.kind.endsWith('_combo')) kinds.push('combo');
  return kinds;
}

const portfolioIdField = (description: string) =>
  Type.Object({ portfolioId: Type.Optional(Type.Integer({ description })) });
/** An order as `user.orders` pushes it: a portfolio's child order with its `portfolioId`. */
const UserOrderSchema = Type.Composite([
  OrderSchema,
  portfolioIdField("the portfolio owning the order (a portfolio's child order only)"),
]);
/** A trade as `user.trades` pushes it: the fill of a portfolio's child order with its `portfolioId`. */
const UserTradeSchema = Type.Composite([
  TradeSchema,
  portfolioIdField("the portfolio owning the trade's order (a fill of a portfolio's child order only)"),
]);

/** SEMANTICS, Portfolios: every push about a portfolio carries `portfolioId`; no field otherwise. */
function withPortfolio<T extends object>(wire: T, owner: string | null): T {
  const portfolioId = portfolioIdOf(owner);
  return portfolioId === null ? wire : { ...wire, portfolioId };
}

function requirePrincipal(principal: Principal | null, name: string): Principal {
  if (principal === null) {
    throw new VenueError('authorization_required', `${name} needs an authenticated connection`, {
      field: 'channels',
    });
  }
  return principal;
}

/**
 * `{prefix}.{kind}.{currency}` and `{prefix}.{instrument}`: the first family's producer pushes to
 * both (each order or trade also goes to its instrument's channel), so a command's trades on one
 * instrument are one array on either, and the events are walked once.
 */
function userChannels(
  prefix: 'user.orders' | 'user.trades',
  reads: ReadPort,
  summary: string,
  payload: ReturnType<typeof Type.Array> | typeof UserOrderSchema,
): [byKind: ChannelFamily, byInstrument: ChannelFamily] {
  const snapshotPayload = prefix === 'user.orders' ? { snapshotPayload: Type.Array(UserOrderSchema) } : {};
  // Deribit's aggregated intervals push arrays: user.trades pushes arrays, user.orders one order.
  const intervals: readonly Interval[] = prefix === 'user.orders' ? ['raw'] : ALL_INTERVALS;
  const lookup = (name: string) => reads.instrument(name);
  const pattern = new RegExp(`^${prefix.replace('.', '\\.')}\\.([a-z_]+)\\.([A-Za-z0-9]+)$`);
  /** The open orders the channel shows, as `user.orders` pushes them. */
  const openOrders = (accountId: number, filter: OrderFilter, shows: (instrument: Instrument) => boolean) =>
    reads.openOrders(accountId, filter).flatMap((order) => {
      const instrument = reads.instrument(order.instrumentName);
      return instrument && shows(instrument)
        ? [withPortfolio(orderToWire(order, instrument), order.owner)]
        : [];
    });
  const byKind: ChannelFamily = {
    pattern: `${prefix}.{kind}.{currency}`,
    summary,
    access: 'private',
    payload,
    ...snapshotPayload,
    intervals,
    resolve(name, principal) {
      const match = pattern.exec(name);
      if (match === null || !KINDS.has(match[1]!)) return null;
      const owner = requirePrincipal(principal, name);
      const kind = match[1]!;
      const currency = match[2]!.toUpperCase() === 'ANY' ? 'any' : match[2]!.toUpperCase();
      // As the order and trade methods: a currency the venue lists nothing in is a typo that
      // would stay silent forever, so the name is refused (unknown channel).
      if (currency !== 'any' && !reads.currencies().includes(currency)) return null;
      // Every spelling of the currency is one channel (one subscription per connection).
      const canonical = `${prefix}.${kind}.${currency}`;
      const accountId = owner.defaultAccountId;
      if (prefix === 'user.trades') return { channel: canonical, topics: [topicFor(canonical, accountId)] };
      return {
        channel: canonical,
        topics: [topicFor(canonical, accountId)],
        snapshot: () =>
          openOrders(accountId, currency === 'any' ? {} : { currency }, (instrument) =>
            kindsOf(instrument).includes(kind),
          ),
      };
    },
    produce(batch, emit) {
      // user.trades: the command's trades each channel shows, in order, pushed as one array.
      const trades = new Map<string, { name: string; accountId: number; parts: (() => unknown[])[] }>();
      for (const event of batch.events) {
        if (prefix === 'user.orders' && event.type === 'order') emitOrder(event.order);
        if (prefix === 'user.trades' && event.type === 'trade') addTrade(event.trade);
      }
      for (const { name, accountId, parts } of trades.values())
        emit(name, accountId, () => parts.flatMap((part) => part()));
      function names(instrument: Instrument): string[] {
        const out = [`${prefix}.${instrument.name}`];
        for (const kind of kindsOf(instrument)) {
          for (const currency of instrument.currencies) out.push(`${prefix}.${kind}.${currency}`);
          out.push(`${prefix}.${kind}.any`);
        }
        return out;
      }
      function emitOrder(order: OrderView): void {
        const instrument = reads.instrument(order.instrumentName);
        if (instrument === undefined) return;
        let wire: unknown;
        const data = () => {
          wire ??= withPortfolio(orderToWire(order, instrument), order.owner);
          return wire;
        };
        for (const name of names(instrument)) emit(name, order.accountId, data);
      }
      /**
       * A trade on a combo's book goes to the combo's kind channels (with its legs), and each of
       * its leg trades to its leg's kind channels, as the read store files them.
       */
      function addTrade(trade: TradeView): void {
        addTradeOn(trade);
        if (trade.legs !== undefined) for (const leg of trade.legs) addTradeOn(leg);
      }
      function addTradeOn(trade: TradeView): void {
        const instrument = reads.instrument(trade.instrumentName);
        if (instrument === undefined) return;
        for (const party of [trade.taker, trade.maker]) {
          if (partiesOf(trade, party.accountId)[0] !== party) continue;
          let wire: unknown[] | undefined;
          const data = () => {
            wire ??= partiesOf(trade, party.accountId).map((own) =>
              withPortfolio(tradeToWire(trade, own, instrument, lookup), own.owner),
            );
            return wire;
          };
          for (const name of names(instrument)) {
            const key = topicFor(name, party.accountId);
            const pending = trades.get(key);
            if (pending === undefined) trades.set(key, { name, accountId: party.accountId, parts: [data] });
            else pending.parts.push(data);
          }
        }
      }
    },
  };
  const byInstrument: ChannelFamily = {
    pattern: `${prefix}.{instrument}`,
    summary: `${summary} One instrument's only.`,
    access: 'private',
    payload,
    ...snapshotPayload,
    intervals,
    resolve(name, principal) {
      if (!name.startsWith(`${prefix}.`)) return null;
      const instrumentName = name.slice(prefix.length + 1);
      if (instrumentName.includes('.')) return null;
      const owner = requirePrincipal(principal, name);
      const instrument = reads.instrument(instrumentName);
      if (instrument === undefined) throw unknownInstrument(name, instrumentName);
      const accountId = owner.defaultAccountId;
      const topics = [topicFor(name, accountId)];
      if (prefix === 'user.trades') return { topics };
      return { topics, snapshot: () => openOrders(accountId, { instrumentName }, () => true) };
    },
    // Pushed by byKind's producer.
    produce() {},
  };
  return [byKind, byInstrument];
}

/**
 * The refusal of a channel naming no listed instrument. A well-formed combo id is listed by a
 * signed request (src/api/methods/context.ts, instrumentOrCombo), not by a subscribe, which
 * resolves at once: the refusal says so, rather than that the combo does not exist.
 */
function unknownInstrument(channel: string, instrumentName: string): VenueError {
  const message =
    parseComboName(instrumentName) === null
      ? `unknown instrument in ${channel}`
      : `combo ${instrumentName} in ${channel} is not listed yet: a signed request (its book, its ticker or an order) lists it, then it can be subscribed to`;
  return new VenueError('invalid_instrument', message, { field: 'channels' });
}

/** How often, at least, subscribed tickers are compared with the prices (ms of batch time). */
const TICKER_PRICE_CHECK_MS = 1_000;

function instrumentChannel(
  prefix: 'book' | 'ticker',
  reads: ReadPort,
  summary: string,
  payload: typeof OrderBookSchema | typeof TickerSchema,
): ChannelFamily {
  const render = (instrument: Instrument): unknown => {
    if (prefix === 'book') {
      const book = reads.orderBook(instrument.name, BOOK_DEPTH);
      lastBand.set(instrument.name, bandKey(book?.priceBand));
      return book && orderBookToWire(book, instrument);
    }
    const ticker = reads.ticker(instrument.name);
    return ticker && tickerToWire(ticker, instrument);
  };
  // Instruments of this family someone may be subscribed to (added by the first snapshot,
  // dropped when a push finds no subscriber), and what every subscriber of each was last shown.
  // A snapshot that differs from that leaves the subscribers disagreeing, so it clears the
  // entry: the next render, whatever it shows, is pushed to all.
  const watched = new Map<string, Instrument>();
  const lastShown = new Map<string, string>();
  let lastPriceCheck = Number.NEGATIVE_INFINITY;
  // A book shows the price band, which moves with the marks (commands without events): its
  // channel re-renders a book when the band differs from the one last rendered, not every book
  // every second as the ticker channel does (a depth-1 read is the cheap way to see the band).
  const lastBand = new Map<string, string>();
  const bandKey = (band: PriceBandView | null | undefined): string => (band ? `${band.min}|${band.max}` : '');
  const bandMoved = (instrumentName: string): boolean =>
    lastBand.get(instrumentName) !== bandKey(reads.orderBook(instrumentName, 1)?.priceBand);
  const shownForm = (data: unknown): string =>
    JSON.stringify(data, (key, value) => (key === 'timestamp' ? undefined : value));
  return {
    pattern: `${prefix}.{instrument}`,
    summary,
    access: 'public',
    payload,
    snapshotPayload: payload,
    intervals: ALL_INTERVALS,
    resolve(name) {
      if (!name.startsWith(`${prefix}.`)) return null;
      const instrumentName = name.slice(prefix.length + 1);
      const instrument = reads.instrument(instrumentName);
      if (instrument === undefined) throw unknownInstrument(name, instrumentName);
      return {
        topics: [topicFor(name, null)],
        pushesCurrentState: true,
        snapshot: () => {
          const data = render(instrument);
          const shown = shownForm(data);
          if (!watched.has(instrumentName)) {
            watched.set(instrumentName, instrument);
            lastShown.set(instrumentName, shown);
          } else if (lastShown.get(instrumentName) !== shown) lastShown.delete(instrumentName);
          return data;
        },
      };
    },
    produce(batch, emit) {
      const touched = new Set<string>();
      for (const event of batch.events) {
        if (event.type === 'order') touched.add(event.order.instrumentName);
        else if (event.type === 'trade') {
          // A combo trade's leg trades count on the legs' tickers too.
          touched.add(event.trade.instrumentName);
          if (event.trade.legs !== undefined)
            for (const leg of event.trade.legs) touched.add(leg.instrumentName);
        } else if (event.type === 'instrument') touched.add(event.instrumentName);
      }
      if (batch.events.length === 0 || batch.ts >= lastPriceCheck + TICKER_PRICE_CHECK_MS) {
        lastPriceCheck = batch.ts;
        for (const instrumentName of watched.keys()) {
          if (prefix === 'ticker' || bandMoved(instrumentName)) touched.add(instrumentName);
        }
      }
      for (const instrumentName of touched) {
        const instrument = watched.get(instrumentName);
        if (instrument === undefined) continue;
        const data = render(instrument);
        const shown = shownForm(data);
        if (lastShown.get(instrumentName) === shown) continue;
        let subscribed = false;
        emit(`${prefix}.${instrumentName}`, null, () => {
          subscribed = true;
          return data;
        });
        if (subscribed) lastShown.set(instrumentName, shown);
        else {
          watched.delete(instrumentName);
          lastShown.delete(instrumentName);
          lastBand.delete(instrumentName);
        }
      }
    },
  };
}

/**
 * `trades.{instrument}`: the public tape, each committed command's trades on the instrument as
 * one array (leg trades of a combo trade on their legs' channels), without a snapshot
 * (`public/get_last_trades_by_instrument` reads the recent ones).
 */
function tradesChannel(reads: ReadPort): ChannelFamily {
  return {
    pattern: 'trades.{instrument}',
    summary: 'Public trades of one instrument, as arrays (no snapshot).',
    access: 'public',
    payload: Type.Array(PublicTradeSchema),
    intervals: ALL_INTERVALS,
    resolve(name) {
      if (!name.startsWith('trades.')) return null;
      const instrumentName = name.slice('trades.'.length);
      const instrument = reads.instrument(instrumentName);
      if (instrument === undefined) throw unknownInstrument(name, instrumentName);
      return { topics: [topicFor(name, null)] };
    },
    produce(batch, emit) {
      const byInstrument = new Map<string, TradeView[]>();
      const add = (trade: TradeView) => {
        const list = byInstrument.get(trade.instrumentName);
        if (list === undefined) byInstrument.set(trade.instrumentName, [trade]);
        else list.push(trade);
      };
      for (const event of batch.events) {
        if (event.type !== 'trade') continue;
        add(event.trade);
        if (event.trade.legs !== undefined) for (const leg of event.trade.legs) add(leg);
      }
      for (const [instrumentName, trades] of byInstrument) {
        emit(`trades.${instrumentName}`, null, () => {
          const instrument = reads.instrument(instrumentName);
          return instrument === undefined ? [] : trades.map((trade) => publicTradeToWire(trade, instrument));
        });
      }
    },
  };
}

export function registerBuiltinChannels(channels: ChannelRegistry, reads: ReadPort): void {
  const families = [
    ...userChannels(
      'user.orders',
      reads,
      "Changes of the key's orders (snapshot: open orders); a portfolio's child order with its portfolioId.",
      UserOrderSchema,
    ),
    ...userChannels(
      'user.trades',
      reads,
      "The key's trades: each command's trades as one array; a fill of a portfolio's child order carries portfolioId.",
      Type.Array(UserTradeSchema),
    ),
    instrumentChannel('book', reads, 'Order book snapshots of one instrument.', OrderBookSchema),
    instrumentChannel('ticker', reads, 'Ticker of one instrument.', TickerSchema),
    tradesChannel(reads),
  ];
  for (const family of families) channels.register(family);
}
