/**
 * Advanced options orders (`advanced` usd / implv): the price in ticks for a USD amount or an
 * IV percent, and the re-pricing of resting ones when prices move.
 *
 * Invariants:
 * - usd (inverse options only): ticks = nearest valid tick of usd / index.
 * - implv: Black-76 on the forward of the expiry (the index × the forward factor the market
 *   last published with the option's mark; the index alone before any) and the time to expiry
 *   from the command time, in coin for inverse options (USD value / forward, as the marks);
 *   nearest valid tick, at least one tick.
 * - Refused within 15 minutes of expiry; resting ones are cancelled then (`settlement`).
 * - Re-pricing edits the order in place only when its tick changes (`replaced`,
 *   `autoReplaced`); an edit the engine refuses (band, funds) leaves the order as it was and
 *   leaves no trace in the events.
 */
import type { CoreError } from '../core/events.ts';
import type { AdvancedKind } from '../core/types.ts';
import { black76Price, yearsBetween } from '../market/black76.ts';
import { cancelResting } from './matching.ts';
import { type InstrumentState, refusal, type VenueState } from './state.ts';
import { editOrder } from './trading.ts';

export const ADVANCED_EXPIRY_CUTOFF_MS = 15 * 60 * 1000;

/** Ticks for an advanced option price, or an error. */
export function advancedTicks(
  state: VenueState,
  instrument: InstrumentState,
  kind: AdvancedKind,
  value: number,
): number | CoreError {
  const spec = instrument.instrument.spec;
  if (spec.kind !== 'option')
    return refusal('no_adv_for_futures', 'advanced orders are for options only', { field: 'advanced' });
  if (!Number.isFinite(value) || value <= 0)
    return refusal('invalid_price', 'advanced price must be a positive number', { field: 'price' });
  if (kind === 'usd' && spec.marginKind === 'linear')
    return refusal('invalid_args_for_instrument', 'advanced=usd is not available for linear options', {
      field: 'advanced',
    });
  const index = state.indexPrice(instrument.instrument.currency);
  if (index === null || index <= 0) return refusal('invalid_price', 'no index price yet', { field: 'price' });
  const expiry = spec.expiration ?? 0;
  if (expiry - state.now < ADVANCED_EXPIRY_CUTOFF_MS)
    return refusal('outdated_instrument_for_iv_order', 'advanced orders close 15 minutes before expiry', {
      field: 'advanced',
    });
  let quote: number;
  if (kind === 'usd') quote = value / index;
  else {
    const forward = index * (state.advanced.greeks.get(spec.name)?.forwardFactor ?? 1);
    const usd = black76Price({
      optionType: spec.optionType!,
      forward,
      strike: Number(spec.strike),
      timeToExpiry: yearsBetween(state.now, expiry),
      volatility: value / 100,
    });
    quote = spec.marginKind === 'inverse' ? usd / forward : usd;
  }
  const grid = instrument.instrument.priceGrid;
  let ticks = Math.max(1, grid.fromNumber(quote));
  const step = instrument.instrument.tickAt(ticks);
  if (step !== 1) ticks = Math.max(step, Math.round(ticks / step) * step);
  while (!instrument.instrument.isOnTick(ticks)) ticks++;
  return ticks;
}

/** After an index move: every resting advanced order at its current model price. */
export function repriceAdvanced(state: VenueState): void {
  const values = state.advanced.advancedValues;
  const ids = [...values.keys()];
  for (const id of ids) {
    const order = state.orders.get(id);
    const x = order?.extras;
    if (
      order === undefined ||
      order.state !== 'open' ||
      order.level === null ||
      x == null ||
      x.advanced === null
    ) {
      values.delete(id);
      continue;
    }
    const instrument = state.instrumentList[order.instrumentId]!;
    const expiry = instrument.instrument.spec.expiration ?? 0;
    if (expiry - state.now < ADVANCED_EXPIRY_CUTOFF_MS) {
      values.delete(id);
      cancelResting(state, instrument, order, 'settlement');
      continue;
    }
    const ticks = advancedTicks(state, instrument, x.advanced, values.get(id)!);
    if (typeof ticks !== 'number' || ticks === order.price) continue;
    const mark = state.events.length;
    const result = editOrder(state, {
      type: 'edit_order',
      seq: 0,
      ts: state.now,
      accountId: order.accountId,
      orderId: order.id,
      price: ticks,
      autoReplaced: true,
    });
    if (!result.ok) state.events.length = mark;
    else if (order.state !== 'open') values.delete(id);
  }
}
