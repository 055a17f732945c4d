/**
 * Projections of the engine's events into the `orders`, `trades`, `positions` and `settlements`
 * read tables.
 *
 * Invariants:
 * - `orders`: one row per order, its latest view (the last `order` event wins).
 * - `trades`: one row per trade and side (`role` T or M), so a user's trades are found by
 *   account without looking at the other side; `seq` is the committing command's seq. A trade on
 *   a combo's book has rows of the combo's kind whose view keeps its `legs`, and each of its leg
 *   trades has rows of its own (the leg's instrument and kind, with `comboId`/`comboTradeId`):
 *   the `option`/`future` filters find the legs, the combo kinds the combo trade, `any` both.
 * - `positions`: one row per (account, instrument), the latest view; flat positions stay.
 * - Full views are stored as JSON text next to the indexed columns; orders' and trades' views packed
 *   as arrays of their values (packed-views.ts).
 * - A row is found by a `currency` filter under `currency` (the base coin) and `quote_currency`
 *   (the quote of a linear or spot pair, `BTC_USDC…` → USDC; null for inverse products), the
 *   classification of src/domain/currency.ts read from the instrument name. Version 2 of the
 *   three tables added `quote_currency`; rows of older builds get it by a backfill (schema.ts).
 */
import type {
  BalanceEvent,
  CoreEvent,
  OrderView,
  PositionView,
  SettlementDetail,
  TradeView,
} from '../../core/events.ts';
import { pairQuoteCurrency } from '../../domain/currency.ts';
import { comboKindOfName, parseInstrumentName } from '../../domain/instrument.ts';
import { orderViewText, tradeViewText } from './packed-views.ts';
import {
  type ColumnBackfill,
  type CommittedEvents,
  type IndexSpec,
  JsonText,
  type Projection,
  type RowSink,
  type TableSpec,
} from './projection.ts';

/** The instrument kind used by history `kind` filters; null when unknown. */
export type KindOf = (instrumentName: string) => string | null;

/** Instrument names are few and parsing one is not free: kinds are remembered (bounded). */
const kindByName = new Map<string, string | null>();

export const defaultKindOf: KindOf = (name) => {
  let kind = kindByName.get(name);
  if (kind === undefined) {
    kind = parseInstrumentName(name)?.kind ?? comboKindOfName(name);
    if (kindByName.size >= 100_000) kindByName.clear();
    kindByName.set(name, kind);
  }
  return kind;
};

const quoteByName = new Map<string, string | null>();

/** The `quote_currency` of an instrument's rows (remembered, as kinds are). */
function quoteOf(name: string): string | null {
  let quote = quoteByName.get(name);
  if (quote === undefined) {
    quote = pairQuoteCurrency(name);
    if (quoteByName.size >= 100_000) quoteByName.clear();
    quoteByName.set(name, quote);
  }
  return quote;
}

/** Fills `quote_currency` in rows written before version 2, from their instrument name. */
const QUOTE_CURRENCY_BACKFILL: ColumnBackfill = {
  version: 2,
  column: 'quote_currency',
  from: 'instrument_name',
  value: (name) => (typeof name === 'string' ? quoteOf(name) : null),
};

/**
 * Fills `kind` in rows written before version 3 for combos: those builds parsed single-instrument
 * names only, so combo rows had no kind and the `combo` filters never found them.
 */
const COMBO_KIND_BACKFILL: ColumnBackfill = {
  version: 3,
  column: 'kind',
  from: 'instrument_name',
  value: (name) => (typeof name === 'string' ? comboKindOfName(name) : null),
};

/**
 * The index of the `quote_currency` arm of a currency filter (history-queries.ts), over only the
 * rows that have one: the linear and spot pairs. Inverse products, most rows, leave it null and
 * cost no entry (with a full index an IOC miss on the perpetual wrote 13,956 bytes against 8,034,
 * `npm run bench:read-store`).
 */
function quoteCurrencyIndex(order: string): IndexSpec {
  return {
    columns: ['account_id', 'quote_currency', order],
    where: 'quote_currency IS NOT NULL',
    name: 'present',
  };
}

/** The orders that are history for good: the retention sweep's term, word for word (retention.ts). */
export const CLOSED_ORDER_SQL = "order_state IN ('filled', 'cancelled', 'rejected')";

/**
 * Closed orders by time, for retention alone. Open orders have no entry: a sweep never walks past
 * the market makers' quotes resting since days, and an order's entry is made once, when it closes.
 */
const CLOSED_ORDERS_BY_TIME: IndexSpec = {
  columns: ['last_updated_at'],
  where: CLOSED_ORDER_SQL,
  name: 'closed',
};

export const ORDERS_TABLE: TableSpec = {
  name: 'orders',
  columns: [
    { name: 'order_id', type: 'text', required: true },
    { name: 'account_id', type: 'int', required: true },
    { name: 'currency', type: 'text', required: true },
    { name: 'kind', type: 'text' },
    { name: 'instrument_name', type: 'text', required: true },
    { name: 'order_state', type: 'text', required: true },
    { name: 'filled_amount', type: 'int', required: true },
    { name: 'created_at', type: 'int', required: true },
    { name: 'last_updated_at', type: 'int', required: true },
    { name: 'updated_seq', type: 'int', required: true },
    { name: 'view', type: 'text', required: true },
    { name: 'quote_currency', type: 'text' },
  ],
  primaryKey: ['order_id'],
  indexes: [
    ['account_id', 'currency', 'updated_seq DESC'],
    quoteCurrencyIndex('updated_seq DESC'),
    CLOSED_ORDERS_BY_TIME,
  ],
  retiredIndexes: ['orders_account_id_quote_currency_updated_seq_idx', 'orders_last_updated_at_idx'],
  version: 3,
  backfills: [QUOTE_CURRENCY_BACKFILL, COMBO_KIND_BACKFILL],
};

export const TRADES_TABLE: TableSpec = {
  name: 'trades',
  columns: [
    { name: 'trade_id', type: 'text', required: true },
    { name: 'role', type: 'text', required: true },
    { name: 'account_id', type: 'int', required: true },
    { name: 'order_id', type: 'text', required: true },
    { name: 'currency', type: 'text', required: true },
    { name: 'kind', type: 'text' },
    { name: 'instrument_name', type: 'text', required: true },
    { name: 'timestamp', type: 'int', required: true },
    { name: 'trade_seq', type: 'int', required: true },
    { name: 'seq', type: 'int', required: true },
    { name: 'block_rfq_id', type: 'text' },
    { name: 'view', type: 'text', required: true },
    { name: 'quote_currency', type: 'text' },
  ],
  primaryKey: ['trade_id', 'role'],
  indexes: [
    ['account_id', 'currency', 'seq DESC'],
    quoteCurrencyIndex('seq DESC'),
    ['account_id', 'instrument_name', 'seq DESC'],
    ['timestamp'],
  ],
  // No query looks trades up by order: the index cost two entries per trade for nothing.
  retiredIndexes: ['trades_account_id_quote_currency_seq_idx', 'trades_order_id_idx'],
  version: 3,
  backfills: [QUOTE_CURRENCY_BACKFILL, COMBO_KIND_BACKFILL],
};

export const POSITIONS_TABLE: TableSpec = {
  name: 'positions',
  columns: [
    { name: 'account_id', type: 'int', required: true },
    { name: 'instrument_name', type: 'text', required: true },
    { name: 'currency', type: 'text' },
    { name: 'kind', type: 'text' },
    { name: 'size', type: 'int', required: true },
    { name: 'updated_seq', type: 'int', required: true },
    { name: 'view', type: 'text', required: true },
    { name: 'quote_currency', type: 'text' },
  ],
  primaryKey: ['account_id', 'instrument_name'],
  version: 3,
  backfills: [QUOTE_CURRENCY_BACKFILL, COMBO_KIND_BACKFILL],
};

/**
 * One row per settlement of a position (account, instrument: an instrument settles once), from
 * the settlement's `balance` event, which names the position it settled (`SettlementDetail`).
 * Kept for good: one row per holder per expiry, few next to the trades (no retention sweep).
 * New in this build: a store an older build wrote starts it empty; settlements it projected
 * before are not in it.
 */
export const SETTLEMENTS_TABLE: TableSpec = {
  name: 'settlements',
  columns: [
    { name: 'account_id', type: 'int', required: true },
    { name: 'instrument_name', type: 'text', required: true },
    { name: 'currency', type: 'text' },
    { name: 'quote_currency', type: 'text' },
    { name: 'kind', type: 'text' },
    { name: 'settlement_type', type: 'text', required: true },
    { name: 'timestamp', type: 'int', required: true },
    { name: 'seq', type: 'int', required: true },
    { name: 'view', type: 'text', required: true },
  ],
  primaryKey: ['account_id', 'instrument_name'],
  indexes: [
    ['account_id', 'currency', 'seq DESC'],
    quoteCurrencyIndex('seq DESC'),
    ['account_id', 'seq DESC'],
  ],
};

/**
 * A settlement history entry in domain units (ticks, lots, minor units), as the `settlements`
 * table stores it. `type` is always `delivery`: an expiry (the venue has no daily settlement and
 * no bankruptcies).
 */
export interface SettlementRecord {
  readonly accountId: number;
  readonly type: 'delivery';
  readonly timestamp: number;
  readonly instrumentName: string;
  /** Signed lots held when it settled. */
  readonly size: number;
  /** Ticks. */
  readonly settlementPrice: number;
  /** Exact decimal (USD per coin), or null when settled at the price alone. */
  readonly settlementIndex: string | null;
  /** Realised PnL of the settlement, minor units of `currency`. */
  readonly profitLoss: number;
  /** What the settlement added to the balance (negative: took), minor units of `currency`. */
  readonly cashflow: number;
  /** The settlement currency: the balance the cash went to. */
  readonly currency: string;
  /** That balance right after, minor units. */
  readonly balance: number;
}

/** The settlement history entry of a settlement's balance event (undefined for any other). */
export function settlementRecordOf(event: BalanceEvent, ts: number): SettlementRecord | undefined {
  const detail = event.settlement;
  if (detail === undefined) return undefined;
  return {
    accountId: event.accountId,
    type: 'delivery',
    timestamp: ts,
    instrumentName: detail.instrumentName,
    size: detail.size,
    settlementPrice: detail.settlementPrice,
    settlementIndex: detail.settlementIndex,
    profitLoss: detail.profitLoss,
    cashflow: event.change,
    currency: event.currency,
    balance: event.balance,
  };
}

function projectSettlement(event: BalanceEvent, ts: number, seq: number, kindOf: KindOf, out: RowSink): void {
  const record = settlementRecordOf(event, ts);
  if (record === undefined) return;
  const name = record.instrumentName;
  out.upsert('settlements', {
    account_id: event.accountId,
    instrument_name: name,
    currency: parseInstrumentName(name)?.baseCurrency ?? null,
    quote_currency: quoteOf(name),
    kind: kindOf(name),
    settlement_type: record.type,
    timestamp: ts,
    seq,
    view: new JsonText(record),
  });
}

/**
 * The transaction log: one row per balance change (every `balance` event), its cause named, with
 * the change and the balance after it, so an account's rows in one currency chain exactly (each
 * balance is the one before plus the change). Keyed by (account, currency, seq, the event's
 * place in the command): the log's order. `tags` holds the words a `query` filter matches
 * (transaction-queries.ts). Trades' rows go with the trades' retention.
 */
export const TRANSACTIONS_TABLE: TableSpec = {
  name: 'transactions',
  columns: [
    { name: 'account_id', type: 'int', required: true },
    { name: 'currency', type: 'text', required: true },
    { name: 'seq', type: 'int', required: true },
    { name: 'idx', type: 'int', required: true },
    { name: 'timestamp', type: 'int', required: true },
    { name: 'tags', type: 'text', required: true },
    { name: 'view', type: 'text', required: true },
  ],
  primaryKey: ['account_id', 'currency', 'seq', 'idx'],
  indexes: [['timestamp']],
};

export type TransactionType = 'trade' | 'deposit' | 'withdrawal' | 'delivery';

/** The trade behind a balance change, as the changed account took part in it. */
export interface TransactionTrade {
  readonly tradeId: string;
  readonly instrumentName: string;
  readonly orderId: string;
  readonly side: 'buy' | 'sell';
  readonly liquidity: 'M' | 'T';
  /** Ticks. */
  readonly price: number;
  /** Lots. */
  readonly amount: number;
  /** The fee this change paid, minor units of the log's currency (0 where the fee went elsewhere: a spot trade's base). */
  readonly fee: number;
  readonly blockTradeId: string | null;
  /** A combo's leg trade: the combo. */
  readonly comboId?: string;
}

/** A transaction log entry in domain units (minor units, ticks, lots), as the table stores it. */
export interface TransactionRecord {
  /** `<seq>:<place in the command>`: unique, and the log's order. */
  readonly id: string;
  readonly accountId: number;
  readonly timestamp: number;
  readonly type: TransactionType;
  readonly currency: string;
  /** Signed change of the balance, minor units. */
  readonly change: number;
  /** The balance right after, minor units. */
  readonly balance: number;
  readonly trade?: TransactionTrade;
  readonly settlement?: SettlementDetail;
  readonly depositId?: string;
}

/** The trades of one command by id (leg trades too), for the balance changes that name them. */
export function tradesOf(events: readonly CoreEvent[]): Map<string, TradeView> {
  const trades = new Map<string, TradeView>();
  for (const event of events) {
    if (event.type !== 'trade') continue;
    trades.set(event.trade.tradeId, event.trade);
    for (const leg of event.trade.legs ?? []) trades.set(leg.tradeId, leg);
  }
  return trades;
}

const TYPE_OF_REASON: Readonly<Record<BalanceEvent['reason'], TransactionType>> = {
  trade: 'trade',
  deposit: 'deposit',
  withdraw: 'withdrawal',
  settlement: 'delivery',
};

/**
 * The transaction log entry of a balance event (the `index`th event of command `seq`), with the
 * words a query matches; `trades` are the command's (`tradesOf`).
 */
export function transactionOf(
  event: BalanceEvent,
  seq: number,
  index: number,
  ts: number,
  trades: ReadonlyMap<string, TradeView>,
  kindOf: KindOf,
): { record: TransactionRecord; tags: string } {
  const type = TYPE_OF_REASON[event.reason];
  const tags: string[] = [type];
  let trade: TransactionTrade | undefined;
  const view = event.tradeId === undefined ? undefined : trades.get(event.tradeId);
  if (view !== undefined) {
    const party = view.taker.accountId === event.accountId ? view.taker : view.maker;
    trade = {
      tradeId: view.tradeId,
      instrumentName: view.instrumentName,
      orderId: party.orderId,
      side: party.side,
      liquidity: party.liquidity,
      price: view.price,
      amount: view.amount,
      fee: party.feeCurrency === event.currency ? party.fee : 0,
      blockTradeId: view.blockTradeId,
      ...(view.comboId !== undefined ? { comboId: view.comboId } : {}),
    };
    tags.push(party.side, party.liquidity === 'M' ? 'maker' : 'taker');
    if (view.blockTradeId !== null) tags.push('block_trade');
  }
  const instrumentName = trade?.instrumentName ?? event.settlement?.instrumentName;
  if (instrumentName !== undefined) {
    const kind = kindOf(instrumentName);
    if (kind !== null) tags.push(kind);
  }
  // A combo's leg entry is also the combo's trade: its kind (`option_combo`, `future_combo`)
  // finds it, as the leg's own does (a combo trade moves cash only through its legs).
  if (trade?.comboId !== undefined) {
    const comboKind = kindOf(trade.comboId);
    if (comboKind !== null && !tags.includes(comboKind)) tags.push(comboKind);
  }
  const record: TransactionRecord = {
    id: `${seq}:${index}`,
    accountId: event.accountId,
    timestamp: ts,
    type,
    currency: event.currency,
    change: event.change,
    balance: event.balance,
    ...(trade !== undefined ? { trade } : {}),
    ...(event.settlement !== undefined ? { settlement: event.settlement } : {}),
    ...(event.depositId !== undefined ? { depositId: event.depositId } : {}),
  };
  return { record, tags: ` ${tags.join(' ')} ` };
}

function projectOrder(order: OrderView, seq: number, kindOf: KindOf, out: RowSink): void {
  out.upsert('orders', {
    order_id: order.orderId,
    account_id: order.accountId,
    currency: order.currency,
    kind: kindOf(order.instrumentName),
    instrument_name: order.instrumentName,
    order_state: order.orderState,
    filled_amount: order.filledAmount,
    created_at: order.createdAt,
    last_updated_at: order.lastUpdatedAt,
    updated_seq: seq,
    view: new JsonText(order, orderViewText),
    quote_currency: quoteOf(order.instrumentName),
  });
}

function projectTrade(trade: TradeView, seq: number, kindOf: KindOf, out: RowSink): void {
  const view = new JsonText(trade, tradeViewText);
  const kind = kindOf(trade.instrumentName);
  const quoteCurrency = quoteOf(trade.instrumentName);
  for (const [role, party] of [
    ['T', trade.taker],
    ['M', trade.maker],
  ] as const) {
    out.upsert('trades', {
      trade_id: trade.tradeId,
      role,
      account_id: party.accountId,
      order_id: party.orderId,
      currency: trade.currency,
      kind,
      instrument_name: trade.instrumentName,
      timestamp: trade.timestamp,
      trade_seq: trade.tradeSeq,
      seq,
      block_rfq_id: role === 'M' ? (trade.makerBlockRfqId ?? trade.blockRfqId) : trade.blockRfqId,
      view,
      quote_currency: quoteCurrency,
    });
  }
  if (trade.legs !== undefined) for (const leg of trade.legs) projectTrade(leg, seq, kindOf, out);
}

function projectPosition(position: PositionView, seq: number, kindOf: KindOf, out: RowSink): void {
  out.upsert('positions', {
    account_id: position.accountId,
    instrument_name: position.instrumentName,
    currency: parseInstrumentName(position.instrumentName)?.baseCurrency ?? null,
    kind: kindOf(position.instrumentName),
    size: position.size,
    updated_seq: seq,
    view: new JsonText(position),
    quote_currency: quoteOf(position.instrumentName),
  });
}

/**
 * Records `seq` as the last command that changed each account's rows in the tables above: the
 * accounts `coreProjection` writes rows of for these events (a test holds the two together). A
 * query for one account then need wait only until the store holds that account's last command.
 */
export function recordAccountSeqs(
  events: readonly CoreEvent[],
  seq: number,
  seqs: Map<number, number>,
): void {
  for (const event of events) {
    switch (event.type) {
      case 'order':
        seqs.set(event.order.accountId, seq);
        break;
      case 'trade':
        seqs.set(event.trade.taker.accountId, seq);
        seqs.set(event.trade.maker.accountId, seq);
        // A combo trade's legs have the same parties' accounts; named anyway, as their rows are.
        if (event.trade.legs !== undefined) {
          for (const leg of event.trade.legs) {
            seqs.set(leg.taker.accountId, seq);
            seqs.set(leg.maker.accountId, seq);
          }
        }
        break;
      case 'position':
        seqs.set(event.position.accountId, seq);
        break;
      case 'balance':
        // Its transaction log row (and a settlement's row).
        seqs.set(event.accountId, seq);
        break;
      default:
        break;
    }
  }
}

const NO_TRADES: ReadonlyMap<string, TradeView> = new Map();

/** Orders, trades, positions, settlements and the transaction log from the engine's CoreEvents. */
export function coreProjection(kindOf: KindOf = defaultKindOf): Projection<CoreEvent> {
  return {
    name: 'core',
    tables: [ORDERS_TABLE, TRADES_TABLE, POSITIONS_TABLE, SETTLEMENTS_TABLE, TRANSACTIONS_TABLE],
    project(committed: CommittedEvents<CoreEvent>, out: RowSink): void {
      let trades: Map<string, TradeView> | null = null;
      const events = committed.events;
      for (let index = 0; index < events.length; index++) {
        const event = events[index]!;
        switch (event.type) {
          case 'order':
            projectOrder(event.order, committed.seq, kindOf, out);
            break;
          case 'trade':
            projectTrade(event.trade, committed.seq, kindOf, out);
            break;
          case 'position':
            projectPosition(event.position, committed.seq, kindOf, out);
            break;
          case 'balance': {
            projectSettlement(event, committed.ts, committed.seq, kindOf, out);
            if (event.tradeId !== undefined) trades ??= tradesOf(events);
            const { record, tags } = transactionOf(
              event,
              committed.seq,
              index,
              committed.ts,
              trades ?? NO_TRADES,
              kindOf,
            );
            out.upsert('transactions', {
              account_id: event.accountId,
              currency: event.currency,
              seq: committed.seq,
              idx: index,
              timestamp: committed.ts,
              tags,
              view: new JsonText(record),
            });
            break;
          }
          case 'account':
          case 'instrument':
          case 'mmp_trigger':
          case 'rejection':
            break;
          default: {
            const _exhaustive: never = event;
            void _exhaustive;
          }
        }
      }
    },
  };
}
