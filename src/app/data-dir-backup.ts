/**
 * A consistent copy of a data directory, taken while the service runs: what `DATA_DIR` pointed at
 * the copy starts from (a restore is starting the service on it).
 *
 * Invariants:
 * - Each SQLite store is copied by `VACUUM INTO` on a connection of its own: one read transaction,
 *   so the copy is the store as of one commit, whatever the service writes meanwhile (copying
 *   the files of a store in WAL mode while it is written would not be), and compact.
 * - Order: the read store, then the snapshots, then the journal. So the copy's journal holds at
 *   least every command the copied read store and snapshots saw: the restored service replays
 *   the journal after its snapshot and re-feeds the read store from its seq, as after a crash
 *   (a snapshot ahead of the durable journal is discarded then, as always).
 * - The key store and the small files beside it (the secrets key, the admin token, the demo
 *   credentials) are copied too, with their modes; the replay memory is not: a restored copy is
 *   treated as after a crash (recently signed requests are refused until their window passes).
 * - The target must be new or empty; every file and the directory are fsynced before it returns.
 *   A backup that fails part way leaves the target as it found it (gone, or empty again).
 * - `verifyBackup` checks a copy without changing its contents: SQLite's `quick_check` of every store, every
 *   journal record's checksum and the seqs' contiguity, and that the snapshot a restore would
 *   start from loads and reaches the journal's start. A copy of a service whose journal is kept
 *   elsewhere (`JOURNAL_URL`) holds none: then it reports the newest snapshot that loads.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { KEYS_FILE } from '../api/auth/open-key-store.ts';
import { fsyncPath } from '../store/durable-file.ts';
import { JournalCorruptError } from '../store/journal.ts';
import { SQLITE_FILES } from '../store/open-stores.ts';
import { readSqliteJournal } from '../store/sqlite/sqlite-journal.ts';
import { SqliteSnapshotStore } from '../store/sqlite/sqlite-snapshots.ts';

/** SQLite files in copy order (see the invariants), then plain files. */
const DATABASES = [SQLITE_FILES.read, SQLITE_FILES.snapshots, SQLITE_FILES.journal, KEYS_FILE];
const PLAIN_FILES = ['secret.key', 'admin.token', 'credentials.json'];

export interface CopiedFile {
  readonly file: string;
  readonly bytes: number;
}

export class BackupTargetError extends Error {
  override name = 'BackupTargetError';
}

export function backupDataDir(dataDir: string, target: string): CopiedFile[] {
  if (existsSync(target) && readdirSync(target).length > 0) {
    throw new BackupTargetError(`the backup target ${target} is not empty: give a new or empty directory`);
  }
  const created = !existsSync(target);
  mkdirSync(target, { recursive: true, mode: 0o700 });
  const copied: CopiedFile[] = [];
  try {
    for (const file of DATABASES) {
      const source = join(dataDir, file);
      if (!existsSync(source)) continue;
      const destination = join(target, file);
      const db = new Database(source, { fileMustExist: true });
      try {
        db.prepare('VACUUM INTO ?').run(destination);
      } finally {
        db.close();
      }
      fsyncPath(destination);
      copied.push({ file, bytes: statSync(destination).size });
    }
    for (const file of PLAIN_FILES) {
      const source = join(dataDir, file);
      if (!existsSync(source)) continue;
      const destination = join(target, file);
      copyFileSync(source, destination);
      fsyncPath(destination);
      copied.push({ file, bytes: statSync(destination).size });
    }
    fsyncPath(target);
  } catch (error) {
    // The target was new or empty: leave it so (a full disk, a store that would not copy), and a
    // retry is not refused as a non-empty target.
    if (created) rmSync(target, { recursive: true, force: true });
    else for (const file of readdirSync(target)) rmSync(join(target, file), { recursive: true, force: true });
    throw error;
  }
  return copied;
}

export interface BackupCheck {
  /** The journal's stored seqs, first to last (0, 0 when empty); null when the copy holds none. */
  readonly journal: { readonly firstSeq: number; readonly lastSeq: number } | null;
  /**
   * The snapshot a restore would start from (null: none, the journal is replayed from seq 1); with
   * no journal in the copy, the newest snapshot that loads.
   */
  readonly snapshotSeq: number | null;
}

export class BackupVerifyError extends Error {
  override name = 'BackupVerifyError';
}

/** Checks a copy made by `backupDataDir` (see the invariants); throws `BackupVerifyError`. */
export async function verifyBackup(dir: string): Promise<BackupCheck> {
  if (!DATABASES.some((file) => existsSync(join(dir, file)))) {
    throw new BackupVerifyError(`${dir} holds no store: it is no copy of a data directory`);
  }
  for (const file of DATABASES) {
    const path = join(dir, file);
    if (!existsSync(path)) continue;
    const db = new Database(path, { readonly: true, fileMustExist: true });
    try {
      const result = db.pragma('quick_check', { simple: true });
      if (result !== 'ok')
        throw new BackupVerifyError(`${file} fails SQLite's quick_check: ${String(result)}`);
    } finally {
      db.close();
    }
  }
  if (!existsSync(join(dir, SQLITE_FILES.journal)))
    return { journal: null, snapshotSeq: await newestSnapshotSeq(dir) };
  // Read-only connections: verifying leaves the copy byte for byte as it was.
  const journal = new Database(join(dir, SQLITE_FILES.journal), { readonly: true, fileMustExist: true });
  const snapshots = existsSync(join(dir, SQLITE_FILES.snapshots))
    ? new SqliteSnapshotStore({ path: join(dir, SQLITE_FILES.snapshots), readonly: true })
    : null;
  try {
    let firstSeq = 0;
    let lastSeq = 0;
    // Reading verifies each record's checksum (a bad one is an error, even the last: a copy has
    // no torn tail).
    try {
      for await (const batch of readSqliteJournal(journal, 0)) {
        for (const entry of batch) {
          if (firstSeq === 0) firstSeq = entry.seq;
          else if (entry.seq !== lastSeq + 1) {
            throw new BackupVerifyError(`the journal skips from seq ${lastSeq} to ${entry.seq}`);
          }
          lastSeq = entry.seq;
        }
      }
    } catch (error) {
      if (error instanceof JournalCorruptError) throw new BackupVerifyError(error.message);
      throw error;
    }
    const snapshot = (await snapshots?.latestSnapshot(lastSeq)) ?? null;
    if (firstSeq > 1 && (snapshot === null || snapshot.seq < firstSeq - 1)) {
      throw new BackupVerifyError(
        `the journal starts at seq ${firstSeq} and no snapshot that loads reaches it (newest: ${snapshot?.seq ?? 'none'})`,
      );
    }
    return { journal: { firstSeq, lastSeq }, snapshotSeq: snapshot?.seq ?? null };
  } finally {
    await snapshots?.close();
    journal.close();
  }
}

async function newestSnapshotSeq(dir: string): Promise<number | null> {
  if (!existsSync(join(dir, SQLITE_FILES.snapshots))) return null;
  const snapshots = new SqliteSnapshotStore({ path: join(dir, SQLITE_FILES.snapshots), readonly: true });
  try {
    return (await snapshots.latestSnapshot())?.seq ?? null;
  } finally {
    await snapshots.close();
  }
}
