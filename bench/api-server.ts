/**
 * The server half of `npm run bench:api`: the full service (`startService`: journal on, rate limits
 * off, market prices ticking every second; the liquidity simulator off unless BENCH_SIMULATOR=on) on a free port in a fresh DATA_DIR; prints `{"port", "dataDir"}` as its first line.
 */
import { writeFileSync } from 'node:fs';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import type { Histogram } from 'prom-client';
import { startService } from '../src/app/service.ts';
import { benchConfig, throwawayDataDir } from './bench-config.ts';

const dataDir = process.env.DATA_DIR ?? throwawayDataDir('bench-api-');
const config = benchConfig(dataDir, {
  simulator: process.env.BENCH_SIMULATOR === 'on',
  logLevel: process.env.LOG_LEVEL as 'warn' | undefined,
  snapshotReplica: process.env.BENCH_SNAPSHOT_REPLICA !== 'off',
});
const marketTickMs = process.env.BENCH_MARKET_TICK_MS ? Number(process.env.BENCH_MARKET_TICK_MS) : undefined;
const service = await startService({ config, marketTickMs });
// How long the event loop stalls (market ticks, simulator, snapshots): reported on stderr at exit.
// The histogram records each timer interval whole (an idle loop reads 5.1 ms): the report subtracts it.
const LOOP_DELAY_RESOLUTION_MS = 5;
const loopDelay = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
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

/**
 * p50 and p99 of one of the service's histograms (its series matching `labels` added up), as the
 * upper bounds of the buckets they fall in (`≤ x ms`), over what it observed since the last
 * report; then the count.
 */
async function histogram(name: string, labels: Record<string, string> = {}): Promise<string> {
  const metric = service.metrics?.registry.getSingleMetric(name);
  if (metric === undefined) return 'n/a';
  const { values } = await (metric as Histogram).get();
  const byBound = new Map<number, number>();
  for (const value of values) {
    if (value.metricName !== `${name}_bucket`) continue;
    if (!Object.entries(labels).every(([key, wanted]) => value.labels[key] === wanted)) continue;
    const le = value.labels.le === '+Inf' ? Number.POSITIVE_INFINITY : Number(value.labels.le);
    byBound.set(le, (byBound.get(le) ?? 0) + value.value);
  }
  const cumulative = [...byBound].sort(([a], [b]) => a - b);
  const total = cumulative.at(-1)?.[1] ?? 0;
  if (total === 0) return 'none';
  const bound = (q: number) => {
    const le = cumulative.find(([, count]) => count >= q * total)![0];
    return le === Number.POSITIVE_INFINITY ? '>1000' : `≤${le * 1000}`;
  };
  return `p50 ${bound(0.5)} p99 ${bound(0.99)} ms (${total})`;
}

/** Prints (stderr) and resets the stall figures: the bench asks with SIGUSR2 after each phase. */
async function reportStalls(): Promise<void> {
  // Where a request's time goes inside the server: in the dispatcher (method, engine, journal
  // acknowledgement); of that, the journal's group commit; of that, the storage's own time (the
  // transaction and its fsync on the writer thread: the disk, not the hand-over).
  const inServer = `in server: request ${await histogram('venue_request_seconds', { outcome: 'ok' })}; journal batch ${await histogram('venue_journal_batch_seconds')}, of it in storage ${await histogram('venue_journal_storage_seconds')}`;
  service.metrics?.registry.resetMetrics();
  const delayMs = (ns: number) => Math.max(0, ns / 1e6 - LOOP_DELAY_RESOLUTION_MS).toFixed(1);
  const gc = [...gcPauses]
    .map(([kind, pauses]) => {
      pauses.sort((a, b) => a - b);
      const p99 = pauses[Math.min(pauses.length - 1, Math.floor(pauses.length * 0.99))]!;
      return `${kind} ${pauses.length}× p50 ${pauses[pauses.length >> 1]!.toFixed(1)} p99 ${p99.toFixed(1)} max ${pauses[pauses.length - 1]!.toFixed(1)} ms`;
    })
    .join('; ');
  console.error(
    `    server: event-loop delay p50 ${delayMs(loopDelay.percentile(50))} p99 ${delayMs(loopDelay.percentile(99))} max ${delayMs(loopDelay.max)} ms; heap ${(process.memoryUsage().heapUsed / 1e6).toFixed(0)} MB; GC ${gc || 'none'}`,
  );
  console.error(`    ${inServer}`);
  loopDelay.reset();
  gcPauses.clear();
}
process.on('SIGUSR2', () => void reportStalls());
// BENCH_HEAP_PROF=<file>: sampled allocations (garbage included) of the whole run, written at exit.
// BENCH_HEAP_PROF_SURVIVORS=on: only those that survived a scavenge (what makes scavenges slow).
const heapProfile = process.env.BENCH_HEAP_PROF ? await startAllocationSampling() : null;

async function startAllocationSampling() {
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 32_768,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: process.env.BENCH_HEAP_PROF_SURVIVORS !== 'on',
  });
  return async () => {
    const { profile } = await session.post('HeapProfiler.stopSampling');
    writeFileSync(process.env.BENCH_HEAP_PROF!, JSON.stringify(profile));
  };
}

process.on('SIGTERM', async () => {
  await heapProfile?.();
  loopDelay.disable();
  service.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
