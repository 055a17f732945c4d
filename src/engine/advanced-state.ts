/**
 * State of the advanced order types, kept beside the plain book (one instance per VenueState):
 * the trigger book (untriggered orders), linked-order groups, MMP groups, and the greeks the
 * price source published (for MMP delta/vega).
 *
 * Invariants:
 * - An order in `untriggered` has state `untriggered`, is in `state.orders`, and is in no book
 *   level nor in its account's `openOrders` (it reserves nothing).
 * - `byInstrument` lists exactly the orders of `untriggered`, per instrument id, oldest first.
 * - Everything here is part of the snapshot (see advanced-snapshot.ts) except `seen*` caches,
 *   which only skip work and are rebuilt conservatively after a restore.
 */
import type { LinkGroup } from './linked-orders.ts';
import type { MmpGroup } from './mmp.ts';
import type { Order } from './order.ts';

export interface Greeks {
  /** Per one lot of the instrument, in base-coin units. */
  readonly delta: number;
  readonly vega: number;
}

export class AdvancedState {
  readonly untriggered = new Map<string, Order>();
  readonly byInstrument = new Map<number, Order[]>();
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
    return at;
  }

  addUntriggered(order: Order): void {
    this.untriggered.set(order.id, order);
    let list = this.byInstrument.get(order.instrumentId);
    if (list === undefined) {
      list = [];
      this.byInstrument.set(order.instrumentId, list);
    }
    list.push(order);
  }

  removeUntriggered(order: Order): void {
    if (!this.untriggered.delete(order.id)) return;
    const list = this.byInstrument.get(order.instrumentId);
    if (list === undefined) return;
    const at = list.indexOf(order);
    if (at >= 0) list.splice(at, 1);
    if (list.length === 0) this.byInstrument.delete(order.instrumentId);
  }
}
