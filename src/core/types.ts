/**
 * Vocabulary shared by the core's commands, events and the engine.
 *
 * Units (everything inside the core is an integer unless stated):
 * - price: count of the instrument's finest tick (`Instrument.priceGrid`), "ticks".
 * - amount: count of the instrument's lot (`Instrument.amountGrid`, the min trade amount), "lots".
 *   Amounts are in the spec's `quantity` units (USD for inverse futures/perpetuals, base coin
 *   for options, linear products and spot); `contracts` are converted at the edge.
 * - money: count of a currency's minor unit (`currencyDecimals`), "minor units", e.g. satoshi.
 * - time: ms since epoch, taken from the command stamp, never from a clock.
 * - index prices are plain numbers (USD per coin, display/margin/fee input only); mark prices
 *   are integer ticks of the instrument.
 */
import { formatScaled } from '../domain/decimal.ts';

export type Side = 'buy' | 'sell';

/** Every order type of spec 4.3; trigger types are accepted by the contract, finished later. */
export type OrderType =
  | 'limit'
  | 'market'
  | 'stop_limit'
  | 'stop_market'
  | 'take_limit'
  | 'take_market'
  | 'market_limit'
  | 'trailing_stop';

/** Types that trade as market orders once live or triggered (their view shows no price). */
export function isMarketLike(type: OrderType): boolean {
  return type === 'market' || type === 'stop_market' || type === 'take_market' || type === 'trailing_stop';
}

export type TimeInForce = 'good_til_cancelled' | 'good_til_day' | 'fill_or_kill' | 'immediate_or_cancel';

/** Spec section 3. `untriggered` is reserved for trigger orders. */
export type OrderState = 'open' | 'filled' | 'rejected' | 'cancelled' | 'untriggered';

/**
 * Why an order left the book. Deribit's values plus the ones this engine produces itself:
 * `immediate_or_cancel` (IOC/market remainder, unfillable FOK), `good_til_day` (session end),
 * `self_trade_prevention` (a resting order cancelled by STP, or a taker remainder in reject mode),
 * `reduce_only` (a reduce-only order left with nothing to reduce), `settlement` (expiry),
 * `algorithm` (a portfolio algorithm withdrew its child order: a slice roll-over, a re-price by
 * cancel, the portfolio's end; a user's cancel of the portfolio keeps `user_request`).
 */
export type CancelReason =
  | 'user_request'
  | 'algorithm'
  | 'immediate_or_cancel'
  | 'good_til_day'
  | 'self_trade_prevention'
  | 'reduce_only'
  | 'settlement'
  | 'edit_post_only_reject'
  | 'mmp_trigger'
  | 'oco_other_closed'
  | 'oto_primary_closed'
  | 'cancel_on_disconnect'
  | 'risk_mitigation'
  | 'autoliquidation'
  | 'position_locked'
  /**
   * Rejections of an order that fires (a trigger) or is released (a linked secondary), named as
   * placing it then would have been refused: its account at the open-order limit, its instrument
   * expired, a reduce-only order with nothing left to reduce, a post-only order that would take
   * (or has no price inside the spread), its account short of funds, at its waiting trigger
   * orders limit, a sell trailing stop that would start at or below zero, a market_limit with no
   * opposite side or its best price outside the band.
   */
  | 'max_open_orders'
  | 'instrument_expired'
  | 'reduce_only_violation'
  | 'post_only_reject'
  | 'post_only_price_modification_not_possible'
  | 'not_enough_funds'
  | 'no_more_triggers'
  | 'invalid_trigger_price'
  | 'no_liquidity'
  | 'price_too_high'
  | 'price_too_low';

/** Self-trade prevention: cancel the resting order (default) or refuse the incoming one. */
export type SelfTradeMode = 'cancel_maker' | 'reject_taker';

export type Liquidity = 'M' | 'T';

/** 0 plus tick, 1 zero-plus tick, 2 minus tick, 3 zero-minus tick (spec 2.7). */
export type TickDirection = 0 | 1 | 2 | 3;

export type TriggerKind = 'index_price' | 'mark_price' | 'last_price';
export type AdvancedKind = 'usd' | 'implv';
export type LinkedOrderType = 'one_triggers_other' | 'one_cancels_other' | 'one_triggers_one_cancels_other';
export type TriggerFillCondition = 'first_hit' | 'complete_fill' | 'incremental';

/** Where a request came from (Order `api`, `web`, `mobile`). */
export interface OrderSource {
  readonly api: boolean;
  readonly web?: boolean;
  readonly mobile?: boolean;
}

/** Minor-unit decimals per currency; anything not listed uses 8. */
const CURRENCY_DECIMALS: Readonly<Record<string, number>> = {
  BTC: 8,
  ETH: 8,
  SOL: 8,
  USDC: 6,
  USDT: 6,
  EURR: 6,
  USD: 6,
};

export function currencyDecimals(currency: string): number {
  return CURRENCY_DECIMALS[currency] ?? 8;
}

/** Minor units of `currency` as the wire's decimal string. */
export function formatMoney(minorUnits: number, currency: string): string {
  return formatScaled(minorUnits, currencyDecimals(currency));
}

/** More than `max` characters, counted in code points (an emoji is one), not UTF-16 units. */
export function longerThan(text: string, max: number): boolean {
  if (text.length <= max) return false;
  let count = 0;
  for (const _ of text) if (++count > max) return true;
  return false;
}

/** Labels are limited in characters (code points), not UTF-16 units. */
export function labelTooLong(label: string): boolean {
  return longerThan(label, LABEL_MAX_LENGTH);
}

export const LABEL_MAX_LENGTH = 64;
