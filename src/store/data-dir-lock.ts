/**
 * One service per data directory: an exclusive lock on `DATA_DIR/service.lock`, taken before any
 * store is opened and held until the service has closed them.
 *
 * Invariants:
 * - The lock is SQLite's own file lock (POSIX advisory, in EXCLUSIVE locking mode), so the
 *   operating system drops it when the process dies, kill -9 included: a crash never leaves a
 *   stale lock, and no pid file has to be trusted. SQLite also refuses a second connection of the
 *   same process, so two services started in one process are refused as well.
 * - A second service is refused with `StoreOpenError` before it reads or writes anything else;
 *   without it, both journaled commands under the same seqs and one of them died on the
 *   journal's unique key (or, the wrong way round, killed the running one).
 * - A directory that cannot be created or written is refused the same way, with its cause; a
 *   damaged lock file (not a SQLite database) is named, to be deleted while no service runs.
 * - `service.pid` beside it names the holder, for the message only.
 * - `StoreOpenError` is also what the PostgreSQL journal throws when another writer holds it.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';

export class StoreOpenError extends Error {
  override readonly name = 'StoreOpenError';
}

export interface DataDirLock {
  release(): void;
}

const LOCK_FILE = 'service.lock';
const PID_FILE = 'service.pid';

export function lockDataDir(dataDir: string): DataDirLock {
  const dir = resolve(dataDir);
  let db: Database.Database;
  try {
    mkdirSync(dir, { recursive: true });
    db = new Database(join(dir, LOCK_FILE), { timeout: 0 });
  } catch (error) {
    throw new StoreOpenError(`DATA_DIR ${dir} cannot be created or opened: ${messageOf(error)}`);
  }
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    // A write takes the exclusive lock, which EXCLUSIVE mode keeps until the connection closes.
    db.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER NOT NULL); DELETE FROM holder;');
    db.prepare('INSERT INTO holder (pid) VALUES (?)').run(process.pid);
  } catch (error) {
    db.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY') {
      const holder = readHolder(dir);
      throw new StoreOpenError(
        `DATA_DIR ${dir} is in use by another running service${holder === null ? '' : ` (pid ${holder})`}; ` +
          'stop it first or choose another DATA_DIR',
      );
    }
    const code = (error as { code?: string }).code;
    if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
      throw new StoreOpenError(
        `DATA_DIR ${dir}: its lock file ${join(dir, LOCK_FILE)} is damaged (${messageOf(error)}); ` +
          'it holds nothing else: delete it when no service runs on this DATA_DIR',
      );
    }
    throw new StoreOpenError(`DATA_DIR ${dir} is not writable: ${messageOf(error)}`);
  }
  try {
    writeFileSync(join(dir, PID_FILE), `${process.pid}\n`);
  } catch (error) {
    db.close();
    throw new StoreOpenError(`DATA_DIR ${dir} is not writable: ${messageOf(error)}`);
  }
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      db.close();
    },
  };
}

function readHolder(dir: string): number | null {
  try {
    const pid = Number(readFileSync(join(dir, PID_FILE), 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
