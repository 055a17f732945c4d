/**
 * Linked orders: one_triggers_other (OTO), one_cancels_other (OCO) and
 * one_triggers_one_cancels_other (OTOCO), with triggerFillCondition first_hit (default),
 * complete_fill or incremental.
 *
 * Invariants:
 * - OCO: the primary and its otocoConfig orders are live at once and share `ocoRef`; what a
 *   member's fill or closing does to the others is in oco.ts.
 * - OTO/OTOCO: the secondaries wait as `untriggered` templates with `primaryOrderId` (not in
 *   any book, reserving nothing); the primary's `otoOrderIds` names them. first_hit: the first
 *   fill releases them in full; complete_fill: the complete fill does; incremental: after each
 *   fill, floor(total × primaryFilled / primaryAmount) lots are released in all — the template
 *   itself when the rest of it goes, otherwise a new order (new id, also in otoOrderIds) for the
 *   increment. Quantity accounting: template amount + Σ released increments = configured total,
 *   always. When the primary closes, unreleased templates are cancelled (`oto_primary_closed`).
 * - OTOCO: released secondaries (and their increments) form one OCO group.
 * - Reactions run after each command on the order events it produced, in event order.
 */
import type { OtocoOrderConfig, PlaceOrder } from '../core/commands.ts';
import type { CommandResult, CoreError, CoreEvent } from '../core/events.ts';
import type { LinkedOrderType, TriggerFillCondition } from '../core/types.ts';
import { activate } from './activation.ts';
import { dropIfDone, join, reactMember } from './oco.ts';
import {
  FLAG_API,
  FLAG_MOBILE,
  FLAG_POST_ONLY,
  FLAG_REDUCE_ONLY,
  FLAG_REJECT_POST_ONLY,
  FLAG_WEB,
  Order,
} from './order.ts';
import { isClosedState } from './order-state.ts';
import { refusal, type VenueState } from './state.ts';
import {
  cancelUntriggered,
  emptyExtras,
  extrasOf,
  TRIGGER_TYPES,
  triggerSourcePrice,
  validateTrigger,
} from './triggers.ts';

export const MAX_LINKED_SECONDARIES = 3;

export interface LinkGroup {
  readonly id: string;
  readonly type: LinkedOrderType;
  readonly condition: TriggerFillCondition;
  /** OTO/OTOCO primary; null for a plain OCO group. */
  readonly primaryId: string | null;
  /** OTO/OTOCO: templates still waiting (ids). */
  readonly templates: string[];
  /** Configured total per template id. */
  readonly totals: Record<string, number>;
  /** Lots released so far per template id (incremental accounting). */
  readonly released: Record<string, number>;
  /** OCO members (ids), and their amount on joining. */
  readonly members: string[];
  readonly joined: Record<string, number>;
  /** Filled lots of each member already reacted to. */
  readonly seenFilled: Record<string, number>;
  /** Lots cut so far from member B because of member A: key `${A}>${B}`. */
  readonly cut: Record<string, number>;
  /** The OCO group a released OTOCO secondary joins. */
  ocoGroupId: string | null;
}

type Place = (state: VenueState, command: PlaceOrder) => CommandResult;

function newGroup(
  state: VenueState,
  type: LinkedOrderType,
  condition: TriggerFillCondition,
  primaryId: string | null,
): LinkGroup {
  const group: LinkGroup = {
    id: `OCO-${++state.advanced.linkNumber}`,
    type,
    condition,
    primaryId,
    templates: [],
    totals: {},
    released: {},
    members: [],
    joined: {},
    seenFilled: {},
    cut: {},
    ocoGroupId: null,
  };
  state.advanced.links.set(group.id, group);
  return group;
}

/** Static checks of otocoConfig entries (before anything is placed). */
export function validateLinked(state: VenueState, command: PlaceOrder): CoreError | null {
  const configs = command.otocoConfig ?? [];
  if (command.linkedOrderType == null)
    return configs.length > 0 || command.triggerFillCondition != null
      ? refusal(
          'invalid_arguments',
          `${configs.length > 0 ? 'otocoConfig' : 'triggerFillCondition'} needs linkedOrderType`,
          { field: 'linkedOrderType' },
        )
      : null;
  if (configs.length === 0)
    return refusal('missing_params', 'linked orders need otocoConfig', { field: 'otocoConfig' });
  if (configs.length > MAX_LINKED_SECONDARIES)
    return refusal('no_more_oto_orders', `at most ${MAX_LINKED_SECONDARIES} linked orders`, {
      field: 'otocoConfig',
    });
  if (command.linkedOrderType === 'one_triggers_one_cancels_other' && configs.length < 2)
    return refusal('invalid_arguments', 'OTOCO needs two secondary orders', { field: 'otocoConfig' });
  const instrument = state.instruments.get(command.instrumentName);
  if (instrument === undefined) return null; // the primary's own validation reports it
  for (const [i, c] of configs.entries()) {
    const type = c.orderType ?? 'limit';
    const field = (name: string) => `otocoConfig[${i}].${name}`;
    if (c.amount != null && (!Number.isSafeInteger(c.amount) || c.amount <= 0))
      return refusal('invalid_amount', 'amount must be a positive number of lots', {
        field: field('quantity'),
      });
    // The top-level post-only rules hold for each entry too (spec 4.3: same meanings).
    if (c.rejectPostOnly === true && c.postOnly !== true)
      return refusal('invalid_params', 'rejectPostOnly needs postOnly', {
        field: field('rejectPostOnly'),
      });
    if (c.postOnly === true && (c.timeInForce ?? 'good_til_cancelled') !== 'good_til_cancelled')
      return refusal('post_only_not_allowed', 'postOnly is valid only with good_til_cancelled', {
        field: field('postOnly'),
      });
    if (type === 'limit' && (c.price == null || !instrument.instrument.isOnTick(c.price) || c.price <= 0))
      return refusal('invalid_price', 'a limit secondary needs a price on the tick grid', {
        field: field('price'),
      });
    if (TRIGGER_TYPES.has(type)) {
      const error = validateTrigger(state, instrument, {
        orderType: type,
        trigger: c.trigger ?? null,
        triggerPrice: c.triggerPrice ?? null,
        triggerOffset: c.triggerOffset ?? null,
        price: c.price ?? null,
        side: c.side,
        timeInForce: c.timeInForce ?? 'good_til_cancelled',
        postOnly: c.postOnly ?? false,
      });
      if (error !== null)
        return { ...error, data: { ...error.data, field: field(String(error.data.field ?? 'type')) } };
    }
  }
  return null;
}

function configCommand(primary: PlaceOrder, c: OtocoOrderConfig, amount: number): PlaceOrder {
  return {
    type: 'place_order',
    seq: primary.seq,
    ts: primary.ts,
    accountId: primary.accountId,
    instrumentName: primary.instrumentName,
    side: c.side,
    orderType: c.orderType ?? 'limit',
    amount,
    price: c.price ?? null,
    timeInForce: c.timeInForce ?? 'good_til_cancelled',
    postOnly: c.postOnly ?? false,
    rejectPostOnly: c.rejectPostOnly ?? false,
    reduceOnly: c.reduceOnly ?? false,
    label: c.label ?? primary.label,
    validUntil: null,
    source: primary.source,
    owner: primary.owner ?? null,
    trigger: c.trigger ?? null,
    triggerPrice: c.triggerPrice ?? null,
    triggerOffset: c.triggerOffset ?? null,
    codSession: primary.codSession ?? null,
  };
}

/** Places a linked primary (via `place`) and sets up its group. */
export function placeLinked(state: VenueState, command: PlaceOrder, place: Place): CommandResult {
  const type = command.linkedOrderType!;
  const condition = command.triggerFillCondition ?? 'first_hit';
  const result = place(state, {
    ...command,
    linkedOrderType: null,
    otocoConfig: null,
    triggerFillCondition: null,
  });
  if (!result.ok || result.order === undefined) return result;
  const primary = state.orders.get(result.order.orderId)!;
  const configs = command.otocoConfig ?? [];
  const x = extrasOf(primary);
  x.triggerFillCondition = condition;
  x.linkedOrderType = type;
  if (type === 'one_cancels_other') {
    const group = newGroup(state, type, condition, null);
    join(state, group, primary);
    for (const c of configs) {
      const placed = place(state, configCommand(command, c, c.amount ?? command.amount));
      if (!placed.ok || placed.order === undefined) continue;
      const order = state.orders.get(placed.order.orderId)!;
      extrasOf(order).triggerFillCondition = condition;
      join(state, group, order);
    }
    return withView(state, result, primary);
  }
  const group = newGroup(state, type, condition, primary.id);
  x.otoOrderIds = [];
  for (const c of configs) {
    const template = newTemplate(state, primary, command, c);
    group.templates.push(template.id);
    group.totals[template.id] = template.amount;
    group.released[template.id] = 0;
    x.otoOrderIds.push(template.id);
    state.advanced.linkOf.set(template.id, group);
  }
  group.seenFilled[primary.id] = 0;
  state.advanced.linkOf.set(primary.id, group);
  return withView(state, result, primary);
}

/** Refreshes the command's order view (and its event) after linking fields were set. */
function withView(state: VenueState, result: CommandResult, order: Order): CommandResult {
  if (!result.ok) return result;
  const view = order.toView();
  const events = state.events;
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type === 'order' && e.order.orderId === order.id) {
      events[i] = { type: 'order', order: view };
      break;
    }
  }
  return { ...result, order: view };
}

function newTemplate(state: VenueState, primary: Order, command: PlaceOrder, c: OtocoOrderConfig): Order {
  const number = ++state.orderNumber;
  const currency = primary.currency;
  const type = c.orderType ?? 'limit';
  const order = new Order(
    `${currency}-${number}`,
    number,
    primary.accountId,
    primary.instrumentId,
    primary.instrumentName,
    currency,
    c.side,
    type,
    c.price ?? 0,
    c.amount ?? command.amount,
    c.timeInForce ?? 'good_til_cancelled',
    state.now,
    c.label ?? primary.label,
    primary.owner,
    primary.flags & (FLAG_API | FLAG_WEB | FLAG_MOBILE),
  );
  order.state = 'untriggered';
  const x = emptyExtras();
  x.primaryOrderId = primary.id;
  x.trigger = c.trigger ?? null;
  x.triggerPrice = c.triggerPrice ?? null;
  x.triggerOffset = c.triggerOffset ?? null;
  if (x.trigger !== null) x.triggered = false;
  order.extras = x;
  // From the command: the primary may have filled already (a closed order belongs to no session).
  order.codSession = command.codSession ?? null;
  if (c.reduceOnly) order.flags |= FLAG_REDUCE_ONLY;
  if (c.postOnly) order.flags |= FLAG_POST_ONLY | (c.rejectPostOnly ? FLAG_REJECT_POST_ONLY : 0);
  state.orders.set(order.id, order);
  state.events.push({ type: 'order', order: order.toView() });
  return order;
}

/** Reacts to the order events in events[from…]; returns true if anything changed. */
export function reactLinked(state: VenueState, events: readonly CoreEvent[], from: number): boolean {
  const linkOf = state.advanced.linkOf;
  const touched: Order[] = [];
  const seen = new Set<string>();
  for (let i = from; i < events.length; i++) {
    const e = events[i]!;
    if (e.type !== 'order' || seen.has(e.order.orderId) || !linkOf.has(e.order.orderId)) continue;
    seen.add(e.order.orderId);
    const order = state.orders.get(e.order.orderId);
    if (order !== undefined) touched.push(order);
  }
  if (touched.length === 0) return false;
  const before = state.events.length;
  for (const order of touched) {
    const group = linkOf.get(order.id);
    if (group === undefined) continue;
    if (group.primaryId === order.id) reactPrimary(state, group, order);
    else if (group.members.includes(order.id)) reactMember(state, group, order);
  }
  return state.events.length !== before;
}

function reactPrimary(state: VenueState, group: LinkGroup, primary: Order): void {
  const filled = primary.filled;
  const closed = isClosedState(primary.state);
  if (filled !== group.seenFilled[primary.id]) {
    group.seenFilled[primary.id] = filled;
    for (const id of [...group.templates]) {
      const template = state.orders.get(id);
      if (template === undefined || template.state !== 'untriggered') {
        // Cancelled by the user while waiting: nothing more to release.
        group.templates.splice(group.templates.indexOf(id), 1);
        state.advanced.linkOf.delete(id);
        continue;
      }
      const total = group.totals[id]!;
      const target =
        group.condition === 'incremental'
          ? Math.floor((total * filled) / primary.amount)
          : group.condition === 'first_hit' || filled === primary.amount
            ? total
            : 0;
      const delta = target - group.released[id]!;
      if (delta > 0) release(state, group, id, delta);
    }
  }
  if (closed) {
    for (const id of [...group.templates]) {
      const template = state.orders.get(id);
      if (template !== undefined && template.state === 'untriggered')
        cancelUntriggered(state, template, 'oto_primary_closed');
      state.advanced.linkOf.delete(id);
    }
    group.templates.length = 0;
    state.advanced.linkOf.delete(primary.id);
    dropIfDone(state, group);
  }
}

/** Sends `lots` of a template to the market: the template itself for its last lots, else a copy. */
function release(state: VenueState, group: LinkGroup, templateId: string, lots: number): void {
  const template = state.orders.get(templateId)!;
  group.released[templateId] = group.released[templateId]! + lots;
  let order = template;
  if (lots < template.amount) {
    template.amount -= lots;
    const number = ++state.orderNumber;
    order = new Order(
      `${template.currency}-${number}`,
      number,
      template.accountId,
      template.instrumentId,
      template.instrumentName,
      template.currency,
      template.side,
      template.orderType,
      template.price,
      lots,
      template.timeInForce,
      state.now,
      template.label,
      template.owner,
      template.flags,
    );
    order.state = 'untriggered';
    order.extras = { ...template.extras!, otoOrderIds: null };
    order.codSession = template.codSession;
    state.orders.set(order.id, order);
    template.lastUpdatedAt = state.now;
    state.events.push({ type: 'order', order: template.toView() });
    const primary = state.orders.get(group.primaryId!);
    if (primary?.extras?.otoOrderIds) {
      primary.extras.otoOrderIds.push(order.id);
      // Views are snapshots: publish the primary's longer otoOrderIds (its fill is already seen).
      state.events.push({ type: 'order', order: primary.toView() });
    }
  } else {
    group.templates.splice(group.templates.indexOf(templateId), 1);
    state.advanced.linkOf.delete(templateId);
  }
  if (group.type === 'one_triggers_one_cancels_other') {
    let oco = group.ocoGroupId === null ? undefined : state.advanced.links.get(group.ocoGroupId);
    if (oco === undefined) {
      oco = newGroup(state, 'one_cancels_other', group.condition, null);
      group.ocoGroupId = oco.id;
    }
    join(state, oco, order);
  }
  enter(state, order);
}

/** A released order enters: trigger types wait in the trigger book, the rest trade now. */
function enter(state: VenueState, order: Order): void {
  const x = order.extras!;
  if (TRIGGER_TYPES.has(order.orderType)) {
    if (order.orderType === 'trailing_stop') {
      const instrument = state.instrumentList[order.instrumentId]!;
      const reference = triggerSourcePrice(state, instrument, x.trigger!);
      if (reference === null) {
        cancelUntriggered(state, order, 'oto_primary_closed');
        return;
      }
      const stop = order.side === 'sell' ? reference - x.triggerOffset! : reference + x.triggerOffset!;
      x.triggerPrice = stop;
      x.triggerReferencePrice = stop;
    }
    state.advanced.addUntriggered(order);
    state.advanced.seenEpoch = -1;
    state.events.push({ type: 'order', order: order.toView() });
    return;
  }
  activate(state, order);
}
