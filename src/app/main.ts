/**
 * `npm start`: the service with its embedded defaults (SQLite under DATA_DIR, simulator on),
 * configured from the environment and an optional CONFIG_FILE. SIGINT/SIGTERM shut down
 * gracefully; a second signal exits at once. A fatal core error (the journal failed, or the core
 * threw on a command) closes the service and exits with 1, so that a restart replays the journal.
 */
import pino from 'pino';
import { StoreOpenError } from '../store/data-dir-lock.ts';
import { ConfigError, loadConfig } from './config.ts';
import { PortInUseError, type RunningService, startService } from './service.ts';

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`configuration error: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
  const logger = pino({ level: config.logLevel });
  let exitCode = 0;
  let stopping = false;
  let service: RunningService | null = null;
  const stop = (reason: string) => {
    if (stopping || service === null) return;
    stopping = true;
    logger.info({ reason }, 'shutting down');
    service.close().then(
      () => process.exit(exitCode),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  const onSignal = (signal: string) => (stopping ? process.exit(1) : stop(signal));
  const onFatal = () => {
    exitCode = 1;
    stop('fatal error');
  };
  service = await startService({ config, logger, onFatal });
  if (service.demoCredentials !== null) {
    logger.info(
      `demo API keys for ${service.demoCredentials.length} users are in ${config.dataDir}/credentials.json`,
    );
  }
  if (exitCode !== 0) stop('fatal error during start');
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
}

main().catch((error: unknown) => {
  // Storage or port in use, or a data directory not writable: one line, no stack.
  if (error instanceof StoreOpenError || error instanceof PortInUseError) {
    console.error(`cannot start: ${error.message}`);
  } else console.error(error);
  process.exit(1);
});
