/**
 * Snapshots: the whole engine state as plain JSON, and its restoration.
 *
 * Invariants:
 * - `restore(snapshot(s))` behaves exactly like `s` for every later command, and
 *   `snapshot(restore(x))` deep-equals `x`.
 * - Open orders are written per instrument in book priority (bids best→worst, each level
 *   oldest→newest, then asks), so re-adding them in that order rebuilds identical queues.
 * - Derived totals (level sizes, open lots, reserved sums, expiry queue) are not stored; they
 *   are rebuilt by `rest`. Valuation caches are not state.
 */
import type { TradeView } from '../core/events.ts';
import type { CancelReason, OrderState, OrderType, SelfTradeMode, Side, TimeInForce } from '../core/types.ts';
import { Instrument, type InstrumentSpec } from '../domain/instrument.ts';
import { Account } from './accounts.ts';
import { type AdvancedSnapshot, restoreAdvanced, takeAdvancedSnapshot } from './advanced-snapshot.ts';
import type { EngineConfig } from './config.ts';
import { Economics } from './economics.ts';
import { rest } from './matching.ts';
import { Order, type OrderExtras } from './order.ts';
import { InstrumentState, VenueState } from './state.ts';
import { openInterestOf, restoreTradeStats, type SavedBucket, saveTradeStats } from './trade-stats.ts';

export interface OrderRecord {
  readonly id: string;
  readonly number: number;
  readonly accountId: number;
  readonly instrumentName: string;
  readonly side: Side;
  readonly orderType: OrderType;
  readonly price: number;
  readonly amount: number;
  readonly filled: number;
  readonly filledNotional: number;
  readonly state: OrderState;
  readonly cancelReason: CancelReason | null;
  readonly timeInForce: TimeInForce;
  readonly createdAt: number;
  readonly lastUpdatedAt: number;
  readonly label: string;
  readonly owner: string | null;
  readonly flags: number;
  readonly reserved: number;
  readonly reserveCurrency: string;
  readonly expiresAt: number;
  readonly extras: OrderExtras | null;
  /** Its cancel-on-disconnect session (cod-sessions.ts); absent when none, and in older snapshots. */
  readonly codSession?: string;
}

export interface VenueSnapshot {
  readonly version: 1;
  readonly config: EngineConfig;
  readonly now: number;
  readonly orderNumber: number;
  readonly blockTradeNumber: number;
  readonly tradeCounters: ReadonlyArray<readonly [string, number]>;
  readonly indexPrices: ReadonlyArray<readonly [string, number]>;
  /**
   * `VenueState.indexSamples`: `[currency, [time, price][]]`. Absent in snapshots from before it
   * was kept, and never part of the state hash (`hashedSnapshot`).
   */
  readonly indexSamples?: ReadonlyArray<readonly [string, ReadonlyArray<readonly [number, number]>]>;
  readonly instruments: ReadonlyArray<{
    readonly spec: InstrumentSpec;
    readonly status: 'open' | 'expired';
    readonly tradeSeq: number;
    readonly lastPrice: number | null;
    readonly lastDirection: 0 | 1 | 2 | 3;
    readonly markPrice: number | null;
    readonly settlementPrice: number | null;
    readonly recentTrades: readonly TradeView[];
    /**
     * The ticker's per-minute trade buckets of the last 24 h (trade-stats.ts); absent when there
     * are none, and in snapshots from before they were kept.
     */
    readonly tradeStats?: readonly SavedBucket[];
  }>;
  readonly accounts: ReadonlyArray<{
    readonly id: number;
    readonly userId: number | null;
    readonly selfTradeMode: SelfTradeMode;
    readonly maxOpenOrders: number;
    readonly balances: ReadonlyArray<readonly [string, number]>;
    readonly positions: ReadonlyArray<{
      readonly instrumentName: string;
      readonly size: number;
      readonly openCost: number;
      /** Absent in snapshots from before it was kept (the average then derives from openCost). */
      readonly entryValue?: number;
      readonly realisedPnl: number;
    }>;
    /**
     * Cancel-on-disconnect's `account` scope (cod-sessions.ts): present (true) only when on, so
     * snapshots of older builds and of accounts that never used it are unchanged.
     */
    readonly cancelOnDisconnect?: true;
    /**
     * `Account.depositIds` as `[depositId, currency, amount]`, oldest first: present only when
     * the account has had deposits with an id, so older snapshots and hashes are unchanged.
     */
    readonly depositIds?: ReadonlyArray<readonly [string, string, number]>;
  }>;
  readonly openOrders: readonly OrderRecord[];
  readonly closedOrders: readonly OrderRecord[];
  /** Trigger book, linked groups, MMP…; absent when there is none (advanced-snapshot.ts). */
  readonly advanced?: AdvancedSnapshot;
}

function record(order: Order): OrderRecord {
  return {
    id: order.id,
    number: order.number,
    accountId: order.accountId,
    instrumentName: order.instrumentName,
    side: order.side,
    orderType: order.orderType,
    price: order.price,
    amount: order.amount,
    filled: order.filled,
    filledNotional: order.filledNotional,
    state: order.state,
    cancelReason: order.cancelReason,
    timeInForce: order.timeInForce,
    createdAt: order.createdAt,
    lastUpdatedAt: order.lastUpdatedAt,
    label: order.label,
    owner: order.owner,
    flags: order.flags,
    reserved: order.reserved,
    reserveCurrency: order.reserveCurrency,
    expiresAt: order.expiresAt,
    extras: order.extras === null ? null : structuredClone(order.extras),
    ...(order.codSession === null ? {} : { codSession: order.codSession }),
  };
}

export function takeSnapshot(state: VenueState): VenueSnapshot {
  const openOrders: OrderRecord[] = [];
  for (const instrument of state.instrumentList) {
    for (const ladder of [instrument.book.bids, instrument.book.asks]) {
      for (const level of ladder.levelsBestFirst()) {
        for (let o = level.head; o !== null; o = o.next) openOrders.push(record(o));
      }
    }
  }
  return {
    version: 1,
    config: { ...state.config },
    now: state.now,
    orderNumber: state.orderNumber,
    blockTradeNumber: state.blockTradeNumber,
    tradeCounters: [...state.tradeCounters],
    indexPrices: [...state.indexPrices],
    indexSamples: state.indexSamples.samples(),
    instruments: state.instrumentList.map((i) => {
      const tradeStats = saveTradeStats(i);
      return {
        spec: i.instrument.spec,
        status: i.status,
        tradeSeq: i.tradeSeq,
        lastPrice: i.lastPrice,
        lastDirection: i.lastDirection,
        markPrice: i.markPrice,
        settlementPrice: i.settlementPrice,
        recentTrades: i.recentTrades.slice(-state.config.recentTradesPerInstrument),
        ...(tradeStats === undefined ? {} : { tradeStats }),
      };
    }),
    accounts: [...state.accounts.values()].map((a) => ({
      id: a.id,
      userId: a.userId,
      selfTradeMode: a.selfTradeMode,
      maxOpenOrders: a.maxOpenOrders,
      balances: [...a.ledgers.values()].map((l) => [l.currency, l.balance] as const),
      positions: [...a.positions.values()].map((p) => ({
        instrumentName: p.economics.instrument.name,
        size: p.size,
        openCost: p.openCost,
        // Unknown (NaN) after restoring a snapshot from before it was kept: left out, so the
        // snapshot hashes as it was written.
        ...(Number.isNaN(p.entryValue) ? {} : { entryValue: p.entryValue }),
        realisedPnl: p.realisedPnl,
      })),
      ...(a.cancelOnDisconnect ? { cancelOnDisconnect: true as const } : {}),
      ...(a.depositIds.size === 0
        ? {}
        : {
            depositIds: [...a.depositIds].map(
              ([id, deposit]) => [id, deposit.currency, deposit.amount] as const,
            ),
          }),
    })),
    openOrders,
    closedOrders: state.closedOldestFirst().map(record),
    advanced: takeAdvancedSnapshot(state, record),
  };
}

function revive(state: VenueState, r: OrderRecord): { order: Order; instrument: InstrumentState } {
  const instrument = state.instruments.get(r.instrumentName)!;
  const order = new Order(
    r.id,
    r.number,
    r.accountId,
    instrument.id,
    r.instrumentName,
    instrument.instrument.currency,
    r.side,
    r.orderType,
    r.price,
    r.amount,
    r.timeInForce,
    r.createdAt,
    r.label,
    r.owner,
    r.flags,
  );
  order.filled = r.filled;
  order.filledNotional = r.filledNotional;
  order.state = r.state;
  order.cancelReason = r.cancelReason;
  order.lastUpdatedAt = r.lastUpdatedAt;
  order.reserved = r.reserved;
  order.reserveCurrency = r.reserveCurrency;
  order.expiresAt = r.expiresAt;
  order.extras = r.extras === null ? null : structuredClone(r.extras);
  if (r.codSession !== undefined) order.codSession = r.codSession;
  return { order, instrument };
}

export function restoreState(snapshot: VenueSnapshot): VenueState {
  if (snapshot.version !== 1) throw new Error(`unsupported snapshot version ${snapshot.version}`);
  const state = new VenueState(Object.freeze({ ...snapshot.config }));
  state.now = snapshot.now;
  state.orderNumber = snapshot.orderNumber;
  state.blockTradeNumber = snapshot.blockTradeNumber;
  for (const [currency, n] of snapshot.tradeCounters) state.tradeCounters.set(currency, n);
  for (const [currency, price] of snapshot.indexPrices) state.indexPrices.set(currency, price);
  state.indexSamples.restore(snapshot.indexSamples ?? []);
  for (const saved of snapshot.instruments) {
    const instrument = new Instrument(state.instrumentList.length, saved.spec);
    const entry = new InstrumentState(instrument, new Economics(instrument));
    entry.status = saved.status;
    entry.tradeSeq = saved.tradeSeq;
    entry.lastPrice = saved.lastPrice;
    entry.lastDirection = saved.lastDirection;
    entry.markPrice = saved.markPrice;
    entry.settlementPrice = saved.settlementPrice;
    entry.recentTrades.push(...saved.recentTrades);
    state.instruments.set(instrument.name, entry);
    state.instrumentList.push(entry);
  }
  restoreTradeStats(
    state,
    snapshot.instruments.map((saved) => saved.tradeStats),
  );
  for (const saved of snapshot.accounts) {
    const account = new Account(saved.id, saved.userId, saved.selfTradeMode, saved.maxOpenOrders);
    state.accounts.set(account.id, account);
    if (saved.cancelOnDisconnect === true) account.cancelOnDisconnect = true;
    for (const [currency, balance] of saved.balances) account.ledger(currency).balance = balance;
    for (const [id, currency, amount] of saved.depositIds ?? [])
      account.depositIds.set(id, { currency, amount });
    for (const p of saved.positions) {
      const position = state.instruments.get(p.instrumentName)!.position(account);
      position.size = p.size;
      position.openCost = p.openCost;
      position.entryValue = p.entryValue ?? Number.NaN;
      position.realisedPnl = p.realisedPnl;
    }
  }
  for (const instrument of state.instrumentList) instrument.openInterest = openInterestOf(instrument);
  for (const r of snapshot.openOrders) {
    const { order, instrument } = revive(state, r);
    const reserved = order.reserved;
    order.reserved = reserved;
    state.orders.set(order.id, order);
    rest(state, instrument, state.accounts.get(order.accountId)!, order);
  }
  for (const r of snapshot.closedOrders) {
    const { order } = revive(state, r);
    state.orders.set(order.id, order);
    state.retire(order);
  }
  restoreAdvanced(state, snapshot.advanced, (r) => revive(state, r).order);
  return state;
}
