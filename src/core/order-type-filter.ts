/**
 * Deribit's order-type filters, on an order's current type (a triggered stop is a `limit` or
 * `market` order again): `type` of get_open_orders* and of cancel_all_by_currency/_by_instrument.
 * Cancels take the short names `stop` and `take` for `stop_all` and `take_all`, as Deribit's do.
 */
import type { OrderType } from './types.ts';

const isStop = (t: OrderType) => t === 'stop_limit' || t === 'stop_market';
const isTake = (t: OrderType) => t === 'take_limit' || t === 'take_market';

export const ORDER_TYPE_FILTERS = {
  all: () => true,
  limit: (t: OrderType) => t === 'limit',
  trigger_all: (t: OrderType) => isStop(t) || isTake(t) || t === 'trailing_stop',
  stop_all: isStop,
  stop: isStop,
  stop_limit: (t: OrderType) => t === 'stop_limit',
  stop_market: (t: OrderType) => t === 'stop_market',
  take_all: isTake,
  take: isTake,
  take_limit: (t: OrderType) => t === 'take_limit',
  take_market: (t: OrderType) => t === 'take_market',
  trailing_all: (t: OrderType) => t === 'trailing_stop',
  trailing_stop: (t: OrderType) => t === 'trailing_stop',
} satisfies Record<string, (type: OrderType) => boolean>;

export type OrderTypeFilter = keyof typeof ORDER_TYPE_FILTERS;

/** The `type` values of get_open_orders*. */
export const OPEN_ORDER_TYPES = [
  'all',
  'limit',
  'trigger_all',
  'stop_all',
  'stop_limit',
  'stop_market',
  'take_all',
  'take_limit',
  'take_market',
  'trailing_all',
  'trailing_stop',
] as const satisfies readonly OrderTypeFilter[];

/** The `type` values of cancel_all_by_currency and cancel_all_by_instrument. */
export const CANCEL_ORDER_TYPES = [
  'all',
  'limit',
  'trigger_all',
  'stop',
  'take',
  'trailing_stop',
] as const satisfies readonly OrderTypeFilter[];
