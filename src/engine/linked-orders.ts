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
 * - OTOCO: the secondaries one primary fill releases (the whole set, or with incremental that
 *   fill's increments) form an OCO group of their own; a later release never joins an earlier
 *   group, so one round's fill never cuts or cancels another round's protection. A round of one
 *   order (its partner cancelled while waiting, or an increment that rounded to 0) is unlinked.
 * - OCO placing: every member is placed in the one command, and what one trades when placed acts
 *   on the others at once (seen filled starts at 0). A secondary whose group already fired
 *   (first_hit: a member traded; any member closed) is not sent out but recorded cancelled
 *   (`oco_other_closed`); with incremental it goes out less the share already traded.
 * - A released `market_limit` secondary goes out as placing one does: a limit at the best
 *   opposite price then, originalOrderType market_limit; rejected when that side is empty or its
 *   best price is outside the band.
 * - OCO: every secondary's placement conditions are checked before the primary is placed (on the
 *   state before it, counting the command's own earlier orders as resting), so a secondary that
 *   cannot be placed refuses the whole command, naming `otocoConfig[i].<field>`, and changes
 *   nothing. One that still fails once placed (what it depends on changed when the primary traded)
 *   cancels the members already placed (`oco_other_closed`): no member lives without its partners.
 * - Reactions run after each command on the order events it produced, in event order; a member's
 *   fill also acts at once wherever it trades (oco.ts).
 */
import type { OtocoOrderConfig, PlaceOrder } from '../core/commands.ts';
import type { CommandResult, CoreError, CoreEvent } from '../core/events.ts';
import {
  type CancelReason,
  formatMoney,
  LABEL_MAX_LENGTH,
  type LinkedOrderType,
  labelTooLong,
  type OrderType,
  type Side,
  type TimeInForce,
  type TriggerFillCondition,
} from '../core/types.ts';
import type { Account } from './accounts.ts';
import { activate } from './activation.ts';
import { reducibleLots } from './claim-queues.ts';
import { cancelResting, closeOrder } from './matching.ts';
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
import { availableFunds, coverRelease, orderReserve, priceBand } from './risk.ts';
import { type InstrumentState, refusal, type VenueState } from './state.ts';
import {
  bandProblem,
  comboPriceProblem,
  postOnlyReprice,
  reduceOnlyUnavailable,
  sessionEnd,
} from './trading.ts';
import {
  cancelUntriggered,
  emptyExtras,
  extrasOf,
  MAX_TRIGGER_ORDERS_PER_ACCOUNT,
  newTriggerOrder,
  TRIGGER_TYPES,
  trailingStart,
  triggerSourcePrice,
  validateTrigger,
  waitingTriggerOrders,
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
  /**
   * OTOCO: the OCO group of the latest release round (each round is a group of its own). Kept
   * for the record and the snapshot shape; nothing reads it.
   */
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
    const timeInForce = c.timeInForce ?? 'good_til_cancelled';
    if (c.amount != null && (!Number.isSafeInteger(c.amount) || c.amount <= 0))
      return refusal('invalid_amount', 'amount must be a positive number of lots', {
        field: field('quantity'),
      });
    if (c.label != null && labelTooLong(c.label))
      return refusal('invalid_params', `label is longer than ${LABEL_MAX_LENGTH} characters`, {
        field: field('label'),
      });
    if (c.reduceOnly === true) {
      const unavailable = reduceOnlyUnavailable(instrument);
      if (unavailable !== null) return entryError(unavailable, i, 'reduceOnly');
    }
    // Trigger fields on a type without a trigger are refused, as on the top level (spec 4.3).
    if (!TRIGGER_TYPES.has(type)) {
      const misplaced =
        c.trigger != null
          ? 'trigger'
          : c.triggerPrice != null
            ? 'triggerPrice'
            : c.triggerOffset != null
              ? 'triggerOffset'
              : null;
      if (misplaced !== null)
        return refusal('unsupported_arg_combination', `${misplaced} applies only to trigger order types`, {
          field: field(misplaced),
        });
    }
    // The top-level post-only rules hold for each entry too (spec 4.3: same meanings).
    if (c.rejectPostOnly === true && c.postOnly !== true)
      return refusal('invalid_params', 'rejectPostOnly needs postOnly', {
        field: field('rejectPostOnly'),
      });
    if (c.postOnly === true && timeInForce !== 'good_til_cancelled')
      return refusal('post_only_not_allowed', 'postOnly is valid only with good_til_cancelled', {
        field: field('postOnly'),
      });
    if (c.postOnly === true && (type === 'market' || type === 'market_limit'))
      return refusal('post_only_not_allowed', 'postOnly needs a good_til_cancelled limit order', {
        field: field('postOnly'),
      });
    if (type === 'market' && timeInForce === 'good_til_day')
      return refusal('invalid_arguments', 'market orders cannot rest', { field: field('timeInForce') });
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
        timeInForce,
        postOnly: c.postOnly ?? false,
      });
      if (error !== null) return entryError(error, i, 'type');
    }
  }
  return null;
}

/** An error of otocoConfig entry `i`, its field written as `otocoConfig[i].<field>`. */
function entryError(error: CoreError, i: number, fallback: string): CoreError {
  const field = `otocoConfig[${i}].${String(error.data.field ?? fallback)}`;
  return { ...error, data: { ...error.data, field } };
}

/** What the command's orders before an OCO secondary hold once placed (all taken as resting). */
interface Planned {
  openSlots: number;
  triggerSlots: number;
  /** Best price of the command's resting orders on each side. */
  readonly best: Record<Side, number | null>;
  /** Lots of its reduce-only orders on each side (they use up the position first). */
  readonly reduceOnly: Record<Side, number>;
  /** Lots of its resting orders on each side (orderReserve's pendingLots). */
  readonly pending: Record<Side, number>;
  /** Funds its resting orders reserve, by currency. */
  readonly spent: Map<string, number>;
  /** False when the primary alone is short of funds: its own refusal reports it. */
  fundsKnown: boolean;
}

function better(side: Side, a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return side === 'buy' ? Math.max(a, b) : Math.min(a, b);
}

/** Funds `lots` more on `side` at `price` need beyond what the command's earlier orders hold. */
function fundsProblem(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  planned: Planned,
  side: Side,
  lots: number,
  price: number,
  field: string,
): { error: CoreError | null; currency: string; required: number } {
  const reserve = orderReserve(state, instrument, account, side, lots, price, planned.pending[side]);
  const required = reserve.amount + coverRelease(state, instrument, account, side, lots);
  const currency = reserve.currency;
  const free = availableFunds(state, account, currency) - (planned.spent.get(currency) ?? 0);
  if (required <= 0 || required <= free) return { error: null, currency, required };
  const needed = formatMoney(required, currency);
  const available = formatMoney(free, currency);
  const error = refusal('not_enough_funds', `order needs ${needed} ${currency}, ${available} available`, {
    field,
    required: needed,
    available,
    currency,
  });
  return { error, currency, required };
}

function rests(type: OrderType, timeInForce: TimeInForce): boolean {
  return (
    type !== 'market' &&
    !TRIGGER_TYPES.has(type) &&
    (timeInForce === 'good_til_cancelled' || timeInForce === 'good_til_day')
  );
}

/**
 * OCO: what placing each secondary after the primary would refuse, checked before anything is
 * placed, on the current state with the command's earlier orders (the primary, then the
 * secondaries before it) taken as resting: price band and combo range, reduce-only, the
 * open-order and trigger-order limits, funds (all of them together), post-only with
 * rejectPostOnly, a market_limit with no opposite side, and members that would trade with each
 * other. What only the primary's own trading can change is found when placing (placeLinked).
 */
function checkOcoSecondaries(state: VenueState, command: PlaceOrder): CoreError | null {
  const account = state.accounts.get(command.accountId);
  const instrument = state.instruments.get(command.instrumentName);
  if (account === undefined || instrument === undefined || instrument.status !== 'open') return null;
  const book = instrument.book;
  const band = priceBand(state, instrument);
  const position = account.positions.get(instrument.id);
  const planned: Planned = {
    openSlots: account.openOrderCount,
    triggerSlots: waitingTriggerOrders(state, account.id),
    best: { buy: null, sell: null },
    reduceOnly: { buy: 0, sell: 0 },
    pending: { buy: 0, sell: 0 },
    spent: new Map(),
    fundsKnown: true,
  };
  const bookBest = (side: Side) => (side === 'buy' ? book.bestAsk() : book.bestBid());
  const reducible = (side: Side) =>
    reducibleLots({ size: position?.size ?? 0 }, side) -
    ((side === 'buy' ? position?.reduceOnlyBuys : position?.reduceOnlySells) ?? 0) -
    planned.reduceOnly[side];
  const hold = (
    side: Side,
    lots: number,
    price: number,
    reduceOnly: boolean,
    currency: string,
    required: number,
  ) => {
    planned.openSlots++;
    planned.best[side] = better(side, planned.best[side], price);
    planned.pending[side] += lots;
    if (reduceOnly) planned.reduceOnly[side] += lots;
    if (required > 0) planned.spent.set(currency, (planned.spent.get(currency) ?? 0) + required);
  };
  // The primary, as it would rest (its own refusals are its own placement's to report).
  if (TRIGGER_TYPES.has(command.orderType)) planned.triggerSlots++;
  else {
    const price =
      command.orderType === 'limit' && command.advanced == null
        ? command.price
        : command.orderType === 'market_limit'
          ? bookBest(command.side)
          : null;
    if (price != null && rests(command.orderType, command.timeInForce)) {
      let lots = command.amount;
      if (command.reduceOnly) lots = Math.max(0, Math.min(lots, reducible(command.side)));
      const funds = fundsProblem(state, instrument, account, planned, command.side, lots, price, 'quantity');
      if (funds.error !== null) planned.fundsKnown = false;
      hold(command.side, lots, price, command.reduceOnly, funds.currency, funds.required);
    }
  }
  for (const [i, c] of (command.otocoConfig ?? []).entries()) {
    const type = c.orderType ?? 'limit';
    const side = c.side;
    const buying = side === 'buy';
    const timeInForce = c.timeInForce ?? 'good_til_cancelled';
    const field = (name: string) => `otocoConfig[${i}].${name}`;
    let lots = c.amount ?? command.amount;
    if (TRIGGER_TYPES.has(type)) {
      // Waits untriggered: funds and reduce-only are checked when it fires.
      if (planned.triggerSlots >= MAX_TRIGGER_ORDERS_PER_ACCOUNT)
        return refusal('no_more_triggers', `at most ${MAX_TRIGGER_ORDERS_PER_ACCOUNT} trigger orders`, {
          field: field('type'),
        });
      planned.triggerSlots++;
      continue;
    }
    const market = type === 'market';
    const opposite = bookBest(side);
    const own = planned.best[buying ? 'sell' : 'buy'];
    let price: number | null = null;
    if (type === 'market_limit') {
      if (own !== null && (opposite === null || (buying ? own <= opposite : own >= opposite)))
        return refusal('order_overlap', 'market_limit would trade against another order of this command', {
          field: field('type'),
        });
      if (opposite === null)
        return refusal('invalid_arguments', 'market_limit needs liquidity on the other side', {
          field: field('type'),
        });
      price = opposite;
    } else if (!market) price = c.price!;
    if (price !== null) {
      // The price refusals placing runs after the static checks: combo range and price band.
      const problem =
        comboPriceProblem(state, instrument, price) ?? bandProblem(state, instrument, side, price);
      if (problem !== null) return entryError(problem, i, 'price');
    }
    if (price !== null && c.postOnly === true) {
      // Re-priced just inside the spread (its own partners part of it), or refused.
      const touch = better(buying ? 'sell' : 'buy', opposite, own);
      if (touch !== null && (buying ? price >= touch : price <= touch)) {
        if (c.rejectPostOnly === true)
          return refusal('post_only_reject', 'post-only order would take liquidity', {
            field: field('price'),
          });
        const repriced = postOnlyReprice(state, instrument, side, touch);
        if (repriced === null)
          return refusal(
            'post_only_price_modification_not_possible',
            buying ? 'no price below the ask' : 'no price above the bid',
            { field: field('price') },
          );
        price = repriced;
      }
    }
    if (c.reduceOnly === true) {
      const left = reducible(side);
      if (left <= 0)
        return refusal('reduce_only_violation', 'reduce-only order would increase the position', {
          field: field('reduceOnly'),
        });
      if (lots > left) lots = left;
    }
    const resting = rests(type, timeInForce);
    // The top level names accountId; here, the entry that needs the slot.
    if (resting && planned.openSlots >= account.maxOpenOrders)
      return refusal('max_open_orders', `at most ${account.maxOpenOrders} open orders`, {
        field: `otocoConfig[${i}]`,
        limit: account.maxOpenOrders,
      });
    const limit =
      price ?? (buying ? (band?.max ?? Number.POSITIVE_INFINITY) : (band?.min ?? Number.NEGATIVE_INFINITY));
    let currency = '';
    let required = 0;
    if (planned.fundsKnown) {
      const checkPrice = Number.isFinite(limit) ? limit : (opposite ?? 0);
      const funds = fundsProblem(
        state,
        instrument,
        account,
        planned,
        side,
        lots,
        checkPrice,
        field('quantity'),
      );
      if (funds.error !== null) return funds.error;
      currency = funds.currency;
      required = funds.required;
    }
    if (c.postOnly !== true && own !== null && (buying ? limit >= own : limit <= own))
      return refusal('order_overlap', 'order would trade against another order of this command', {
        field: field(price === null ? 'type' : 'price'),
      });
    if (resting && price !== null) hold(side, lots, price, c.reduceOnly === true, currency, required);
    else if (c.reduceOnly === true) planned.reduceOnly[side] += lots;
  }
  return null;
}

/**
 * OTO/OTOCO: the trigger secondaries wait outside the trigger book until released, and must fit
 * the account's trigger-order limit as if released now (the primary, a trigger order itself, has
 * left the book by then). Released later past the limit, one is rejected (`enter`).
 */
function checkReleasedTriggerSlots(state: VenueState, command: PlaceOrder): CoreError | null {
  let waiting: number | null = null;
  for (const [i, c] of (command.otocoConfig ?? []).entries()) {
    if (!TRIGGER_TYPES.has(c.orderType ?? 'limit')) continue;
    // A scan of every waiting trigger order: only for a command that has trigger secondaries.
    waiting ??= waitingTriggerOrders(state, command.accountId);
    if (waiting >= MAX_TRIGGER_ORDERS_PER_ACCOUNT)
      return refusal('no_more_triggers', `at most ${MAX_TRIGGER_ORDERS_PER_ACCOUNT} trigger orders`, {
        field: `otocoConfig[${i}].type`,
      });
    waiting++;
  }
  return null;
}

function failed(state: VenueState, command: PlaceOrder, error: CoreError): CommandResult {
  state.events.push({ type: 'rejection', commandType: 'place_order', accountId: command.accountId, error });
  return { ok: false, error, events: state.events };
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
  const error =
    type === 'one_cancels_other'
      ? checkOcoSecondaries(state, command)
      : checkReleasedTriggerSlots(state, command);
  if (error !== null) return failed(state, command, error);
  // `place` emits each order's events before its links are set here: `withLinks` adds them.
  const from = state.events.length;
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
    const linked = [primary];
    // Every member is placed in this command: what it traded when placed acts on the others.
    join(state, group, primary, 0);
    for (const c of configs) {
      const amount = c.amount ?? command.amount;
      if (groupFired(state, group)) {
        // The members placed before it already fired the group: it never goes out.
        unplaced(state, group, command, c, amount);
        continue;
      }
      // Incremental: the share the members placed before it already traded is cut before it goes out.
      const cuts: [string, number][] = [];
      let cut = 0;
      if (condition === 'incremental') {
        for (const id of group.members) {
          const member = state.orders.get(id)!;
          if (member.filled === 0) continue;
          const due = Math.floor((member.filled * amount) / group.joined[id]!);
          cuts.push([id, due]);
          cut += due;
        }
      }
      if (cut >= amount) {
        unplaced(state, group, command, c, amount);
        continue;
      }
      const placed = place(state, configCommand(command, c, amount - cut));
      if (!placed.ok || placed.order === undefined) {
        // Checked before the primary, so only what the primary's trading changed gets here.
        // Trades stand; no member stays live without its partners.
        abandonGroup(state, group);
        return withLinks(state, result, primary, from, linked);
      }
      const order = state.orders.get(placed.order.orderId)!;
      linked.push(order);
      extrasOf(order).triggerFillCondition = condition;
      join(state, group, order, 0, order.amount + cut);
      for (const [id, due] of cuts) group.cut[`${id}>${order.id}`] = due;
      // A member that traded (or closed) when placed acts on those placed before it at once.
      if (order.filled > 0 || isClosedState(order.state)) reactMember(state, group, order);
    }
    // The primary's own trading at placement (or its closing) acts on the members placed after it.
    for (const id of [...group.members]) {
      const member = state.orders.get(id);
      if (member === undefined || state.advanced.linkOf.get(id) !== group) continue;
      if (member.filled !== group.seenFilled[id] || isClosedState(member.state))
        reactMember(state, group, member);
    }
    return withLinks(state, result, primary, from, linked);
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
  return withLinks(state, result, primary, from, [primary]);
}

/**
 * True when the members placed so far already did what ends the group for those still to come:
 * one closed, or (first_hit) one traded. Every member was placed in this command, so any fill is
 * one the group has to act on.
 */
function groupFired(state: VenueState, group: LinkGroup): boolean {
  if (state.advanced.links.get(group.id) !== group || group.members.length === 0) return true;
  for (const id of group.members) {
    const member = state.orders.get(id);
    if (member === undefined || isClosedState(member.state)) return true;
    if (group.condition === 'first_hit' && member.filled > 0) return true;
  }
  return false;
}

/**
 * An OCO secondary whose group fired while the command was placing it: the order as it was
 * asked for, cancelled (`oco_other_closed`) without reaching the market, so the answer's events
 * show what became of it and it could not trade after its group fired.
 */
function unplaced(
  state: VenueState,
  group: LinkGroup,
  command: PlaceOrder,
  c: OtocoOrderConfig,
  amount: number,
): void {
  const instrument = state.instruments.get(command.instrumentName)!;
  const entry = configCommand(command, c, amount);
  let order: Order;
  if (TRIGGER_TYPES.has(entry.orderType)) order = newTriggerOrder(state, instrument, entry, amount);
  else {
    const number = ++state.orderNumber;
    const source = command.source;
    order = new Order(
      `${instrument.instrument.currency}-${number}`,
      number,
      command.accountId,
      instrument.id,
      instrument.instrument.name,
      instrument.instrument.currency,
      entry.side,
      entry.orderType,
      entry.orderType === 'limit' ? (entry.price ?? 0) : 0,
      amount,
      entry.timeInForce,
      state.now,
      entry.label,
      entry.owner ?? null,
      (source.api ? FLAG_API : 0) | (source.web ? FLAG_WEB : 0) | (source.mobile ? FLAG_MOBILE : 0),
    );
    order.state = 'untriggered';
    if (entry.postOnly) order.flags |= FLAG_POST_ONLY | (entry.rejectPostOnly ? FLAG_REJECT_POST_ONLY : 0);
  }
  if (entry.reduceOnly) order.flags |= FLAG_REDUCE_ONLY;
  const x = extrasOf(order);
  x.triggerFillCondition = group.condition;
  x.ocoRef = group.id;
  state.orders.set(order.id, order);
  closeOrder(state, order, 'cancel', 'oco_other_closed');
  state.events.push({ type: 'order', order: order.toView() });
}

/** Cancels the live members of an OCO group (`oco_other_closed`) and unlinks them all. */
function abandonGroup(state: VenueState, group: LinkGroup): void {
  for (const id of group.members) {
    const order = state.orders.get(id);
    if (order?.state === 'untriggered') {
      if (state.advanced.untriggered.has(order.id)) cancelUntriggered(state, order, 'oco_other_closed');
    } else if (order?.state === 'open' && order.level !== null) {
      cancelResting(state, state.instrumentList[order.instrumentId]!, order, 'oco_other_closed');
    }
    state.advanced.linkOf.delete(id);
  }
  group.members.length = 0;
  dropIfDone(state, group);
}

/**
 * `place` emitted the events of the primary and of each OCO member (open, filled, cancelled…)
 * before their links (`ocoRef`, `triggerFillCondition`, `otoOrderIds`, the OTOCO flag) were set.
 * Views are snapshots, so each of those events since `from` gets the links the order has now:
 * every push of the order carries them, and its last event equals its state after the command
 * (links never change once set within the command). Returns the result with the primary's view.
 */
function withLinks(
  state: VenueState,
  result: CommandResult,
  primary: Order,
  from: number,
  linked: readonly Order[],
): CommandResult {
  if (!result.ok) return result;
  const events = state.events;
  for (const order of linked) {
    const view = order.toView();
    for (let i = from; i < events.length; i++) {
      const e = events[i]!;
      if (e.type !== 'order' || e.order.orderId !== order.id) continue;
      events[i] = {
        type: 'order',
        order: {
          ...e.order,
          triggerFillCondition: view.triggerFillCondition,
          otoOrderIds: view.otoOrderIds === null ? null : [...view.otoOrderIds],
          ocoRef: view.ocoRef,
          isPrimaryOtoco: view.isPrimaryOtoco,
        },
      };
    }
  }
  return { ...result, order: primary.toView() };
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
    const round: Order[] = [];
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
      if (delta > 0) round.push(release(state, group, id, delta));
    }
    // OTOCO: what this fill released is one OCO group of its own, so a fill of one round's
    // member acts on its partners of that round only (each round protects the lots that
    // released it). All join before any enters: one that trades at once reaches its partners.
    if (group.type === 'one_triggers_one_cancels_other' && round.length > 1) {
      const oco = newGroup(state, 'one_cancels_other', group.condition, null);
      group.ocoGroupId = oco.id;
      for (const order of round) join(state, oco, order);
    }
    for (const order of round) {
      if (order.state !== 'untriggered') continue; // a partner of its round traded and closed it
      enter(state, order);
      // Closed without trading (rejected market_limit, nothing to trail): its partners go now.
      const oco = state.advanced.linkOf.get(order.id);
      const now = state.orders.get(order.id) ?? order;
      if (oco?.members.includes(order.id) && isClosedState(now.state)) reactMember(state, oco, now);
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

/**
 * Takes `lots` of a template out for release: the template itself for its last lots, else a
 * copy. The order returned is still `untriggered`; the caller links and enters it.
 */
function release(state: VenueState, group: LinkGroup, templateId: string, lots: number): Order {
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
  return order;
}

/** A released order enters: trigger types wait in the trigger book, the rest trade now. */
function enter(state: VenueState, order: Order): void {
  const x = order.extras!;
  if (TRIGGER_TYPES.has(order.orderType)) {
    // What placing one refuses (triggers.ts), a release rejects: the limit of waiting trigger
    // orders (direct ones may have filled it since the primary was placed), a sell trailing stop
    // that would start at or below zero.
    if (waitingTriggerOrders(state, order.accountId) >= MAX_TRIGGER_ORDERS_PER_ACCOUNT) {
      reject(state, order, 'no_more_triggers');
      return;
    }
    if (order.orderType === 'trailing_stop') {
      const instrument = state.instrumentList[order.instrumentId]!;
      const reference = triggerSourcePrice(state, instrument, x.trigger!);
      if (reference === null) {
        cancelUntriggered(state, order, 'oto_primary_closed');
        return;
      }
      const stop = trailingStart(order.side, reference, x.triggerOffset!);
      if (stop <= 0) {
        reject(state, order, 'invalid_trigger_price');
        return;
      }
      x.triggerPrice = stop;
      x.triggerReferencePrice = stop;
    }
    // It waits from the session it is released in, as a released resting order does (activation.ts).
    order.expiresAt = order.timeInForce === 'good_til_day' ? sessionEnd(state.now) : 0;
    state.advanced.addUntriggered(order);
    state.advanced.seenEpoch = -1;
    state.events.push({ type: 'order', order: order.toView() });
    return;
  }
  if (order.orderType === 'market_limit') {
    const limit = marketLimitAtBest(state, order);
    if (limit !== null) activate(state, limit);
    return;
  }
  activate(state, order);
}

/**
 * A released market_limit secondary, as placing one does (advanced-orders.ts): a limit order at
 * the best opposite price now, with originalOrderType market_limit; the same order (id, number),
 * in the index in place of the market_limit one. Rejected, its event emitted, when that side of
 * the book is empty or its best price is outside the band (placing refuses both); null then.
 */
function marketLimitAtBest(state: VenueState, order: Order): Order | null {
  const instrument = state.instrumentList[order.instrumentId]!;
  const buying = order.side === 'buy';
  const best = buying ? instrument.book.bestAsk() : instrument.book.bestBid();
  const band = priceBand(state, instrument);
  if (best === null) {
    reject(state, order, 'no_liquidity');
    return null;
  }
  if (band !== null && (buying ? best > band.max : best < band.min)) {
    reject(state, order, buying ? 'price_too_high' : 'price_too_low');
    return null;
  }
  const limit = new Order(
    order.id,
    order.number,
    order.accountId,
    order.instrumentId,
    order.instrumentName,
    order.currency,
    order.side,
    'limit',
    best,
    order.amount,
    order.timeInForce,
    order.createdAt,
    order.label,
    order.owner,
    order.flags,
  );
  limit.state = order.state;
  limit.lastUpdatedAt = order.lastUpdatedAt;
  limit.expiresAt = order.expiresAt;
  limit.codSession = order.codSession;
  limit.extras = { ...extrasOf(order), originalOrderType: 'market_limit' };
  state.orders.set(limit.id, limit);
  return limit;
}

/** A released order that cannot go out: closed rejected, its event emitted (never in a book). */
function reject(state: VenueState, order: Order, reason: CancelReason): void {
  closeOrder(state, order, 'reject', reason);
  state.events.push({ type: 'order', order: order.toView() });
}
