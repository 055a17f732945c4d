import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { lockDataDir, StoreOpenError } from '../../src/store/data-dir-lock.ts';

test('one lock per data directory: a second is refused naming the holder, and taken again once released', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lock-'));
  try {
    const first = lockDataDir(dir);
    assert.throws(
      () => lockDataDir(dir),
      (error: unknown) =>
        error instanceof StoreOpenError &&
        error.message.includes('is in use by another running service') &&
        error.message.includes(`pid ${process.pid}`),
    );
    first.release();
    first.release();
    lockDataDir(dir).release();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a data directory that cannot be created is refused with its cause', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lock-'));
  try {
    writeFileSync(join(dir, 'file'), '');
    assert.throws(
      () => lockDataDir(join(dir, 'file', 'data')),
      (error: unknown) =>
        error instanceof StoreOpenError && /DATA_DIR .* cannot be created or opened/.test(error.message),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a damaged lock file is refused naming it, saying it can be deleted when no service runs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lock-'));
  try {
    lockDataDir(dir).release();
    const lockFile = join(dir, 'service.lock');
    writeFileSync(lockFile, Buffer.alloc(8192, 7));
    assert.throws(
      () => lockDataDir(dir),
      (error: unknown) => {
        assert.ok(error instanceof StoreOpenError);
        assert.equal(
          error.message,
          `DATA_DIR ${dir}: its lock file ${lockFile} is damaged (file is not a database); it holds nothing else: delete it when no service runs on this DATA_DIR`,
        );
        return true;
      },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
