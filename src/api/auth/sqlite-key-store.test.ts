import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { SecretBox } from './secret-box.ts';
import { SqliteKeyStore } from './sqlite-key-store.ts';

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

test('key rules: maker needs a desk, desk names unique, default account must be owned', () => {
  const store = new SqliteKeyStore(':memory:', box);
  const bob = store.createUser('bob', 1);
  const carol = store.createUser('carol', 1);
  store.createAccount(bob.id, 'main', 1);
  const carolAccount = store.createAccount(carol.id, 'main', 1);
  assert.throws(() => store.createApiKey({ userId: bob.id, roles: ['maker'] }, 1), /desk name/);
  assert.throws(() => store.createApiKey({ userId: bob.id, roles: ['trade'], deskName: 'X' }, 1), /desk/);
  store.createApiKey({ userId: bob.id, roles: ['maker'], deskName: 'MAKER1' }, 1);
  assert.throws(() => store.createApiKey({ userId: carol.id, roles: ['maker'], deskName: 'MAKER1' }, 1));
  assert.throws(
    () => store.createApiKey({ userId: bob.id, roles: ['trade'], defaultAccountId: carolAccount.id }, 1),
    /does not belong/,
  );
  assert.throws(() => store.createApiKey({ userId: bob.id, roles: ['admin' as never] }, 1), /unknown role/);
});

test('secrets are encrypted at rest in the database file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'keys-'));
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
