/**
 * Wire params → core order commands (spec 4.3, 4.4). Pure: parses decimals on the instrument's
 * grids and applies the spec's rules; every refusal names its field.
 *
 * Rules:
 * - Size: `quantity` or `contracts` is required; both given must denote the same lot count.
 * - `timeInforce` and `timeInForce` are both accepted; given both, they must agree.
 * - `price` is required for limit-style orders (limit, stop_limit, take_limit) and refused
 *   (`unsupported_arg_combination`) on the market types, on placing, in an `otocoConfig` entry
 *   and in an edit of an order of such a type (spec 4.3: "for limit and stop_limit only").
 *   With `advanced` (options) it is the order's USD or IV price instead.
 * - `rejectPostOnly` needs `postOnly`; `postOnly` needs good_til_cancelled (spec 4.3).
 * - `displayAmount`: at least 100 × the instrument minimum, and quantity/display below 100.
 */
import type { EditOrder, OtocoOrderConfig, PlaceOrder } from '../../core/commands.ts';
import type { OrderType, Side, TimeInForce } from '../../core/types.ts';
import { VenueError } from '../../domain/errors.ts';
import type { Instrument } from '../../domain/instrument.ts';
import type { EditOrderParams, PlaceOrderParams } from '../schemas/methods.ts';

type Unstamped<C> = Omit<C, 'seq' | 'ts'>;

const PRICED_TYPES: ReadonlySet<OrderType> = new Set(['limit', 'stop_limit', 'take_limit']);
/** Types that take no `price` (spec 4.3); market_limit takes the best opposite price. */
const UNPRICED_TYPES: ReadonlySet<OrderType> = new Set([
  'market',
  'market_limit',
  'stop_market',
  'take_market',
  'trailing_stop',
]);

function misplacedPrice(orderType: OrderType, field: string): VenueError {
  return new VenueError('unsupported_arg_combination', `price does not apply to ${orderType} orders`, {
    field,
  });
}

const TRIGGER_TYPES: ReadonlySet<OrderType> = new Set([
  'stop_limit',
  'stop_market',
  'take_limit',
  'take_market',
  'trailing_stop',
]);

export function resolveLots(
  instrument: Instrument,
  quantity: string | null | undefined,
  contracts: string | null | undefined,
): number {
  const fromQuantity = quantity == null ? null : instrument.parseQuantity(quantity, 'quantity');
  const fromContracts = contracts == null ? null : instrument.parseContracts(contracts, 'contracts');
  if (fromQuantity === null && fromContracts === null) {
    throw new VenueError('missing_params', 'quantity or contracts is required', { field: 'quantity' });
  }
  if (fromQuantity !== null && fromContracts !== null && fromQuantity !== fromContracts) {
    throw new VenueError(
      'invalid_params',
      `contracts ${contracts} is ${instrument.formatQuantity(fromContracts)} in quantity, not ${quantity}`,
      { field: 'contracts', quantityFromContracts: instrument.formatQuantity(fromContracts) },
    );
  }
  return (fromQuantity ?? fromContracts)!;
}

export function resolveTimeInForce(
  lower: TimeInForce | null | undefined,
  upper: TimeInForce | null | undefined,
  field = 'timeInForce',
): TimeInForce {
  if (lower != null && upper != null && lower !== upper) {
    throw new VenueError('invalid_params', 'timeInforce and timeInForce disagree', { field });
  }
  return lower ?? upper ?? 'good_til_cancelled';
}

/**
 * An advanced order's price: a positive decimal (USD or IV percent) of at most 9 integer digits
 * and 6 decimals, kept as a number. Fifteen significant digits are what a double always prints
 * back as the plain decimal it was (no exponent form, no digit lost on the order's `usd`/`implv`).
 */
function advancedValueOf(text: string): number {
  const value = Number(text);
  if (!/^\d{1,9}(\.\d{1,6})?$/.test(text) || !(value > 0))
    throw new VenueError(
      'invalid_price',
      'advanced price must be a positive decimal of at most 9 digits and 6 decimals',
      { field: 'price' },
    );
  return value;
}

function optionalPrice(
  instrument: Instrument,
  text: string | null | undefined,
  field: string,
): number | null {
  return text == null ? null : instrument.parsePrice(text, field);
}

function checkDisplayAmount(instrument: Instrument, displayLots: number | null, totalLots: number): void {
  if (displayLots === null) return;
  if (displayLots < 100) {
    throw new VenueError(
      'invalid_max_show_amount',
      'displayAmount must be at least 100 times the minimum amount',
      {
        field: 'displayAmount',
        minimum: instrument.formatQuantity(100),
      },
    );
  }
  // Spec 4.3: the hidden part (what the display does not show) below 100 times the display.
  if (totalLots - displayLots >= displayLots * 100) {
    throw new VenueError('invalid_max_show_amount', 'the hidden-to-visible ratio must be below 100', {
      field: 'displayAmount',
    });
  }
}

export function toPlaceOrder(
  params: PlaceOrderParams,
  side: Side,
  accountId: number,
  instrument: Instrument,
): Unstamped<PlaceOrder> {
  const orderType: OrderType = params.type ?? 'limit';
  const amount = resolveLots(instrument, params.quantity, params.contracts);
  const timeInForce = resolveTimeInForce(params.timeInforce, params.timeInForce);
  let price: number | null = null;
  let advancedValue: number | null = null;
  if (params.advanced != null && instrument.isOption) {
    // Advanced options orders: `price` is USD (usd) or IV percent (implv), priced by the engine.
    if (params.price == null)
      throw new VenueError('missing_params', 'price is required for advanced orders', { field: 'price' });
    advancedValue = advancedValueOf(params.price);
  } else if (PRICED_TYPES.has(orderType)) {
    if (params.price == null)
      throw new VenueError('missing_params', `price is required for ${orderType}`, { field: 'price' });
    price = instrument.parsePrice(params.price, 'price');
  } else if (params.price != null) {
    throw misplacedPrice(orderType, 'price');
  }
  if (params.advanced != null && !instrument.isOption) {
    throw new VenueError('no_adv_for_futures', undefined, { field: 'advanced' });
  }
  const postOnly = params.postOnly ?? false;
  const rejectPostOnly = params.rejectPostOnly ?? false;
  if (rejectPostOnly && !postOnly) {
    throw new VenueError('invalid_params', 'rejectPostOnly needs postOnly', { field: 'rejectPostOnly' });
  }
  if (postOnly && timeInForce !== 'good_til_cancelled') {
    throw new VenueError('post_only_not_allowed', 'postOnly is valid only with good_til_cancelled', {
      field: 'postOnly',
    });
  }
  if (params.mmp && orderType !== 'limit') {
    throw new VenueError('invalid_params', 'mmp is only for limit orders', { field: 'mmp' });
  }
  const isTrigger = TRIGGER_TYPES.has(orderType);
  if (isTrigger && params.trigger == null) {
    throw new VenueError('missing_params', `trigger is required for ${orderType}`, { field: 'trigger' });
  }
  const displayAmount =
    params.displayAmount == null ? null : instrument.parseQuantity(params.displayAmount, 'displayAmount');
  checkDisplayAmount(instrument, displayAmount, amount);
  return {
    type: 'place_order',
    accountId,
    instrumentName: instrument.name,
    side,
    orderType,
    amount,
    price,
    timeInForce,
    postOnly,
    rejectPostOnly,
    reduceOnly: params.reduceOnly ?? false,
    label: params.label ?? '',
    validUntil: params.validUntil ?? null,
    source: { api: true },
    displayAmount,
    mmp: params.mmp ?? false,
    trigger: params.trigger ?? null,
    triggerPrice: optionalPrice(instrument, params.triggerPrice, 'triggerPrice'),
    triggerOffset: optionalPrice(instrument, params.triggerOffset, 'triggerOffset'),
    advanced: params.advanced ?? null,
    advancedValue,
    linkedOrderType: params.linkedOrderType ?? null,
    triggerFillCondition: params.triggerFillCondition ?? null,
    otocoConfig:
      params.otocoConfig == null
        ? null
        : params.otocoConfig.map((entry, index) => toOtoco(entry, index, instrument)),
  };
}

function toOtoco(
  entry: NonNullable<PlaceOrderParams['otocoConfig']>[number],
  index: number,
  instrument: Instrument,
): OtocoOrderConfig {
  const at = (field: string) => `otocoConfig[${index}].${field}`;
  if (entry.price != null && entry.type != null && UNPRICED_TYPES.has(entry.type))
    throw misplacedPrice(entry.type, at('price'));
  return {
    side: entry.side,
    ...(entry.quantity != null ? { amount: instrument.parseQuantity(entry.quantity, at('quantity')) } : {}),
    ...(entry.type != null ? { orderType: entry.type } : {}),
    ...(entry.label != null ? { label: entry.label } : {}),
    price: optionalPrice(instrument, entry.price, at('price')),
    ...(entry.reduceOnly != null ? { reduceOnly: entry.reduceOnly } : {}),
    timeInForce: resolveTimeInForce(entry.timeInforce, entry.timeInForce, at('timeInForce')),
    ...(entry.postOnly != null ? { postOnly: entry.postOnly } : {}),
    ...(entry.rejectPostOnly != null ? { rejectPostOnly: entry.rejectPostOnly } : {}),
    triggerPrice: optionalPrice(instrument, entry.triggerPrice, at('triggerPrice')),
    triggerOffset: optionalPrice(instrument, entry.triggerOffset, at('triggerOffset')),
    trigger: entry.trigger ?? null,
  };
}

/**
 * `orderType`: the edited order's type where the caller knows it (the gateway reads it), so a
 * `price` sent for an order that takes none (an untriggered stop_market, take_market or
 * trailing_stop) is refused rather than ignored.
 */
export function toEditOrder(
  params: EditOrderParams,
  accountId: number,
  instrument: Instrument,
  orderType?: OrderType,
): Unstamped<EditOrder> {
  const amount = resolveLots(instrument, params.quantity, params.contracts);
  if (
    params.price != null &&
    params.advanced == null &&
    orderType !== undefined &&
    UNPRICED_TYPES.has(orderType)
  )
    throw misplacedPrice(orderType, 'price');
  if (params.rejectPostOnly && params.postOnly === false) {
    throw new VenueError('invalid_params', 'rejectPostOnly needs postOnly', { field: 'rejectPostOnly' });
  }
  if (params.advanced != null && !instrument.isOption) {
    throw new VenueError('no_adv_for_futures', undefined, { field: 'advanced' });
  }
  const displayText = params.displayAmount == null ? null : String(params.displayAmount);
  const displayAmount = displayText === null ? null : instrument.parseQuantity(displayText, 'displayAmount');
  checkDisplayAmount(instrument, displayAmount, amount);
  const command: { -readonly [K in keyof Unstamped<EditOrder>]: Unstamped<EditOrder>[K] } = {
    type: 'edit_order',
    accountId,
    orderId: params.orderId,
    amount,
  };
  if (params.advanced != null) {
    if (params.price == null)
      throw new VenueError('missing_params', 'price is required for advanced orders', { field: 'price' });
    command.advanced = params.advanced;
    command.advancedValue = advancedValueOf(params.price);
  } else if (params.price != null) command.price = instrument.parsePrice(params.price, 'price');
  if (params.postOnly != null) command.postOnly = params.postOnly;
  if (params.rejectPostOnly != null) command.rejectPostOnly = params.rejectPostOnly;
  if (params.reduceOnly != null) command.reduceOnly = params.reduceOnly;
  if (params.validUntil != null) command.validUntil = params.validUntil;
  if (params.triggerPrice != null)
    command.triggerPrice = instrument.parsePrice(params.triggerPrice, 'triggerPrice');
  if (params.triggerOffset != null)
    command.triggerOffset = instrument.parsePrice(params.triggerOffset, 'triggerOffset');
  if (params.mmp != null) command.mmp = params.mmp;
  if (displayAmount !== null) command.displayAmount = displayAmount;
  return command;
}
