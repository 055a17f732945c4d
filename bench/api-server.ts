/**
 * The server half of `npm run bench:api`: the full service (`startService`: journal on, rate limits
 * off, market prices ticking every second; the liquidity simulator off unless BENCH_SIMULATOR=on) on a free port in a fresh DATA_DIR; prints `{"port", "dataDir"}` as its first line.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
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
console.log(JSON.stringify({ port: service.address.port, dataDir }));
process.on('SIGTERM', () => {
  loopDelay.disable();
  const ms = (ns: number) => (ns / 1e6).toFixed(1);
  console.error(
    `server event-loop delay: p50 ${ms(loopDelay.percentile(50))} ms, p99 ${ms(loopDelay.percentile(99))} ms, max ${ms(loopDelay.max)} ms; market commands ${service.market.submitted}`,
  );
  service.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
