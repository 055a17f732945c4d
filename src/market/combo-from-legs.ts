/**
 * The combo a list of leg trades describes (Deribit's `private/create_combo`): two legs, ratio
 * 1:1, each bought or sold as it is when the combo is bought. The legs may also be a combo's
 * exact opposite (a straddle's legs both sold, a perpetual bought against a dated future sold):
 * that is the combo sold, and `sold` says so. The naming is `comboIdOf`'s, shared with Block RFQs
 * and COMMON portfolios.
 */
import { parseDecimal, type ScaledDecimal } from '../domain/decimal.ts';
import type { Instrument } from '../domain/instrument.ts';
import { comboIdOf, comboLegs, parseComboName } from './combos.ts';

export interface LegTrade {
  readonly instrumentName: string;
  readonly direction: 'buy' | 'sell';
  /** The leg's size when given; the legs' sizes must then be equal (ratio 1:1). */
  readonly amount?: string | null;
}

export type ComboForLegs =
  | { readonly ok: true; readonly name: string; readonly sold: boolean }
  | { readonly ok: false; readonly field: string; readonly message: string };

const KINDS =
  "the venue's combos have two legs, ratio 1:1: a call or put spread (one option bought and one sold, of one expiry and type), a straddle (a call and a put of one strike and expiry, both bought or both sold) or an inverse future spread (one future or perpetual bought and one sold)";

export function comboForLegs(
  trades: readonly LegTrade[],
  lookup: (name: string) => Instrument | undefined,
): ComboForLegs {
  if (trades.length !== 2) return refuse('trades', `${KINDS}; ${trades.length} legs given`);
  const instruments: Instrument[] = [];
  for (const [index, trade] of trades.entries()) {
    const instrument = lookup(trade.instrumentName);
    const field = `trades[${index}].instrumentName`;
    if (instrument === undefined) return refuse(field, `unknown instrument ${trade.instrumentName}`);
    if (instrument.spec.legs !== null) return refuse(field, `${trade.instrumentName} is a combo, not a leg`);
    instruments.push(instrument);
  }
  // One instrument bought and sold is no combo (a dated future's would name `…-FS-X_X`).
  if (trades[0]!.instrumentName === trades[1]!.instrumentName) {
    return refuse('trades[1].instrumentName', `${KINDS}; both legs are ${trades[1]!.instrumentName}`);
  }
  const amounts = unequalAmounts(trades);
  if (amounts !== null) return amounts;
  const legs = trades.map((trade) => ({ side: trade.direction, ratio: 1 }));
  const name = comboIdOf(legs, instruments);
  const request = name === null ? null : parseComboName(name);
  if (name === null || request === null) return refuse('trades', KINDS);
  const sold = !comboLegs(request).every((leg) =>
    trades.some(
      (trade) => trade.instrumentName === leg.instrumentName && (trade.direction === 'buy') === leg.ratio > 0,
    ),
  );
  return { ok: true, name, sold };
}

function refuse(field: string, message: string): ComboForLegs {
  return { ok: false, field, message };
}

function unequalAmounts(trades: readonly LegTrade[]): ComboForLegs | null {
  let first: ScaledDecimal | null = null;
  for (const [index, trade] of trades.entries()) {
    if (trade.amount == null) continue;
    const field = `trades[${index}].amount`;
    const amount = parseDecimal(trade.amount, field);
    if (amount.units <= 0n) return refuse(field, `${field} must be positive`);
    if (first === null) first = amount;
    else if (first.units !== amount.units || first.scale !== amount.scale) {
      return refuse(field, "the legs' amounts must be equal: the venue's combos trade their legs 1:1");
    }
  }
  return null;
}
