/**
 * The advanced-order part of a snapshot: waiting orders (untriggered trigger orders and linked
 * templates), linked groups, MMP groups, published greeks, advanced option values.
 *
 * Invariants:
 * - Absent (undefined) when nothing advanced ever existed (no link numbered, nothing waiting, no
 *   MMP, greeks or advanced values), so plain engines hash as before.
 * - Waiting orders are written in order-number order; `inTriggerBook` says whether the order is
 *   evaluated against prices (trigger orders) or waits for its primary (templates).
 * - Restoring then snapshotting gives the same value (groups are deep-copied both ways).
 */
import type { Greeks } from './advanced-state.ts';
import type { LinkGroup } from './linked-orders.ts';
import type { MmpGroup } from './mmp.ts';
import { FLAG_ICEBERG, type Order } from './order.ts';
import type { OrderRecord } from './snapshot.ts';
import type { VenueState } from './state.ts';

export interface AdvancedSnapshot {
  readonly waiting: ReadonlyArray<{ readonly order: OrderRecord; readonly inTriggerBook: boolean }>;
  readonly linkNumber: number;
  readonly links: readonly LinkGroup[];
  readonly mmp: ReadonlyArray<readonly [string, MmpGroup]>;
  readonly greeks: ReadonlyArray<readonly [string, Greeks]>;
  readonly advancedValues: ReadonlyArray<readonly [string, number]>;
}

export function takeAdvancedSnapshot(
  state: VenueState,
  record: (order: Order) => OrderRecord,
): AdvancedSnapshot | undefined {
  const a = state.advanced;
  const waiting = new Set<Order>(a.untriggered.values());
  for (const id of a.linkOf.keys()) {
    const order = state.orders.get(id);
    if (order !== undefined && order.state === 'untriggered') waiting.add(order);
  }
  if (
    a.linkNumber === 0 &&
    waiting.size === 0 &&
    a.links.size === 0 &&
    a.mmp.size === 0 &&
    a.greeks.size === 0 &&
    a.advancedValues.size === 0
  )
    return undefined;
  return {
    waiting: [...waiting]
      .sort((x, y) => x.number - y.number)
      .map((order) => ({ order: record(order), inTriggerBook: a.untriggered.has(order.id) })),
    linkNumber: a.linkNumber,
    links: [...a.links.values()].map((g) => structuredClone(g)),
    mmp: [...a.mmp].map(([k, g]) => [k, structuredClone(g)] as const),
    greeks: [...a.greeks].map(([k, g]) => [k, { ...g }] as const),
    advancedValues: [...a.advancedValues],
  };
}

export function restoreAdvanced(
  state: VenueState,
  snapshot: AdvancedSnapshot | undefined,
  revive: (r: OrderRecord) => Order,
): void {
  if (snapshot === undefined) return;
  const a = state.advanced;
  for (const { order: r, inTriggerBook } of snapshot.waiting) {
    const order = revive(r);
    state.orders.set(order.id, order);
    if (inTriggerBook) a.addUntriggered(order);
  }
  a.linkNumber = snapshot.linkNumber;
  for (const saved of snapshot.links) {
    const group: LinkGroup = structuredClone(saved);
    a.links.set(group.id, group);
    if (group.primaryId !== null) a.linkOf.set(group.primaryId, group);
    for (const id of group.templates) a.linkOf.set(id, group);
    for (const id of group.members) a.linkOf.set(id, group);
  }
  for (const [k, g] of snapshot.mmp) a.mmp.set(k, structuredClone(g) as MmpGroup);
  for (const [k, g] of snapshot.greeks) a.greeks.set(k, { ...g });
  for (const [id, v] of snapshot.advancedValues) a.advancedValues.set(id, v);
}

/** Checks the advanced-order invariants (advanced-state.ts, iceberg.ts); throws on the first breach. */
export function validateAdvanced(state: VenueState): void {
  const a = state.advanced;
  let listed = 0;
  for (const [instrumentId, books] of a.byInstrument) {
    for (const [kind, book] of books) {
      const lists = [book.up, book.down, book.trailing];
      lists.forEach((list, which) => {
        list.forEach((order, i) => {
          listed++;
          if (
            order.instrumentId !== instrumentId ||
            order.extras!.trigger !== kind ||
            a.untriggered.get(order.id) !== order
          )
            throw new Error(`trigger book lists ${order.id} wrongly`);
          const prev = list[i - 1];
          if (which < 2 && prev !== undefined) {
            const p = prev.extras!.triggerPrice!;
            const q = order.extras!.triggerPrice!;
            const sorted = p === q ? prev.number < order.number : which === 0 ? p < q : p > q;
            if (!sorted) throw new Error(`trigger book out of order at ${order.id}`);
          }
        });
      });
    }
  }
  if (listed !== a.untriggered.size) throw new Error('trigger book index drifted');
  for (const order of a.untriggered.values()) {
    if (order.state !== 'untriggered' || order.level !== null || order.reserved !== 0)
      throw new Error(`untriggered order ${order.id} is ${order.state} / resting / reserving`);
    if (state.orders.get(order.id) !== order) throw new Error(`untriggered order ${order.id} not findable`);
  }
  for (const [id, group] of a.linkOf) {
    if (a.links.get(group.id) !== group) throw new Error(`order ${id} linked to a dropped group`);
  }
  for (const instrument of state.instrumentList) {
    for (const ladder of [instrument.book.bids, instrument.book.asks]) {
      for (const level of ladder.levelsBestFirst()) {
        for (let o = level.head; o !== null; o = o.next) {
          if ((o.flags & FLAG_ICEBERG) === 0) continue;
          const display = o.extras?.displayAmount ?? 0;
          if (display <= 0 || display > o.amount - o.filled)
            throw new Error(`iceberg ${o.id} display ${display}`);
        }
      }
    }
  }
}
