/**
 * Entry points of the advanced order features, and the post-command reactor that drives them.
 *
 * - `isAdvancedPlace` is the engine's only check on a plain order's path; everything else
 *   happens here: trigger types (triggers.ts), linked orders (linked-orders.ts), icebergs
 *   (iceberg.ts), MMP freezes (mmp.ts), `market_limit`, and `advanced` usd/implv options orders.
 * - `market_limit`: a limit order at the best opposite price at arrival (it takes that level
 *   and rests the rest there); orderType `limit`, originalOrderType `market_limit`; refused
 *   with `invalid_arguments` when the opposite side is empty. It is a market type for
 *   `displayAmount` and `postOnly`: both are refused with the errors a `market` order gets.
 * - Advanced options orders: `advancedValue` is USD (usd) or IV percent (implv), priced and
 *   re-priced by advanced-pricing.ts; a plain edit turns them into plain orders.
 * - `afterCommand` runs after every command while anything advanced exists: MMP counts new
 *   fills, linked groups react to new order events, the trigger book is evaluated, advanced
 *   orders re-priced; repeated until a round adds no events. Deterministic: inputs are the
 *   command's own events and state, in order.
 */
import type { CancelAll, CancelOrder, CoreCommand, EditOrder, PlaceOrder } from '../core/commands.ts';
import type { CommandResult, CoreError } from '../core/events.ts';
import { advancedTicks, repriceAdvanced } from './advanced-pricing.ts';
import { cancelAllFilter } from './cancel-all-filter.ts';
import { makeIceberg, validateIceberg } from './iceberg.ts';
import { placeLinked, reactLinked, validateLinked } from './linked-orders.ts';
import { clipReduceOnly } from './matching.ts';
import { mmpRefusal, reactMmp } from './mmp.ts';
import { FLAG_HIDDEN, FLAG_ICEBERG, type Order } from './order.ts';
import { refusal, type VenueState } from './state.ts';
import { editOrder, editPlainOrder, placeOrder } from './trading.ts';
import {
  cancelUntriggered,
  editUntriggered,
  evaluateTriggers,
  extrasOf,
  placeTriggerOrder,
  TRIGGER_TYPES,
} from './triggers.ts';

/** True when a place command needs anything beyond a plain limit/market order. */
export function isAdvancedPlace(command: PlaceOrder): boolean {
  return (
    (command.orderType !== 'limit' && command.orderType !== 'market') ||
    command.displayAmount != null ||
    command.linkedOrderType != null ||
    command.otocoConfig != null ||
    command.triggerFillCondition != null ||
    command.advanced != null ||
    command.mmp === true
  );
}

function fail(
  state: VenueState,
  accountId: number,
  error: CoreError,
  type: 'place_order' | 'edit_order' = 'place_order',
): CommandResult {
  state.events.push({ type: 'rejection', commandType: type, accountId, error });
  return { ok: false, error, events: state.events };
}

/** private/buy|sell for anything `isAdvancedPlace` accepts. */
export function placeAdvanced(state: VenueState, command: PlaceOrder): CommandResult {
  if (
    command.linkedOrderType != null ||
    command.otocoConfig != null ||
    command.triggerFillCondition != null
  ) {
    const error = validateLinked(state, command);
    if (error !== null) return fail(state, command.accountId, error);
    return placeLinked(state, command, placeSingle);
  }
  return placeSingle(state, command);
}

function placeSingle(state: VenueState, command: PlaceOrder): CommandResult {
  if (command.mmp === true) {
    if (command.orderType !== 'limit')
      return fail(
        state,
        command.accountId,
        refusal('invalid_arguments', 'mmp is only for limit orders', { field: 'mmp' }),
      );
    const instrument = state.instruments.get(command.instrumentName);
    const frozen =
      instrument === undefined ? null : mmpRefusal(state, command.accountId, instrument.instrument.currency);
    if (frozen !== null) return fail(state, command.accountId, frozen);
  }
  if (TRIGGER_TYPES.has(command.orderType)) {
    if (command.displayAmount != null || command.advanced != null)
      return fail(
        state,
        command.accountId,
        refusal('unsupported_arg_combination', 'trigger orders cannot be iceberg or advanced', {
          field: 'type',
        }),
      );
    return placeTriggerOrder(state, command);
  }
  if (command.orderType === 'market_limit') return placeMarketLimit(state, command);
  if (command.advanced != null) return placeAdvancedOption(state, command);
  if (command.displayAmount != null) {
    const error = validateIceberg(
      command.displayAmount,
      command.amount,
      command.orderType,
      command.timeInForce,
      command.hidden === true,
    );
    if (error !== null) return fail(state, command.accountId, error);
    const result = placeOrder(state, { ...command, displayAmount: null });
    if (!result.ok || result.order === undefined) return result;
    const order = state.orders.get(result.order.orderId)!;
    if (order.state !== 'open' || order.level === null) return result;
    makeIceberg(order, command.displayAmount);
    return refreshView(state, result, order);
  }
  return placeOrder(state, { ...command, displayAmount: null });
}

function placeMarketLimit(state: VenueState, command: PlaceOrder): CommandResult {
  // A market type: no iceberg (it was rested whole, the display dropped) and no post-only (it
  // was re-priced inside the spread and rested, or always refused with rejectPostOnly).
  if (command.displayAmount != null) {
    const error = validateIceberg(
      command.displayAmount,
      command.amount,
      'market',
      command.timeInForce,
      false,
    );
    if (error !== null) return fail(state, command.accountId, error);
  }
  if (command.postOnly)
    return fail(
      state,
      command.accountId,
      refusal('post_only_not_allowed', 'postOnly needs a good_til_cancelled limit order', {
        field: 'postOnly',
      }),
    );
  const instrument = state.instruments.get(command.instrumentName);
  if (instrument === undefined || instrument.status !== 'open')
    return placeOrder(state, { ...command, orderType: 'limit', price: 0 });
  const best = command.side === 'buy' ? instrument.book.bestAsk() : instrument.book.bestBid();
  if (best === null)
    return fail(
      state,
      command.accountId,
      refusal('invalid_arguments', 'market_limit needs liquidity on the other side', { field: 'type' }),
    );
  const result = placeOrder(state, { ...command, orderType: 'limit', price: best, displayAmount: null });
  if (!result.ok || result.order === undefined) return result;
  const order = state.orders.get(result.order.orderId)!;
  extrasOf(order).originalOrderType = 'market_limit';
  return refreshView(state, result, order);
}

function placeAdvancedOption(state: VenueState, command: PlaceOrder): CommandResult {
  const instrument = state.instruments.get(command.instrumentName);
  if (instrument === undefined) return placeOrder(state, { ...command, advanced: null });
  if (command.postOnly)
    return fail(
      state,
      command.accountId,
      refusal('no_adv_postonly', 'advanced orders cannot be post-only', { field: 'postOnly' }),
    );
  if (command.orderType !== 'limit')
    return fail(
      state,
      command.accountId,
      refusal('invalid_arguments', 'advanced orders are limit orders', { field: 'type' }),
    );
  const value = command.advancedValue ?? null;
  if (value === null)
    return fail(
      state,
      command.accountId,
      refusal('missing_params', 'advanced orders need a price', { field: 'price' }),
    );
  const ticks = advancedTicks(state, instrument, command.advanced!, value);
  if (typeof ticks !== 'number') return fail(state, command.accountId, ticks);
  const inner: PlaceOrder = { ...command, advanced: null, advancedValue: null, price: ticks };
  const result = command.displayAmount != null ? placeSingle(state, inner) : placeOrder(state, inner);
  if (!result.ok || result.order === undefined) return result;
  const order = state.orders.get(result.order.orderId)!;
  const x = extrasOf(order);
  x.advanced = command.advanced!;
  x.advancedValue = value;
  if (order.state === 'open') state.advanced.advancedValues.set(order.id, value);
  return refreshView(state, result, order);
}

/** Replaces the command's order view (result and its last event) after fields were set. */
function refreshView(state: VenueState, result: CommandResult, order: Order): CommandResult {
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

// ---- hooks for cancel / cancel_all / edit ----------------------------------------------------

/** Cancels an untriggered or waiting linked order; null when the order is not one (engine path). */
export function cancelWaiting(state: VenueState, command: CancelOrder): CommandResult | null {
  const order = state.orders.get(command.orderId);
  if (order === undefined || order.accountId !== command.accountId || order.state !== 'untriggered')
    return null;
  cancelUntriggered(state, order, command.cancelReason ?? 'user_request');
  return { ok: true, events: state.events, order: order.toView() };
}

/** Cancels the waiting orders a cancel_all matches (after the engine cancelled resting ones). */
export function cancelAllWaiting(state: VenueState, command: CancelAll): ReturnType<Order['toView']>[] {
  const matches = waitingOrders(state).filter(cancelAllFilter(state, command));
  matches.sort((a, b) => a.number - b.number);
  return matches.map((order) => {
    cancelUntriggered(state, order, command.cancelReason ?? 'user_request');
    return order.toView();
  });
}

/** Edits of untriggered orders, icebergs and advanced orders; null = the engine's plain path. */
export function editSpecial(state: VenueState, command: EditOrder): CommandResult | null {
  const order = state.orders.get(command.orderId);
  if (order === undefined || order.accountId !== command.accountId) return null;
  if (order.state === 'untriggered') return editUntriggered(state, order, command);
  if (order.state !== 'open') return null;
  const x = order.extras;
  if (command.advanced != null) {
    // As placing one: an advanced order cannot be post-only (checked before anything changes).
    if (command.postOnly === true)
      return fail(
        state,
        command.accountId,
        refusal('no_adv_postonly', 'advanced orders cannot be post-only', { field: 'postOnly' }),
        'edit_order',
      );
    const instrument = state.instrumentList[order.instrumentId]!;
    const value = command.advancedValue ?? null;
    if (value === null)
      return fail(
        state,
        command.accountId,
        refusal('missing_params', 'advanced edit needs a price', { field: 'price' }),
        'edit_order',
      );
    const ticks = advancedTicks(state, instrument, command.advanced, value);
    if (typeof ticks !== 'number') return fail(state, command.accountId, ticks, 'edit_order');
    const result =
      editSpecial(state, { ...command, advanced: null, advancedValue: null, price: ticks }) ??
      editOrder(state, { ...command, advanced: null, advancedValue: null, price: ticks });
    if (result.ok && order.state === 'open') {
      const ex = extrasOf(order);
      ex.advanced = command.advanced;
      ex.advancedValue = value;
      state.advanced.advancedValues.set(order.id, value);
      return refreshView(state, result, order);
    }
    return result;
  }
  if (x !== null && x.advanced !== null && command.autoReplaced !== true) {
    // A plain edit turns an advanced order into a plain one (Deribit: re-send `advanced`), once
    // the edit is accepted: a refused edit leaves the order as it was, still re-priced.
    const result = editResting(state, order, command) ?? editPlainOrder(state, command);
    // Refused (a crossing post-only edit with rejectPostOnly only cancels it): still advanced.
    if (!result.ok || order.cancelReason === 'edit_post_only_reject') return result;
    x.advanced = null;
    x.advancedValue = null;
    state.advanced.advancedValues.delete(order.id);
    return refreshView(state, result, order);
  }
  return editResting(state, order, command);
}

/**
 * The iceberg parts of an edit of an open order: an iceberg stays one (a new `displayAmount`
 * applies), and a plain order given a `displayAmount` becomes one; either way it re-enters at the
 * tail of its level (priority lost). Null when neither applies (the plain edit path).
 * A refused edit changes nothing: not the display, not the order's place in the queue.
 */
function editResting(state: VenueState, order: Order, command: EditOrder): CommandResult | null {
  const x = order.extras;
  if (x !== null && x.displayAmount !== null && (order.flags & FLAG_ICEBERG) !== 0) {
    const display = command.displayAmount ?? x.refreshAmount!;
    const amount = command.amount ?? order.amount;
    // Shrunk below its display without a new displayAmount: the display is clamped to what is
    // left (as a partly filled iceberg shows its remaining), not refused over a field the client
    // did not send. A displayAmount the edit sends is checked as on placing.
    const clamp = command.displayAmount == null && amount < display;
    const error = clamp ? null : validateIceberg(display, amount, 'limit', order.timeInForce, false);
    if (error !== null) return fail(state, command.accountId, error, 'edit_order');
    const filledBefore = order.filled;
    // Edited as a plain order, in its place (the level counts it whole meanwhile), then made an
    // iceberg again at the tail; put back as it was when the edit is refused.
    const level = order.level!;
    const shown = x.displayAmount;
    const refresh = x.refreshAmount;
    const hidden = (order.flags & FLAG_HIDDEN) !== 0;
    const remaining = order.amount - order.filled;
    if (!hidden) level.visible += remaining - shown;
    order.flags &= ~FLAG_ICEBERG;
    x.displayAmount = null;
    x.refreshAmount = null;
    const result = editPlainOrder(state, { ...command, displayAmount: null });
    if (!result.ok) {
      // A refusal comes before any change: the order is still in `level`, with its size.
      if (!hidden) level.visible -= remaining - shown;
      order.flags |= FLAG_ICEBERG;
      x.displayAmount = shown;
      x.refreshAmount = refresh;
      return result;
    }
    if (order.cancelReason === 'edit_post_only_reject') {
      // Refused too, with the order cancelled as it stood: its display is the one it had.
      order.flags |= FLAG_ICEBERG;
      x.displayAmount = shown;
      x.refreshAmount = refresh;
      return refreshView(state, result, order);
    }
    if (order.state === 'open' && order.level !== null)
      makeIceberg(order, clamp ? Math.min(display, order.amount - filledBefore) : display);
    return refreshView(state, result, order);
  }
  if (command.displayAmount != null) {
    const amount = command.amount ?? order.amount;
    const error = validateIceberg(
      command.displayAmount,
      amount,
      order.orderType,
      order.timeInForce,
      order.has(FLAG_HIDDEN),
    );
    if (error !== null) return fail(state, command.accountId, error, 'edit_order');
    const result = editPlainOrder(state, { ...command, displayAmount: null });
    if (result.ok && order.state === 'open' && order.level !== null) {
      // Becoming an iceberg loses priority like any re-entry.
      const level = order.level;
      level.remove(order);
      level.append(order);
      makeIceberg(order, command.displayAmount);
      return refreshView(state, result, order);
    }
    return result;
  }
  return null;
}

// ---- the reactor -------------------------------------------------------------------------------

/** After a command: MMP, linked orders, triggers, advanced re-pricing, until stable. */
export function afterCommand(state: VenueState, command: CoreCommand): void {
  const advanced = state.advanced;
  if (command.type === 'update_prices') {
    for (const mark of command.markPrices ?? []) {
      if (mark.delta !== undefined || mark.vega !== undefined) {
        advanced.greeks.set(mark.instrumentName, {
          delta: mark.delta ?? 0,
          vega: mark.vega ?? 0,
          ...(mark.forwardFactor === undefined ? {} : { forwardFactor: mark.forwardFactor }),
        });
      }
    }
  }
  if (command.type === 'settle_instrument') cancelWaitingOn(state, command.instrumentName);
  let from = 0;
  for (let round = 0; round < 64; round++) {
    const end = state.events.length;
    reactMmp(state, state.events, from);
    reactLinked(state, state.events, from);
    evaluateTriggers(state);
    clipReduceOnly(state);
    if (command.type === 'update_prices' && round === 0) repriceAdvanced(state);
    from = end;
    if (state.events.length === end) break;
  }
}

/** Untriggered orders and waiting linked templates, each once (in no particular order). */
export function waitingOrders(state: VenueState): Order[] {
  const out = new Set<Order>(state.advanced.untriggered.values());
  for (const id of state.advanced.linkOf.keys()) {
    const order = state.orders.get(id);
    if (order !== undefined && order.state === 'untriggered') out.add(order);
  }
  return [...out];
}

function cancelWaitingOn(state: VenueState, instrumentName: string): void {
  const waiting = waitingOrders(state).filter((o) => o.instrumentName === instrumentName);
  waiting.sort((a, b) => a.number - b.number);
  for (const order of waiting) cancelUntriggered(state, order, 'settlement');
}
