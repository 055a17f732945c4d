/**
 * The service's three store configurations, for tests that run the real service child on each:
 *
 * - `SQLite`: journal, snapshots and read store as files under DATA_DIR (the embedded default);
 * - `PostgreSQL`: all three in a database of a throwaway server with fsync on (DATABASE_URL);
 * - `NATS JetStream + PostgreSQL`: the journal on a stream of a throwaway nats-server
 *   (JOURNAL_URL, JOURNAL_STREAM, JOURNAL_REPLICAS), snapshots and read store in PostgreSQL.
 *
 * Each backend carries the environment the service child gets and the same settings for
 * `openStores` in the test process, so a test opens exactly the stores the service used. Each
 * server backend has a database (and stream) of its own, for one service at a time.
 *
 * A server that is not installed leaves its backends `missing` (skip and say why); under CI=true
 * the support code throws instead, so CI fails rather than skips.
 */
import type { NatsJournalTarget } from '../../src/store/nats/nats-journal.ts';
import { startStoreServers } from './store-servers.ts';

export interface ServiceBackend {
  readonly name: string;
  /** Why it cannot run here (a server is not installed), or null. */
  readonly missing: string | null;
  /** Settings for the service child's environment (beside DATA_DIR). */
  readonly env: Readonly<Record<string, string>>;
  /** Where the service keeps its snapshots and read store, and its journal (it logs them). */
  readonly storage: 'sqlite' | 'postgres';
  readonly journal: 'sqlite' | 'postgres' | 'nats';
  /** The same stores for `openStores` (with the test's DATA_DIR). */
  readonly stores: { readonly databaseUrl: string | null; readonly natsJournal: NatsJournalTarget | null };
}

export interface ServiceBackends {
  /** SQLite, PostgreSQL, NATS JetStream + PostgreSQL, in this order. */
  readonly all: readonly ServiceBackend[];
  /** Stops the servers started for the backends. */
  stop(): Promise<void>;
}

/** Empty values turn a setting off (config: '' is null), whatever the outer environment says. */
const EMBEDDED_ENV = { DATABASE_URL: '', JOURNAL_URL: '' } as const;

export async function startServiceBackends(): Promise<ServiceBackends> {
  // fsync on, as in production: commits take real time and batches queue behind one another, so a
  // journal that answered before its write reached the server would lose what it answered. With
  // fsync off the server commits so fast that a kill never caught such a write (see the header of
  // test/crash/crash-restart.test.ts).
  const servers = await startStoreServers({ fsync: true });
  const { postgres, nats: natsServer } = servers;
  const sqlite: ServiceBackend = {
    name: 'SQLite',
    missing: null,
    storage: 'sqlite',
    journal: 'sqlite',
    env: EMBEDDED_ENV,
    stores: { databaseUrl: null, natsJournal: null },
  };
  const missingPostgres = postgres === null ? 'PostgreSQL is not installed' : null;
  const pgUrl = postgres === null ? null : await postgres.createDatabase('backend_postgres');
  const pgBackend: ServiceBackend = {
    name: 'PostgreSQL',
    missing: missingPostgres,
    storage: 'postgres',
    journal: 'postgres',
    env: { ...EMBEDDED_ENV, DATABASE_URL: pgUrl ?? '' },
    stores: { databaseUrl: pgUrl, natsJournal: null },
  };
  const natsUrl = postgres === null ? null : await postgres.createDatabase('backend_nats');
  const target: NatsJournalTarget | null =
    natsServer === null ? null : { servers: natsServer.url, stream: 'BACKEND_JOURNAL', replicas: 1 };
  const natsBackend: ServiceBackend = {
    name: 'NATS JetStream + PostgreSQL',
    missing: natsServer === null ? 'nats-server is not installed' : missingPostgres,
    storage: 'postgres',
    journal: 'nats',
    env: {
      DATABASE_URL: natsUrl ?? '',
      JOURNAL_URL: target?.servers ?? '',
      JOURNAL_STREAM: target?.stream ?? 'BACKEND_JOURNAL',
      JOURNAL_REPLICAS: String(target?.replicas ?? 1),
    },
    stores: { databaseUrl: natsUrl, natsJournal: target },
  };
  return {
    all: [sqlite, pgBackend, natsBackend],
    stop: () => servers.stop(),
  };
}
