/**
 * `npm start`: the service with its embedded defaults (SQLite under DATA_DIR, simulator on),
 * configured from the environment and an optional CONFIG_FILE. SIGINT/SIGTERM shut down
 * gracefully; a second signal exits at once.
 */
import pino from 'pino';
import { ConfigError, loadConfig } from './config.ts';
import { startService } from './service.ts';

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
  const service = await startService({ config, logger });
  if (service.demoCredentials !== null) {
    logger.info(
      `demo API keys for ${service.demoCredentials.length} users are in ${config.dataDir}/credentials.json`,
    );
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal }, 'shutting down');
    service.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
