/**
 * The gateway's own channel families: the key's `user.orders`, `user.trades` and `user.changes`
 * (src/api/user-channels.ts) and `user.portfolio` (src/api/account-channel.ts), and the public `book.{instrument}`, `ticker.{instrument}` and
 * `trades.{instrument}`. Instrument names are matched exactly.
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
import type { TradeView } from '../core/events.ts';
import { VenueError } from '../domain/errors.ts';
import type { Instrument } from '../domain/instrument.ts';
import { accountChannel } from './account-channel.ts';
import {
  ALL_INTERVALS,
  type ChannelFamily,
  type ChannelRegistry,
  topicFor,
  unknownInstrument,
} from './channels.ts';
import type { PriceBandView, ReadPort } from './ports.ts';
import { OrderBookSchema, PublicTradeSchema, TickerSchema } from './schemas/objects.ts';
import { userChannels } from './user-channels.ts';
import { orderBookToWire, tickerToWire } from './wire/market.ts';
import { publicTradeToWire } from './wire/orders.ts';

const BOOK_DEPTH = 20;

/** How often, at least, subscribed tickers are compared with the prices (ms of batch time). */
const TICKER_PRICE_CHECK_MS = 1_000;

function instrumentChannel(
  prefix: 'book' | 'ticker',
  reads: ReadPort,
  summary: string,
  payload: typeof OrderBookSchema | typeof TickerSchema,
): ChannelFamily {
  const render = (watch: Watch): unknown => {
    const instrument = watch.instrument;
    if (prefix === 'book') {
      const book = reads.orderBook(instrument.name, watch.depth);
      lastBand.set(instrument.name, bandKey(book?.priceBand));
      return book && orderBookToWire(book, instrument);
    }
    const ticker = reads.ticker(instrument.name);
    return ticker && tickerToWire(ticker, instrument);
  };
  // Channels of this family someone may be subscribed to (added by the first snapshot, dropped
  // when a push finds no subscriber), each with what its every subscriber was last shown. A
  // snapshot that differs from that leaves the subscribers disagreeing, so it clears it: the next
  // render, whatever it shows, is pushed to all.
  const watched = new Map<string, Watch>();
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
      const rest = name.slice(prefix.length + 1);
      const [instrumentName = '', ...grouping] = rest.split('.');
      if (grouping.length !== 0 && !(prefix === 'book' && grouping.length === 2))
        throw unknownInstrument(name, rest);
      const depth = grouping.length === 2 ? groupedDepth(name, grouping) : BOOK_DEPTH;
      const instrument = reads.instrument(instrumentName);
      if (instrument === undefined) throw unknownInstrument(name, instrumentName);
      return {
        topics: [topicFor(name, null)],
        pushesCurrentState: true,
        snapshot: () => {
          let watch = watched.get(name);
          const data = render(watch ?? { channel: name, instrument, depth, shown: undefined });
          const shown = shownForm(data);
          if (watch === undefined) {
            watch = { channel: name, instrument, depth, shown };
            watched.set(name, watch);
          } else if (watch.shown !== shown) watch.shown = undefined;
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
        for (const watch of watched.values()) {
          const instrumentName = watch.instrument.name;
          if (!touched.has(instrumentName) && (prefix === 'ticker' || bandMoved(instrumentName)))
            touched.add(instrumentName);
        }
      }
      if (touched.size === 0) return;
      for (const watch of watched.values()) {
        if (!touched.has(watch.instrument.name)) continue;
        const data = render(watch);
        const shown = shownForm(data);
        if (watch.shown === shown) continue;
        let subscribed = false;
        emit(watch.channel, null, () => {
          subscribed = true;
          return data;
        });
        if (subscribed) watch.shown = shown;
        else {
          watched.delete(watch.channel);
          lastBand.delete(watch.instrument.name);
        }
      }
    },
  };
}

/** A channel of `instrumentChannel` someone may hold: its book depth, what it last pushed. */
interface Watch {
  readonly channel: string;
  readonly instrument: Instrument;
  /** Levels per side a book shows (the ticker's: unused). */
  readonly depth: number;
  shown: string | undefined;
}

/** Deribit's grouped book, `book.{instrument}.{group}.{depth}`: no grouping, depth 1, 10 or 20. */
const GROUPED_DEPTHS = new Set(['1', '10', '20']);

function groupedDepth(name: string, [group, depth]: string[]): number {
  if (group !== 'none') {
    throw new VenueError(
      'invalid_params',
      `${name}: price grouping is not offered; group none shows every level`,
      {
        field: 'channels',
        channel: name,
      },
    );
  }
  if (!GROUPED_DEPTHS.has(depth!)) {
    throw new VenueError('invalid_params', `${name}: depth is 1, 10 or 20`, {
      field: 'channels',
      channel: name,
    });
  }
  return Number(depth);
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
    ...userChannels(reads),
    accountChannel(reads),
    instrumentChannel(
      'book',
      reads,
      "Order book snapshots of one instrument, 20 levels a side; Deribit's grouped form book.{instrument}.none.{1|10|20} shows that many.",
      OrderBookSchema,
    ),
    instrumentChannel('ticker', reads, 'Ticker of one instrument.', TickerSchema),
    tradesChannel(reads),
  ];
  for (const family of families) channels.register(family);
}
