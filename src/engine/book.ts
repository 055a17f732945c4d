/**
 * One instrument's order book: two ladders of price levels with strict price-time priority.
 *
 * Layout: per side, a sorted Float64Array of the prices that have a level, with the BEST price
 * at the END (bids ascending, asks descending), so the best level is read, added and removed at
 * the end in O(1) and a new level near the touch moves only a few entries. `byRank` holds the
 * levels in the same order as `prices`. The level of a price is found by searching `prices`
 * (a short scan from the best end, where most activity is, then binary search): no hash map. Orders sit in their level's intrusive list, so adding at the tail and removing any
 * order are O(1); a level is dropped as soon as it is empty (no empty levels are kept).
 *
 * Invariants (checked by `validate`, used by tests):
 * - every level in a ladder is non-empty and its price is unique in that ladder;
 * - at rest the book is never crossed: best bid < best ask.
 */
import type { Side } from '../core/types.ts';
import type { Order } from './order.ts';
import { PriceLevel } from './price-level.ts';

/** Prices a ladder has room for when made, and after `release`. */
const INITIAL_CAPACITY = 64;

export class Ladder {
  private prices = new Float64Array(INITIAL_CAPACITY);
  private size = 0;
  /** byRank[i] is the level of prices[i]. */
  private byRank: PriceLevel[] = [];
  private readonly spare: PriceLevel[] = [];

  /** `better(a, b)` is true when price a has priority over b on this side. */
  constructor(readonly side: Side) {}

  get levelCount(): number {
    return this.size;
  }

  /** Emptied levels kept for reuse (`dropLevel`). For tests and `release`. */
  get spareLevels(): number {
    return this.spare.length;
  }

  /** Prices the ladder has room for before it grows. For tests and `release`. */
  get capacity(): number {
    return this.prices.length;
  }

  best(): PriceLevel | null {
    return this.size === 0 ? null : this.byRank[this.size - 1]!;
  }

  level(price: number): PriceLevel | undefined {
    const i = this.rankOf(price);
    return i < this.size && this.prices[i] === price ? this.byRank[i] : undefined;
  }

  /**
   * The index of the first entry whose price is equal to or better than `price` (where a new
   * level of `price` would go). Looks a few entries back from the best end, then bisects.
   */
  private rankOf(price: number): number {
    const prices = this.prices;
    const bids = this.side === 'buy';
    let i = this.size;
    const stop = i > 16 ? i - 16 : 0;
    while (i > stop && (bids ? prices[i - 1]! >= price : prices[i - 1]! <= price)) i--;
    if (i > stop || i === 0) return i;
    let lo = 0;
    let hi = i;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (bids ? prices[mid]! < price : prices[mid]! > price) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The level `depth` places behind the best (0 = best), or null. O(1), no allocation. */
  levelAtDepth(depth: number): PriceLevel | null {
    const i = this.size - 1 - depth;
    return i < 0 ? null : this.byRank[i]!;
  }

  /** Levels from best to worst (allocates; for queries and snapshots). */
  levelsBestFirst(limit = Number.POSITIVE_INFINITY): PriceLevel[] {
    const out: PriceLevel[] = [];
    for (let i = this.size - 1; i >= 0 && out.length < limit; i--) out.push(this.byRank[i]!);
    return out;
  }

  add(order: Order): void {
    const price = order.price;
    const i = this.rankOf(price);
    let level: PriceLevel;
    if (i < this.size && this.prices[i] === price) level = this.byRank[i]!;
    else {
      level = this.spare.pop() ?? new PriceLevel(price);
      level.price = price;
      this.insertAt(i, price, level);
    }
    level.append(order);
  }

  remove(order: Order): void {
    const level = order.level!;
    level.remove(order);
    if (level.count === 0) this.dropLevel(level);
  }

  /** Drops an emptied level (the caller has unlinked all its orders). */
  dropLevel(level: PriceLevel): void {
    this.removePrice(level.price);
    level.head = null;
    level.tail = null;
    level.total = 0;
    level.visible = 0;
    level.count = 0;
    if (this.spare.length < 1024) this.spare.push(level);
  }

  /**
   * Gives back what the ladder kept for reuse: its spare levels, and the room its prices grew to
   * beyond the initial size (or beyond what its levels need). Not state: books and queries see
   * no change.
   */
  release(): void {
    this.spare.length = 0;
    let capacity = INITIAL_CAPACITY;
    while (capacity < this.size) capacity *= 2;
    if (capacity < this.prices.length) this.prices = this.prices.slice(0, capacity);
    // A copy: an array's backing store keeps the room it once grew to.
    this.byRank = this.byRank.slice(0, this.size);
  }

  private insertAt(i: number, price: number, level: PriceLevel): void {
    if (this.size === this.prices.length) {
      const grown = new Float64Array(this.prices.length * 2);
      grown.set(this.prices);
      this.prices = grown;
    }
    const prices = this.prices;
    prices.copyWithin(i + 1, i, this.size);
    prices[i] = price;
    const byRank = this.byRank;
    for (let j = this.size; j > i; j--) byRank[j] = byRank[j - 1]!;
    byRank[i] = level;
    this.size++;
  }

  private removePrice(price: number): void {
    const prices = this.prices;
    const last = this.size - 1;
    const byRank = this.byRank;
    if (prices[last] === price) {
      byRank.pop();
      this.size = last;
      return;
    }
    const lo = this.rankOf(price);
    prices.copyWithin(lo, lo + 1, this.size);
    for (let j = lo; j < last; j++) byRank[j] = byRank[j + 1]!;
    byRank.pop();
    this.size = last;
  }

  /** Structural check for tests: sorted, unique, non-empty levels with correct totals. */
  validate(): void {
    let prior: number | null = null;
    for (let i = 0; i < this.size; i++) {
      const price = this.prices[i]!;
      if (prior !== null && (this.side === 'buy' ? price <= prior : price >= prior)) {
        throw new Error(`${this.side} ladder out of order at ${price}`);
      }
      prior = price;
      const level = this.byRank[i];
      if (level === undefined || level.count === 0) throw new Error(`empty or missing level ${price}`);
      if (level.price !== price) throw new Error(`level ${price} out of rank`);
      let count = 0;
      let total = 0;
      for (let o = level.head; o !== null; o = o.next) {
        count++;
        total += o.amount - o.filled;
        if (o.price !== price || o.level !== level) throw new Error(`order ${o.id} in wrong level`);
      }
      if (count !== level.count || total !== level.total) throw new Error(`level ${price} totals drifted`);
    }
    if (this.byRank.length !== this.size) throw new Error('level list and ladder disagree');
  }
}

export class OrderBook {
  readonly bids = new Ladder('buy');
  readonly asks = new Ladder('sell');

  ladder(side: Side): Ladder {
    return side === 'buy' ? this.bids : this.asks;
  }

  opposite(side: Side): Ladder {
    return side === 'buy' ? this.asks : this.bids;
  }

  /** Gives back both ladders' spare levels and grown room (`Ladder.release`): a settled book's. */
  release(): void {
    this.bids.release();
    this.asks.release();
  }

  bestBid(): number | null {
    return this.bids.best()?.price ?? null;
  }

  bestAsk(): number | null {
    return this.asks.best()?.price ?? null;
  }

  validate(): void {
    this.bids.validate();
    this.asks.validate();
    const bid = this.bestBid();
    const ask = this.bestAsk();
    if (bid !== null && ask !== null && bid >= ask) throw new Error(`book crossed: ${bid} >= ${ask}`);
  }
}
