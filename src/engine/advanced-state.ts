/**
 * State of the advanced order types, kept beside the plain book (one instance per VenueState):
 * the trigger book (untriggered orders), linked-order groups, MMP groups, and the greeks the
 * price source published (for MMP delta/vega).
 *
 * Invariants:
 * - An order in `untriggered` has state `untriggered`, is in `state.orders`, and is in no book
 *   level nor in its account's `openOrders` (it reserves nothing).
 * - `byInstrument` holds exactly the orders of `untriggered`, per instrument and trigger kind:
 *   `up` (fire when price ≥ triggerPrice: stop buy, take sell) ascending by (triggerPrice,
 *   number), `down` (fire when price ≤ triggerPrice: stop sell, take buy) descending by
 *   triggerPrice then ascending number, `trailing` (the stop moves) in arrival order. So the
 *   due orders of a price are a prefix of `up`/`down`; only trailing stops are scanned.
 * - A waiting order's triggerPrice is never changed while it is in `up`/`down` (edits take it
 *   out and put it back).
 * - Everything here is part of the snapshot (see advanced-snapshot.ts) except `seen*` caches,
 *   which only skip work and are rebuilt conservatively after a restore.
 */

import type { TriggerKind } from '../core/types.ts';
import type { LinkGroup } from './linked-orders.ts';
import type { MmpGroup } from './mmp.ts';
import type { Order } from './order.ts';

export interface Greeks {
  /** Per one lot of the instrument, in base-coin units. */
  readonly delta: number;
  readonly vega: number;
  /** Forward of the option's expiry over the index, as last published (absent: 1). */
  readonly forwardFactor?: number;
}

/** The waiting trigger orders of one instrument and trigger kind. */
export interface KindBook {
  readonly up: Order[];
  readonly down: Order[];
  readonly trailing: Order[];
}

export type InstrumentTriggers = Map<TriggerKind, KindBook>;

function firesUp(order: Order): boolean {
  const t = order.orderType;
  return order.side === 'buy'
    ? t === 'stop_limit' || t === 'stop_market'
    : t === 'take_limit' || t === 'take_market';
}

/** Index at which `order` sorts into `list` (see the ordering in the header). */
function slot(list: readonly Order[], order: Order, ascending: boolean): number {
  const price = order.extras!.triggerPrice!;
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const other = list[mid]!;
    const p = other.extras!.triggerPrice!;
    const before = p === price ? other.number < order.number : ascending ? p < price : p > price;
    if (before) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class AdvancedState {
  readonly untriggered = new Map<string, Order>();
  readonly byInstrument = new Map<number, InstrumentTriggers>();
  /** Linked-order groups by group id, and the group of each member order id. */
  readonly links = new Map<string, LinkGroup>();
  readonly linkOf = new Map<string, LinkGroup>();
  linkNumber = 0;
  /** MMP groups by `${accountId}:${indexName}`. */
  readonly mmp = new Map<string, MmpGroup>();
  readonly greeks = new Map<string, Greeks>();
  /** Advanced (usd/implv) option orders by order id: the value the user asked for. */
  readonly advancedValues = new Map<string, number>();
  /** Price epoch and trade sequences the trigger book was last evaluated at. */
  seenEpoch = -1;
  readonly seenTradeSeq = new Map<number, number>();
  /** No untriggered good_til_day order expires before this (a lower bound; +∞ when none). */
  nextExpiryAt = Number.POSITIVE_INFINITY;

  /** True when anything here may react to a command (the engine's only check otherwise). */
  get active(): boolean {
    return (
      this.untriggered.size > 0 || this.links.size > 0 || this.mmp.size > 0 || this.advancedValues.size > 0
    );
  }

  /** Earliest good_til_day expiry of an untriggered order (+∞ when none). */
  nextExpiry(): number {
    let at = Number.POSITIVE_INFINITY;
    for (const order of this.untriggered.values()) {
      if (order.expiresAt !== 0 && order.expiresAt < at) at = order.expiresAt;
    }
    this.nextExpiryAt = at;
    return at;
  }

  private book(order: Order, create: boolean): KindBook | undefined {
    let instrument = this.byInstrument.get(order.instrumentId);
    if (instrument === undefined) {
      if (!create) return undefined;
      instrument = new Map();
      this.byInstrument.set(order.instrumentId, instrument);
    }
    const kind = order.extras!.trigger!;
    let book = instrument.get(kind);
    if (book === undefined && create) {
      book = { up: [], down: [], trailing: [] };
      instrument.set(kind, book);
    }
    return book;
  }

  addUntriggered(order: Order): void {
    this.untriggered.set(order.id, order);
    const book = this.book(order, true)!;
    if (order.orderType === 'trailing_stop') book.trailing.push(order);
    else if (firesUp(order)) book.up.splice(slot(book.up, order, true), 0, order);
    else book.down.splice(slot(book.down, order, false), 0, order);
    if (order.expiresAt !== 0 && order.expiresAt < this.nextExpiryAt) this.nextExpiryAt = order.expiresAt;
  }

  removeUntriggered(order: Order): void {
    if (!this.untriggered.delete(order.id)) return;
    const book = this.book(order, false);
    if (book === undefined) return;
    let list: Order[];
    let at: number;
    if (order.orderType === 'trailing_stop') {
      list = book.trailing;
      at = list.indexOf(order);
    } else {
      const up = firesUp(order);
      list = up ? book.up : book.down;
      at = slot(list, order, up);
      if (list[at] !== order) at = list.indexOf(order);
    }
    if (at >= 0) list.splice(at, 1);
    if (book.up.length + book.down.length + book.trailing.length === 0) {
      const instrument = this.byInstrument.get(order.instrumentId)!;
      instrument.delete(order.extras!.trigger!);
      if (instrument.size === 0) this.byInstrument.delete(order.instrumentId);
    }
  }
}
