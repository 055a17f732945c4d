/**
 * A price level: the FIFO queue of resting orders at one price, as an intrusive doubly linked
 * list (the links live on the orders), with running totals.
 *
 * Invariants: `head` is the oldest order (first to match); `count` and `total` equal the number
 * and Σ remaining of the orders in the list; `visible` is Σ remaining of non-hidden orders.
 */
import { FLAG_HIDDEN, FLAG_ICEBERG, type Order } from './order.ts';

export class PriceLevel {
  head: Order | null = null;
  tail: Order | null = null;
  count = 0;
  total = 0;
  visible = 0;

  constructor(public price: number) {}

  append(order: Order): void {
    order.level = this;
    order.next = null;
    order.prev = this.tail;
    if (this.tail === null) this.head = order;
    else this.tail.next = order;
    this.tail = order;
    this.count++;
    const remaining = order.amount - order.filled;
    this.total += remaining;
    if ((order.flags & FLAG_HIDDEN) === 0)
      this.visible += (order.flags & FLAG_ICEBERG) === 0 ? remaining : order.extras!.displayAmount!;
  }

  remove(order: Order): void {
    const { prev, next } = order;
    if (prev === null) this.head = next;
    else prev.next = next;
    if (next === null) this.tail = prev;
    else next.prev = prev;
    order.prev = null;
    order.next = null;
    order.level = null;
    this.count--;
    const remaining = order.amount - order.filled;
    this.total -= remaining;
    if ((order.flags & FLAG_HIDDEN) === 0)
      this.visible -= (order.flags & FLAG_ICEBERG) === 0 ? remaining : order.extras!.displayAmount!;
  }

  /** Records that a resting order's remaining size shrank by `lots` (fill or size decrease). */
  reduce(order: Order, lots: number): void {
    this.total -= lots;
    if ((order.flags & FLAG_HIDDEN) === 0) this.visible -= lots;
  }
}
