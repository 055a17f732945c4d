/**
 * The key's own channels, on its default account: `user.orders`, `user.trades` and
 * `user.changes`, each by kind and currency (`{prefix}.{kind}.{currency}`) or for one instrument
 * (`{prefix}.{instrument}`).
 * - `user.orders`: each order change, one order a push (snapshot: the open orders shown);
 * - `user.trades`: each committed command's trades the channel shows, as one array;
 * - `user.changes` (Deribit's): per committed command and instrument, the instrument's orders
 *   as the command left them, its trades and the position, in one push.
 * A portfolio's child order, and its fills, carry `portfolioId`. Kind: future, option, spot,
 * future_combo, option_combo, combo, any; currency: one the venue files instruments under (any
 * case; base or settlement currency, so `USDC` carries the BTC_USDC products and `BTC` them too,
 * src/domain/currency.ts), or any. The spellings of a currency are one channel, whose canonical
 * name has it upper case (or `any`); kinds and instrument names are matched exactly. A trade on a
 * combo's book goes to the combo's channels (with its legs), and each of its leg trades to its
 * leg's, as the read store files them.
 */
import { type TSchema, Type } from '@sinclair/typebox';
import type { OrderView, PositionView, TradeParty, TradeView } from '../core/events.ts';
import type { Instrument } from '../domain/instrument.ts';
import {
  ALL_INTERVALS,
  type ChannelFamily,
  type Emit,
  type Interval,
  requirePrincipal,
  topicFor,
  unknownInstrument,
} from './channels.ts';
import type { CommittedBatch, OrderFilter, ReadPort } from './ports.ts';
import { OrderSchema, PositionSchema, TradeSchema } from './schemas/objects.ts';
import { positionToWire } from './wire/market.ts';
import { orderToWire, partiesOf, portfolioIdOf, tradeToWire } from './wire/orders.ts';

const KINDS = new Set(['future', 'option', 'spot', 'future_combo', 'option_combo', 'combo', 'any']);

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

/** An order as the user channels push it. */
function userOrder(order: OrderView, instrument: Instrument): unknown {
  return withPortfolio(orderToWire(order, instrument), order.owner);
}

/** The account's sides of a trade (both of a self-trade), as the user channels push them. */
function userTrades(
  trade: TradeView,
  own: readonly TradeParty[],
  instrument: Instrument,
  reads: ReadPort,
): unknown[] {
  const lookup = (name: string) => reads.instrument(name);
  return own.map((side) => withPortfolio(tradeToWire(trade, side, instrument, lookup), side.owner));
}

/** What a family of `{prefix}.{kind}.{currency}` and `{prefix}.{instrument}` channels varies in. */
interface UserFamily {
  readonly prefix: 'user.orders' | 'user.trades' | 'user.changes';
  readonly summary: string;
  readonly payload: TSchema;
  readonly snapshotPayload?: TSchema;
  readonly intervals: readonly Interval[];
  /** The first push: the channel's state for the account, shown where `shows` says. */
  readonly snapshot?: (
    accountId: number,
    filter: OrderFilter,
    shows: (instrument: Instrument) => boolean,
  ) => unknown;
  /** One committed batch's pushes, to the channels `names` gives an instrument. */
  produce(batch: CommittedBatch, emit: Emit, names: (instrument: Instrument) => readonly string[]): void;
}

/**
 * The two families of one prefix: by kind and currency, and by instrument. The first pushes to
 * both (an event also goes to its instrument's channel), so a command's pushes are built and
 * grouped once; the second's producer has nothing left to do.
 */
function userFamilies(
  family: UserFamily,
  reads: ReadPort,
): [byKind: ChannelFamily, byInstrument: ChannelFamily] {
  const { prefix, snapshot } = family;
  const pattern = new RegExp(`^${prefix.replace('.', '\\.')}\\.([a-z_]+)\\.([A-Za-z0-9]+)$`);
  // Every event names its instrument's channels: built once per instrument.
  const namesOf = new Map<string, readonly string[]>();
  const names = (instrument: Instrument): readonly string[] => {
    let out = namesOf.get(instrument.name);
    if (out === undefined) {
      const built = [`${prefix}.${instrument.name}`];
      for (const kind of kindsOf(instrument)) {
        for (const currency of instrument.currencies) built.push(`${prefix}.${kind}.${currency}`);
        built.push(`${prefix}.${kind}.any`);
      }
      out = built;
      namesOf.set(instrument.name, out);
    }
    return out;
  };
  const common = {
    access: 'private' as const,
    payload: family.payload,
    ...(family.snapshotPayload === undefined ? {} : { snapshotPayload: family.snapshotPayload }),
    intervals: family.intervals,
  };
  const byKind: ChannelFamily = {
    ...common,
    pattern: `${prefix}.{kind}.{currency}`,
    summary: family.summary,
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
      const topics = [topicFor(canonical, accountId)];
      if (snapshot === undefined) return { channel: canonical, topics };
      const filter = currency === 'any' ? {} : { currency };
      return {
        channel: canonical,
        topics,
        snapshot: () => snapshot(accountId, filter, (instrument) => kindsOf(instrument).includes(kind)),
      };
    },
    produce: (batch, emit) => family.produce(batch, emit, names),
  };
  const byInstrument: ChannelFamily = {
    ...common,
    pattern: `${prefix}.{instrument}`,
    summary: `${family.summary} One instrument's only.`,
    resolve(name, principal) {
      if (!name.startsWith(`${prefix}.`)) return null;
      const instrumentName = name.slice(prefix.length + 1);
      if (instrumentName.includes('.')) return null;
      const owner = requirePrincipal(principal, name);
      if (reads.instrument(instrumentName) === undefined) throw unknownInstrument(name, instrumentName);
      const accountId = owner.defaultAccountId;
      const topics = [topicFor(name, accountId)];
      if (snapshot === undefined) return { topics };
      return { topics, snapshot: () => snapshot(accountId, { instrumentName }, () => true) };
    },
    // Pushed by byKind's producer.
    produce() {},
  };
  return [byKind, byInstrument];
}

/**
 * Each account's side of a trade, once per account: `own` is both sides of a self-trade. A trade
 * on a combo's book, then each of its leg trades, on their own instruments.
 */
function forEachSide(
  trade: TradeView,
  visit: (trade: TradeView, accountId: number, own: readonly TradeParty[]) => void,
): void {
  for (const each of trade.legs === undefined ? [trade] : [trade, ...trade.legs]) {
    for (const party of [each.taker, each.maker]) {
      const own = partiesOf(each, party.accountId);
      if (own[0] === party) visit(each, party.accountId, own);
    }
  }
}

function ordersFamily(reads: ReadPort): UserFamily {
  return {
    prefix: 'user.orders',
    summary:
      "Changes of the key's orders (snapshot: open orders); a portfolio's child order with its portfolioId.",
    payload: UserOrderSchema,
    snapshotPayload: Type.Array(UserOrderSchema),
    // Deribit's aggregated intervals push arrays; this channel pushes one order.
    intervals: ['raw'],
    snapshot: (accountId, filter, shows) =>
      reads.openOrders(accountId, filter).flatMap((order) => {
        const instrument = reads.instrument(order.instrumentName);
        return instrument && shows(instrument) ? [userOrder(order, instrument)] : [];
      }),
    produce(batch, emit, names) {
      for (const event of batch.events) {
        if (event.type !== 'order') continue;
        const order = event.order;
        const instrument = reads.instrument(order.instrumentName);
        if (instrument === undefined) continue;
        let built: unknown;
        const data = () => {
          built ??= userOrder(order, instrument);
          return built;
        };
        for (const name of names(instrument)) emit(name, order.accountId, data);
      }
    },
  };
}

function tradesFamily(reads: ReadPort): UserFamily {
  return {
    prefix: 'user.trades',
    summary:
      "The key's trades: each command's trades as one array; a fill of a portfolio's child order carries portfolioId.",
    payload: Type.Array(UserTradeSchema),
    intervals: ALL_INTERVALS,
    produce(batch, emit, names) {
      // The command's trades each channel shows, in order, pushed as one array.
      const pending = new Map<string, { name: string; accountId: number; parts: (() => unknown[])[] }>();
      for (const event of batch.events) {
        if (event.type !== 'trade') continue;
        forEachSide(event.trade, (trade, accountId, own) => {
          const instrument = reads.instrument(trade.instrumentName);
          if (instrument === undefined) return;
          let wire: unknown[] | undefined;
          const data = () => {
            wire ??= userTrades(trade, own, instrument, reads);
            return wire;
          };
          for (const name of names(instrument)) {
            const key = topicFor(name, accountId);
            const entry = pending.get(key);
            if (entry === undefined) pending.set(key, { name, accountId, parts: [data] });
            else entry.parts.push(data);
          }
        });
      }
      for (const { name, accountId, parts } of pending.values())
        emit(name, accountId, () => parts.flatMap((part) => part()));
    },
  };
}

const UserChangesSchema = Type.Object({
  instrumentName: Type.String(),
  orders: Type.Array(UserOrderSchema, { description: 'each order the command changed, as it left it' }),
  trades: Type.Array(UserTradeSchema),
  positions: Type.Array(PositionSchema, {
    description:
      "the account's position as the command left it, valued at the mark when pushed; empty when untouched",
  }),
});

/** One account's changes on one instrument in one command. */
interface Changes {
  readonly accountId: number;
  readonly instrument: Instrument;
  readonly orders: Map<string, OrderView>;
  readonly trades: Array<{ trade: TradeView; own: readonly TradeParty[] }>;
  position: PositionView | null;
}

function changesFamily(reads: ReadPort): UserFamily {
  const render = ({ instrument, orders, trades, position }: Changes) => ({
    instrumentName: instrument.name,
    orders: [...orders.values()].map((order) => userOrder(order, instrument)),
    trades: trades.flatMap(({ trade, own }) => userTrades(trade, own, instrument, reads)),
    positions: position === null ? [] : [positionToWire(reads.valuedPosition(position), instrument)],
  });
  return {
    prefix: 'user.changes',
    summary:
      "Per committed command and instrument: the key's orders on it as the command left them, its trades and its position, in one push (no snapshot).",
    payload: UserChangesSchema,
    intervals: ALL_INTERVALS,
    produce(batch, emit, names) {
      const byInstrument = new Map<string, Changes>();
      const changesOf = (accountId: number, instrumentName: string): Changes | undefined => {
        const key = `${accountId}|${instrumentName}`;
        let changes = byInstrument.get(key);
        if (changes === undefined) {
          const instrument = reads.instrument(instrumentName);
          if (instrument === undefined) return undefined;
          changes = { accountId, instrument, orders: new Map(), trades: [], position: null };
          byInstrument.set(key, changes);
        }
        return changes;
      };
      for (const event of batch.events) {
        if (event.type === 'order') {
          const changes = changesOf(event.order.accountId, event.order.instrumentName);
          // The order as the command left it, in the place of its first change.
          changes?.orders.set(event.order.orderId, event.order);
        } else if (event.type === 'trade') {
          forEachSide(event.trade, (trade, accountId, own) =>
            changesOf(accountId, trade.instrumentName)?.trades.push({ trade, own }),
          );
        } else if (event.type === 'position') {
          const changes = changesOf(event.position.accountId, event.position.instrumentName);
          if (changes !== undefined) changes.position = event.position;
        }
      }
      for (const changes of byInstrument.values()) {
        let built: unknown;
        const data = () => {
          built ??= render(changes);
          return built;
        };
        for (const name of names(changes.instrument)) emit(name, changes.accountId, data);
      }
    },
  };
}

/** The `user.orders`, `user.trades` and `user.changes` families, by kind and currency and by instrument. */
export function userChannels(reads: ReadPort): ChannelFamily[] {
  return [ordersFamily(reads), tradesFamily(reads), changesFamily(reads)].flatMap((family) =>
    userFamilies(family, reads),
  );
}
