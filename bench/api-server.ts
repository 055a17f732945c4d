/**
 * The server half of `npm run bench:api`: the full service (`startService`: journal on, rate limits
 * off, market prices ticking every second; the liquidity simulator off unless BENCH_SIMULATOR=on) on a free port in a fresh DATA_DIR; prints `{"port", "dataDir"}` as its first line.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { loadConfig } from '../src/app/config.ts';
import { startService } from '../src/app/service.ts';

const dataDir = process.env.DATA_DIR ?? mkdtempSync(join(tmpdir(), 'bench-api-'));
const config = loadConfig({
  env: {},
  overrides: {
    port: 0,
    host: '127.0.0.1',
    dataDir,
    simulator: process.env.BENCH_SIMULATOR === 'on',
    logLevel: (process.env.LOG_LEVEL as 'warn' | undefined) ?? 'warn',
    rateLimits: { enabled: false },
  },
});
const service = await startService({ config });
// How long the event loop stalls (market ticks, simulator, snapshots): reported on stderr at exit.
const loopDelay = monitorEventLoopDelay({ resolution: 5 });
loopDelay.enable();
// Garbage-collection pauses by kind (they stop the event loop, so they bound request latency).
const gcPauses = new Map<string, number[]>();
const gcKind = (kind: number | undefined) =>
  kind === constants.NODE_PERFORMANCE_GC_MINOR
    ? 'scavenge'
    : kind === constants.NODE_PERFORMANCE_GC_MAJOR
      ? 'mark-compact'
      : 'other';
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = gcKind((entry as { detail?: { kind?: number } }).detail?.kind);
    const pauses = gcPauses.get(kind) ?? [];
    pauses.push(entry.duration);
    gcPauses.set(kind, pauses);
  }
}).observe({ entryTypes: ['gc'] });
console.log(JSON.stringify({ port: service.address.port, dataDir }));

/** Prints (stderr) and resets the stall figures: the bench asks with SIGUSR2 after each phase. */
function reportStalls(): void {
  const ms = (ns: number) => (ns / 1e6).toFixed(1);
  const gc = [...gcPauses]
    .map(([kind, pauses]) => {
      pauses.sort((a, b) => a - b);
      const p99 = pauses[Math.min(pauses.length - 1, Math.floor(pauses.length * 0.99))]!;
      return `${kind} ${pauses.length}× p50 ${pauses[pauses.length >> 1]!.toFixed(1)} p99 ${p99.toFixed(1)} max ${pauses[pauses.length - 1]!.toFixed(1)} ms`;
    })
    .join('; ');
  console.error(
    `    server: event-loop delay p50 ${ms(loopDelay.percentile(50))} p99 ${ms(loopDelay.percentile(99))} max ${ms(loopDelay.max)} ms; heap ${(process.memoryUsage().heapUsed / 1e6).toFixed(0)} MB; GC ${gc || 'none'}`,
  );
  loopDelay.reset();
  gcPauses.clear();
}
process.on('SIGUSR2', reportStalls);
process.on('SIGTERM', () => {
  loopDelay.disable();
  service.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
