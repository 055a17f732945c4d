/**
 * The engine's whole mutable state, shared by the modules that operate on it (trading,
 * matching, lifecycle, queries, snapshot). Only the engine writes it, one command at a time.
 *
 * Invariants:
 * - `orders` holds every open order and the most recent `config.recentClosedOrders` closed ones
 *   (the `closedOrders` ring).
 * - An open order that rests is in exactly one book level and in its account's `openOrders`.
 * - `events` is the current command's event list (a fresh array per command).
 */
import type { CoreError, CoreEvent, TradeView } from '../core/events.ts';
import type { Instrument } from '../domain/instrument.ts';
import { IndexHistory, SETTLEMENT_WINDOW_MS } from '../market/settlement.ts';
import { type Account, Position } from './accounts.ts';
import { AdvancedState } from './advanced-state.ts';
import { OrderBook } from './book.ts';
import type { EngineConfig } from './config.ts';
import type { Economics } from './economics.ts';
import type { Order } from './order.ts';
import { OrderIndex } from './order-index.ts';
import { isClosedState } from './order-state.ts';
import { type TradeBucket, TradeStatsQueue } from './trade-stats.ts';

export class InstrumentState {
  readonly book = new OrderBook();
  status: 'open' | 'expired' = 'open';
  tradeSeq = 0;
  lastPrice: number | null = null;
  lastDirection: 0 | 1 | 2 | 3 = 0;
  markPrice: number | null = null;
  settlementPrice: number | null = null;
  /** Positions on this instrument by account (for settlement and netting checks). */
  readonly positions = new Map<number, Position>();
  readonly recentTrades: TradeView[] = [];
  /** Lots of open long positions (trade-stats.ts); derived from `positions`, not saved. */
  openInterest = 0;
  /** Per-minute trade buckets of the last 24 h, oldest first (trade-stats.ts). */
  readonly statBuckets: TradeBucket[] = [];

  constructor(
    readonly instrument: Instrument,
    readonly economics: Economics,
  ) {}

  get id(): number {
    return this.instrument.id;
  }

  position(account: Account): Position {
    let position = account.positions.get(this.id);
    if (position === undefined) {
      position = new Position(account.id, this.id, this.economics);
      account.positions.set(this.id, position);
      this.positions.set(account.id, position);
    }
    return position;
  }
}

/** GTD expiry queue: a binary min-heap on (expiresAt, order number). */
export class ExpiryQueue {
  private readonly heap: Order[] = [];

  get size(): number {
    return this.heap.length;
  }

  nextAt(): number {
    return this.heap.length === 0 ? Number.POSITIVE_INFINITY : this.heap[0]!.expiresAt;
  }

  /** Drops entries at the top whose order no longer rests (lazy deletion). */
  prune(): void {
    while (this.heap.length > 0 && (this.heap[0]!.state !== 'open' || this.heap[0]!.level === null))
      this.pop();
  }

  push(order: Order): void {
    const heap = this.heap;
    heap.push(order);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  pop(): Order | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0 && last !== undefined) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        if (left < heap.length && before(heap[left]!, heap[smallest]!)) smallest = left;
        if (right < heap.length && before(heap[right]!, heap[smallest]!)) smallest = right;
        if (smallest === i) break;
        [heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!];
        i = smallest;
      }
    }
    return top;
  }
}

function before(a: Order, b: Order): boolean {
  return a.expiresAt < b.expiresAt || (a.expiresAt === b.expiresAt && a.number < b.number);
}

export class VenueState {
  readonly instruments = new Map<string, InstrumentState>();
  readonly instrumentList: InstrumentState[] = [];
  readonly accounts = new Map<number, Account>();
  /** Order id → order (a Map<string, Order> keyed internally by the order number). */
  readonly orders = new OrderIndex();
  /** Ring of the most recent closed orders; `closedNext` is the slot written next. */
  readonly closedOrders: (Order | undefined)[] = [];
  closedNext = 0;
  readonly indexPrices = new Map<string, number>();
  /**
   * The index prices of the last settlement window, by command time: what the market's
   * settlement TWAP needs after a restart (the market keeps its own only in memory). Saved in
   * snapshots but left out of the state hash, which it cannot change: it is derived from the
   * journaled price updates alone, and hashes from before it was kept stay comparable.
   */
  readonly indexSamples = new IndexHistory(SETTLEMENT_WINDOW_MS);
  readonly tradeCounters = new Map<string, number>();
  readonly expiries = new ExpiryQueue();
  /** Every instrument's trade buckets in time order, for pruning the 24 h window. */
  readonly statsQueue = new TradeStatsQueue();
  orderNumber = 0;
  blockTradeNumber = 0;
  /** Bumped on every price update: cached account valuations older than this are stale. */
  priceEpoch = 0;
  now = 0;
  events: CoreEvent[] = [];
  /**
   * Positions a fill changed this command while reduce-only orders rested on them, for
   * `clipReduceOnly` (matching.ts) to clip once matching is over; empty between commands.
   */
  reduceOnlyChecks: { instrument: InstrumentState; account: Account }[] = [];
  /** Resting orders whose reserve a review raised in this command (`clipReduceOnly`). */
  raisedReserves: Order[] = [];
  /** Trigger book, linked groups, MMP, advanced prices (advanced-state.ts). */
  readonly advanced = new AdvancedState();

  constructor(readonly config: EngineConfig) {}

  nextTradeId(currency: string): string {
    const n = (this.tradeCounters.get(currency) ?? 0) + 1;
    this.tradeCounters.set(currency, n);
    return `${currency}-T${n}`;
  }

  /** Records an order as closed and drops the oldest closed order beyond the cap (a ring). */
  retire(order: Order): void {
    if (!isClosedState(order.state)) throw new Error(`retiring open order ${order.id}`);
    // A closed order belongs to no cancel-on-disconnect session.
    if (order.codSession !== null) order.codSession = null;
    const capacity = this.config.recentClosedOrders;
    if (capacity <= 0) {
      this.orders.delete(order.id);
      return;
    }
    const ring = this.closedOrders;
    const oldest = ring[this.closedNext];
    if (oldest !== undefined) this.orders.remove(oldest);
    ring[this.closedNext] = order;
    this.closedNext = this.closedNext + 1 === capacity ? 0 : this.closedNext + 1;
  }

  /** The kept closed orders, oldest first. */
  closedOldestFirst(): Order[] {
    const ring = this.closedOrders;
    return [...ring.slice(this.closedNext), ...ring.slice(0, this.closedNext)].filter((o) => o !== undefined);
  }

  indexPrice(currency: string): number | null {
    return this.indexPrices.get(currency) ?? null;
  }
}

/** A refusal result's error, built with the field at fault. */
export function refusal(name: CoreError['name'], message: string, data: CoreError['data'] = {}): CoreError {
  return { name, message, data };
}
