/**
 * Order entry: place, edit, cancel, cancel-all. Validation happens first and refuses without
 * changing anything; then matching; then the remainder rests or is cancelled.
 *
 * Rules (see the engine's README section in the final report / docs/decisions.md):
 * - validUntil: refused with `timed_out` when the command's ts > validUntil.
 * - postOnly only with good_til_cancelled limit orders; a crossing post-only order is repriced
 *   one tick inside the spread (buy: best ask − tick, sell: best bid + tick), or refused with
 *   `post_only_reject` when rejectPostOnly, and with `post_only_price_modification_not_possible`
 *   when that price is invalid (not positive; for a combo, outside what its legs can split).
 * - reduceOnly: the amount is clipped to what the position (less other open reduce-only orders
 *   on that side) allows; nothing to reduce → `reduce_only_violation`. Resting ones shrink with
 *   the position after each command's fills (`clipReduceOnly`, matching.ts).
 * - IOC and market remainders are cancelled (`immediate_or_cancel`); an FOK that cannot fill in
 *   full is cancelled without trading (same reason).
 * - Edit: priority kept on a pure size decrease (or no change); a price change or a size
 *   increase takes the order out and re-enters it as new (it may trade, then rests at the tail).
 */
import type { CancelAll, CancelOrder, EditOrder, PlaceOrder } from '../core/commands.ts';
import type { CommandResult, CoreError, OrderView, TradeView } from '../core/events.ts';
import {
  formatMoney,
  LABEL_MAX_LENGTH,
  labelTooLong,
  type OrderType,
  type Side,
  type TimeInForce,
} from '../core/types.ts';
import type { Instrument } from '../domain/instrument.ts';
import type { Account } from './accounts.ts';
import { executedMarketPrice } from './activation.ts';
import { cancelAllWaiting, cancelWaiting, editSpecial } from './advanced-orders.ts';
import { cancelAllFilter } from './cancel-all-filter.ts';
import {
  changeOpenLots,
  closingExtra,
  entryExtra,
  grownReserve,
  noteClaimEntry,
  reducibleLots,
} from './claim-queues.ts';
import { comboLegs, comboPriceRange } from './combo-legs.ts';
import { cancelResting, closeOrder, match, rest, unrest } from './matching.ts';
import { mmpRefusal } from './mmp.ts';
import {
  FLAG_API,
  FLAG_AUTO_REPLACED,
  FLAG_HIDDEN,
  FLAG_ICEBERG,
  FLAG_LIQUIDATION,
  FLAG_MMP,
  FLAG_MOBILE,
  FLAG_POST_ONLY,
  FLAG_REDUCE_ONLY,
  FLAG_REJECT_POST_ONLY,
  FLAG_REPLACED,
  FLAG_WEB,
  Order,
} from './order.ts';
import { availableFunds, coverRelease, orderReserve, priceBand } from './risk.ts';
import { type InstrumentState, refusal, type VenueState } from './state.ts';
import { deepestNeeded, fillableLots } from './sweep.ts';

const DAY_MS = 86_400_000;
const SESSION_OFFSET_MS = 8 * 3_600_000;

/** End of the trading session containing `ts`: the next 08:00 UTC strictly after it. */
export function sessionEnd(ts: number): number {
  return (Math.floor((ts - SESSION_OFFSET_MS) / DAY_MS) + 1) * DAY_MS + SESSION_OFFSET_MS;
}

/** The funds an order would reserve exceed what is available (both in wire decimals). */
function fundsShortfall(required: number, available: number, currency: string): CoreError {
  const needed = formatMoney(required, currency);
  const free = formatMoney(available, currency);
  return refusal('not_enough_funds', `order needs ${needed} ${currency}, ${free} available`, {
    field: 'quantity',
    required: needed,
    available: free,
    currency,
  });
}

function fail(
  state: VenueState,
  commandType: 'place_order' | 'edit_order' | 'cancel_order' | 'cancel_all',
  accountId: number,
  error: CoreError,
): CommandResult {
  state.events.push({ type: 'rejection', commandType, accountId, error });
  return { ok: false, error, events: state.events };
}

/**
 * Whether `instrument` no longer trades: settled, or its expiry instant has come and the market's
 * settlement (at its next tick, or after a restart) is still to be booked. Between the two the
 * settlement average is already fixed, so a trade would be at a known value against resting orders.
 */
export function pastExpiry(state: VenueState, instrument: InstrumentState): boolean {
  if (instrument.status !== 'open') return true;
  const expiration = instrument.instrument.spec.expiration;
  return expiration !== null && state.now >= expiration;
}

/** The account and a tradeable instrument an order names, or what refuses it. */
export function lookup(
  state: VenueState,
  accountId: number,
  instrumentName: string,
): { account: Account; instrument: InstrumentState } | CoreError {
  const account = state.accounts.get(accountId);
  if (account === undefined)
    return refusal('account_not_found', `account ${accountId} not found`, { field: 'accountId' });
  const instrument = state.instruments.get(instrumentName);
  if (instrument === undefined) {
    return refusal('invalid_instrument', `instrument ${instrumentName} not found`, {
      field: 'instrumentName',
    });
  }
  if (pastExpiry(state, instrument)) {
    return refusal('instrument_expired', `instrument ${instrumentName} has expired`, {
      field: 'instrumentName',
    });
  }
  const expiredLeg = comboLegs(state, instrument)?.legs.find((leg) => pastExpiry(state, leg.instrument));
  if (expiredLeg !== undefined) {
    return refusal('instrument_expired', `combo leg ${expiredLeg.instrument.instrument.name} has expired`, {
      field: 'instrumentName',
    });
  }
  return { account, instrument };
}

/** A combo holds no position (its trades are booked on its legs), so nothing could reduce it. */
/** reduceOnly needs a position to reduce: spot moves balances, a combo books its trades on its legs. */
export function reduceOnlyUnavailable(instrument: InstrumentState): CoreError | null {
  if (instrument.economics.isSpot)
    return refusal('invalid_arguments', 'reduceOnly is not available for spot', { field: 'reduceOnly' });
  if (instrument.instrument.spec.legs !== null) {
    return refusal(
      'invalid_arguments',
      'reduceOnly is not available for combos: a combo holds no position, its trades are booked on its legs',
      { field: 'reduceOnly' },
    );
  }
  return null;
}

/**
 * A combo price its legs cannot split into prices of at least one tick each (outside
 * `comboPriceRange`), as an `invalid_price` naming `price` with the bound; null otherwise and for
 * any instrument that is not a combo. Orders, OCO secondaries and block trades all refuse it.
 */
export function comboPriceProblem(
  state: VenueState,
  instrument: InstrumentState,
  price: number,
): CoreError | null {
  const combo = comboLegs(state, instrument);
  if (combo === null) return null;
  const range = comboPriceRange(combo);
  if (price < range.min) {
    const minPrice = instrument.instrument.formatPrice(range.min);
    return refusal(
      'invalid_price',
      `a combo of bought legs trades at ${minPrice} or more (each leg above 0)`,
      {
        field: 'price',
        minPrice,
      },
    );
  }
  if (price > range.max) {
    const maxPrice = instrument.instrument.formatPrice(range.max);
    return refusal('invalid_price', `a combo of sold legs trades at ${maxPrice} or less (each leg above 0)`, {
      field: 'price',
      maxPrice,
    });
  }
  return null;
}

/** A limit outside the instrument's price band now (a buy above it, a sell below it); null when inside or there is none. */
export function bandProblem(
  state: VenueState,
  instrument: InstrumentState,
  side: Side,
  price: number,
): CoreError | null {
  const band = priceBand(state, instrument);
  if (band === null) return null;
  if (side === 'buy' && price > band.max) {
    const maxPrice = instrument.instrument.formatPrice(band.max);
    return refusal('price_too_high', `price is above the band maximum ${maxPrice}`, {
      field: 'price',
      maxPrice,
    });
  }
  if (side === 'sell' && price < band.min) {
    const minPrice = instrument.instrument.formatPrice(band.min);
    return refusal('price_too_low', `price is below the band minimum ${minPrice}`, {
      field: 'price',
      minPrice,
    });
  }
  return null;
}

function checkPrice(
  state: VenueState,
  instrument: InstrumentState,
  side: Side,
  price: number,
): CoreError | null {
  return priceProblem(state, instrument, price) ?? bandProblem(state, instrument, side, price);
}

/** What refuses a limit at `price` on either side (its sign, the grid, a combo's range); the band aside. */
export function priceProblem(
  state: VenueState,
  instrument: InstrumentState,
  price: number,
): CoreError | null {
  if (!Number.isSafeInteger(price))
    return refusal('invalid_price', 'price must be an integer tick count', { field: 'price' });
  if (
    price <= 0 &&
    instrument.instrument.kind !== 'future_combo' &&
    instrument.instrument.kind !== 'option_combo'
  ) {
    return refusal('invalid_price', 'price must be positive', { field: 'price' });
  }
  const combo = comboPriceProblem(state, instrument, price);
  if (combo !== null) return combo;
  if (!instrument.instrument.isOnTick(price)) {
    return refusal('off_grid', 'price is not on the tick grid at that level', {
      field: 'price',
      tickSize: instrument.instrument.formatPrice(instrument.instrument.tickAt(price)),
    });
  }
  return null;
}

/**
 * One tick inside the opposite `touch` on `side` (a buy below the ask, a sell above the bid),
 * moved further out onto the grid of that level: where a crossing post-only order rests, before
 * `postOnlyReprice` checks the price is a valid one.
 */
export function insideTouch(tool: Instrument, side: Side, touch: number): number {
  const buying = side === 'buy';
  let repriced = buying ? touch - tool.tickAt(touch) : touch + tool.tickAt(touch);
  while (!tool.isOnTick(repriced)) repriced += buying ? -1 : 1;
  return repriced;
}

/**
 * The price a crossing post-only order rests at instead: one tick inside the opposite touch (a
 * buy one tick below the ask, a sell one tick above the bid, moved further out onto the grid of
 * that level), or null when that price is not a valid one. A single instrument needs a positive
 * price; a combo one its legs can split (`comboPriceRange`: zero or negative for spreads, at
 * least one tick per leg for a straddle), or its first trade would have no leg prices. Shared by
 * every path that reprices post-only orders.
 */
export function postOnlyReprice(
  state: VenueState,
  instrument: InstrumentState,
  side: Side,
  touch: number,
): number | null {
  const repriced = insideTouch(instrument.instrument, side, touch);
  const combo = comboLegs(state, instrument);
  if (combo === null) return repriced > 0 ? repriced : null;
  const range = comboPriceRange(combo);
  return repriced >= range.min && repriced <= range.max ? repriced : null;
}

/** Post-only repricing: the price just inside the spread, or an error; null = unchanged. */
function postOnlyPrice(
  state: VenueState,
  instrument: InstrumentState,
  side: Side,
  price: number,
  reject: boolean,
): number | CoreError {
  const buying = side === 'buy';
  const touch = buying ? instrument.book.bestAsk() : instrument.book.bestBid();
  if (touch === null || (buying ? price < touch : price > touch)) return price;
  if (reject) return refusal('post_only_reject', 'post-only order would take liquidity', { field: 'price' });
  const repriced = postOnlyReprice(state, instrument, side, touch);
  if (repriced === null) {
    return refusal(
      'post_only_price_modification_not_possible',
      buying ? 'no price below the ask' : 'no price above the bid',
      { field: 'price' },
    );
  }
  return repriced;
}

/** How a market order trades and what it must have (`marketTerms`). */
export interface MarketTerms {
  /** The price it matches up to. */
  readonly limit: number;
  /** The limit `executedMarketPrice` shows: the band's edge, or ±∞ (its worst fill) without one. */
  readonly shownLimit: number;
  /** What its funds check needs (before `coverRelease`), and the price it is reserved at. */
  readonly reserve: { currency: string; amount: number };
  readonly price: number;
}

/**
 * A market order of `lots` (placed, or a market-type order going live, activation.ts) trades up
 * to the deepest opposite level it needs, and no further than the price band's edge when there
 * is one (a mark), and must have what the whole amount would reserve at the touch or at that
 * level, whichever is more: a reserve falls and then rises with the price, so that bounds every
 * fill in between. It shows the band's edge as its limit (±∞ without one). Before, with a band it
 * reserved at the band's edge, up to twice the margin its fills then needed.
 */
export function marketTerms(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  side: Side,
  lots: number,
): MarketTerms {
  const band = priceBand(state, instrument);
  const unbounded = side === 'buy' ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
  const edge = band === null ? unbounded : side === 'buy' ? band.max : band.min;
  const needed = deepestNeeded(state, instrument, account, side, lots);
  const touch = side === 'buy' ? instrument.book.bestAsk() : instrument.book.bestBid();
  if (needed === null || touch === null || (side === 'buy' ? touch > edge : touch < edge)) {
    // Nothing to trade against within the band: it is cancelled unfilled.
    const price = band === null ? 0 : edge;
    const reserve = orderReserve(state, instrument, account, side, lots, price);
    return { limit: edge, shownLimit: edge, reserve, price };
  }
  // It trades no deeper than the band's edge, nor than the level it needs.
  const deepest = side === 'buy' ? Math.min(needed, edge) : Math.max(needed, edge);
  const atDeepest = orderReserve(state, instrument, account, side, lots, deepest);
  const atTouch = touch === deepest ? atDeepest : orderReserve(state, instrument, account, side, lots, touch);
  const worse = atTouch.amount > atDeepest.amount;
  return {
    limit: deepest,
    shownLimit: edge,
    reserve: worse ? atTouch : atDeepest,
    price: worse ? touch : deepest,
  };
}

/**
 * What a limit order of `lots` at `price` must reserve up front (before `coverRelease`), and the
 * price it is reserved at. At its limit, except with no price band (no mark yet) when it crosses
 * the book: it can then fill at any price from the touch to its limit, and a better price can need
 * more margin (a linear sell filled above its limit, an inverse buy below it), so it must have the
 * worse of what the whole amount reserves at the touch and at its limit, as `marketTerms` bounds a
 * market order's fills. A combo is left to its own pricing (its legs' marks).
 */
export function limitTerms(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  side: Side,
  lots: number,
  price: number,
): { reserve: { currency: string; amount: number }; price: number } {
  const reserve = orderReserve(state, instrument, account, side, lots, price);
  // A plain instrument has a band exactly when it has a mark (risk.ts `priceBand`).
  if (instrument.instrument.spec.legs !== null || instrument.markPrice !== null) return { reserve, price };
  const touch = side === 'buy' ? instrument.book.bestAsk() : instrument.book.bestBid();
  if (touch === null || touch === price || (side === 'buy' ? price < touch : price > touch))
    return { reserve, price };
  const atTouch = orderReserve(state, instrument, account, side, lots, touch);
  return atTouch.amount > reserve.amount ? { reserve: atTouch, price: touch } : { reserve, price };
}

/** Trigger fields on an order type that has no trigger. */
function misplacedTriggerField(fields: {
  readonly trigger?: unknown;
  readonly triggerPrice?: unknown;
  readonly triggerOffset?: unknown;
}): string | null {
  if (fields.trigger != null) return 'trigger';
  if (fields.triggerPrice != null) return 'triggerPrice';
  if (fields.triggerOffset != null) return 'triggerOffset';
  return null;
}

/** What this plain path does not handle (the advanced path takes the rest, advanced-orders.ts). */
function unsupported(command: PlaceOrder): CoreError | null {
  const trigger = misplacedTriggerField(command);
  if (trigger !== null) {
    return refusal('unsupported_arg_combination', `${trigger} applies only to trigger order types`, {
      field: trigger,
    });
  }
  const field =
    command.displayAmount != null
      ? 'displayAmount'
      : command.advanced != null
        ? 'advanced'
        : command.linkedOrderType != null || command.otocoConfig != null
          ? 'linkedOrderType'
          : command.orderType !== 'limit' && command.orderType !== 'market'
            ? 'type'
            : null;
  return field === null
    ? null
    : refusal('invalid_arguments', `${field} is not handled by plain order entry`, { field });
}

/**
 * The shared literal of each time in force and order type. Commands carry fresh strings (from
 * JSON.parse, or from the journal's decoder on replay), and each of the recent closed orders
 * kept for queries would otherwise hold its own copy.
 */
function literals<T extends string>(values: readonly T[]): (value: T) => T {
  const shared = new Map<string, T>(values.map((v) => [v, v]));
  return (value) => shared.get(value) ?? value;
}
const timeInForceLiteral = literals<TimeInForce>([
  'good_til_cancelled',
  'good_til_day',
  'fill_or_kill',
  'immediate_or_cancel',
]);
const orderTypeLiteral = literals<OrderType>([
  'limit',
  'market',
  'stop_limit',
  'stop_market',
  'take_limit',
  'take_market',
  'market_limit',
  'trailing_stop',
]);

export function placeOrder(state: VenueState, command: PlaceOrder): CommandResult {
  const found = lookup(state, command.accountId, command.instrumentName);
  if ('name' in found) return fail(state, 'place_order', command.accountId, found);
  const { account, instrument } = found;
  const error = validatePlace(state, command, account, instrument);
  if (typeof error === 'object' && error !== null && 'name' in error)
    return fail(state, 'place_order', account.id, error);
  const { amount, price } = error as { amount: number; price: number };
  const market = command.orderType === 'market';
  const rests =
    !market && (command.timeInForce === 'good_til_cancelled' || command.timeInForce === 'good_til_day');
  const terms = market ? marketTerms(state, instrument, account, command.side, amount) : null;
  const limit = terms === null ? price : terms.limit;
  const limited = terms === null ? limitTerms(state, instrument, account, command.side, amount, price) : null;
  const reserve = terms?.reserve ?? limited!.reserve;
  const required =
    reserve.amount +
    coverRelease(state, instrument, account, command.side, amount) +
    closingExtra(state, instrument, account, command.side, amount, terms?.price ?? price, reserve.amount);
  if (required > 0) {
    const available = availableFunds(state, account, reserve.currency);
    if (required > available) {
      return fail(state, 'place_order', account.id, fundsShortfall(required, available, reserve.currency));
    }
  }
  let killed = false;
  if (command.timeInForce === 'fill_or_kill') {
    const fillable = fillableLots(state, instrument, account, command.side, limit, amount);
    if (fillable === 'overlap') {
      return fail(
        state,
        'place_order',
        account.id,
        refusal('order_overlap', 'order would trade against an order of the same account', {
          field: 'price',
        }),
      );
    }
    killed = fillable < amount;
  }
  const source = command.source;
  const flags =
    (command.postOnly ? FLAG_POST_ONLY : 0) |
    (command.rejectPostOnly ? FLAG_REJECT_POST_ONLY : 0) |
    (command.reduceOnly ? FLAG_REDUCE_ONLY : 0) |
    (command.mmp ? FLAG_MMP : 0) |
    (command.hidden ? FLAG_HIDDEN : 0) |
    (source.api ? FLAG_API : 0) |
    (source.web ? FLAG_WEB : 0) |
    (source.mobile ? FLAG_MOBILE : 0) |
    (command.isLiquidation ? FLAG_LIQUIDATION : 0);
  const number = ++state.orderNumber;
  const order = new Order(
    `${instrument.instrument.currency}-${number}`,
    number,
    account.id,
    instrument.id,
    instrument.instrument.name,
    instrument.instrument.currency,
    command.side,
    orderTypeLiteral(command.orderType),
    market ? 0 : price,
    amount,
    timeInForceLiteral(command.timeInForce),
    state.now,
    command.label,
    command.owner ?? null,
    flags,
  );
  if (command.codSession != null) order.codSession = command.codSession;
  state.orders.set(order.id, order);
  const trades: TradeView[] = [];
  if (killed) {
    if (terms !== null) order.price = executedMarketPrice(terms.shownLimit, trades, order.id);
    closeOrder(state, order, 'cancel', 'immediate_or_cancel');
  } else {
    const eventsBefore = state.events.length;
    const stopped = match(state, instrument, order, account, limit, trades);
    if (terms !== null) order.price = executedMarketPrice(terms.shownLimit, trades, order.id);
    if (stopped && order.filled === 0) {
      // Self-trade in reject mode before any fill: refuse, as if the order never existed.
      state.orders.delete(order.id);
      state.orderNumber--;
      return fail(
        state,
        'place_order',
        account.id,
        refusal('order_overlap', 'order would trade against an order of the same account', {
          field: 'price',
        }),
      );
    }
    // Nothing happened in matching (no fill, no self-trade cancel): the reserve computed above
    // for the whole amount at the limit is still exact, so resting need not recompute it.
    const unchanged =
      state.events.length === eventsBefore && !market && limited!.price === price ? reserve : null;
    finishTaker(state, instrument, account, order, rests, stopped, true, unchanged);
  }
  const view = order.toView();
  state.events.push({ type: 'order', order: view });
  return { ok: true, events: state.events, order: view, trades };
}

/** After matching: rest the remainder, or cancel it (IOC/market/FOK, or STP in reject mode). */
function finishTaker(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  order: Order,
  rests: boolean,
  stoppedBySelfTrade: boolean,
  queueExpiry = true,
  knownReserve: { currency: string; amount: number } | null = null,
): void {
  if (order.state === 'filled') {
    state.retire(order);
    return;
  }
  if (stoppedBySelfTrade) closeOrder(state, order, 'cancel', 'self_trade_prevention');
  else if (!rests) closeOrder(state, order, 'cancel', 'immediate_or_cancel');
  else {
    const reserve =
      knownReserve ??
      orderReserve(state, instrument, account, order.side, order.amount - order.filled, order.price);
    order.reserved = reserve.amount;
    order.reserveCurrency = reserve.currency;
    order.expiresAt = order.timeInForce === 'good_til_day' ? sessionEnd(order.createdAt) : 0;
    rest(state, instrument, account, order, queueExpiry);
  }
}

function validatePlace(
  state: VenueState,
  command: PlaceOrder,
  account: Account,
  instrument: InstrumentState,
): CoreError | { amount: number; price: number } {
  if (command.validUntil !== null && command.validUntil !== undefined && state.now > command.validUntil) {
    return refusal('timed_out', 'request reached the matching engine after validUntil', {
      field: 'validUntil',
      validUntil: command.validUntil,
      now: state.now,
    });
  }
  if (labelTooLong(command.label))
    return refusal('invalid_params', `label is longer than ${LABEL_MAX_LENGTH} characters`, {
      field: 'label',
    });
  if (!Number.isSafeInteger(command.amount) || command.amount <= 0)
    return refusal('invalid_amount', 'quantity must be positive', { field: 'quantity' });
  const notSupported = unsupported(command);
  if (notSupported !== null) return notSupported;
  const market = command.orderType === 'market';
  if (command.rejectPostOnly && !command.postOnly)
    return refusal('invalid_params', 'rejectPostOnly needs postOnly', { field: 'rejectPostOnly' });
  if (command.postOnly && (market || command.timeInForce !== 'good_til_cancelled')) {
    return refusal('post_only_not_allowed', 'postOnly needs a good_til_cancelled limit order', {
      field: 'postOnly',
    });
  }
  if (market && command.timeInForce === 'good_til_day') {
    return refusal('invalid_arguments', 'market orders cannot rest', { field: 'timeInForce' });
  }
  let price = 0;
  if (!market) {
    if (command.price === null)
      return refusal('invalid_price', 'a limit order needs a price', { field: 'price' });
    const priceError = checkPrice(state, instrument, command.side, command.price);
    if (priceError !== null) return priceError;
    price = command.price;
    if (command.postOnly) {
      const repriced = postOnlyPrice(state, instrument, command.side, price, command.rejectPostOnly);
      if (typeof repriced !== 'number') return repriced;
      price = repriced;
    }
  }
  let amount = command.amount;
  if (command.reduceOnly) {
    const unavailable = reduceOnlyUnavailable(instrument);
    if (unavailable !== null) return unavailable;
    const position = instrument.position(account);
    const pending = command.side === 'buy' ? position.reduceOnlyBuys : position.reduceOnlySells;
    const reducible = reducibleLots(position, command.side) - pending;
    if (reducible <= 0)
      return refusal('reduce_only_violation', 'reduce-only order would increase the position', {
        field: 'reduceOnly',
      });
    if (amount > reducible) amount = reducible;
  }
  const rests =
    !market && (command.timeInForce === 'good_til_cancelled' || command.timeInForce === 'good_til_day');
  if (rests && account.openOrderCount >= account.maxOpenOrders) {
    return refusal('max_open_orders', `at most ${account.maxOpenOrders} open orders`, {
      field: 'accountId',
      limit: account.maxOpenOrders,
    });
  }
  return { amount, price };
}

function ownOpenOrder(state: VenueState, accountId: number, orderId: string): Order | CoreError {
  const order = state.orders.get(orderId);
  if (order === undefined || order.accountId !== accountId) {
    return refusal('order_not_found', `order ${orderId} not found`, { field: 'orderId' });
  }
  if (order.state !== 'open')
    return refusal('not_open_order', `order ${orderId} is ${order.state}`, {
      field: 'orderId',
      orderState: order.state,
    });
  return order;
}

export function cancelOrder(state: VenueState, command: CancelOrder): CommandResult {
  if (state.advanced.active) {
    const waiting = cancelWaiting(state, command);
    if (waiting !== null) return waiting;
  }
  const order = ownOpenOrder(state, command.accountId, command.orderId);
  if (!(order instanceof Order)) return fail(state, 'cancel_order', command.accountId, order);
  const view = cancelResting(
    state,
    state.instrumentList[order.instrumentId]!,
    order,
    command.cancelReason ?? 'user_request',
  );
  return { ok: true, events: state.events, order: view };
}

export function cancelAll(state: VenueState, command: CancelAll): CommandResult {
  const account = state.accounts.get(command.accountId);
  if (account === undefined) {
    return fail(
      state,
      'cancel_all',
      command.accountId,
      refusal('account_not_found', `account ${command.accountId} not found`, { field: 'accountId' }),
    );
  }
  const matches = [...account.openOrders].filter(cancelAllFilter(state, command));
  matches.sort((a, b) => a.number - b.number);
  const cancelled: OrderView[] = [];
  for (const order of matches) {
    cancelled.push(
      cancelResting(
        state,
        state.instrumentList[order.instrumentId]!,
        order,
        command.cancelReason ?? 'user_request',
      ),
    );
  }
  if (state.advanced.active) cancelled.push(...cancelAllWaiting(state, command));
  return { ok: true, events: state.events, orders: cancelled };
}

/** Fields an edit of a plain open order cannot change (untriggered, iceberg and advanced orders are edited by editSpecial). */
function inapplicableEdit(command: EditOrder): CoreError | null {
  const trigger = misplacedTriggerField(command);
  if (trigger !== null) {
    return refusal('unsupported_arg_combination', `${trigger} applies only to untriggered trigger orders`, {
      field: trigger,
    });
  }
  if (command.displayAmount != null)
    return refusal('unsupported_arg_combination', 'displayAmount applies only to iceberg orders', {
      field: 'displayAmount',
    });
  if (command.advanced != null)
    return refusal('unsupported_arg_combination', 'advanced applies only to options', { field: 'advanced' });
  return null;
}

/**
 * An order with an owner (a portfolio's child) is sized by that owner alone: an edit for anyone
 * else (`private/edit` by hand) may re-price or shrink it, never raise its quantity or change an
 * iceberg child's display. A grown child would trade past its leg, at a crossing price at once,
 * before the portfolio could cut it back; a display is the portfolio's `displayQuantity`.
 */
function ownedOrderGrowth(state: VenueState, command: EditOrder): CoreError | null {
  const raises = command.amount !== undefined;
  const displays = command.displayAmount != null;
  if (!raises && !displays) return null;
  const order = state.orders.get(command.orderId);
  if (order === undefined || order.owner === null || order.owner === (command.owner ?? null)) return null;
  if (order.accountId !== command.accountId || (order.state !== 'open' && order.state !== 'untriggered'))
    return null;
  const portfolioId = /^\d+$/.test(order.owner) ? Number(order.owner) : order.owner;
  if (displays) {
    return refusal(
      'invalid_max_show_amount',
      `order ${order.id} belongs to portfolio ${order.owner}: its display is the portfolio's`,
      { field: 'displayAmount', portfolioId },
    );
  }
  if (command.amount! <= order.amount) return null;
  return refusal(
    'invalid_amount',
    `order ${order.id} belongs to portfolio ${order.owner}: its quantity is the portfolio's and cannot be raised`,
    { field: 'quantity', portfolioId },
  );
}

export function editOrder(state: VenueState, command: EditOrder): CommandResult {
  const owned = ownedOrderGrowth(state, command);
  if (owned !== null) return fail(state, 'edit_order', command.accountId, owned);
  if (command.mmp === true) {
    // As on placing: the MMP flag needs the index's MMP config, and not while it is frozen.
    const target = state.orders.get(command.orderId);
    if (target !== undefined && target.accountId === command.accountId && target.state === 'open') {
      const error = mmpRefusal(state, command.accountId, target.currency);
      if (error !== null) return fail(state, 'edit_order', command.accountId, error);
    }
  }
  // Icebergs are edited there too, whether or not anything else makes the advanced state active.
  if (
    state.advanced.active ||
    command.displayAmount != null ||
    command.advanced != null ||
    ((state.orders.get(command.orderId)?.flags ?? 0) & FLAG_ICEBERG) !== 0
  ) {
    const special = editSpecial(state, command);
    if (special !== null) return special;
  }
  return editPlainOrder(state, command);
}

/** The edit of an open order as a plain limit order (editSpecial has dealt with the rest). */
export function editPlainOrder(state: VenueState, command: EditOrder): CommandResult {
  const order = ownOpenOrder(state, command.accountId, command.orderId);
  if (!(order instanceof Order)) return fail(state, 'edit_order', command.accountId, order);
  const instrument = state.instrumentList[order.instrumentId]!;
  const account = state.accounts.get(order.accountId)!;
  if (pastExpiry(state, instrument)) {
    return fail(
      state,
      'edit_order',
      command.accountId,
      refusal('instrument_expired', `instrument ${instrument.instrument.name} has expired`, {
        field: 'orderId',
      }),
    );
  }
  if (command.validUntil != null && state.now > command.validUntil) {
    return fail(
      state,
      'edit_order',
      command.accountId,
      refusal('timed_out', 'request reached the matching engine after validUntil', { field: 'validUntil' }),
    );
  }
  const inapplicable = inapplicableEdit(command);
  if (inapplicable !== null) return fail(state, 'edit_order', command.accountId, inapplicable);
  const amount = command.amount ?? order.amount;
  if (!Number.isSafeInteger(amount) || amount <= order.filled) {
    return fail(
      state,
      'edit_order',
      command.accountId,
      refusal('invalid_amount', 'quantity must exceed the filled quantity', {
        field: 'quantity',
        filledQuantity: instrument.instrument.formatQuantity(order.filled),
      }),
    );
  }
  let price = command.price ?? order.price;
  const priceError = checkPrice(state, instrument, order.side, price);
  if (priceError !== null) return fail(state, 'edit_order', command.accountId, priceError);
  const postOnly = command.postOnly ?? order.has(FLAG_POST_ONLY);
  const rejectPostOnly = command.rejectPostOnly ?? order.has(FLAG_REJECT_POST_ONLY);
  if (command.rejectPostOnly === true && !postOnly) {
    // As on placing (spec 4.3): rejectPostOnly is valid only with postOnly, not dropped silently.
    return fail(
      state,
      'edit_order',
      command.accountId,
      refusal('invalid_params', 'rejectPostOnly needs postOnly', { field: 'rejectPostOnly' }),
    );
  }
  if (postOnly && order.timeInForce !== 'good_til_cancelled') {
    return fail(
      state,
      'edit_order',
      command.accountId,
      refusal('post_only_not_allowed', 'postOnly needs a good_til_cancelled order', { field: 'postOnly' }),
    );
  }
  if (postOnly) {
    // The order rests on its own side, so the opposite touch is unaffected by it.
    const repriced = postOnlyPrice(state, instrument, order.side, price, rejectPostOnly);
    if (typeof repriced !== 'number') {
      if (repriced.name !== 'post_only_reject') return fail(state, 'edit_order', command.accountId, repriced);
      // The edit is refused: the order is cancelled as it stood (not `replaced`, flags unchanged).
      cancelResting(state, instrument, order, 'edit_post_only_reject');
      return { ok: true, events: state.events, order: order.toView(), trades: [] };
    }
    price = repriced;
  }
  const remainingBefore = order.amount - order.filled;
  let newAmount = amount;
  const reduceOnly = command.reduceOnly ?? order.has(FLAG_REDUCE_ONLY);
  const unavailable = reduceOnly ? reduceOnlyUnavailable(instrument) : null;
  if (unavailable !== null) return fail(state, 'edit_order', command.accountId, unavailable);
  const position = instrument.position(account);
  if (reduceOnly) {
    const ownPending = order.has(FLAG_REDUCE_ONLY) ? remainingBefore : 0;
    const pending = (order.side === 'buy' ? position.reduceOnlyBuys : position.reduceOnlySells) - ownPending;
    const reducible = reducibleLots(position, order.side) - pending;
    if (reducible <= 0) {
      return fail(
        state,
        'edit_order',
        command.accountId,
        refusal('reduce_only_violation', 'reduce-only order would increase the position', {
          field: 'reduceOnly',
        }),
      );
    }
    newAmount = Math.min(newAmount, order.filled + reducible);
  }
  // An option's or combo's own open lots are no other order's claim on the position: leave them
  // out while reserving, as resting it again does (lots that only reduce an option position are
  // valued exactly and can cost more than opening ones). Elsewhere counting them only reserves more.
  const ownLots =
    instrument.economics.isOption || instrument.instrument.spec.legs !== null ? remainingBefore : 0;
  if (ownLots > 0) changeOpenLots(state, instrument, account, position, order.side, -ownLots, order);
  // Crossing with no band, at the worse of its limit and the touch (`limitTerms`); one that keeps
  // its priority does not cross, and is reserved at its limit.
  const { reserve } = limitTerms(state, instrument, account, order.side, newAmount - order.filled, price);
  if (ownLots > 0) changeOpenLots(state, instrument, account, position, order.side, ownLots, order);
  // The order's own open lots are committed already; only more of them can uncover shorts.
  const more = newAmount - order.filled - remainingBefore;
  // Grown, it rests again at its number: it pays the larger of its reserve there and as the newest.
  const ownReserve =
    more > 0
      ? Math.max(
          reserve.amount,
          grownReserve(state, instrument, account, order, newAmount - order.filled, price),
        )
      : reserve.amount;
  const required =
    ownReserve +
    coverRelease(state, instrument, account, order.side, more) +
    closingExtra(
      state,
      instrument,
      account,
      order.side,
      newAmount - order.filled,
      price,
      reserve.amount,
      order,
    ) +
    // Grown at its number, it claims before the younger orders: those it pushes out pay too.
    entryExtra(state, instrument, account, order, more);
  if (required > 0) {
    const own = order.reserveCurrency === reserve.currency ? order.reserved : 0;
    const available = availableFunds(state, account, reserve.currency) + own;
    if (required > available) {
      return fail(
        state,
        'edit_order',
        command.accountId,
        fundsShortfall(required, available, reserve.currency),
      );
    }
  }
  const flags =
    (order.flags &
      ~(FLAG_POST_ONLY | FLAG_REJECT_POST_ONLY | FLAG_REDUCE_ONLY | FLAG_MMP | FLAG_AUTO_REPLACED)) |
    (postOnly ? FLAG_POST_ONLY : 0) |
    (postOnly && rejectPostOnly ? FLAG_REJECT_POST_ONLY : 0) |
    (reduceOnly ? FLAG_REDUCE_ONLY : 0) |
    ((command.mmp ?? order.has(FLAG_MMP)) ? FLAG_MMP : 0) |
    (command.autoReplaced === true ? FLAG_AUTO_REPLACED : 0) |
    FLAG_REPLACED;
  const trades: TradeView[] = [];
  if (price === order.price && newAmount <= order.amount) {
    // Priority kept: adjust in place.
    const shrink = order.amount - newAmount;
    const remainingAfter = remainingBefore - shrink;
    order.level!.reduce(order, shrink);
    changeOpenLots(state, instrument, account, position, order.side, -shrink, order);
    const roBefore = order.has(FLAG_REDUCE_ONLY) ? remainingBefore : 0;
    const roAfter = reduceOnly ? remainingAfter : 0;
    if (order.side === 'buy') position.reduceOnlyBuys += roAfter - roBefore;
    else position.reduceOnlySells += roAfter - roBefore;
    if (order.reserved !== 0) account.ledger(order.reserveCurrency).reserved -= order.reserved;
    order.reserved = reserve.amount;
    order.reserveCurrency = reserve.currency;
    if (reserve.amount !== 0) account.ledger(reserve.currency).reserved += reserve.amount;
    order.flags = flags;
    order.amount = newAmount;
    order.lastUpdatedAt = state.now;
  } else {
    // Priority lost: out of the book, then in again as a new arrival (it may trade).
    unrest(state, instrument, order);
    order.flags = flags;
    order.amount = newAmount;
    order.price = price;
    order.lastUpdatedAt = state.now;
    const stopped = match(state, instrument, order, account, price, trades);
    finishTaker(state, instrument, account, order, true, stopped, false);
    // Back in its claim queues at its number, with more lots: the younger orders behind it claim later.
    if (order.level !== null)
      noteClaimEntry(state, instrument, account, order, order.amount - order.filled - remainingBefore);
  }
  const view = order.toView();
  state.events.push({ type: 'order', order: view });
  return { ok: true, events: state.events, order: view, trades };
}
