/**
 * Prices for advanced option orders (`advanced: usd | implv`) and algorithm legs (`priceIn`),
 * as integer ticks of the instrument.
 *
 * - `usd`: the option price in USD, converted to the coin with the current index (inverse
 *   options only; Deribit offers no USD orders on linear options).
 * - `implv`: implied volatility in percent (100 = 100%), priced with Black-76 on the expiry's
 *   forward (conversions.ts). Refused within 15 minutes of expiry (Deribit: IV orders are
 *   cancelled 15 min before expiry; new ones are outdated).
 * The result snaps to the NEAREST valid tick at its level (0.0005 above 0.005 for inverse
 * options) and is at least one tick. The pricing engine calls this again when the market moves
 * and edits the resting order (autoReplaced) when the tick result changes.
 *
 * Refusals carry an error-catalogue name; they are results, not exceptions.
 */
import type { ErrorName } from '../domain/errors.ts';
import type { Instrument } from '../domain/instrument.ts';
import { convertPriceIn, quotePriceFromUsd, quotePriceFromVolatility } from './conversions.ts';
import type { MarketState } from './market-state.ts';

export const IV_ORDER_CUTOFF_MS = 15 * 60 * 1000;

export type TickPriceResult =
  | { readonly ok: true; readonly price: number }
  | { readonly ok: false; readonly error: ErrorName; readonly message: string };

/** Nearest valid tick (finest-tick count) to a price in the quote currency. */
export function nearestTick(instrument: Instrument, price: number): number {
  const raw = price / Number(instrument.spec.tickSize);
  const ticks = Math.round(raw);
  const step = instrument.tickAt(ticks);
  if (step === 1) return ticks;
  const snapped = Math.round(raw / step) * step;
  // Snapping down may cross into the finer-tick region; that price is valid there too.
  return instrument.isOnTick(snapped) ? snapped : ticks;
}

function refuse(error: ErrorName, message: string): TickPriceResult {
  return { ok: false, error, message };
}

function optionContext(instrument: Instrument, state: MarketState) {
  const spec = instrument.spec;
  const mark = state.mark(spec.name);
  if (mark === undefined || spec.expiration === null) return null;
  return {
    optionType: spec.optionType ?? 'call',
    marginKind: spec.marginKind,
    strike: Number(spec.strike),
    forward: mark.underlyingPrice,
    index: state.index(spec.baseCurrency),
    timeToExpiry: mark.timeToExpiry ?? 0,
  };
}

/** Ticks for an advanced order's `price` (USD amount or IV percent). */
export function advancedOrderPrice(
  instrument: Instrument,
  state: MarketState,
  advanced: 'usd' | 'implv',
  value: number,
): TickPriceResult {
  const spec = instrument.spec;
  if (spec.kind !== 'option') return refuse('no_adv_for_futures', 'advanced orders are for options only');
  if (!Number.isFinite(value) || value <= 0)
    return refuse('invalid_price', 'advanced price must be a positive number');
  if (advanced === 'usd' && spec.marginKind === 'linear') {
    return refuse('invalid_args_for_instrument', 'advanced=usd is not available for linear options');
  }
  const context = optionContext(instrument, state);
  if (context === null) return refuse('instrument_expired', `${spec.name} has expired`);
  let quotePrice: number;
  if (advanced === 'usd') {
    quotePrice = quotePriceFromUsd(context, value);
  } else {
    if (spec.expiration! - state.time < IV_ORDER_CUTOFF_MS) {
      return refuse(
        'outdated_instrument_for_iv_order',
        'IV orders are not accepted within 15 minutes of expiry',
      );
    }
    quotePrice = quotePriceFromVolatility(context, value / 100);
  }
  return { ok: true, price: Math.max(1, nearestTick(instrument, quotePrice)) };
}

/**
 * Ticks for a portfolio leg price given in `priceIn` units (USD, USDT, USDC, the base coin, IV
 * percent). Non-option prices snap to the nearest tick; options as for advanced orders.
 */
export function priceInToTicks(
  instrument: Instrument,
  state: MarketState,
  priceIn: string,
  value: number,
): TickPriceResult {
  const spec = instrument.spec;
  if (!Number.isFinite(value)) return refuse('invalid_price', 'price must be a finite number');
  const option = spec.kind === 'option' ? optionContext(instrument, state) : null;
  if (spec.kind === 'option' && option === null)
    return refuse('instrument_expired', `${spec.name} has expired`);
  const converted = convertPriceIn(
    { baseCurrency: spec.baseCurrency, quoteCurrency: spec.quoteCurrency, option },
    state.index(spec.baseCurrency),
    priceIn,
    value,
  );
  if (!converted.ok) return refuse('invalid_arguments', converted.message);
  const ticks = nearestTick(instrument, converted.quotePrice);
  return { ok: true, price: spec.kind === 'option' ? Math.max(1, ticks) : ticks };
}
