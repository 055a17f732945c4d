/**
 * Opens the journal, snapshot store and read store for the configured backend: PostgreSQL when
 * a database URL is given (all three in that database), otherwise SQLite files under dataDir
 * (journal.sqlite, snapshots.sqlite, read.sqlite). With a NATS journal target the journal is a
 * JetStream stream instead, and only the snapshots and the read store are there.
 *
 * Invariants:
 * - The three stores are independent connections; closing closes all of them (journal last, so
 *   everything acknowledged is flushed even if another close fails).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { BatchLimits, Journal, JournalEntry, SnapshotStore } from './journal.ts';
import {
  NatsJournal,
  NatsJournalStream,
  type NatsJournalTarget,
  readNatsJournal,
} from './nats/nats-journal.ts';
import { PgJournal, readPgJournal } from './postgres/pg-journal.ts';
import { PgSnapshotStore } from './postgres/pg-snapshots.ts';
import type { KindOf } from './read/core-projections.ts';
import type { HistoryWindows } from './read/history-queries.ts';
import type { Projection } from './read/projection.ts';
import { PgReadDb, SqliteReadDb } from './read/read-db.ts';
import { ReadStore, type ReadStoreOptions, type RetentionSettings } from './read/read-store.ts';
import { readSqliteJournal, SqliteJournal } from './sqlite/sqlite-journal.ts';
import { SqliteSnapshotStore } from './sqlite/sqlite-snapshots.ts';

/** The embedded stores' files under dataDir (the live stores and the follower open the same). */
export const SQLITE_FILES = {
  journal: 'journal.sqlite',
  snapshots: 'snapshots.sqlite',
  read: 'read.sqlite',
} as const;

export interface StoreSettings {
  readonly dataDir: string;
  /** PostgreSQL connection string, or null for embedded SQLite. */
  readonly databaseUrl: string | null;
  /** The journal on NATS JetStream (JOURNAL_URL); absent or null: with the other stores. */
  readonly natsJournal?: NatsJournalTarget | null;
  readonly batchLimits?: BatchLimits;
  /** Snapshots retained (default 3). */
  readonly keepSnapshots?: number;
  readonly projections?: readonly Projection[];
  readonly kindOf?: KindOf;
  readonly windows?: HistoryWindows;
  readonly retention?: RetentionSettings;
  readonly onReadStoreError?: (error: unknown) => void;
}

export interface Stores<C> {
  /** Where the snapshots and the read store are (and the journal, unless `journalBackend` says). */
  readonly backend: 'sqlite' | 'postgres';
  readonly journalBackend: 'sqlite' | 'postgres' | 'nats';
  readonly journal: Journal<C>;
  readonly snapshots: SnapshotStore;
  readonly readStore: ReadStore;
  close(): Promise<void>;
}

export async function openStores<C = unknown>(settings: StoreSettings): Promise<Stores<C>> {
  const readOptions = {
    ...(settings.projections === undefined ? {} : { projections: settings.projections }),
    ...(settings.kindOf === undefined ? {} : { kindOf: settings.kindOf }),
    ...(settings.windows === undefined ? {} : { windows: settings.windows }),
    ...(settings.retention === undefined ? {} : { retention: settings.retention }),
    ...(settings.onReadStoreError === undefined ? {} : { onError: settings.onReadStoreError }),
  };
  const limits = settings.batchLimits === undefined ? {} : { limits: settings.batchLimits };
  const keep = settings.keepSnapshots ?? 3;
  let journal: Journal<C>;
  let snapshots: SnapshotStore;
  let readStore: ReadStore;
  let backend: 'sqlite' | 'postgres';
  const nats = settings.natsJournal ?? null;
  // The journal first: a second service on the same journal is refused before the others open.
  if (nats !== null) journal = await NatsJournal.open<C>({ ...nats, ...limits });
  if (settings.databaseUrl !== null) {
    backend = 'postgres';
    const connectionString = settings.databaseUrl;
    if (nats === null) journal = await PgJournal.open<C>({ connectionString, ...limits });
    snapshots = await PgSnapshotStore.open({ connectionString, keep });
    readStore = await ReadStore.open({ db: await PgReadDb.open(connectionString), ...readOptions });
  } else {
    backend = 'sqlite';
    mkdirSync(settings.dataDir, { recursive: true });
    if (nats === null) {
      journal = SqliteJournal.open<C>({ path: join(settings.dataDir, SQLITE_FILES.journal), ...limits });
    }
    snapshots = new SqliteSnapshotStore({ path: join(settings.dataDir, SQLITE_FILES.snapshots), keep });
    readStore = await ReadStore.open({
      db: new SqliteReadDb(join(settings.dataDir, SQLITE_FILES.read)),
      ...readOptions,
    });
  }
  return {
    backend,
    journalBackend: nats !== null ? 'nats' : backend,
    journal: journal!,
    snapshots,
    readStore,
    async close() {
      try {
        await readStore.close();
        await snapshots.close();
      } finally {
        await journal!.close();
      }
    },
  };
}

/**
 * What a follower of the live journal needs (the snapshot replica on its worker thread): the
 * journal to read, on its own read-only connection, and the snapshot store; and, when it writes
 * the read store in the live core's stead, that store on a connection of its own. Opening writes
 * nothing to the journal: the live writer owns it.
 */
export interface FollowerStores<C> {
  readJournal(fromSeq: number): AsyncIterable<readonly JournalEntry<C>[]>;
  readonly snapshots: SnapshotStore;
  /** Present when asked for (`readStore`); its SQLite commits run on the follower's own thread. */
  readonly readStore: ReadStore | null;
  close(): Promise<void>;
}

export interface FollowerSettings
  extends Pick<StoreSettings, 'dataDir' | 'databaseUrl' | 'natsJournal' | 'keepSnapshots'> {
  /** Open the read store to write (its tables already made by the live side's `openStores`). */
  readonly readStore?: Pick<ReadStoreOptions, 'projections' | 'retention' | 'onError' | 'onWritten'>;
}

export async function openFollowerStores<C = unknown>(
  settings: FollowerSettings,
): Promise<FollowerStores<C>> {
  const keep = settings.keepSnapshots ?? 3;
  const readOptions = settings.readStore;
  const nats = settings.natsJournal ?? null;
  // A NATS journal is read on the follower's own connection, whichever store holds the rest.
  const natsReader = nats === null ? null : await NatsJournalStream.connect(nats, 'journal follower');
  const readNats = (fromSeq: number) => readNatsJournal<C>(natsReader!, fromSeq);
  if (settings.databaseUrl !== null) {
    const connectionString = settings.databaseUrl;
    const pool = new pg.Pool({ connectionString, max: 1 });
    // An idle connection dropped by the server must not crash the process; the next query fails.
    pool.on('error', () => undefined);
    const snapshots = await PgSnapshotStore.open({ connectionString, keep });
    const readStore =
      readOptions === undefined
        ? null
        : await ReadStore.open({ db: await PgReadDb.open(connectionString), ...readOptions });
    return {
      readJournal: (fromSeq) => (natsReader === null ? readPgJournal<C>(pool, fromSeq) : readNats(fromSeq)),
      snapshots,
      readStore,
      async close() {
        try {
          await readStore?.close();
          await snapshots.close();
        } finally {
          await pool.end();
          await natsReader?.close();
        }
      },
    };
  }
  const journal =
    natsReader !== null
      ? null
      : new Database(join(settings.dataDir, SQLITE_FILES.journal), { readonly: true, fileMustExist: true });
  const snapshots = new SqliteSnapshotStore({ path: join(settings.dataDir, SQLITE_FILES.snapshots), keep });
  const readStore =
    readOptions === undefined
      ? null
      : await ReadStore.open({
          // The follower is a worker thread already: a writer thread of its own would only add a copy.
          db: new SqliteReadDb(join(settings.dataDir, SQLITE_FILES.read), { writerThread: false }),
          ...readOptions,
        });
  return {
    readJournal: (fromSeq) => (journal === null ? readNats(fromSeq) : readSqliteJournal<C>(journal, fromSeq)),
    snapshots,
    readStore,
    async close() {
      try {
        await readStore?.close();
        await snapshots.close();
      } finally {
        journal?.close();
        await natsReader?.close();
      }
    },
  };
}
