/**
 * Option spread offsets: a short option covered by a long option of the same underlying,
 * settlement currency, expiry, type and lot needs only what the pair can lose at expiry, never
 * more than its naked margin.
 *
 * Per covered lot pair (short strike Ks, long strike Kl):
 * - calls: Kl ≤ Ks loses nothing; Kl > Ks loses (Kl − Ks) per unit of underlying in USD, or
 *   (Kl − Ks) / Kl coin for coin-settled (inverse) options, whose worst price is Kl.
 * - puts: Kl ≥ Ks loses nothing; Kl < Ks loses (Ks − Kl) in USD. A coin-settled put spread's coin
 *   loss grows without bound as the price falls, so it keeps its naked margin.
 * Long options are paid in full and are no collateral (Deribit's standard margin), except that a
 * covering long's marked value offsets its short's marked liability, up to that liability: a
 * bought spread then uses exactly its net debit.
 *
 * Pairing: shorts in order of strike (calls ascending, puts descending), each covered by the best
 * remaining long (lowest call strike, highest put strike). A pair that would need its naked margin
 * or more is not made, and no later long could do better for that short.
 */
import type { Economics } from './economics.ts';

export interface OptionHolding {
  readonly economics: Economics;
  /** Longs: set by `offsetGroup` to the lots it used to cover shorts. */
  coverUsed?: number;
  /** Unsigned lots. */
  readonly lots: number;
  /** Marked value of `lots` (settlement minor units); 0 when unknown for a long. */
  readonly value: number;
  /** Shorts: naked margin of `lots`. */
  readonly naked: number;
}

export interface OffsetResult {
  /** Margin of the shorts, covered pairs at their spread loss, the rest naked. */
  readonly margin: number;
  /** Σ over pairs of min(long value, short value): liability the covering longs offset. */
  readonly offset: number;
}

/** `total` for `part` of `whole` lots, rounded up (what is owed) or down (what is credited). */
export function prorata(total: number, part: number, whole: number, roundUp: boolean): number {
  if (part === whole) return total;
  const exact = (total * part) / whole;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

/** What `lots` of a short at `shortStrike` covered by a long at `longStrike` can lose at expiry. */
export function pairLoss(
  economics: Economics,
  lots: number,
  shortStrike: number,
  longStrike: number,
): number {
  const call = economics.isCall;
  const width = call ? longStrike - shortStrike : shortStrike - longStrike;
  if (width <= 0) return 0;
  if (economics.settlementCurrency === economics.baseCurrency) {
    if (!call) return Number.POSITIVE_INFINITY;
    return Math.ceil((economics.baseAmount(lots) * width) / longStrike);
  }
  return economics.underlyingNotional(lots, width) ?? Number.POSITIVE_INFINITY;
}

/**
 * Margin and liability offset of one cover group's shorts against its longs (both of one type).
 * Arrays are sorted in place.
 */
export function offsetGroup(shorts: OptionHolding[], longs: OptionHolding[]): OffsetResult {
  let margin = 0;
  if (longs.length === 0) {
    for (const short of shorts) margin += short.naked;
    return { margin, offset: 0 };
  }
  const call = shorts[0]!.economics.isCall;
  const order = (a: OptionHolding, b: OptionHolding) =>
    call ? a.economics.strike - b.economics.strike : b.economics.strike - a.economics.strike;
  shorts.sort(order);
  longs.sort(order);
  const longLeft = longs.map((long) => long.lots);
  for (const long of longs) long.coverUsed = 0;
  let offset = 0;
  let next = 0;
  for (const short of shorts) {
    let left = short.lots;
    while (left > 0 && next < longs.length) {
      if (longLeft[next] === 0) {
        next++;
        continue;
      }
      const long = longs[next]!;
      const lots = Math.min(left, longLeft[next]!);
      const loss = pairLoss(short.economics, lots, short.economics.strike, long.economics.strike);
      const naked = prorata(short.naked, lots, short.lots, true);
      if (loss >= naked) break;
      margin += loss;
      offset += Math.min(
        prorata(long.value, lots, long.lots, false),
        prorata(short.value, lots, short.lots, false),
      );
      longLeft[next] = longLeft[next]! - lots;
      long.coverUsed = (long.coverUsed ?? 0) + lots;
      left -= lots;
    }
    if (left > 0) margin += prorata(short.naked, left, short.lots, true);
  }
  return { margin, offset };
}
