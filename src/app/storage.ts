/**
 * Storage selection: SQLite files under `dataDir` by default, PostgreSQL when `databaseUrl` is
 * set. The journal, snapshots and read store share the choice; the key store stays in SQLite
 * under `dataDir` (secrets sealed with the configured key) in both cases.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { MachineCommand } from '../core/machine.ts';
import type { Journal, SnapshotStore } from '../store/journal.ts';
import { PgJournal } from '../store/postgres/pg-journal.ts';
import { PgSnapshotStore } from '../store/postgres/pg-snapshots.ts';
import { PgReadDb, type ReadDb, SqliteReadDb } from '../store/read/read-db.ts';
import { SqliteJournal } from '../store/sqlite/sqlite-journal.ts';
import { SqliteSnapshotStore } from '../store/sqlite/sqlite-snapshots.ts';

export interface Storage {
  readonly journal: Journal<MachineCommand>;
  readonly snapshots: SnapshotStore;
  readonly readDb: ReadDb;
  readonly kind: 'sqlite' | 'postgres';
}

export async function openStorage(dataDir: string, databaseUrl: string | null): Promise<Storage> {
  mkdirSync(dataDir, { recursive: true });
  if (databaseUrl !== null) {
    return {
      journal: await PgJournal.open<MachineCommand>({ connectionString: databaseUrl }),
      snapshots: await PgSnapshotStore.open({ connectionString: databaseUrl }),
      readDb: await PgReadDb.open(databaseUrl),
      kind: 'postgres',
    };
  }
  return {
    journal: SqliteJournal.open<MachineCommand>({ path: join(dataDir, 'journal.db') }),
    snapshots: new SqliteSnapshotStore({ path: join(dataDir, 'snapshots.db') }),
    readDb: new SqliteReadDb(join(dataDir, 'read.db')),
    kind: 'sqlite',
  };
}
