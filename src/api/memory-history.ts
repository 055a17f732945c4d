/**
 * An in-memory HistoryPort fed by committed batches: for tests, demos without a read store, and
 * as an executable statement of the history semantics the read store implements
 * (src/store/read/history-queries.ts):
 * - An order is history when it has fills, or when it is closed without fills and
 *   `includeUnfilled` is set. Open orders without fills are not history.
 * - Recent (historical=false): updated within 30 min (orders) / 24 h (trades). Historical:
 *   at least 1 s old; older than 2 days only with includeOld.
 * - `currency` finds the base coin and the quote of a linear or spot pair (src/domain/currency.ts).
 * - A trade on a combo's book is an entry of the combo's kind (with its `legs`), and each of its
 *   leg trades an entry of its leg's kind: `option`/`future` find the legs, the combo kinds the
 *   combo trade, `any` both.
 * - Newest first by (the seq of the command that last changed it, the number the id ends in, id),
 *   so `BTC-T12` follows `BTC-T2`, as in the read store (src/store/read/history-keyset.ts); the
 *   continuation token `<seq>:<id>` names the last record returned and is null when nothing
 *   follows. `sorting: 'asc'` (trades) pages oldest first the same way: the token names the last
 *   record returned and the next page holds the ones after it in that order. A bad token or
 *   count is a RangeError.
 * - Settlements (src/store/read/settlement-queries.ts): one entry per position a settlement's
 *   `balance` event names, newest first by (seq, instrument name), token `<seq>:<instrumentName>`,
 *   `searchStartTimestamp` keeps those no newer; every entry is a `delivery`.
 * - Transactions (src/store/read/transaction-queries.ts): one entry per `balance` event, in the
 *   balance's currency, newest first by (seq, place in the command), token `<seq>:<place>`, the
 *   query's words all among the entry's (`transactionOf`, the read store's own projection).
 */
import type { OrderView, TradeView } from '../core/events.ts';
import { pairQuoteCurrency } from '../domain/currency.ts';
import { parseInstrumentName } from '../domain/instrument.ts';
import { settlementRecordOf, tradesOf, transactionOf } from '../store/read/core-projections.ts';
import { historyToken, idNumber, parseHistoryToken } from '../store/read/history-keyset.ts';
import { settlementCount } from '../store/read/settlement-queries.ts';
import {
  transactionCount,
  transactionQueryWords,
  transactionToken,
} from '../store/read/transaction-queries.ts';
import type {
  CommittedBatch,
  HistoryPort,
  OrderHistoryPage,
  OrderHistoryQuery,
  OrderTradesQuery,
  SettlementHistoryPage,
  SettlementHistoryQuery,
  SettlementRecord,
  TransactionLogPage,
  TransactionLogQuery,
  TransactionRecord,
  UserTrade,
  UserTradesPage,
  UserTradesQuery,
} from './ports.ts';

const RECENT_ORDERS_MS = 30 * 60_000;
const RECENT_TRADES_MS = 24 * 3_600_000;
const OLD_AFTER_MS = 2 * 24 * 3_600_000;
const INDEXING_DELAY_MS = 1_000;

type KindOf = (instrumentName: string) => string | undefined;

function kindMatches(filter: string | undefined, kind: string | undefined): boolean {
  if (filter === undefined || filter === 'any') return true;
  if (filter === 'combo') return kind === 'future_combo' || kind === 'option_combo';
  return filter === kind;
}

/** As the read store files rows: under the base coin and a linear or spot pair's quote. */
function filedUnder(currency: string, view: { instrumentName: string; currency: string }): boolean {
  return view.currency === currency || pairQuoteCurrency(view.instrumentName) === currency;
}

/** The base coin a settled instrument is filed under (its record's currency is the settlement one). */
function baseOf(record: SettlementRecord): string {
  return parseInstrumentName(record.instrumentName)?.baseCurrency ?? record.currency;
}

function inWindow(
  at: number,
  now: number,
  recentMs: number,
  historical: boolean,
  includeOld: boolean,
): boolean {
  if (!historical) return at >= now - recentMs;
  return at <= now - INDEXING_DELAY_MS && (includeOld || at >= now - OLD_AFTER_MS);
}

function parseToken(token: string | null | undefined): { at: number; id: string } | null {
  const position = parseHistoryToken(token);
  return position === null ? null : { at: position.seq, id: position.id };
}

function count(value: number | undefined, fallback: number): number {
  const n = value ?? fallback;
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new RangeError('count out of range');
  return n;
}

interface PageKey {
  /** The seq of the command that last changed it. */
  readonly at: number;
  /** The id the row's order and its token use; `numberedId` is the part whose number counts. */
  readonly id: string;
  readonly numberedId: string;
}

/** Newest first: by seq, then the number the id ends in, then the id's text. */
function compareKeys(a: PageKey, b: PageKey): number {
  return (
    b.at - a.at || idNumber(b.numberedId) - idNumber(a.numberedId) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)
  );
}

/** Newest first (compareKeys), or oldest first when `ascending`; keeps those strictly after the token. */
function page<T>(items: T[], key: (item: T) => PageKey, token: string | null | undefined, ascending = false) {
  const direction = ascending ? -1 : 1;
  items.sort((a, b) => direction * compareKeys(key(a), key(b)));
  const after = parseToken(token);
  if (after === null) return items;
  // A trade's token id carries its liquidity letter after the trade id's number.
  const afterKey: PageKey = { ...after, numberedId: after.id.replace(/[MT]$/, '') };
  return items.filter((item) => direction * compareKeys(key(item), afterKey) > 0);
}

export class MemoryHistory implements HistoryPort {
  private readonly orders = new Map<string, { view: OrderView; seq: number }>();
  private readonly trades: { trade: TradeView; seq: number }[] = [];
  private readonly settled: { record: SettlementRecord; seq: number }[] = [];
  private readonly transactionLog: { record: TransactionRecord; tags: string; seq: number; index: number }[] =
    [];

  constructor(private readonly kindOf: KindOf) {}

  record(batch: CommittedBatch): void {
    const trades = tradesOf(batch.events);
    const kindOf = (name: string) => this.kindOf(name) ?? null;
    for (const [index, event] of batch.events.entries()) {
      if (event.type === 'order') this.orders.set(event.order.orderId, { view: event.order, seq: batch.seq });
      else if (event.type === 'trade') {
        // As the read store: a combo trade (with its legs) and each leg trade are entries.
        this.trades.push({ trade: event.trade, seq: batch.seq });
        for (const leg of event.trade.legs ?? []) this.trades.push({ trade: leg, seq: batch.seq });
      } else if (event.type === 'balance') {
        const { record, tags } = transactionOf(event, batch.seq, index, batch.ts, trades, kindOf);
        this.transactionLog.push({ record, tags, seq: batch.seq, index });
        const settled = settlementRecordOf(event, batch.ts);
        if (settled !== undefined) this.settled.push({ seq: batch.seq, record: settled });
      }
    }
  }

  async order(orderId: string): Promise<OrderView | null> {
    return this.orders.get(orderId)?.view ?? null;
  }

  async orderHistory(q: OrderHistoryQuery): Promise<OrderHistoryPage> {
    const n = count(q.count, 20);
    const offset = q.offset ?? 0;
    // As the read store (history-queries.ts): a bad offset is the caller's error, not an empty page.
    if (!Number.isInteger(offset) || offset < 0) throw new RangeError('offset out of range');
    const candidates = [...this.orders.values()].filter(({ view: order }) => {
      if (order.accountId !== q.accountId || !filedUnder(q.currency, order)) return false;
      if (q.instrumentName !== undefined && order.instrumentName !== q.instrumentName) return false;
      if (!kindMatches(q.kind, this.kindOf(order.instrumentName))) return false;
      const open = order.orderState === 'open' || order.orderState === 'untriggered';
      if (order.filledAmount === 0 && (open || !q.includeUnfilled)) return false;
      return inWindow(
        order.lastUpdatedAt,
        q.now,
        RECENT_ORDERS_MS,
        q.historical ?? false,
        q.includeOld ?? false,
      );
    });
    const sorted = page(
      candidates,
      ({ view, seq }) => ({ at: seq, id: view.orderId, numberedId: view.orderId }),
      q.continuation,
    );
    const rows = sorted.slice(offset, offset + n);
    const last = rows[rows.length - 1];
    const more = sorted.length > offset + n;
    return {
      orders: rows.map((row) => row.view),
      continuation: more && last ? historyToken(last.seq, last.view.orderId) : null,
    };
  }

  async settlements(q: SettlementHistoryQuery): Promise<SettlementHistoryPage> {
    const n = settlementCount(q.count);
    const after = parseHistoryToken(q.continuation);
    const found = this.settled
      .filter(({ record, seq }) => {
        if (record.accountId !== q.accountId) return false;
        if (q.currency !== undefined && !filedUnder(q.currency, { ...record, currency: baseOf(record) }))
          return false;
        if (q.instrumentName !== undefined && record.instrumentName !== q.instrumentName) return false;
        if (q.type !== undefined && record.type !== q.type) return false;
        if (q.searchStartTimestamp !== undefined && record.timestamp > q.searchStartTimestamp) return false;
        return after === null || seq < after.seq || (seq === after.seq && record.instrumentName < after.id);
      })
      .sort((a, b) => b.seq - a.seq || (a.record.instrumentName < b.record.instrumentName ? 1 : -1));
    const rows = found.slice(0, n);
    const last = rows[rows.length - 1];
    return {
      settlements: rows.map((row) => row.record),
      continuation: found.length > n && last ? historyToken(last.seq, last.record.instrumentName) : null,
    };
  }

  async transactions(q: TransactionLogQuery): Promise<TransactionLogPage> {
    const n = transactionCount(q.count);
    const words = transactionQueryWords(q.query);
    const after = transactionToken(q.continuation);
    const found = this.transactionLog
      .filter(({ record, tags, seq, index }) => {
        if (record.accountId !== q.accountId || record.currency !== q.currency) return false;
        if (record.timestamp < q.startTimestamp || record.timestamp > q.endTimestamp) return false;
        if (!words.every((word) => tags.includes(` ${word} `))) return false;
        return after === null || seq < after.seq || (seq === after.seq && index < after.index);
      })
      .reverse();
    const rows = found.slice(0, n);
    const last = rows[rows.length - 1];
    return {
      logs: rows.map((row) => row.record),
      continuation: found.length > n && last ? historyToken(last.seq, String(last.index)) : null,
    };
  }

  async orderTrades(q: OrderTradesQuery): Promise<UserTrade[]> {
    const own: UserTrade[] = [];
    for (const { trade } of this.trades) {
      if (trade.instrumentName !== q.instrumentName || trade.timestamp < q.since) continue;
      for (const [party, liquidity] of [
        [trade.taker, 'T'],
        [trade.maker, 'M'],
      ] as const) {
        if (party.accountId === q.accountId && party.orderId === q.orderId) own.push({ trade, liquidity });
      }
    }
    // Newest first, as the read store walks them.
    return own.reverse();
  }

  async userTrades(q: UserTradesQuery): Promise<UserTradesPage> {
    const n = count(q.count, 10);
    const own = this.trades.flatMap(({ trade, seq }) => {
      const sides: Array<{ trade: TradeView; seq: number; liquidity: 'M' | 'T' }> = [];
      if (trade.taker.accountId === q.accountId) sides.push({ trade, seq, liquidity: 'T' });
      if (trade.maker.accountId === q.accountId) sides.push({ trade, seq, liquidity: 'M' });
      return sides.filter(({ trade: t }) => {
        if (q.currency !== undefined && !filedUnder(q.currency, t)) return false;
        if (q.instrumentName !== undefined && t.instrumentName !== q.instrumentName) return false;
        if (!kindMatches(q.kind, this.kindOf(t.instrumentName))) return false;
        if (q.startTimestamp !== undefined && t.timestamp < q.startTimestamp) return false;
        if (q.endTimestamp !== undefined && t.timestamp > q.endTimestamp) return false;
        return inWindow(t.timestamp, q.now, RECENT_TRADES_MS, q.historical ?? false, q.includeOld ?? false);
      });
    });
    const sorted = page(
      own,
      ({ trade, seq, liquidity }) => ({
        at: seq,
        id: `${trade.tradeId}${liquidity}`,
        numberedId: trade.tradeId,
      }),
      q.continuation,
      q.sorting === 'asc',
    );
    const trades = sorted.slice(0, n);
    const last = trades[trades.length - 1];
    const more = sorted.length > n;
    return {
      trades,
      hasMore: more,
      continuation: more && last ? historyToken(last.seq, `${last.trade.tradeId}${last.liquidity}`) : null,
    };
  }
}
