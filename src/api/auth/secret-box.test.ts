import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { SecretBox } from './secret-box.ts';

const KEY = 'ab'.repeat(32);

test('seal/open round-trips, ciphertext differs per seal and hides the plaintext', () => {
  const box = SecretBox.fromText(KEY);
  const a = box.seal('my secret');
  const b = box.seal('my secret');
  assert.notEqual(a, b);
  assert.ok(!Buffer.from(a, 'base64').toString('latin1').includes('my secret'));
  assert.equal(box.open(a), 'my secret');
});

test('a wrong key or a tampered ciphertext fails', () => {
  const sealed = SecretBox.fromText(KEY).seal('x');
  assert.throws(() => SecretBox.fromText('cd'.repeat(32)).open(sealed));
  const raw = Buffer.from(sealed, 'base64');
  raw[raw.length - 1]! ^= 1;
  assert.throws(() => SecretBox.fromText(KEY).open(raw.toString('base64')));
  assert.throws(() => SecretBox.fromText('abcd'), /32 bytes/);
});

test('without a configured key, a 0600 key file is created once under dataDir', () => {
  const dir = mkdtempSync(join(tmpdir(), 'box-'));
  const sealed = SecretBox.load(null, dir).seal('s');
  assert.equal(statSync(join(dir, 'secret.key')).mode & 0o777, 0o600);
  const key = readFileSync(join(dir, 'secret.key'), 'utf8');
  assert.equal(SecretBox.load(null, dir).open(sealed), 's');
  assert.equal(readFileSync(join(dir, 'secret.key'), 'utf8'), key);
});
