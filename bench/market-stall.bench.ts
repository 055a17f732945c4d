/**
 * How long the market blocks the event loop, with the liquidity simulator on, in the running
 * service (`startService`: journal, read store and snapshots on, in a fresh DATA_DIR, no
 * requests). Prints figures; asserts nothing.
 *
 *   npm run bench:market-stall
 *
 * - market slices: every synchronous piece of market work the market loop runs in one
 *   event-loop turn (MarketLoop.observeSlices), p50/p99/max, also net of the GC pauses that fell
 *   inside them, and per tick the longest one;
 * - event-loop delay (monitorEventLoopDelay, 1 ms resolution): what any request would have
 *   waited, whatever the cause (market, journal callbacks, read store, GC);
 * - GC pauses by kind (they stop the loop too, and the market's garbage drives them).
 *
 * The first ticks (seeding every book: thousands of orders) are reported apart from the steady
 * state. Env: BENCH_SECONDS (steady-state seconds measured, default 30), BENCH_WARMUP_SECONDS
 * (default 5).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { startService } from '../src/app/service.ts';
import { benchConfig } from './bench-config.ts';
import { percentile } from './measure.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 5);

function summary(values: readonly number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  return `n ${sorted.length}  p50 ${percentile(sorted, 50).toFixed(2)}  p99 ${percentile(sorted, 99).toFixed(2)}  max ${(sorted[sorted.length - 1] ?? Number.NaN).toFixed(2)} ms`;
}

class Window {
  readonly slices: number[] = [];
  /** Slice and GC pause intervals [start, end] (performance.now ms), to net GC out of slices. */
  readonly sliceSpans: [number, number][] = [];
  readonly gcSpans: [number, number][] = [];
  readonly tickMax = new Map<number, number>();
  readonly tickTotal = new Map<number, number>();
  readonly gc = new Map<string, number[]>();
  readonly loopDelay = monitorEventLoopDelay({ resolution: 1 });

  slice(ms: number, tick: number): void {
    const end = performance.now();
    this.sliceSpans.push([end - ms, end]);
    this.slices.push(ms);
    this.tickMax.set(tick, Math.max(this.tickMax.get(tick) ?? 0, ms));
    this.tickTotal.set(tick, (this.tickTotal.get(tick) ?? 0) + ms);
  }

  print(title: string): void {
    // The histogram records each 1 ms timer interval whole: the delay is what exceeds it.
    const ns = (value: number) => Math.max(0, value / 1e6 - 1).toFixed(2);
    console.log(`--- ${title}`);
    console.log(`market slices:          ${summary(this.slices)}`);
    // The same slices without the GC pauses that fell inside them (what the market's own work
    // blocks; the pauses are listed below).
    const net = this.sliceSpans.map(([start, end]) => {
      let gc = 0;
      for (const [gcStart, gcEnd] of this.gcSpans)
        gc += Math.max(0, Math.min(end, gcEnd) - Math.max(start, gcStart));
      return end - start - gc;
    });
    console.log(`  net of GC pauses:     ${summary(net)}`);
    console.log(
      `  over 5 ms:            ${this.slices.filter((ms) => ms > 5).length} (net of GC: ${net.filter((ms) => ms > 5).length})`,
    );
    console.log(`longest slice per tick: ${summary([...this.tickMax.values()])}`);
    console.log(`market CPU per tick:    ${summary([...this.tickTotal.values()])}`);
    console.log(
      `event-loop delay:       p50 ${ns(this.loopDelay.percentile(50))}  p99 ${ns(this.loopDelay.percentile(99))}  max ${ns(this.loopDelay.max)} ms`,
    );
    for (const [kind, pauses] of this.gc) console.log(`GC ${kind.padEnd(13)}        ${summary(pauses)}`);
  }
}

const dataDir = mkdtempSync(join(tmpdir(), 'bench-market-stall-'));
const config = benchConfig(dataDir, { simulator: true });
let window = new Window();
const gcKind = (kind: number | undefined) =>
  kind === constants.NODE_PERFORMANCE_GC_MINOR
    ? 'scavenge'
    : kind === constants.NODE_PERFORMANCE_GC_MAJOR
      ? 'mark-compact'
      : 'other';
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = gcKind((entry as { detail?: { kind?: number } }).detail?.kind);
    let pauses = window.gc.get(kind);
    if (pauses === undefined) {
      pauses = [];
      window.gc.set(kind, pauses);
    }
    pauses.push(entry.duration);
    window.gcSpans.push([entry.startTime, entry.startTime + entry.duration]);
  }
}).observe({ entryTypes: ['gc'] });

window.loopDelay.enable();
const service = await startService({ config });
service.market.observeSlices((ms, tick) => window.slice(ms, tick));
const sleep = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));
await sleep(WARMUP_SECONDS);
window.loopDelay.disable();
window.print(`start-up and the first ${WARMUP_SECONDS} s (books seeded: the first tick places every quote)`);
window = new Window();
window.loopDelay.enable();
await sleep(SECONDS);
window.loopDelay.disable();
window.print(`steady state, ${SECONDS} s, no requests (ticks every 1 s)`);
console.log(`market commands submitted ${service.market.submitted}, refused ${service.market.refused}`);
await service.close();
rmSync(dataDir, { recursive: true, force: true });
