import assert from 'node:assert/strict';
import fs, { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { writeFileDurably } from './durable-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'durable-file-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('writes the whole file with mode 0600 and leaves nothing aside', () => {
  const path = join(dir, 'secret.key');
  writeFileDurably(path, 'first');
  writeFileDurably(path, 'second');
  assert.equal(readFileSync(path, 'utf8'), 'second');
  assert.equal(statSync(path).mode & 0o777, 0o600);
  assert.deepEqual(readdirSync(dir), ['secret.key']);
});

test('exclusive: an existing file is kept and the writer gets EEXIST', () => {
  const path = join(dir, 'admin.token');
  writeFileDurably(path, 'winner', { exclusive: true });
  assert.throws(() => writeFileDurably(path, 'loser', { exclusive: true }), { code: 'EEXIST' });
  assert.equal(readFileSync(path, 'utf8'), 'winner');
  assert.deepEqual(readdirSync(dir).sort(), ['admin.token', 'secret.key']);
});

test('the data is fsynced before it is moved into place, and the directory after it', () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'durable-order-')));
  const calls: string[] = [];
  const { fsyncSync, renameSync } = fs;
  fs.fsyncSync = (fd: number) => {
    calls.push(`fsync ${fs.readlinkSync(`/proc/self/fd/${fd}`)}`);
    fsyncSync(fd);
  };
  fs.renameSync = (from: fs.PathLike, to: fs.PathLike) => {
    calls.push(`rename ${String(to)}`);
    renameSync(from, to);
  };
  syncBuiltinESMExports();
  try {
    const path = join(dir, 'secret.key');
    writeFileDurably(path, 'key material');
    assert.deepEqual(calls, [`fsync ${path}.${process.pid}.tmp`, `rename ${path}`, `fsync ${dir}`]);
  } finally {
    fs.fsyncSync = fsyncSync;
    fs.renameSync = renameSync;
    syncBuiltinESMExports();
    rmSync(dir, { recursive: true, force: true });
  }
});
