/**
 * Index history and the settlement price of an expiry.
 *
 * Settlement index (Deribit convention): the time-weighted average of the index over the 30
 * minutes before expiry (08:00 UTC). The index is piecewise constant between recorded
 * samples, so the TWAP over [from, to] weights each sample by how long it held inside the
 * window. With no sample inside or before the window the earliest sample after it is used, the
 * known price nearest the window (a driver restarted after an expiry without its samples).
 *
 * `IndexHistory` keeps samples for `retentionMs` (default 2 h) per currency; recording is
 * idempotent for equal timestamps (the later price wins).
 *
 * Inside the window part of the settlement is already fixed: `fixing(currency, expiration, now)`
 * gives the average so far over [expiration − window, now] and the fraction f of the window it
 * covers, so the settlement is f · average + (1 − f) · (the average still to come). The market
 * state prices expiring futures and options on that (market-state.ts).
 */

export const SETTLEMENT_WINDOW_MS = 30 * 60 * 1000;

/** The part of an expiry's settlement average fixed at some instant inside its window. */
export interface Fixing {
  /** Time-weighted average of the index from the window's start to now. */
  readonly average: number;
  /** Share of the window already past, in (0, 1). */
  readonly fixedFraction: number;
}

/** Share of the settlement window of `expiration` already past at `now`, in [0, 1]. */
export function settlementWindowFraction(expiration: number, now: number): number {
  const start = expiration - SETTLEMENT_WINDOW_MS;
  return Math.min(1, Math.max(0, (now - start) / SETTLEMENT_WINDOW_MS));
}

interface Sample {
  readonly time: number;
  readonly price: number;
}

export class IndexHistory {
  private readonly byCurrency = new Map<string, Sample[]>();

  constructor(private readonly retentionMs = 2 * 60 * 60 * 1000) {}

  record(currency: string, time: number, price: number): void {
    let list = this.byCurrency.get(currency);
    if (list === undefined) {
      list = [];
      this.byCurrency.set(currency, list);
    }
    const last = list[list.length - 1];
    if (last !== undefined && last.time === time) list[list.length - 1] = { time, price };
    else if (last === undefined || time > last.time) list.push({ time, price });
    // Keep one sample older than the retention horizon: it is the price at the horizon.
    let drop = 0;
    while (drop + 1 < list.length && list[drop + 1]!.time <= time - this.retentionMs) drop++;
    if (drop > 0) list.splice(0, drop);
  }

  latest(currency: string): number | null {
    const list = this.byCurrency.get(currency);
    return list && list.length > 0 ? list[list.length - 1]!.price : null;
  }

  /** Time-weighted average over [from, to]; null when nothing was ever recorded. */
  twap(currency: string, from: number, to: number): number | null {
    const list = this.byCurrency.get(currency);
    if (list === undefined || list.length === 0) return null;
    if (to <= from) return priceAtTime(list, to);
    let weighted = 0;
    let covered = 0;
    for (let i = 0; i < list.length; i++) {
      const start = Math.max(list[i]!.time, from);
      const end = Math.min(list[i + 1]?.time ?? to, to);
      if (end > start) {
        weighted += list[i]!.price * (end - start);
        covered += end - start;
      }
    }
    // Before the first sample inside the window the first sample's price is assumed.
    const firstTime = list[0]!.time;
    if (firstTime > from) {
      const gap = Math.min(firstTime, to) - from;
      weighted += list[0]!.price * gap;
      covered += gap;
    }
    return covered > 0 ? weighted / covered : priceAtTime(list, to);
  }

  /** Every kept sample as `[time, price]` pairs per currency (to save, or to seed another). */
  samples(): Array<[string, Array<[number, number]>]> {
    return [...this.byCurrency].map(([currency, list]) => [currency, list.map((s) => [s.time, s.price])]);
  }

  /** Records saved `samples()` (oldest first), as if each had been recorded in turn. */
  restore(saved: ReadonlyArray<readonly [string, ReadonlyArray<readonly [number, number]>]>): void {
    for (const [currency, list] of saved)
      for (const [time, price] of list) this.record(currency, time, price);
  }

  /**
   * The fixed part of an expiry's settlement at `now`: null outside the window (before it
   * opens, at or after expiry) or when nothing was recorded for the currency.
   */
  fixing(currency: string, expiration: number, now: number): Fixing | null {
    const fraction = settlementWindowFraction(expiration, now);
    if (!(fraction > 0 && fraction < 1)) return null;
    const average = this.twap(currency, expiration - SETTLEMENT_WINDOW_MS, now);
    return average === null ? null : { average, fixedFraction: fraction };
  }

  /** The settlement index for an expiry: TWAP over the last 30 minutes. */
  settlementIndex(currency: string, expiration: number): number | null {
    return this.twap(currency, expiration - SETTLEMENT_WINDOW_MS, expiration);
  }
}

function priceAtTime(list: readonly Sample[], time: number): number {
  let price = list[0]!.price;
  for (const sample of list) {
    if (sample.time > time) break;
    price = sample.price;
  }
  return price;
}
