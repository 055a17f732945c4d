/**
 * The engine's order index: order id → Order, for open orders and the recent closed ones.
 *
 * Engine ids end in the order's engine-wide arrival number (`BTC-42`, `BTC-SLTB-43`), so the
 * index is keyed by that number in a paged direct table (below): no hashing of the id string,
 * cheaper on every place, cancel, edit and retire, and few cache misses on deep books. A lookup checks the stored order's id equals the asked one, so a foreign id with the
 * same trailing digits is not found. Ids of any other form, or a number already taken by a
 * different order, go to a plain string-keyed fallback map: the index behaves exactly like a
 * `Map<string, Order>` for get/set/delete/has.
 */
import type { Order } from './order.ts';

const DASH = 45;
const ZERO = 48;
const NINE = 57;

/** The digits after the last `-` of an id as a number, or -1 when the id does not end so. */
export function trailingNumber(id: string): number {
  let i = id.length - 1;
  let n = 0;
  let scale = 1;
  for (; i >= 0; i--) {
    const c = id.charCodeAt(i);
    if (c < ZERO || c > NINE) break;
    n += (c - ZERO) * scale;
    scale *= 10;
    if (scale > 1e15) return -1;
  }
  if (scale === 1 || i < 0 || id.charCodeAt(i) !== DASH) return -1;
  // A leading zero would map `X-07` and `X-7` to one key; keep such ids in the fallback map.
  if (scale > 10 && id.charCodeAt(i + 1) === ZERO) return -1;
  return n;
}

const PAGE_SIZE = 256;

interface Page {
  readonly slots: (Order | undefined)[];
  live: number;
}

/**
 * Orders by number in pages of PAGE_SIZE consecutive numbers; a page is dropped once empty.
 * Numbers are handed out in sequence, so live orders cluster in few pages: a lookup is a small
 * Map hit plus an array read, far fewer cache misses than one large hash table on deep books.
 * Worst case (one long-lived order per page) costs one page (~2 KB) per such order, plus the
 * newest page, kept even when empty.
 */
class NumberTable {
  private readonly pages = new Map<number, Page>();
  private count = 0;
  /**
   * The page of the highest number set so far. It stays when it empties, since the next numbers
   * land on it: orders that close at once (immediate-or-cancel) would otherwise make and drop a
   * page, and churn the pages Map, on every order.
   */
  private newestKey = -1;

  get size(): number {
    return this.count;
  }

  get pageCount(): number {
    return this.pages.size;
  }

  get(n: number): Order | undefined {
    const page = this.pages.get(Math.floor(n / PAGE_SIZE));
    return page === undefined ? undefined : page.slots[n % PAGE_SIZE];
  }

  set(n: number, order: Order): void {
    const key = Math.floor(n / PAGE_SIZE);
    let page = this.pages.get(key);
    if (page === undefined) {
      page = { slots: new Array<Order | undefined>(PAGE_SIZE).fill(undefined), live: 0 };
      this.pages.set(key, page);
      if (key > this.newestKey) {
        const previous = this.newestKey;
        this.newestKey = key;
        if (this.pages.get(previous)?.live === 0) this.pages.delete(previous);
      }
    }
    const i = n % PAGE_SIZE;
    if (page.slots[i] === undefined) {
      page.live++;
      this.count++;
    }
    page.slots[i] = order;
  }

  delete(n: number): boolean {
    const key = Math.floor(n / PAGE_SIZE);
    const page = this.pages.get(key);
    const i = n % PAGE_SIZE;
    if (page === undefined || page.slots[i] === undefined) return false;
    page.slots[i] = undefined;
    this.count--;
    if (--page.live === 0 && key !== this.newestKey) this.pages.delete(key);
    return true;
  }

  *values(): IterableIterator<Order> {
    for (const page of this.pages.values())
      for (const order of page.slots) if (order !== undefined) yield order;
  }
}

export class OrderIndex {
  private readonly byNumber = new NumberTable();
  private readonly byId = new Map<string, Order>();

  get size(): number {
    return this.byNumber.size + this.byId.size;
  }

  /** Pages of the by-number table held (memory: about 2 KB each). */
  get pageCount(): number {
    return this.byNumber.pageCount;
  }

  get(id: string): Order | undefined {
    const n = trailingNumber(id);
    if (n >= 0) {
      const order = this.byNumber.get(n);
      if (order !== undefined && order.id === id) return order;
    }
    return this.byId.size === 0 ? undefined : this.byId.get(id);
  }

  has(id: string): boolean {
    return this.get(id) !== undefined;
  }

  set(id: string, order: Order): this {
    const n = trailingNumber(id);
    if (n >= 0) {
      const held = this.byNumber.get(n);
      if (n === order.number && order.id === id && (held === undefined || held.id === id)) {
        this.byNumber.set(n, order);
        if (this.byId.size !== 0) this.byId.delete(id);
        return this;
      }
      if (held !== undefined && held.id === id) this.byNumber.delete(n);
    }
    this.byId.set(id, order);
    return this;
  }

  delete(id: string): boolean {
    const n = trailingNumber(id);
    if (n >= 0) {
      const order = this.byNumber.get(n);
      if (order !== undefined && order.id === id) return this.byNumber.delete(n);
    }
    return this.byId.size === 0 ? false : this.byId.delete(id);
  }

  /** Removes this very order (by its number, no id parsing); false when it is not indexed. */
  remove(order: Order): boolean {
    if (this.byNumber.get(order.number) === order) return this.byNumber.delete(order.number);
    return this.byId.size !== 0 && this.byId.get(order.id) === order && this.byId.delete(order.id);
  }

  /** Every indexed order (no particular order). */
  *values(): IterableIterator<Order> {
    yield* this.byNumber.values();
    yield* this.byId.values();
  }
}
