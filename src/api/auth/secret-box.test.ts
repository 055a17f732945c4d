import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { tempDir } from '../../../test/support/temp-dir.ts';
import { SecretBox } from './secret-box.ts';
import { SqliteKeyStore } from './sqlite-key-store.ts';

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
  const dir = tempDir('box-');
  const sealed = SecretBox.load(null, dir).seal('s');
  assert.equal(statSync(join(dir, 'secret.key')).mode & 0o777, 0o600);
  const key = readFileSync(join(dir, 'secret.key'), 'utf8');
  assert.equal(SecretBox.load(null, dir).open(sealed), 's');
  assert.equal(readFileSync(join(dir, 'secret.key'), 'utf8'), key);
});

test('without a configured key, no key file is made for a key store that holds sealed secrets: refused, naming both ways to give the key', () => {
  const dir = tempDir('box-sealed-');
  // Secrets sealed with a configured key (SECRET_ENCRYPTION_KEY), no key file.
  const store = new SqliteKeyStore(join(dir, 'keys.db'), SecretBox.fromText(KEY));
  const user = store.createUser('u', 1);
  store.createAccount(user.id, 'main', 1);
  store.createApiKey({ userId: user.id, roles: ['trade'] }, 1);
  store.close();
  assert.throws(
    () => SecretBox.load(null, dir),
    (error: Error) => {
      assert.match(error.message, /sealed with an encryption key that is not available/);
      assert.match(error.message, /SECRET_ENCRYPTION_KEY/);
      assert.ok(error.message.includes(join(dir, 'secret.key')));
      return true;
    },
  );
  assert.equal(existsSync(join(dir, 'secret.key')), false, 'no key file written');
  // The key they were sealed with still opens them.
  assert.equal(SecretBox.load(KEY, dir).open(SecretBox.fromText(KEY).seal('s')), 's');
});

test('without a configured key, a key store that holds no sealed secret (an old one with users only) still gets a key file', () => {
  const dir = tempDir('box-nosecrets-');
  const old = new Database(join(dir, 'keys.db'));
  old.exec(`CREATE TABLE users (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE, created_at INTEGER NOT NULL);
    INSERT INTO users (name, created_at) VALUES ('u', 1);`);
  old.close();
  SecretBox.load(null, dir);
  assert.equal(statSync(join(dir, 'secret.key')).mode & 0o777, 0o600);
});
