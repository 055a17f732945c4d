/**
 * `npm start`: the service with its embedded defaults (SQLite under DATA_DIR, simulator on),
 * configured from the environment and an optional CONFIG_FILE. SIGINT/SIGTERM shut down
 * gracefully; a second signal exits at once. A signal during the start aborts it: what it started
 * is stopped (the data directory's lock released), logged, exit 0. A fatal core error (the journal
 * failed, or the core threw on a command) closes the service and exits with 1, so that a restart
 * replays the journal. A start that fails prints `cannot start: <why>` on one line and exits with
 * 1; the stack follows only at LOG_LEVEL debug or trace.
 */
import pino from 'pino';
import { ConfigError, loadConfig } from './config.ts';
import { type RunningService, StartAbortedError, startService } from './service.ts';

/** The failed start's stack is printed too (LOG_LEVEL debug or trace). */
let printStack = false;

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
  printStack = config.logLevel === 'debug' || config.logLevel === 'trace';
  const logger = pino({ level: config.logLevel });
  let exitCode = 0;
  let stopping = false;
  let service: RunningService | null = null;
  const starting = new AbortController();
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
  const onSignal = (signal: string) => {
    if (service !== null) return stopping ? process.exit(1) : stop(signal);
    // During the start: the first signal aborts it, a second exits at once.
    if (starting.signal.aborted) process.exit(1);
    logger.info({ signal }, 'signal during the start: aborting it');
    starting.abort(signal);
  };
  const onFatal = () => {
    exitCode = 1;
    stop('fatal error');
  };
  // Before the start: a signal during it must not kill the process half-way.
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  logger.info({ dataDir: config.dataDir }, 'starting');
  try {
    service = await startService({ config, logger, onFatal, signal: starting.signal });
  } catch (error) {
    if (!(error instanceof StartAbortedError)) throw error;
    logger.info(`start aborted by ${String(starting.signal.reason)}: everything it started is stopped`);
    process.exit(exitCode);
  }
  if (service.demoCredentials !== null) {
    logger.info(
      `demo API keys for ${service.demoCredentials.length} users are in ${config.dataDir}/credentials.json`,
    );
  }
  if (exitCode !== 0) stop('fatal error during start');
  // A signal that came as the start ended (after its last step): stopped now.
  else if (starting.signal.aborted) stop(String(starting.signal.reason));
}

main().catch((error: unknown) => {
  // Storage, port, key, token or data directory: one line naming what to fix; the stack at debug.
  const message = error instanceof Error ? error.message : String(error);
  console.error(`cannot start: ${message.replace(/\s*\n\s*/g, ' ')}`);
  if (printStack) console.error(error);
  process.exit(1);
});
