/**
 * A throwaway PostgreSQL and a JetStream nats-server for one test file, for tests that run on
 * every store backend. Either is null when not installed (never under CI=true: starting it fails).
 */
import { type NatsServer, startNats } from './nats.ts';
import { type PostgresServer, type StartPostgresOptions, startPostgres } from './postgres.ts';

export interface StoreServers {
  readonly postgres: PostgresServer | null;
  readonly nats: NatsServer | null;
  /** Stops both, NATS first. */
  stop(): Promise<void>;
}

export async function startStoreServers(postgresOptions: StartPostgresOptions = {}): Promise<StoreServers> {
  const postgres = await startPostgres(postgresOptions);
  const nats = await startNats({ jetstream: true }).catch(async (error: unknown) => {
    await postgres?.stop();
    throw error;
  });
  return {
    postgres,
    nats,
    async stop() {
      try {
        await nats?.stop();
      } finally {
        await postgres?.stop();
      }
    },
  };
}
