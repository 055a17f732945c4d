/**
 * Opens the journal, snapshot store and read store for the configured backend: PostgreSQL when
 * a database URL is given (all three in that database), otherwise SQLite files under dataDir
 * (journal.sqlite, snapshots.sqlite, read.sqlite). With a NATS journal target the journal is a
 * JetStream stream instead, and only the snapshots and the read store are there.
 *
 * Invariants:
 * - The three stores are independent connections; closing closes all of them (journal last, so
 *   everything acknowledged is flushed even if another close fails).
 * - One service per database: with a database URL the stores hold its advisory lock from before
 *   anything is read until `close` (./postgres/pg-fence.ts), on the journal's writer connection
 *   when the journal is there, else on a connection of its own (taken again when it drops, or
 *   reported lost: `fenceWatch`); and the database must describe this journal (its recorded
 *   identity), or nothing is opened.
 * - A store that fails to open closes those already opened (lock, journal, NATS connection)
 *   before the error is thrown, so a failed start leaves nothing behind; the error names the
 *   setting whose store failed (DATABASE_URL, JOURNAL_URL, DATA_DIR/<file>) unless it already says
 *   what to fix; a URL's password is masked.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { StoreOpenError } from './data-dir-lock.ts';
import {
  type BatchLimits,
  type Journal,
  JournalCorruptError,
  type JournalEntry,
  type SnapshotStore,
} from './journal.ts';
import {
  NatsJournal,
  NatsJournalStream,
  type NatsJournalTarget,
  readNatsJournal,
  redactedServers,
} from './nats/nats-journal.ts';
import {
  checkJournalIdentity,
  type FenceWatch,
  type JournalIdentity,
  PgDatabaseFence,
  recordJournalIdentityAt,
} from './postgres/pg-fence.ts';
import { PgJournal, type PgWriterWatch, readPgJournal } from './postgres/pg-journal.ts';
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
  /** A snapshot passed over because its checksum fails (recovery then uses an older one). */
  readonly onSnapshotSkipped?: (seq: number) => void;
  /**
   * With the journal on NATS and a database URL: what happens when the connection holding the
   * database's lock drops (./postgres/pg-fence.ts; `onLost`: it could not be taken again, and the
   * service must stop). With the journal in PostgreSQL its writer holds the lock: `journalWatch`.
   */
  readonly fenceWatch?: FenceWatch;
  /**
   * With the journal in PostgreSQL: the clock of its reconnections, and what happens when its
   * writer connection is lost and connected again (./postgres/pg-journal.ts).
   */
  readonly journalWatch?: PgWriterWatch;
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

/** A connection string with its password masked, to print. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(not a URL)';
  }
}

/** What an error says, also for those whose message is empty (pg's AggregateError of every address tried). */
function causeText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.message !== '') return error.message;
  const inner = (error as { errors?: unknown[] }).errors;
  if (Array.isArray(inner) && inner.length > 0) return inner.map(causeText).join('; ');
  return (error as { code?: string }).code ?? error.name;
}

/**
 * Runs one store's open; a failure that does not already say what to fix (`StoreOpenError`) nor
 * is the journal's own content (`JournalCorruptError`) becomes a `StoreOpenError` naming the
 * setting, its cause kept.
 */
async function opening<T>(setting: string, open: () => Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (error) {
    if (error instanceof StoreOpenError || error instanceof JournalCorruptError) throw error;
    throw new StoreOpenError(`${setting}: ${causeText(error)}`, { cause: error });
  }
}

/** The snapshot stores' `onSkipped` option from the settings' `onSnapshotSkipped`. */
function skippedOption(settings: Pick<StoreSettings, 'onSnapshotSkipped'>): {
  onSkipped?: (seq: number) => void;
} {
  return settings.onSnapshotSkipped === undefined ? {} : { onSkipped: settings.onSnapshotSkipped };
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
  const skipped = skippedOption(settings);
  const nats = settings.natsJournal ?? null;
  const openNats = (target: NatsJournalTarget) =>
    opening(`JOURNAL_URL (${redactedServers(target.servers)}, stream ${target.stream})`, () =>
      NatsJournal.open<C>({ ...target, ...limits }),
    );
  // Everything opened so far, closed again (newest first) when a later open fails.
  const opened: Array<{ close(): Promise<void> | void }> = [];
  const kept = <T extends { close(): Promise<void> | void }>(store: T): T => {
    opened.push(store);
    return store;
  };
  try {
    let journal: Journal<C>;
    let snapshots: SnapshotStore;
    let readStore: ReadStore;
    let fence: PgDatabaseFence | null = null;
    let backend: 'sqlite' | 'postgres';
    if (settings.databaseUrl !== null) {
      backend = 'postgres';
      const connectionString = settings.databaseUrl;
      const setting = `DATABASE_URL (${redactedUrl(connectionString)})`;
      const identity: JournalIdentity =
        nats === null ? { backend: 'postgres' } : { backend: 'nats', stream: nats.stream };
      // The database's lock and journal identity first: a second service on it, or one with
      // another journal, is refused before any store is opened (a stream created, say).
      if (nats === null) {
        journal = kept(
          await opening(setting, () =>
            PgJournal.open<C>({
              connectionString,
              ...limits,
              ...(settings.journalWatch === undefined ? {} : { watch: settings.journalWatch }),
              onLocked: (writer) => checkJournalIdentity(writer, identity),
            }),
          ),
        );
      } else {
        fence = kept(
          await opening(setting, () =>
            PgDatabaseFence.open(connectionString, identity, settings.fenceWatch ?? null),
          ),
        );
        // Then the journal: a second service on the same stream is refused before the rest opens.
        journal = kept(await openNats(nats));
      }
      snapshots = kept(
        await opening(setting, () => PgSnapshotStore.open({ connectionString, keep, ...skipped })),
      );
      const db = kept(await opening(setting, () => PgReadDb.open(connectionString)));
      readStore = await opening(setting, () => ReadStore.open({ db, ...readOptions }));
      // Closing it closes `db`, which stays on the list: closing that again does nothing.
      kept(readStore);
      // Every store is open: the database now belongs to this journal.
      const fenced = fence;
      await opening(setting, () =>
        fenced === null ? recordJournalIdentityAt(connectionString, identity) : fenced.record(),
      );
    } else {
      backend = 'sqlite';
      // The journal first: a second service on the same journal is refused before the others open.
      if (nats !== null) journal = kept(await openNats(nats));
      mkdirSync(settings.dataDir, { recursive: true });
      // Each failure names its file: a damaged or read-only one says which.
      const file = (name: string) => {
        const path = join(settings.dataDir, name);
        return { path, setting: `DATA_DIR/${name} (${path})` };
      };
      if (nats === null) {
        const { path, setting } = file(SQLITE_FILES.journal);
        journal = kept(await opening(setting, async () => SqliteJournal.open<C>({ path, ...limits })));
      }
      const snapshotsFile = file(SQLITE_FILES.snapshots);
      snapshots = kept(
        await opening(
          snapshotsFile.setting,
          async () =>
            new SqliteSnapshotStore({
              path: snapshotsFile.path,
              keep,
              ...skipped,
            }),
        ),
      );
      const readFile = file(SQLITE_FILES.read);
      const db = kept(await opening(readFile.setting, async () => new SqliteReadDb(readFile.path)));
      readStore = await opening(readFile.setting, () => ReadStore.open({ db, ...readOptions }));
    }
    const stores = { journal: journal!, snapshots, readStore, fence };
    return {
      backend,
      journalBackend: nats !== null ? 'nats' : backend,
      journal: stores.journal,
      snapshots,
      readStore,
      async close() {
        try {
          await stores.readStore.close();
          await stores.snapshots.close();
        } finally {
          try {
            await stores.journal.close();
          } finally {
            // Last: the database is another service's to open only once everything here is closed.
            await stores.fence?.close();
          }
        }
      },
    };
  } catch (error) {
    for (const store of opened.reverse()) {
      try {
        await store.close();
      } catch {
        // The open's own error is the one to report.
      }
    }
    throw error;
  }
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
  extends Pick<
    StoreSettings,
    'dataDir' | 'databaseUrl' | 'natsJournal' | 'keepSnapshots' | 'onSnapshotSkipped'
  > {
  /** Open the read store to write (its tables already made by the live side's `openStores`). */
  readonly readStore?: Pick<ReadStoreOptions, 'projections' | 'retention' | 'onError' | 'onWritten'>;
}

export async function openFollowerStores<C = unknown>(
  settings: FollowerSettings,
): Promise<FollowerStores<C>> {
  const keep = settings.keepSnapshots ?? 3;
  const skipped = skippedOption(settings);
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
    const snapshots = await PgSnapshotStore.open({ connectionString, keep, ...skipped });
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
  const snapshots = new SqliteSnapshotStore({
    path: join(settings.dataDir, SQLITE_FILES.snapshots),
    keep,
    ...skipped,
  });
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
