/**
 * Trigger orders: stop_limit, stop_market, take_limit, take_market, trailing_stop.
 *
 * Invariants:
 * - A trigger order waits as `untriggered` in the trigger book (AdvancedState), reserving
 *   nothing, until its `trigger` price (index_price, mark_price or last_price, all compared in
 *   the instrument's ticks) crosses `triggerPrice`:
 *   stop buy ≥, stop sell ≤; take buy ≤, take sell ≥; trailing sell ≤ stop, trailing buy ≥ stop.
 * - A trailing stop follows the best price: sell stop = max(stop, price − offset), buy stop =
 *   min(stop, price + offset); `triggerPrice` is the current stop, `triggerReferencePrice` the
 *   stop at placement.
 * - On trigger the SAME order (same id) gets `triggered = true` and `triggerOrderId` = its id
 *   and enters the market as a new arrival (activation.ts).
 * - Evaluation is deterministic: after every command, orders whose price source moved are
 *   checked; all that fire in one pass are activated in order-number order; activations may
 *   trade and fire more (last_price), evaluated again until nothing fires.
 */
import type { EditOrder, PlaceOrder } from '../core/commands.ts';
import type { CommandResult, CoreError } from '../core/events.ts';
import {
  isMarketLike,
  LABEL_MAX_LENGTH,
  labelTooLong,
  type OrderType,
  type TriggerKind,
} from '../core/types.ts';
import { activate } from './activation.ts';
import { closeOrder } from './matching.ts';
import {
  FLAG_API,
  FLAG_MOBILE,
  FLAG_REDUCE_ONLY,
  FLAG_REPLACED,
  FLAG_WEB,
  Order,
  type OrderExtras,
} from './order.ts';
import { type InstrumentState, refusal, type VenueState } from './state.ts';
import { pastExpiry, reduceOnlyUnavailable, sessionEnd } from './trading.ts';

/** Untriggered orders one account may hold. */
export const MAX_TRIGGER_ORDERS_PER_ACCOUNT = 200;

export const TRIGGER_TYPES: ReadonlySet<OrderType> = new Set([
  'stop_limit',
  'stop_market',
  'take_limit',
  'take_market',
  'trailing_stop',
]);

/** The order's extras, created empty on first use. */
export function extrasOf(order: Order): OrderExtras {
  if (order.extras === null) order.extras = emptyExtras();
  return order.extras;
}

export function emptyExtras(): OrderExtras {
  return {
    originalOrderType: null,
    displayAmount: null,
    refreshAmount: null,
    advanced: null,
    trigger: null,
    triggerPrice: null,
    triggerOffset: null,
    triggerReferencePrice: null,
    triggered: null,
    triggerOrderId: null,
    triggerFillCondition: null,
    otoOrderIds: null,
    primaryOrderId: null,
    ocoRef: null,
  };
}

function fail(state: VenueState, command: { accountId: number }, error: CoreError): CommandResult {
  state.events.push({ type: 'rejection', commandType: 'place_order', accountId: command.accountId, error });
  return { ok: false, error, events: state.events };
}

/**
 * The current price of `kind` for an instrument in its ticks, or null when none is known. The
 * index (a plain number) is rounded as asked: `down` for triggers that fire at or above their
 * price, `up` for those at or below, so none fires before the index reaches it.
 */
export function triggerSourcePrice(
  state: VenueState,
  instrument: InstrumentState,
  kind: TriggerKind,
  rounding: 'nearest' | 'down' | 'up' = 'nearest',
): number | null {
  switch (kind) {
    case 'last_price':
      return instrument.lastPrice;
    case 'mark_price':
      return instrument.markPrice;
    case 'index_price': {
      const index = state.indexPrice(instrument.instrument.currency);
      return index === null ? null : instrument.instrument.priceGrid.fromNumber(index, rounding);
    }
    default: {
      const _exhaustive: never = kind;
      throw new Error(`unknown trigger ${_exhaustive}`);
    }
  }
}

/** Checks the trigger fields of a command; returns an error or null. Shared with linked orders. */
export function validateTrigger(
  state: VenueState,
  instrument: InstrumentState,
  command: Pick<
    PlaceOrder,
    'orderType' | 'trigger' | 'triggerPrice' | 'triggerOffset' | 'price' | 'side' | 'timeInForce' | 'postOnly'
  >,
): CoreError | null {
  const kind = instrument.instrument.kind;
  if (kind !== 'future' && kind !== 'spot')
    return refusal('invalid_args_for_instrument', 'trigger orders are for futures and spot', {
      field: 'type',
    });
  if (command.trigger == null)
    return refusal('missing_params', `trigger is required for ${command.orderType}`, { field: 'trigger' });
  if (command.timeInForce === 'fill_or_kill')
    return refusal('invalid_arguments', 'trigger orders cannot be fill_or_kill', { field: 'timeInForce' });
  if (command.postOnly)
    return refusal('post_only_not_allowed', 'trigger orders cannot be post-only', { field: 'postOnly' });
  const misplaced = misplacedTriggerField(command.orderType, command.triggerPrice, command.triggerOffset);
  if (misplaced !== null) return misplaced;
  if (command.orderType === 'trailing_stop') {
    const offset = command.triggerOffset;
    if (offset == null || !Number.isSafeInteger(offset) || offset <= 0)
      return refusal('invalid_trigger_price', 'trailing_stop needs a positive triggerOffset', {
        field: 'triggerOffset',
      });
    const reference = triggerSourcePrice(state, instrument, command.trigger);
    if (reference === null)
      return refusal('invalid_trigger_price', `no ${command.trigger} yet to trail`, { field: 'trigger' });
    if (trailingStart(command.side, reference, offset) <= 0)
      return refusal('invalid_trigger_price', `triggerOffset must be below the ${command.trigger}`, {
        field: 'triggerOffset',
      });
  } else {
    const tp = command.triggerPrice;
    if (tp == null || !Number.isSafeInteger(tp) || tp <= 0)
      return refusal('invalid_trigger_price', 'a positive triggerPrice is required', {
        field: 'triggerPrice',
      });
    if (!instrument.instrument.isOnTick(tp))
      return refusal('trigger_price_wrong_tick', 'triggerPrice is not on the tick grid', {
        field: 'triggerPrice',
      });
  }
  if (!isMarketLike(command.orderType)) {
    const price = command.price;
    if (price == null || !Number.isSafeInteger(price) || price <= 0)
      return refusal('invalid_price', `${command.orderType} needs a positive price`, { field: 'price' });
    if (!instrument.instrument.isOnTick(price))
      return refusal('off_grid', 'price is not on the tick grid at that level', { field: 'price' });
  }
  return null;
}

/**
 * A trailing stop follows `triggerOffset`, the other trigger types wait at `triggerPrice`; the
 * field of the other kind is refused rather than ignored.
 */
function misplacedTriggerField(
  orderType: OrderType,
  triggerPrice: number | null | undefined,
  triggerOffset: number | null | undefined,
): CoreError | null {
  if (orderType === 'trailing_stop' && triggerPrice != null)
    return refusal('unsupported_arg_combination', 'a trailing_stop takes triggerOffset, not triggerPrice', {
      field: 'triggerPrice',
    });
  if (orderType !== 'trailing_stop' && triggerOffset != null)
    return refusal(
      'unsupported_arg_combination',
      `triggerOffset is only for trailing_stop, not ${orderType}`,
      {
        field: 'triggerOffset',
      },
    );
  return null;
}

/** Builds (does not register) an untriggered order from a validated command. */
export function newTriggerOrder(
  state: VenueState,
  instrument: InstrumentState,
  command: PlaceOrder,
  amount: number,
): Order {
  const number = ++state.orderNumber;
  const prefix = command.orderType.startsWith('stop')
    ? 'SL'
    : command.orderType.startsWith('take')
      ? 'TP'
      : 'TS';
  const source = command.source;
  const flags =
    (command.reduceOnly ? FLAG_REDUCE_ONLY : 0) |
    (source.api ? FLAG_API : 0) |
    (source.web ? FLAG_WEB : 0) |
    (source.mobile ? FLAG_MOBILE : 0);
  const market = isMarketLike(command.orderType);
  const order = new Order(
    `${instrument.instrument.currency}-${prefix}-${number}`,
    number,
    command.accountId,
    instrument.id,
    instrument.instrument.name,
    instrument.instrument.currency,
    command.side,
    command.orderType,
    market ? 0 : (command.price ?? 0),
    amount,
    command.timeInForce,
    state.now,
    command.label,
    command.owner ?? null,
    flags,
  );
  order.state = 'untriggered';
  const extras = emptyExtras();
  extras.trigger = command.trigger ?? null;
  extras.triggered = false;
  if (command.orderType === 'trailing_stop') {
    const offset = command.triggerOffset!;
    const reference = triggerSourcePrice(state, instrument, command.trigger!)!;
    const stop = trailingStart(command.side, reference, offset);
    extras.triggerOffset = offset;
    extras.triggerPrice = stop;
    extras.triggerReferencePrice = stop;
  } else {
    extras.triggerPrice = command.triggerPrice ?? null;
  }
  order.extras = extras;
  if (command.codSession != null) order.codSession = command.codSession;
  if (command.timeInForce === 'good_til_day') order.expiresAt = sessionEnd(order.createdAt);
  return order;
}

/** private/sell|buy with a trigger type: validated, then waits untriggered. */
export function placeTriggerOrder(state: VenueState, command: PlaceOrder): CommandResult {
  const account = state.accounts.get(command.accountId);
  if (account === undefined)
    return fail(state, command, refusal('account_not_found', 'account not found', { field: 'accountId' }));
  const instrument = state.instruments.get(command.instrumentName);
  if (instrument === undefined)
    return fail(
      state,
      command,
      refusal('invalid_instrument', 'instrument not found', { field: 'instrumentName' }),
    );
  if (pastExpiry(state, instrument))
    return fail(
      state,
      command,
      refusal('instrument_expired', 'instrument has expired', { field: 'instrumentName' }),
    );
  if (command.validUntil != null && state.now > command.validUntil)
    return fail(
      state,
      command,
      refusal('timed_out', 'request reached the matching engine after validUntil', { field: 'validUntil' }),
    );
  if (labelTooLong(command.label))
    return fail(
      state,
      command,
      refusal('invalid_params', `label is longer than ${LABEL_MAX_LENGTH} characters`, { field: 'label' }),
    );
  if (!Number.isSafeInteger(command.amount) || command.amount <= 0)
    return fail(
      state,
      command,
      refusal('invalid_amount', 'quantity must be positive', { field: 'quantity' }),
    );
  const reduceOnlyRefusal = command.reduceOnly ? reduceOnlyUnavailable(instrument) : null;
  if (reduceOnlyRefusal !== null) return fail(state, command, reduceOnlyRefusal);
  const error = validateTrigger(state, instrument, command);
  if (error !== null) return fail(state, command, error);
  if (waitingTriggerOrders(state, account.id) >= MAX_TRIGGER_ORDERS_PER_ACCOUNT)
    return fail(
      state,
      command,
      refusal('no_more_triggers', `at most ${MAX_TRIGGER_ORDERS_PER_ACCOUNT} trigger orders`, {
        field: 'type',
      }),
    );
  const order = newTriggerOrder(state, instrument, command, command.amount);
  registerUntriggered(state, order);
  const view = order.toView();
  state.events.push({ type: 'order', order: view });
  return { ok: true, events: state.events, order: view, trades: [] };
}

/** Where a trailing stop starts: `offset` behind the reference (below it for a sell). */
export function trailingStart(side: 'buy' | 'sell', reference: number, offset: number): number {
  return side === 'sell' ? reference - offset : reference + offset;
}

/** The account's orders waiting in the trigger book (an OTO's unreleased secondaries are not). */
export function waitingTriggerOrders(state: VenueState, accountId: number): number {
  let count = 0;
  for (const o of state.advanced.untriggered.values()) if (o.accountId === accountId) count++;
  return count;
}

export function registerUntriggered(state: VenueState, order: Order): void {
  state.orders.set(order.id, order);
  state.advanced.addUntriggered(order);
  // Force an evaluation pass: the order may fire at once on the current prices.
  state.advanced.seenEpoch = -1;
}

/** Cancels an untriggered order (user, cancel-all, settlement, linked, expiry). */
export function cancelUntriggered(
  state: VenueState,
  order: Order,
  reason: Parameters<typeof closeOrder>[3],
): void {
  state.advanced.removeUntriggered(order);
  closeOrder(state, order, 'cancel', reason);
  state.events.push({ type: 'order', order: order.toView() });
}

/** A trailing stop against `price`: fires, or follows the peak (sell) / trough (buy). */
function trail(order: Order, price: number): boolean {
  const x = order.extras!;
  const stop = x.triggerPrice!;
  const offset = x.triggerOffset!;
  if (order.side === 'buy') {
    if (price >= stop) return true;
    if (price + offset < stop) x.triggerPrice = price + offset;
  } else {
    if (price <= stop) return true;
    if (price - offset > stop) x.triggerPrice = price - offset;
  }
  return false;
}

const ALL_KINDS: readonly TriggerKind[] = ['index_price', 'mark_price', 'last_price'];
const LAST_ONLY: readonly TriggerKind[] = ['last_price'];

/**
 * Evaluates the trigger book against current prices and activates what fires, until stable.
 * Also cancels untriggered good_til_day orders whose session ended. Returns true if anything changed.
 * Work per call: the due prefixes of the books whose price source moved, plus trailing stops.
 */
export function evaluateTriggers(state: VenueState): boolean {
  const advanced = state.advanced;
  let changed = false;
  if (state.now >= advanced.nextExpiryAt) {
    const expired = [...advanced.untriggered.values()].filter(
      (o) => o.expiresAt !== 0 && o.expiresAt <= state.now,
    );
    expired.sort((a, b) => a.number - b.number);
    for (const order of expired) cancelUntriggered(state, order, 'good_til_day');
    advanced.nextExpiry();
    changed = expired.length > 0;
  }
  for (let pass = 0; pass < 1000 && advanced.untriggered.size > 0; pass++) {
    const epochMoved = advanced.seenEpoch !== state.priceEpoch;
    advanced.seenEpoch = state.priceEpoch;
    const due: Order[] = [];
    const trailed: Order[] = [];
    for (const [instrumentId, books] of advanced.byInstrument) {
      const instrument = state.instrumentList[instrumentId]!;
      const traded = advanced.seenTradeSeq.get(instrumentId) !== instrument.tradeSeq;
      if (!epochMoved && !traded) continue;
      advanced.seenTradeSeq.set(instrumentId, instrument.tradeSeq);
      const kinds = epochMoved ? ALL_KINDS : LAST_ONLY;
      for (const kind of kinds) {
        const book = books.get(kind);
        if (book === undefined) continue;
        const price = triggerSourcePrice(state, instrument, kind);
        if (price === null) continue;
        const reachedUp = triggerSourcePrice(state, instrument, kind, 'down')!;
        for (const order of book.up) {
          if (order.extras!.triggerPrice! > reachedUp) break;
          due.push(order);
        }
        const reachedDown = triggerSourcePrice(state, instrument, kind, 'up')!;
        for (const order of book.down) {
          if (order.extras!.triggerPrice! < reachedDown) break;
          due.push(order);
        }
        for (const order of book.trailing) {
          const stopBefore = order.extras!.triggerPrice;
          if (trail(order, price)) due.push(order);
          else if (order.extras!.triggerPrice !== stopBefore) trailed.push(order);
        }
      }
    }
    // A trailing stop that moved publishes its new triggerPrice (views are snapshots).
    trailed.sort((a, b) => a.number - b.number);
    for (const order of trailed) state.events.push({ type: 'order', order: order.toView() });
    if (due.length === 0) return changed || trailed.length > 0;
    changed = true;
    due.sort((a, b) => a.number - b.number);
    for (const order of due) if (order.state === 'untriggered') activate(state, order);
  }
  return changed;
}

/** Edit of an untriggered order: amount, price, triggerPrice, triggerOffset; priority is moot. */
export function editUntriggered(state: VenueState, order: Order, command: EditOrder): CommandResult {
  const refuse = (error: CoreError): CommandResult => {
    state.events.push({ type: 'rejection', commandType: 'edit_order', accountId: command.accountId, error });
    return { ok: false, error, events: state.events };
  };
  if (command.validUntil != null && state.now > command.validUntil)
    return refuse(
      refusal('timed_out', 'request reached the matching engine after validUntil', { field: 'validUntil' }),
    );
  const instrument = state.instrumentList[order.instrumentId]!;
  const x = order.extras!;
  if (!state.advanced.untriggered.has(order.id))
    return refuse(
      refusal('not_open_order', 'a waiting linked order changes with its primary; edit or cancel that', {
        field: 'orderId',
      }),
    );
  if (command.mmp === true)
    return refuse(refusal('invalid_arguments', 'mmp is only for limit orders', { field: 'mmp' }));
  // What placing refuses for a trigger order, an edit refuses too, rather than drop it silently.
  if (command.postOnly === true)
    return refuse(
      refusal('post_only_not_allowed', 'trigger orders cannot be post-only', { field: 'postOnly' }),
    );
  if (command.rejectPostOnly === true)
    return refuse(refusal('invalid_params', 'rejectPostOnly needs postOnly', { field: 'rejectPostOnly' }));
  if (command.displayAmount != null || command.advanced != null) {
    return refuse(
      refusal('unsupported_arg_combination', 'trigger orders cannot be iceberg or advanced', {
        field: command.displayAmount != null ? 'displayAmount' : 'advanced',
      }),
    );
  }
  // Reduce-only needs a position (not spot): refused as placing refuses it, not at firing.
  if (command.reduceOnly === true) {
    const unavailable = reduceOnlyUnavailable(instrument);
    if (unavailable !== null) return refuse(unavailable);
  }
  const amount = command.amount ?? order.amount;
  if (!Number.isSafeInteger(amount) || amount <= 0)
    return refuse(refusal('invalid_amount', 'quantity must be positive', { field: 'quantity' }));
  const misplaced = misplacedTriggerField(order.orderType, command.triggerPrice, command.triggerOffset);
  if (misplaced !== null) return refuse(misplaced);
  const trailing = order.orderType === 'trailing_stop';
  const merged = {
    orderType: order.orderType,
    trigger: x.trigger,
    triggerPrice: trailing ? null : (command.triggerPrice ?? x.triggerPrice),
    triggerOffset: command.triggerOffset ?? x.triggerOffset,
    price: isMarketLike(order.orderType) ? null : (command.price ?? order.price),
    side: order.side,
    timeInForce: order.timeInForce,
    postOnly: false,
  };
  if (x.trigger !== null) {
    const error = validateTrigger(state, instrument, merged);
    if (error !== null) return refuse(error);
  }
  const listed = state.advanced.untriggered.has(order.id);
  if (listed) state.advanced.removeUntriggered(order);
  order.amount = amount;
  if (merged.price !== null) order.price = merged.price;
  if (order.orderType === 'trailing_stop' && command.triggerOffset != null && x.trigger !== null) {
    const reference = triggerSourcePrice(state, instrument, x.trigger)!;
    const offset = command.triggerOffset;
    x.triggerOffset = offset;
    x.triggerPrice = trailingStart(order.side, reference, offset);
  } else if (command.triggerPrice != null) {
    x.triggerPrice = command.triggerPrice;
  }
  if (command.reduceOnly !== undefined) order.set(FLAG_REDUCE_ONLY, command.reduceOnly);
  order.set(FLAG_REPLACED, true);
  order.lastUpdatedAt = state.now;
  if (listed) state.advanced.addUntriggered(order);
  state.advanced.seenEpoch = -1;
  const view = order.toView();
  state.events.push({ type: 'order', order: view });
  return { ok: true, events: state.events, order: view, trades: [] };
}
