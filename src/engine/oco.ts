/**
 * One-cancels-other groups (plain OCO, and the released pair of an OTOCO): members share
 * `ocoRef`; what a member's fill or closing does to the others (see linked-orders.ts).
 *
 * Invariants:
 * - first_hit: a member's first fill cancels every other open member (`oco_other_closed`);
 *   complete_fill: its complete fill does; incremental: each fill cancels the same share of
 *   every other member (cumulative floor(filled × theirs / its), never more than they have).
 * - A member closing for any reason cancels the others; a group that fired unlinks everyone.
 * - The reaction is immediate wherever a member trades: as a maker inside the match that fills
 *   it (matching.ts), as a taker once its activation's match is done (activation.ts), and when
 *   placed (linked-orders.ts); the after-command pass (reactLinked) catches every other change.
 * - A group with no live primary, no template and at most one member (OCO) is dropped.
 */

import { changeOpenLots } from './claim-queues.ts';
import type { LinkGroup } from './linked-orders.ts';
import { cancelResting } from './matching.ts';
import { FLAG_ICEBERG, FLAG_REDUCE_ONLY, type Order } from './order.ts';
import { isClosedState } from './order-state.ts';
import type { VenueState } from './state.ts';
import { cancelUntriggered, extrasOf } from './triggers.ts';

/**
 * Adds `order` to `group`. `seenFilled` is the part of its fill the group has already acted on:
 * 0 for a member placed in the command that links it (a fill it made when placed still acts on
 * the others), its fill otherwise. `joined` is its amount for the incremental shares (an amount
 * already cut before it was placed is counted in).
 */
export function join(
  state: VenueState,
  group: LinkGroup,
  order: Order,
  seenFilled = order.filled,
  joined = order.amount,
): void {
  group.members.push(order.id);
  group.joined[order.id] = joined;
  group.seenFilled[order.id] = seenFilled;
  extrasOf(order).ocoRef = group.id;
  state.advanced.linkOf.set(order.id, group);
}

export function reactMember(state: VenueState, group: LinkGroup, member: Order): void {
  const filled = member.filled;
  const seenBefore = group.seenFilled[member.id] ?? 0;
  group.seenFilled[member.id] = filled;
  const closed = isClosedState(member.state);
  const others = group.members.filter((id) => id !== member.id);
  let cancelOthers = closed;
  if (filled > seenBefore) {
    if (group.condition === 'first_hit') cancelOthers = true;
    else if (group.condition === 'complete_fill') cancelOthers ||= filled === member.amount;
    else {
      for (const id of others) {
        const other = state.orders.get(id);
        if (other === undefined || isClosedState(other.state)) continue;
        const key = `${member.id}>${id}`;
        const due = Math.floor((filled * group.joined[id]!) / group.joined[member.id]!);
        const cut = due - (group.cut[key] ?? 0);
        if (cut <= 0) continue;
        group.cut[key] = due;
        shrink(state, other, cut);
      }
    }
  }
  if (cancelOthers) {
    // The group is over: nobody stays linked to it, the member that hit included.
    state.advanced.linkOf.delete(member.id);
    for (const id of others) {
      const other = state.orders.get(id);
      if (other !== undefined) closeMember(state, other);
      state.advanced.linkOf.delete(id);
    }
    group.members.length = 0;
  }
  if (closed) {
    const at = group.members.indexOf(member.id);
    if (at >= 0) group.members.splice(at, 1);
    state.advanced.linkOf.delete(member.id);
  }
  dropIfDone(state, group);
}

function closeMember(state: VenueState, order: Order): void {
  // Untriggered: waiting in the trigger book, or released with its round and not yet entered.
  if (order.state === 'untriggered') cancelUntriggered(state, order, 'oco_other_closed');
  else if (order.state === 'open' && order.level !== null) {
    cancelResting(state, state.instrumentList[order.instrumentId]!, order, 'oco_other_closed');
  }
}

/** Cancels `lots` of an OCO member's open remainder (the whole order if nothing would remain). */
function shrink(state: VenueState, order: Order, lots: number): void {
  const remaining = order.amount - order.filled;
  if (lots >= remaining) {
    closeMember(state, order);
    return;
  }
  if (order.state === 'untriggered') {
    order.amount -= lots;
    order.lastUpdatedAt = state.now;
    state.events.push({ type: 'order', order: order.toView() });
    return;
  }
  const level = order.level;
  if (level === null) return;
  const instrument = state.instrumentList[order.instrumentId]!;
  const account = state.accounts.get(order.accountId)!;
  const position = instrument.position(account);
  const iceberg = (order.flags & FLAG_ICEBERG) !== 0;
  // An iceberg's visible share is its display: take it out and put it back (priority lost).
  if (iceberg) level.remove(order);
  else level.reduce(order, lots);
  changeOpenLots(state, instrument, account, position, order.side, -lots);
  if ((order.flags & FLAG_REDUCE_ONLY) !== 0) {
    if (order.side === 'buy') position.reduceOnlyBuys -= lots;
    else position.reduceOnlySells -= lots;
  }
  if (order.reserved !== 0) {
    const released = Math.floor((order.reserved * lots) / remaining);
    order.reserved -= released;
    account.ledger(order.reserveCurrency).reserved -= released;
  }
  order.amount -= lots;
  if (iceberg) {
    const x = order.extras!;
    x.displayAmount = Math.min(x.displayAmount!, order.amount - order.filled);
    level.append(order);
  }
  order.lastUpdatedAt = state.now;
  state.events.push({ type: 'order', order: order.toView() });
}

export function dropIfDone(state: VenueState, group: LinkGroup): void {
  const primaryLive = group.primaryId !== null && state.advanced.linkOf.get(group.primaryId) === group;
  if (
    !primaryLive &&
    group.templates.length === 0 &&
    group.members.length <= (group.primaryId === null ? 1 : 0)
  ) {
    for (const id of group.members) state.advanced.linkOf.delete(id);
    state.advanced.links.delete(group.id);
  }
}
