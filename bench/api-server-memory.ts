/**
 * Alternative server half of the api bench (BENCH_SERVER=api-server-memory.ts): the gateway over
 * the real engine behind an in-process sequencer with no journal, to separate gateway + engine
 * cost from durability cost.
 */
import { createGatewayService } from '../src/api/service.ts';
import { SystemClock } from '../src/app/clock.ts';
import { startEngineVenue } from '../test/support/engine-venue.ts';
import { benchConfig, throwawayDataDir } from './bench-config.ts';

const dataDir = throwawayDataDir('bench-mem-');
const config = benchConfig(dataDir, { simulator: false });
const engine = await startEngineVenue(Date.now());
const realNow = () => Date.now();
const svc = await createGatewayService({
  config,
  commands: { submit: engine.submit, now: realNow },
  reads: engine.reads,
  history: engine.history,
  events: engine,
  clock: new SystemClock(),
});
const { port } = await svc.start();
console.log(JSON.stringify({ port, dataDir, journal: false }));
// Exit (rather than die) on SIGTERM so a --cpu-prof profile is written.
process.on('SIGTERM', () => process.exit(0));
// The bench asks for stall figures with SIGUSR2 after each phase; this server keeps none, and
// SIGUSR2's default action would kill it before the next phase.
process.on('SIGUSR2', () => {});
