import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { tempDir } from '../../../test/support/temp-dir.ts';
import { DeskTakenError } from './key-store.ts';
import { SecretBox } from './secret-box.ts';
import { SecretsKeyMismatchError, SqliteKeyStore } from './sqlite-key-store.ts';

const box = SecretBox.fromText('11'.repeat(32));

test('users own accounts; keys belong to a user and default to its first account', () => {
  const store = new SqliteKeyStore(':memory:', box);
  assert.ok(store.isEmpty());
  const alice = store.createUser('alice', 1);
  const a1 = store.createAccount(alice.id, 'main', 1);
  const a2 = store.createAccount(alice.id, 'second', 1);
  const key = store.createApiKey({ userId: alice.id, roles: ['trade', 'taker'] }, 2);
  assert.equal(key.record.defaultAccountId, a1.id);
  assert.deepEqual(
    store.accountsOf(alice.id).map((account) => account.id),
    [a1.id, a2.id],
  );
  const found = store.findKey(key.record.apiKey);
  assert.equal(found?.apiSecret, key.apiSecret);
  assert.deepEqual(found?.record.roles, ['trade', 'taker']);
  assert.ok(!store.isEmpty());
  assert.ok(store.disableKey(key.record.apiKey));
  assert.equal(store.findKey(key.record.apiKey)?.record.disabled, true);
});

test('key rules: maker needs a desk, a desk belongs to one user, default account must be owned', () => {
  const store = new SqliteKeyStore(':memory:', box);
  const bob = store.createUser('bob', 1);
  const carol = store.createUser('carol', 1);
  store.createAccount(bob.id, 'main', 1);
  const carolAccount = store.createAccount(carol.id, 'main', 1);
  assert.throws(() => store.createApiKey({ userId: bob.id, roles: ['maker'] }, 1), /desk name/);
  assert.throws(() => store.createApiKey({ userId: bob.id, roles: ['trade'], deskName: 'X' }, 1), /desk/);
  store.createApiKey({ userId: bob.id, roles: ['maker'], deskName: 'MAKER1' }, 1);
  assert.throws(
    () => store.createApiKey({ userId: carol.id, roles: ['maker'], deskName: 'MAKER1' }, 1),
    /deskName 'MAKER1' belongs to user/,
  );
  assert.throws(
    () => store.createApiKey({ userId: bob.id, roles: ['trade'], defaultAccountId: carolAccount.id }, 1),
    /does not belong/,
  );
  assert.throws(() => store.createApiKey({ userId: bob.id, roles: ['admin' as never] }, 1), /unknown role/);
});

test("desk names, user names and account labels are held to the rules of labels; a desk differing from another user's only in case is refused (stop 43)", () => {
  const store = new SqliteKeyStore(':memory:', box);
  const bob = store.createUser('bob', 1);
  const eve = store.createUser('eve', 1);
  store.createAccount(bob.id, 'main', 1);
  store.createAccount(eve.id, 'main', 1);
  store.createApiKey({ userId: bob.id, roles: ['maker'], deskName: 'MAKER1' }, 1);
  const desk = (deskName: string, userId = eve.id) =>
    store.createApiKey({ userId, roles: ['trade', 'maker'], deskName }, 2);
  for (const [name, problem] of [
    ['EVIL\nDESK\u0001', /^Error: deskName must not contain control characters$/],
    ['EVIL\u0000', /^Error: deskName must not contain control characters$/],
    [' MAKER9', /^Error: deskName must not start or end with a space$/],
    ['MAKER9 ', /^Error: deskName must not start or end with a space$/],
    ['A'.repeat(65), /^Error: deskName must be at most 64 characters$/],
  ] as const) {
    assert.throws(() => desk(name), problem, JSON.stringify(name));
  }
  assert.equal(desk('A'.repeat(64)).record.deskName, 'A'.repeat(64), '64 characters are accepted');
  for (const lookAlike of ['maker1', 'Maker1', 'ＭＡＫＥＲ１']) {
    assert.throws(
      () => desk(lookAlike),
      (error: Error) => {
        assert.ok(error instanceof DeskTakenError);
        assert.equal(error.existing, 'MAKER1');
        assert.equal(error.ownerUserId, bob.id);
        assert.match(error.message, /is the desk 'MAKER1' of user \d+ \(bob\) but for letter case/);
        return true;
      },
      `${lookAlike} is another user's MAKER1`,
    );
  }
  assert.equal(desk('maker1', bob.id).record.deskName, 'maker1', "the desk's owner may spell it so");
  assert.equal(store.listKeys(eve.id).length, 1, 'the refusals stored nothing');
  assert.throws(
    () => store.createApiKey({ userId: bob.id, roles: ['trade', 'trade'] }, 2),
    /^Error: role 'trade' is listed twice$/,
  );
  assert.throws(
    () => store.createUser('bad\u0001name\n', 1),
    /^Error: name must not contain control characters$/,
  );
  assert.throws(() => store.createUser('', 1), /^Error: name must not be empty$/);
  assert.throws(
    () => store.createAccount(bob.id, ' x', 1),
    /^Error: label must not start or end with a space$/,
  );
});

test('secrets are encrypted at rest in the database file', () => {
  const dir = tempDir('keys-');
  const path = join(dir, 'keys.sqlite');
  const store = new SqliteKeyStore(path, box);
  const user = store.createUser('dave', 1);
  store.createAccount(user.id, 'main', 1);
  const { apiSecret } = store.createApiKey({ userId: user.id, roles: ['trade'] }, 1);
  store.close();
  assert.ok(!readFileSync(path).toString('latin1').includes(apiSecret));
  const reopened = new SqliteKeyStore(path, box);
  assert.equal(reopened.listKeys()[0]?.userId, user.id);
  reopened.close();
});

test('desk rotation: the desk owner may add keys with its desk name; another user is refused naming deskName', () => {
  const store = new SqliteKeyStore(':memory:', box);
  const maker = store.createUser('maker', 1);
  const other = store.createUser('other', 1);
  const makerAccount = store.createAccount(maker.id, 'main', 1);
  store.createAccount(other.id, 'main', 1);
  const old = store.createApiKey({ userId: maker.id, roles: ['trade', 'maker'], deskName: 'MAKER1' }, 1);
  // Rotation: a new key of the same user on the same desk, then the old key disabled.
  const fresh = store.createApiKey({ userId: maker.id, roles: ['trade', 'maker'], deskName: 'MAKER1' }, 2);
  assert.ok(store.disableKey(old.record.apiKey));
  assert.equal(fresh.record.deskName, 'MAKER1');
  assert.equal(fresh.record.defaultAccountId, makerAccount.id);
  assert.deepEqual(
    store.listKeys(maker.id).map((key) => [key.deskName, key.disabled]),
    [
      ['MAKER1', true],
      ['MAKER1', false],
    ],
  );
  // Another user may not take the desk, not even once every key carrying it is disabled.
  assert.ok(store.disableKey(fresh.record.apiKey));
  assert.throws(
    () => store.createApiKey({ userId: other.id, roles: ['maker'], deskName: 'MAKER1' }, 3),
    (error: Error) => {
      assert.ok(error instanceof DeskTakenError);
      assert.match(error.message, /deskName 'MAKER1' belongs to user \d+ \(maker\)/);
      assert.doesNotMatch(error.message, /UNIQUE|constraint/);
      assert.ok(!error.message.includes(old.apiSecret) && !error.message.includes(old.record.apiKey));
      return true;
    },
  );
  assert.equal(store.listKeys(other.id).length, 0, 'the refusal stored nothing');
});

test('an old key store (desk names unique across keys) is migrated on open, keeping every row', () => {
  const dir = tempDir('keys-old-');
  const path = join(dir, 'keys.db');
  // The schema before desk rotation, with its rows, written as that build did.
  const old = new Database(path);
  old.exec(`
    CREATE TABLE users (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE, created_at INTEGER NOT NULL);
    CREATE TABLE accounts (id INTEGER PRIMARY KEY AUTOINCREMENT, user_id INTEGER NOT NULL REFERENCES users(id),
      label TEXT NOT NULL, created_at INTEGER NOT NULL);
    CREATE TABLE api_keys (
      api_key TEXT PRIMARY KEY,
      user_id INTEGER NOT NULL REFERENCES users(id),
      secret_sealed TEXT NOT NULL,
      roles TEXT NOT NULL,
      desk_name TEXT UNIQUE,
      default_account_id INTEGER NOT NULL REFERENCES accounts(id),
      rate_limits TEXT,
      created_at INTEGER NOT NULL,
      disabled INTEGER NOT NULL DEFAULT 0
    );
    INSERT INTO users (name, created_at) VALUES ('maker', 1), ('taker', 1);
    INSERT INTO accounts (user_id, label, created_at) VALUES (1, 'main', 1), (2, 'main', 1);
  `);
  const insert = old.prepare('INSERT INTO api_keys VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)');
  insert.run('k_maker', 1, box.seal('maker-secret'), '["trade","maker"]', 'MAKER1', 1, null, 5, 0);
  insert.run(
    'k_gone',
    1,
    box.seal('gone-secret'),
    '["maker"]',
    'OLDDESK',
    1,
    '{"matching":{"perSecond":1,"burst":2}}',
    4,
    1,
  );
  insert.run('k_taker', 2, box.seal('taker-secret'), '["trade","taker"]', null, 2, null, 6, 0);
  assert.throws(() => insert.run('k_dup', 1, box.seal('x'), '["maker"]', 'MAKER1', 1, null, 7, 0), /UNIQUE/);
  old.close();

  const before = [
    ['k_gone', 1, ['maker'], 'OLDDESK', 1, { matching: { perSecond: 1, burst: 2 } }, 4, true, 'gone-secret'],
    ['k_maker', 1, ['trade', 'maker'], 'MAKER1', 1, null, 5, false, 'maker-secret'],
    ['k_taker', 2, ['trade', 'taker'], null, 2, null, 6, false, 'taker-secret'],
  ];
  const rows = (store: SqliteKeyStore) =>
    store.listKeys().map((k) => {
      const secret = store.findKey(k.apiKey)!.apiSecret;
      return [
        k.apiKey,
        k.userId,
        k.roles,
        k.deskName,
        k.defaultAccountId,
        k.rateLimits,
        k.createdAt,
        k.disabled,
        secret,
      ];
    });
  const store = new SqliteKeyStore(path, box);
  assert.deepEqual(rows(store), before, 'every key kept, secrets still open');
  // The desk rotates now: the maker adds a key on MAKER1; the taker's user still may not take it.
  const rotated = store.createApiKey({ userId: 1, roles: ['trade', 'maker'], deskName: 'MAKER1' }, 8);
  assert.equal(rotated.record.deskName, 'MAKER1');
  assert.throws(
    () => store.createApiKey({ userId: 2, roles: ['maker'], deskName: 'OLDDESK' }, 9),
    DeskTakenError,
  );
  store.close();
  // Opening again migrates nothing more and loses nothing.
  const reopened = new SqliteKeyStore(path, box);
  assert.equal(reopened.listKeys().length, 4);
  assert.deepEqual(rows(reopened).slice(0, 3), before);
  reopened.close();
  const check = new Database(path);
  assert.deepEqual(check.pragma('foreign_key_check'), []);
  assert.equal(check.pragma('integrity_check', { simple: true }) as string, 'ok');
  check.close();
});

test('a key store refuses an encryption key other than the one it was first opened with, even before it holds any API key', () => {
  const dir = tempDir('keys-check-');
  const path = join(dir, 'keys.db');
  new SqliteKeyStore(path, box).close();
  const other = SecretBox.fromText('22'.repeat(32));
  assert.throws(
    () => new SqliteKeyStore(path, other),
    (error: Error) => {
      assert.ok(error instanceof SecretsKeyMismatchError);
      assert.match(error.message, /cannot be opened with this encryption key/);
      assert.match(error.message, /SECRET_ENCRYPTION_KEY \(or DATA_DIR\/secret\.key\)/);
      return true;
    },
  );
  // No key can be created (so none issued) with the other key; the first key still works.
  const store = new SqliteKeyStore(path, box);
  const user = store.createUser('u', 1);
  store.createAccount(user.id, 'main', 1);
  const key = store.createApiKey({ userId: user.id, roles: ['trade'] }, 1);
  assert.equal(store.findKey(key.record.apiKey)?.apiSecret, key.apiSecret);
  store.close();
  assert.throws(() => new SqliteKeyStore(path, other), SecretsKeyMismatchError);
});

test('a key store written before the key check: a wrong key is refused by its stored secrets, the right one is recorded', () => {
  const dir = tempDir('keys-precheck-');
  const path = join(dir, 'keys.db');
  const old = new Database(path);
  old.exec(`
    CREATE TABLE users (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE, created_at INTEGER NOT NULL);
    CREATE TABLE accounts (id INTEGER PRIMARY KEY AUTOINCREMENT, user_id INTEGER NOT NULL REFERENCES users(id),
      label TEXT NOT NULL, created_at INTEGER NOT NULL);
    CREATE TABLE api_keys (api_key TEXT PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id),
      secret_sealed TEXT NOT NULL, roles TEXT NOT NULL, desk_name TEXT,
      default_account_id INTEGER NOT NULL REFERENCES accounts(id), rate_limits TEXT,
      created_at INTEGER NOT NULL, disabled INTEGER NOT NULL DEFAULT 0);
    INSERT INTO users (name, created_at) VALUES ('u', 1);
    INSERT INTO accounts (user_id, label, created_at) VALUES (1, 'main', 1);
  `);
  old
    .prepare('INSERT INTO api_keys VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)')
    .run('k_old', 1, box.seal('old-secret'), '["trade"]', null, 1, null, 1, 1);
  old.close();
  const other = SecretBox.fromText('22'.repeat(32));
  assert.throws(() => new SqliteKeyStore(path, other), SecretsKeyMismatchError);
  const store = new SqliteKeyStore(path, box);
  assert.equal(store.findKey('k_old')?.apiSecret, 'old-secret');
  store.close();
  assert.throws(() => new SqliteKeyStore(path, other), SecretsKeyMismatchError);
});
