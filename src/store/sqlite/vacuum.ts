/**
 * Gives the space the embedded SQLite stores freed back to the file system: the pages history
 * retention and journal trimming free are reused by later writes but never returned, so a store
 * that was once large stays large. `VACUUM` rewrites each file without them.
 *
 * Invariants:
 * - Only with the service stopped: the data directory's lock is taken first (a running service
 *   holds it), and held until every file is done.
 * - Each file is checkpointed (its WAL folded in and truncated) before and after, so the sizes
 *   reported are the files' whole size. VACUUM needs free disk space about the size of the file.
 * - Files that do not exist (a backend elsewhere: PostgreSQL, NATS) are skipped.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { lockDataDir } from '../data-dir-lock.ts';
import { SQLITE_FILES } from '../open-stores.ts';

export interface VacuumedFile {
  readonly file: string;
  /** Bytes of the database and its WAL before and after. */
  readonly before: number;
  readonly after: number;
}

function bytesOf(path: string): number {
  let total = 0;
  for (const suffix of ['', '-wal'])
    total += statSync(`${path}${suffix}`, { throwIfNoEntry: false })?.size ?? 0;
  return total;
}

/** Vacuums every embedded store under `dataDir`; throws `StoreOpenError` while a service runs on it. */
export function vacuumSqliteStores(dataDir: string): VacuumedFile[] {
  const lock = lockDataDir(dataDir);
  try {
    const done: VacuumedFile[] = [];
    for (const file of Object.values(SQLITE_FILES)) {
      const path = join(dataDir, file);
      if (!existsSync(path)) continue;
      const before = bytesOf(path);
      const db = new Database(path);
      try {
        db.pragma('wal_checkpoint(TRUNCATE)');
        db.exec('VACUUM');
        db.pragma('wal_checkpoint(TRUNCATE)');
      } finally {
        db.close();
      }
      done.push({ file, before, after: bytesOf(path) });
    }
    return done;
  } finally {
    lock.release();
  }
}
