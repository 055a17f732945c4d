/**
 * Index price sources: where the USD index of a currency comes from.
 *
 * `IndexSource.priceAt(now)` is the index at time `now` (ms). Two implementations:
 *
 * - `SimulatedIndex`: geometric Brownian motion with Poisson jumps (Merton; at most one jump per
 *   step, drawn with probability λ·dt, exact enough for steps of seconds), on a fixed time
 *   grid of `stepMs` from `startTime`. The path depends only on (config, seed): the price at a
 *   time is the same however often, or in what increments, it is asked for, so a replayed
 *   session sees the same market. Between grid points the last grid price holds. Asking for a
 *   time before the last one asked returns the current price (time never runs backwards).
 * - `ReplayIndex`: piecewise-constant replay of rows from a CSV file (see `parseIndexCsv`);
 *   before the first row the first price holds; after the last row the last price holds, or
 *   the file loops when `loop` is set.
 */
import { MS_PER_YEAR } from './black76.ts';
import { SeededRandom } from './random.ts';

export interface IndexSource {
  readonly currency: string;
  priceAt(now: number): number;
}

export interface SimulatedIndexConfig {
  readonly currency: string;
  readonly initialPrice: number;
  readonly startTime: number;
  /** Annualised diffusion volatility (0.5 = 50%). */
  readonly volatility: number;
  /** Annualised drift of the price (0 = martingale). */
  readonly drift?: number;
  /** Expected jumps per year. */
  readonly jumpIntensity?: number;
  /** Mean and standard deviation of the log jump size. */
  readonly jumpMean?: number;
  readonly jumpStdev?: number;
  /** Grid step in ms (default 1000). */
  readonly stepMs?: number;
  readonly seed: number;
}

/** A snapshot from which a `SimulatedIndex` resumes exactly. */
export interface SimulatedIndexState {
  readonly time: number;
  readonly price: number;
  readonly random: readonly number[];
}

export class SimulatedIndex implements IndexSource {
  readonly currency: string;
  private time: number;
  private price: number;
  private readonly random: SeededRandom;
  private readonly stepMs: number;
  private readonly driftPerStep: number;
  private readonly diffusionPerStep: number;
  private readonly jumpsPerStep: number;
  private readonly jumpMean: number;
  private readonly jumpStdev: number;

  constructor(
    readonly config: SimulatedIndexConfig,
    state?: SimulatedIndexState,
  ) {
    if (!(config.initialPrice > 0)) throw new Error('initialPrice must be positive');
    if (!(config.volatility >= 0)) throw new Error('volatility must be non-negative');
    this.currency = config.currency;
    this.stepMs = config.stepMs ?? 1000;
    if (!(this.stepMs > 0)) throw new Error('stepMs must be positive');
    const dt = this.stepMs / MS_PER_YEAR;
    const intensity = config.jumpIntensity ?? 0;
    this.jumpMean = config.jumpMean ?? 0;
    this.jumpStdev = config.jumpStdev ?? 0;
    // Compensate the jumps so `drift` stays the expected growth rate.
    const jumpCompensator = intensity * (Math.exp(this.jumpMean + (this.jumpStdev * this.jumpStdev) / 2) - 1);
    const sigma = config.volatility;
    this.driftPerStep = ((config.drift ?? 0) - (sigma * sigma) / 2 - jumpCompensator) * dt;
    this.diffusionPerStep = sigma * Math.sqrt(dt);
    this.jumpsPerStep = intensity * dt;
    this.time = state?.time ?? config.startTime;
    this.price = state?.price ?? config.initialPrice;
    this.random = state
      ? SeededRandom.fromState(state.random)
      : SeededRandom.fromSeed(config.seed).fork(config.currency);
  }

  priceAt(now: number): number {
    while (this.time + this.stepMs <= now) {
      this.time += this.stepMs;
      let logReturn = this.driftPerStep + this.diffusionPerStep * this.random.normal();
      if (this.jumpsPerStep > 0 && this.random.next() < this.jumpsPerStep) {
        logReturn += this.jumpMean + this.jumpStdev * this.random.normal();
      }
      this.price *= Math.exp(logReturn);
    }
    return this.price;
  }

  snapshot(): SimulatedIndexState {
    return { time: this.time, price: this.price, random: this.random.state() };
  }
}

/**
 * Default simulated index for a currency (levels and dynamics typical of the market), starting
 * at `initialPrice` when given (e.g. the last index a recovered venue knew).
 */
export function defaultSimulatedIndex(
  currency: string,
  startTime: number,
  seed: number,
  initialPrice?: number,
): SimulatedIndex {
  const levels: Record<string, { price: number; volatility: number }> = {
    BTC: { price: 65_000, volatility: 0.5 },
    ETH: { price: 3_200, volatility: 0.65 },
  };
  const level = levels[currency] ?? { price: 100, volatility: 0.8 };
  return new SimulatedIndex({
    currency,
    initialPrice: initialPrice !== undefined && initialPrice > 0 ? initialPrice : level.price,
    startTime,
    volatility: level.volatility,
    jumpIntensity: 12,
    jumpMean: 0,
    jumpStdev: 0.02,
    seed,
  });
}

export interface IndexRow {
  readonly timestamp: number;
  readonly price: number;
}

export type CsvParseResult =
  | { readonly ok: true; readonly rows: readonly IndexRow[] }
  | { readonly ok: false; readonly line: number; readonly message: string };

/**
 * Parses `timestamp,price` rows. Timestamps are integer ms since epoch or ISO-8601 date-times
 * with a zone; prices positive decimals. An optional header (first line whose first field is
 * not a timestamp), blank lines and `#` comment lines are skipped. Timestamps must strictly
 * increase. Errors name the 1-based line.
 */
export function parseIndexCsv(text: string): CsvParseResult {
  const rows: IndexRow[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    const lineNumber = i + 1;
    if (line === '' || line.startsWith('#')) continue;
    const fields = line.split(',').map((field) => field.trim());
    if (fields.length !== 2) {
      return {
        ok: false,
        line: lineNumber,
        message: `expected 2 fields (timestamp,price), got ${fields.length}`,
      };
    }
    const [timeText, priceText] = fields as [string, string];
    const timestamp = parseTimestamp(timeText);
    if (timestamp === null) {
      if (rows.length === 0 && /^[A-Za-z_ ]+$/.test(timeText)) continue; // header
      return { ok: false, line: lineNumber, message: `invalid timestamp '${timeText}'` };
    }
    if (!/^\d+(\.\d+)?$/.test(priceText) || !(Number(priceText) > 0)) {
      return {
        ok: false,
        line: lineNumber,
        message: `invalid price '${priceText}' (a positive decimal is required)`,
      };
    }
    const previous = rows[rows.length - 1];
    if (previous !== undefined && timestamp <= previous.timestamp) {
      return { ok: false, line: lineNumber, message: `timestamp ${timeText} does not increase` };
    }
    rows.push({ timestamp, price: Number(priceText) });
  }
  if (rows.length === 0) return { ok: false, line: 0, message: 'no price rows' };
  return { ok: true, rows };
}

function parseTimestamp(text: string): number | null {
  if (/^\d+$/.test(text)) {
    const value = Number(text);
    return Number.isSafeInteger(value) ? value : null;
  }
  if (!/^\d{4}-\d{2}-\d{2}T[\d:.]+(Z|[+-]\d{2}:\d{2})$/.test(text)) return null;
  const value = Date.parse(text);
  return Number.isFinite(value) ? value : null;
}

export class ReplayIndex implements IndexSource {
  constructor(
    readonly currency: string,
    private readonly rows: readonly IndexRow[],
    private readonly loop = false,
  ) {
    if (rows.length === 0) throw new Error('a replay needs at least one row');
  }

  priceAt(now: number): number {
    const rows = this.rows;
    const first = rows[0]!.timestamp;
    const last = rows[rows.length - 1]!.timestamp;
    let time = now;
    if (this.loop && now > last && last > first) time = first + ((now - first) % (last - first));
    if (time <= first) return rows[0]!.price;
    let lo = 0;
    let hi = rows.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (rows[mid]!.timestamp <= time) lo = mid;
      else hi = mid - 1;
    }
    return rows[lo]!.price;
  }
}
