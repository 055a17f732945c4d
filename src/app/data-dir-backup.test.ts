/**
 * `backupDataDir` and `verifyBackup` on small SQLite data directories: the target must be new or
 * empty and private; verification refuses a store that fails `quick_check`, a journal that no
 * kept snapshot reaches, and reports the snapshot a restore starts from (never one past the
 * journal's end); it leaves no connection (nor its WAL files) behind.
 */
import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { SQLITE_FILES } from '../store/open-stores.ts';
import { BackupTargetError, BackupVerifyError, backupDataDir, verifyBackup } from './data-dir-backup.ts';
import { COMMANDS, journalCommands } from './journal-testkit.ts';

/** A data directory under a new temporary root, journaled as `journalCommands` does. */
async function dataDirWith(snapshotSeqs: readonly number[]): Promise<{ root: string; dataDir: string }> {
  const root = mkdtempSync(join(tmpdir(), 'backup-unit-'));
  const dataDir = join(root, 'data');
  mkdirSync(dataDir);
  await journalCommands(dataDir, snapshotSeqs);
  return { root, dataDir };
}

/** Deletes the copy's journal records before `firstSeq`, as a journal trim does. */
function trimCopy(copy: string, firstSeq: number): void {
  const db = new Database(join(copy, SQLITE_FILES.journal));
  try {
    db.prepare('DELETE FROM journal WHERE first_seq < ?').run(firstSeq);
  } finally {
    db.close();
  }
}

test('a target holding even one file is refused, and nothing is copied into it', async () => {
  const { root, dataDir } = await dataDirWith([]);
  try {
    const target = join(root, 'copy');
    mkdirSync(target);
    writeFileSync(join(target, 'unrelated.txt'), 'keep me');
    assert.throws(
      () => backupDataDir(dataDir, target),
      (error: unknown) => error instanceof BackupTargetError,
      'a target with one file in it is not empty',
    );
    assert.deepEqual(readdirSync(target), ['unrelated.txt'], 'nothing was written into the refused target');
    assert.equal(readFileSync(join(target, 'unrelated.txt'), 'utf8'), 'keep me', 'its file is untouched');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a new target directory is created private (0700)', async () => {
  const { root, dataDir } = await dataDirWith([]);
  try {
    const target = join(root, 'copy');
    backupDataDir(dataDir, target);
    assert.equal(
      statSync(target).mode & 0o777,
      0o700,
      'the copy holds the secrets: only its owner may read it',
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a store that fails quick_check fails verification, naming the file', async () => {
  const { root, dataDir } = await dataDirWith([]);
  try {
    const target = join(root, 'copy');
    backupDataDir(dataDir, target);
    // A read store whose table page is garbage: it opens, but quick_check finds the damage.
    const readPath = join(target, SQLITE_FILES.read);
    const db = new Database(readPath);
    db.pragma('page_size = 4096');
    db.pragma('journal_mode = DELETE');
    db.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, label TEXT)');
    const insert = db.prepare('INSERT INTO orders (label) VALUES (?)');
    for (let i = 0; i < 200; i++) insert.run(`order-${i}`.padEnd(60, 'x'));
    db.close();
    const bytes = readFileSync(readPath);
    bytes.fill(0xff, 4096, 4096 + 8); // page 2's b-tree header (the table's root)
    writeFileSync(readPath, bytes);
    await assert.rejects(
      verifyBackup(target),
      (error: unknown) =>
        error instanceof BackupVerifyError && /read\.sqlite fails SQLite's quick_check/.test(error.message),
      'a damaged store must not verify',
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a journal that skips records fails verification', async () => {
  const { root, dataDir } = await dataDirWith([]);
  try {
    const target = join(root, 'copy');
    backupDataDir(dataDir, target);
    const db = new Database(join(target, SQLITE_FILES.journal));
    db.prepare('DELETE FROM journal WHERE first_seq = 3').run();
    db.close();
    await assert.rejects(
      verifyBackup(target),
      (error: unknown) => error instanceof BackupVerifyError && /gap|skips/.test(error.message),
      'a journal with a hole must not verify',
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a trimmed journal verifies only with a snapshot at or after the seq before its start', async () => {
  // Snapshots at 1 and 2; the copy's journal starts at 3: the snapshot at 2 reaches it.
  const reached = await dataDirWith([1, 2]);
  try {
    const target = join(reached.root, 'copy');
    backupDataDir(reached.dataDir, target);
    trimCopy(target, 3);
    assert.deepEqual(
      await verifyBackup(target),
      { journal: { firstSeq: 3, lastSeq: COMMANDS.length }, snapshotSeq: 2 },
      'the journal starts right after the snapshot at 2',
    );
  } finally {
    rmSync(reached.root, { recursive: true, force: true });
  }
  // Only a snapshot at 1; the journal starts at 3: seq 2 is lost, a restore would fail.
  const short = await dataDirWith([1]);
  try {
    const target = join(short.root, 'copy');
    backupDataDir(short.dataDir, target);
    trimCopy(target, 3);
    await assert.rejects(
      verifyBackup(target),
      (error: unknown) =>
        error instanceof BackupVerifyError && /starts at seq 3 .*newest: 1/.test(error.message),
      'a snapshot at 1 does not reach a journal that starts at 3',
    );
  } finally {
    rmSync(short.root, { recursive: true, force: true });
  }
});

test('the snapshot reported is the one a restore starts from, never one past the journal', async () => {
  // A snapshot at 7 is ahead of the journal (it ends at 5): a restore discards it and starts at 4.
  const { root, dataDir } = await dataDirWith([4, COMMANDS.length + 2]);
  try {
    const target = join(root, 'copy');
    backupDataDir(dataDir, target);
    const check = await verifyBackup(target);
    assert.equal(check.snapshotSeq, 4, 'the newest snapshot no newer than the journal end');
    assert.deepEqual(check.journal, { firstSeq: 1, lastSeq: COMMANDS.length }, 'the whole journal');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('verification closes its stores: no WAL or shared-memory file is left in the copy', async () => {
  const { root, dataDir } = await dataDirWith([2]);
  try {
    const target = join(root, 'copy');
    backupDataDir(dataDir, target);
    await verifyBackup(target);
    const left = readdirSync(target).filter((file) => file.endsWith('-wal') || file.endsWith('-shm'));
    assert.deepEqual(left, [], 'every connection verify opened is closed');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('verification leaves the copy byte for byte as it was, and adds no file to it', async () => {
  const { root, dataDir } = await dataDirWith([2]);
  try {
    const target = join(root, 'copy');
    backupDataDir(dataDir, target);
    const contents = () =>
      new Map(readdirSync(target).map((file) => [file, readFileSync(join(target, file)).toString('base64')]));
    const before = contents();
    assert.ok(before.has(SQLITE_FILES.snapshots), 'the copy holds the snapshots');
    await verifyBackup(target);
    assert.deepEqual(contents(), before, 'every file is as the backup wrote it');
    // A copy with a journal and no snapshots: verify must not create the snapshot store.
    rmSync(join(target, SQLITE_FILES.snapshots));
    const check = await verifyBackup(target);
    assert.equal(check.snapshotSeq, null, 'no snapshot');
    assert.equal(existsSync(join(target, SQLITE_FILES.snapshots)), false, 'and no snapshots file made');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a backup that fails part way leaves the target as it found it, so a retry is not refused', async () => {
  const { root, dataDir } = await dataDirWith([2]);
  try {
    // The journal, copied after the snapshots, is no database: its copy fails.
    writeFileSync(join(dataDir, SQLITE_FILES.journal), 'not a database, just text'.repeat(200));
    const fresh = join(root, 'fresh');
    assert.throws(
      () => backupDataDir(dataDir, fresh),
      /not a database/,
      'the damaged journal fails the copy',
    );
    assert.equal(existsSync(fresh), false, 'a target the backup made is removed again');
    const empty = join(root, 'empty');
    mkdirSync(empty);
    assert.throws(() => backupDataDir(dataDir, empty), /not a database/, 'into an empty target too');
    assert.deepEqual(readdirSync(empty), [], 'an empty target is left empty: what was copied is gone');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a directory with no store in it does not verify', async () => {
  const root = mkdtempSync(join(tmpdir(), 'backup-unit-'));
  try {
    writeFileSync(join(root, 'credentials.json'), '[]');
    await assert.rejects(
      verifyBackup(root),
      (error: unknown) => error instanceof BackupVerifyError && /holds no store/.test(error.message),
      'a wrong directory is refused, not reported verified',
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
