/**
 * The service configuration the benches start: embedded defaults, a free loopback port, rate
 * limits off (the load generator is one key), and only warnings logged.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Config, loadConfig } from '../src/app/config.ts';

/** A fresh data directory in the OS temp dir, removed when the process exits (a run writes 100s of MB). */
export function throwawayDataDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The V8 flags `npm start` runs the service with (docs/decisions.md, "Young generation"). */
export const SERVICE_NODE_FLAGS = '--max-semi-space-size=8 --no-allocation-site-pretenuring';

export function benchConfig(
  dataDir: string,
  options: {
    readonly simulator: boolean;
    readonly logLevel?: Config['logLevel'];
    readonly snapshotReplica?: boolean;
  },
): Config {
  return loadConfig({
    env: {},
    overrides: {
      port: 0,
      host: '127.0.0.1',
      dataDir,
      simulator: options.simulator,
      ...(options.snapshotReplica === undefined ? {} : { snapshotReplica: options.snapshotReplica }),
      logLevel: options.logLevel ?? 'warn',
      rateLimits: { enabled: false },
    },
  });
}
