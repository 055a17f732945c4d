/**
 * `npm run bench:pipeline`: the whole request path of one order in one process, without sockets.
 * The service starts as `npm start` would (SQLite journal on with its fsyncs, read store, snapshot
 * replica, market ticks; simulator off) and an in-process WebSocket stands in for the network: each
 * request is a Buffer handed to the session as `ws` would, each answer the string the session sends.
 * So a figure here is what the service itself costs per order (auth'd session, parse, validation,
 * sequencer, engine, journal, read store, answer), free of the loopback syscalls and the client
 * process that make `bench:api` figures swing on a shared 2-core machine.
 *
 * Closed loop with a window of W orders in flight (W = 1 is every order its own group commit).
 * Per window: orders/s, main-thread CPU per order (/proc, Linux), process CPU per order (all
 * threads: journal writer, read-store writer, replica, GC helpers), bytes allocated per order and
 * scavenges per 10k orders (v8.GCProfiler), and each order's time from delivery to answer (p50, p99,
 * max: with 1 in flight, what one order waits for, journal fsync included).
 *
 * Env: BENCH_ORDERS (per window, default 40000), BENCH_WINDOWS (default `1,16,256`),
 * BENCH_WARM_UP_ORDERS (default 20000), BENCH_HEAP_PROF (a
 * file: sampled allocations of the measured windows, garbage included, for DevTools),
 * BENCH_HEAP_PROF_SURVIVORS (on: sample only what survived a scavenge).
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GCProfiler } from 'node:v8';
import type { WebSocket } from 'ws';
import { signWs } from '../src/api/auth/signature.ts';
import { startService } from '../src/app/service.ts';
import { benchConfig } from './bench-config.ts';
import { percentile, processCpuSeconds } from './measure.ts';

const ORDERS = Number(process.env.BENCH_ORDERS ?? 40_000);
const WINDOWS = (process.env.BENCH_WINDOWS ?? '1,16,256').split(',').map(Number);
const WARM_UP_ORDERS = Number(process.env.BENCH_WARM_UP_ORDERS ?? 20_000);
const INSTRUMENT = 'BTC-PERPETUAL';

/** Stands in for a `ws` WebSocket: messages in and answers out as Buffers (or strings). */
class InProcessSocket extends EventEmitter {
  readonly bufferedAmount = 0;
  onAnswer: (data: Buffer | string) => void = () => {};

  send(data: Buffer | string): void {
    this.onAnswer(data);
  }

  close(): void {
    this.emit('close');
  }

  terminate(): void {
    this.emit('close');
  }

  deliver(message: Buffer): void {
    this.emit('message', message, false);
  }
}

/** Non-crossing immediate-or-cancel orders, as bench:api sends: never rest, never trade. */
function requests(count: number, firstRid: number): Buffer[] {
  return Array.from({ length: count }, (_, i) => {
    const rid = firstRid + i;
    const buy = rid % 2 === 0;
    return Buffer.from(
      JSON.stringify({
        rid,
        method: buy ? 'private/buy' : 'private/sell',
        params: {
          instrumentName: INSTRUMENT,
          quantity: '10',
          price: buy ? '30000' : '90000',
          timeInForce: 'immediate_or_cancel',
        },
      }),
    );
  });
}

/** The rid of an answer `{"rid":N,...}`, read without allocating. */
function ridOf(data: Buffer | string): number {
  let rid = 0;
  for (let i = 7; i < data.length; i++) {
    const code = typeof data === 'string' ? data.charCodeAt(i) : data[i]!;
    if (code < 48 || code > 57) break;
    rid = rid * 10 + (code - 48);
  }
  return rid;
}

const ERROR_MARK = Buffer.from('"error"');
const isError = (data: Buffer | string) =>
  typeof data === 'string' ? data.includes('"error"') : data.includes(ERROR_MARK);

interface GcTotals {
  allocatedBytes: number;
  scavenges: number;
  scavengeMs: number;
  scavengeMaxMs: number;
  /** Bytes scavenges kept (left in the young generation or promoted): their copying is their cost. */
  survivedBytes: number;
  markCompacts: number;
}

function gcTotals(profile: ReturnType<GCProfiler['stop']>, usedAtStart: number, usedAtEnd: number): GcTotals {
  const totals: GcTotals = {
    allocatedBytes: 0,
    scavenges: 0,
    scavengeMs: 0,
    scavengeMaxMs: 0,
    survivedBytes: 0,
    markCompacts: 0,
  };
  let usedAfterLast = usedAtStart;
  for (const gc of profile?.statistics ?? []) {
    totals.allocatedBytes += Math.max(0, gc.beforeGC.heapStatistics.usedHeapSize - usedAfterLast);
    usedAfterLast = gc.afterGC.heapStatistics.usedHeapSize;
    if (gc.gcType === 'Scavenge') {
      totals.scavenges++;
      totals.scavengeMs += gc.cost / 1000;
      totals.scavengeMaxMs = Math.max(totals.scavengeMaxMs, gc.cost / 1000);
      const used = (stats: typeof gc.beforeGC, space: string) =>
        stats.heapSpaceStatistics.find((s) => s.spaceName === space)?.spaceUsedSize ?? 0;
      totals.survivedBytes +=
        used(gc.afterGC, 'new_space') +
        Math.max(0, used(gc.afterGC, 'old_space') - used(gc.beforeGC, 'old_space'));
    } else if (gc.gcType === 'MarkSweepCompact') totals.markCompacts++;
  }
  totals.allocatedBytes += Math.max(0, usedAtEnd - usedAfterLast);
  return totals;
}

const dataDir = mkdtempSync(join(tmpdir(), 'bench-pipeline-'));
const service = await startService({ config: benchConfig(dataDir, { simulator: false }) });
const credential = service.demoCredentials?.[0];
if (credential === undefined) throw new Error('no demo credential on a fresh data dir');

const socket = new InProcessSocket();
service.gateway.serveWebSocket(socket as unknown as WebSocket);
await new Promise<void>((resolve, reject) => {
  socket.onAnswer = (data) => (isError(data) ? reject(new Error(`auth: ${data}`)) : resolve());
  const timestamp = service.core.now();
  const nonce = randomUUID();
  socket.deliver(
    Buffer.from(
      JSON.stringify({
        rid: 0,
        method: 'public/auth',
        params: {
          apiKey: credential.apiKey,
          timestamp,
          nonce,
          signature: signWs(credential.apiSecret, String(timestamp), nonce),
        },
      }),
    ),
  );
});

let nextRid = 1;

interface RunOutcome {
  readonly errors: number;
  /** Each order's time from delivery to answer, ms, in rid order. */
  readonly latencies: Float64Array;
}

/** Runs the requests with `window` in flight. */
function run(batch: readonly Buffer[], window: number): Promise<RunOutcome> {
  const count = batch.length;
  const firstRid = nextRid;
  nextRid += count;
  const latencies = new Float64Array(count);
  let sent = 0;
  let answered = 0;
  let errors = 0;
  const send = () => {
    latencies[sent] = performance.now();
    socket.deliver(batch[sent++]!);
  };
  return new Promise((resolve) => {
    socket.onAnswer = (data) => {
      const rid = ridOf(data);
      if (rid < firstRid) return;
      latencies[rid - firstRid] = performance.now() - latencies[rid - firstRid]!;
      answered++;
      if (isError(data)) errors++;
      if (sent < count) send();
      else if (answered === count) resolve({ errors, latencies });
    };
    while (sent < Math.min(window, count)) send();
  });
}

console.log(
  `bench:pipeline: ${ORDERS} orders per window, in one process, no sockets (journal, read store, replica on)`,
);
await run(requests(WARM_UP_ORDERS, nextRid), 256);
const heapProfile = process.env.BENCH_HEAP_PROF ? new Session() : null;
heapProfile?.connect();
await heapProfile?.post('HeapProfiler.startSampling', {
  samplingInterval: 16_384,
  includeObjectsCollectedByMajorGC: true,
  // BENCH_HEAP_PROF_SURVIVORS=on: only what survived a scavenge (what makes scavenges slow).
  includeObjectsCollectedByMinorGC: process.env.BENCH_HEAP_PROF_SURVIVORS !== 'on',
});
for (const window of WINDOWS) {
  // Made before the measurement: the figures are the service's, not this driver's.
  const batch = requests(ORDERS, nextRid);
  const profiler = new GCProfiler();
  const usedAtStart = process.memoryUsage().heapUsed;
  profiler.start();
  const cpuStart = process.cpuUsage();
  const mainStart = processCpuSeconds(process.pid, true);
  const started = performance.now();
  const { errors, latencies } = await run(batch, window);
  const seconds = (performance.now() - started) / 1000;
  const mainCpu = processCpuSeconds(process.pid, true) - mainStart;
  const cpu = process.cpuUsage(cpuStart);
  const gc = gcTotals(profiler.stop(), usedAtStart, process.memoryUsage().heapUsed);
  const perOrderUs = (s: number) => ((s * 1e6) / ORDERS).toFixed(1);
  const sorted = latencies.sort();
  console.log(
    [
      `window ${String(window).padStart(4)}`,
      `${Math.round(ORDERS / seconds)
        .toString()
        .padStart(6)} orders/s`,
      `main thread ${perOrderUs(mainCpu)} µs/order`,
      `process ${perOrderUs((cpu.user + cpu.system) / 1e6)} µs/order`,
      `allocated ${(gc.allocatedBytes / ORDERS / 1024).toFixed(1)} KiB/order`,
      `scavenges ${((gc.scavenges * 10_000) / ORDERS).toFixed(1)}/10k orders (avg ${(gc.scavengeMs / gc.scavenges || 0).toFixed(1)} max ${gc.scavengeMaxMs.toFixed(1)} ms, ${(gc.survivedBytes / gc.scavenges / 1024 || 0).toFixed(0)} KiB survived each, ${(gc.survivedBytes / ORDERS).toFixed(0)} B per order)`,
      `mark-compacts ${gc.markCompacts}`,
      `latency p50 ${percentile(sorted, 50).toFixed(2)} p99 ${percentile(sorted, 99).toFixed(2)} max ${sorted[sorted.length - 1]!.toFixed(2)} ms`,
      `errors ${errors}`,
    ].join('   '),
  );
  // Every order is valid: error answers mean the figures measure refusals, not orders.
  if (errors > 0) process.exitCode = 1;
}
if (heapProfile !== null) {
  const { profile } = await heapProfile.post('HeapProfiler.stopSampling');
  writeFileSync(process.env.BENCH_HEAP_PROF!, JSON.stringify(profile));
}
await service.close();
rmSync(dataDir, { recursive: true, force: true });
