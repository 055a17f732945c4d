/**
 * Makes a termination signal end this test process through `process.exit`, so the 'exit' hooks
 * that stop the servers it spawned (nats-server, PostgreSQL) run. By default a signal ends the
 * process without them, and the test runner's SIGTERM to a file that timed out left its servers
 * running after the run.
 */
const SIGNALS = { SIGTERM: 15, SIGINT: 2, SIGHUP: 1 } as const;
let installed = false;

export function exitOnSignal(): void {
  if (installed) return;
  installed = true;
  for (const [signal, number] of Object.entries(SIGNALS)) {
    process.once(signal, () => process.exit(128 + number));
  }
}
