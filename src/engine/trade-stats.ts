/**
 * The ticker's 24-hour trade statistics (volume, high, low) and open interest, kept inside the
 * engine from its own fills and positions, on the command clock, so journal replay and snapshot
 * restore give the same figures.
 *
 * Window: trades are summed per instrument in whole-minute buckets (UTC minutes of the command
 * clock). The window is the current minute and the 1,439 before it: a trade leaves it at the
 * start of the minute 1,440 minutes after its own minute (between 23 h 59 min and 24 h after
 * it). Buckets are dropped when a command's time reaches that point (`pruneTradeStats`, before
 * the command applies), and `tradeStatsExpiry` tells the edge when, so a timer moves the ticker
 * even when nothing else happens.
 *
 * Cost on the fill path: a trade in a minute that already has a bucket for its instrument updates
 * it in place; the first trade of an instrument in a minute allocates one bucket, queued twice
 * (per instrument, and venue-wide in time order for pruning).
 *
 * Open interest: Σ of the long position sizes on the instrument (= Σ of the short sizes), in
 * lots, kept by `noteOpenInterest` as fills change positions; derived, so not saved.
 */
import type { Position } from './accounts.ts';
import type { InstrumentState, VenueState } from './state.ts';

export const STATS_BUCKET_MS = 60_000;
export const STATS_BUCKETS = 1_440;

/** Trades of one instrument in one minute. */
export class TradeBucket {
  constructor(
    readonly instrument: InstrumentState,
    /** floor(ts / STATS_BUCKET_MS). */
    readonly minute: number,
    /** Lots. */
    public volume: number,
    /** Ticks. */
    public high: number,
    public low: number,
  ) {}
}

/** Saved form of a bucket: [minute, volume lots, high ticks, low ticks]. */
export type SavedBucket = readonly [number, number, number, number];

export interface TradeStatsView {
  /** Lots traded in the window. */
  readonly volume: number;
  /** Ticks; null when nothing traded in the window. */
  readonly high: number | null;
  readonly low: number | null;
  /** Lots of open long positions; null for spot (no positions). */
  readonly openInterest: number | null;
}

/** Venue-wide bucket queue in creation (= time) order, for pruning. */
export class TradeStatsQueue {
  private readonly buckets: TradeBucket[] = [];
  private head = 0;

  get first(): TradeBucket | undefined {
    return this.buckets[this.head];
  }

  push(bucket: TradeBucket): void {
    this.buckets.push(bucket);
  }

  shift(): void {
    this.head++;
    if (this.head === this.buckets.length) {
      this.buckets.length = 0;
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.buckets.length) {
      this.buckets.splice(0, this.head);
      this.head = 0;
    }
  }
}

/** Counts one trade in its instrument's bucket of the current minute. */
export function recordTrade(
  state: VenueState,
  instrument: InstrumentState,
  price: number,
  lots: number,
): void {
  const minute = Math.floor(state.now / STATS_BUCKET_MS);
  const buckets = instrument.statBuckets;
  const last = buckets[buckets.length - 1];
  if (last !== undefined && last.minute === minute) {
    last.volume += lots;
    if (price > last.high) last.high = price;
    if (price < last.low) last.low = price;
    return;
  }
  const bucket = new TradeBucket(instrument, minute, lots, price, price);
  buckets.push(bucket);
  state.statsQueue.push(bucket);
}

/** When the oldest bucket leaves the window (ms), or +Infinity when there is none. */
export function tradeStatsExpiry(state: VenueState): number {
  const first = state.statsQueue.first;
  return first === undefined ? Number.POSITIVE_INFINITY : (first.minute + STATS_BUCKETS) * STATS_BUCKET_MS;
}

/** Drops the buckets that left the window at `state.now`. */
export function pruneTradeStats(state: VenueState): void {
  const queue = state.statsQueue;
  const oldest = Math.floor(state.now / STATS_BUCKET_MS) - STATS_BUCKETS + 1;
  for (let bucket = queue.first; bucket !== undefined && bucket.minute < oldest; bucket = queue.first) {
    // Both queues are in time order, so the bucket is its instrument's oldest.
    bucket.instrument.statBuckets.shift();
    queue.shift();
  }
}

/**
 * Keeps `instrument.openInterest` when a fill changes a position from `sizeBefore` (lots):
 * open interest is the sum of the long sizes.
 */
export function noteOpenInterest(instrument: InstrumentState, position: Position, sizeBefore: number): void {
  instrument.openInterest += Math.max(position.size, 0) - Math.max(sizeBefore, 0);
}

/** Σ long sizes from the positions themselves (restore, checks). */
export function openInterestOf(instrument: InstrumentState): number {
  let sum = 0;
  for (const position of instrument.positions.values()) if (position.size > 0) sum += position.size;
  return sum;
}

export function tradeStatsView(instrument: InstrumentState): TradeStatsView {
  let volume = 0;
  let high: number | null = null;
  let low: number | null = null;
  for (const bucket of instrument.statBuckets) {
    volume += bucket.volume;
    if (high === null || bucket.high > high) high = bucket.high;
    if (low === null || bucket.low < low) low = bucket.low;
  }
  const openInterest = instrument.economics.isSpot ? null : instrument.openInterest;
  return { volume, high, low, openInterest };
}

/** The instrument's buckets to save; undefined when it has none (the field stays absent). */
export function saveTradeStats(instrument: InstrumentState): SavedBucket[] | undefined {
  if (instrument.statBuckets.length === 0) return undefined;
  return instrument.statBuckets.map((b) => [b.minute, b.volume, b.high, b.low] as const);
}

/**
 * Rebuilds the buckets of restored instruments (`saved` per instrument, in list order) and the
 * venue-wide queue in time order (instrument order within a minute, as pruning ignores it).
 */
export function restoreTradeStats(
  state: VenueState,
  saved: ReadonlyArray<readonly SavedBucket[] | undefined>,
): void {
  const all: TradeBucket[] = [];
  saved.forEach((buckets, index) => {
    if (buckets === undefined) return;
    const instrument = state.instrumentList[index]!;
    for (const [minute, volume, high, low] of buckets) {
      const bucket = new TradeBucket(instrument, minute, volume, high, low);
      instrument.statBuckets.push(bucket);
      all.push(bucket);
    }
  });
  all.sort((a, b) => a.minute - b.minute || a.instrument.id - b.instrument.id);
  for (const bucket of all) state.statsQueue.push(bucket);
}
