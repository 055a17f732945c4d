import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { SecretBox } from '../../src/api/auth/secret-box.ts';
import { SqliteKeyStore } from '../../src/api/auth/sqlite-key-store.ts';
import { bootstrapDemo } from '../../src/api/bootstrap.ts';
import type { CommandPort } from '../../src/api/ports.ts';
import { startEngineVenue } from '../support/engine-venue.ts';
import { FakeVenue } from '../support/fake-venue.ts';

test('demo bootstrap: each user gets exactly its roles and desk, its own accounts opened for it and funded once in minor units; a second start does nothing', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bootstrap-demo-'));
  const venue = new FakeVenue();
  const keyStore = new SqliteKeyStore(join(dataDir, 'keys.db'), SecretBox.fromText('55'.repeat(32)));
  try {
    const credentials = (await bootstrapDemo({ keyStore, commands: venue, dataDir }))!;
    const names = new Map(keyStore.listUsers().map((user) => [user.id, user.name]));
    const expected: Record<string, { roles: string[]; deskName: string | null; accounts: number }> = {
      taker: { roles: ['trade', 'taker'], deskName: null, accounts: 1 },
      maker1: { roles: ['trade', 'maker'], deskName: 'MAKER1', accounts: 1 },
      maker2: { roles: ['trade', 'maker'], deskName: 'MAKER2', accounts: 1 },
      multi: { roles: ['trade', 'taker'], deskName: null, accounts: 2 },
    };
    assert.deepEqual(
      credentials.map((c) => names.get(c.userId)),
      ['taker', 'maker1', 'maker2', 'multi'],
    );
    for (const credential of credentials) {
      const want = expected[names.get(credential.userId)!]!;
      assert.deepEqual(credential.roles, want.roles);
      assert.equal(credential.deskName, want.deskName);
      // The stored key is the credential's: same secret, same user, same roles and desk.
      const key = keyStore.findKey(credential.apiKey)!;
      assert.equal(key.apiSecret, credential.apiSecret);
      assert.equal(key.record.userId, credential.userId);
      assert.deepEqual(key.record.roles, want.roles);
      assert.equal(key.record.deskName, want.deskName);
      // Its accounts are the user's own, and the key trades on one of them.
      assert.equal(credential.accountIds.length, want.accounts);
      assert.deepEqual(
        credential.accountIds,
        keyStore.accountsOf(credential.userId).map((a) => a.id),
      );
      assert.ok(credential.accountIds.includes(key.record.defaultAccountId), 'default account is the user’s');
      assert.equal(keyStore.listKeys(credential.userId).length, 1, 'one key per demo user');
    }
    // The engine opened each account once, for its owner, and funded it once per currency in
    // minor units (BTC/ETH 8 decimals, USDC/USDT 6).
    assert.deepEqual(
      venue.submitted
        .filter((c) => c.type === 'create_account')
        .map((c) => [(c as { accountId: number }).accountId, (c as { userId: number }).userId]),
      credentials.flatMap((c) => c.accountIds.map((accountId) => [accountId, c.userId])),
    );
    const minor = {
      BTC: 10_000_000_000,
      ETH: 100_000_000_000,
      USDC: 10_000_000_000_000,
      USDT: 10_000_000_000_000,
    };
    for (const accountId of credentials.flatMap((c) => c.accountIds)) {
      for (const [currency, amount] of Object.entries(minor)) {
        const deposits = venue.submitted.filter(
          (c) =>
            c.type === 'deposit' &&
            (c as { accountId: number }).accountId === accountId &&
            (c as { currency: string }).currency === currency,
        );
        assert.deepEqual(
          deposits.map((c) => (c as { amount: number }).amount),
          [amount],
          `account ${accountId} ${currency}`,
        );
      }
    }
    // credentials.json: 0600, exactly what was returned.
    const file = join(dataDir, 'credentials.json');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), credentials);
    // A second start: nothing created, nothing submitted, the file unchanged.
    const submitted = venue.submitted.length;
    const text = readFileSync(file, 'utf8');
    assert.equal(await bootstrapDemo({ keyStore, commands: venue, dataDir }), null);
    assert.equal(venue.submitted.length, submitted);
    assert.equal(keyStore.listUsers().length, 4);
    assert.equal(readFileSync(file, 'utf8'), text);
  } finally {
    keyStore.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('demo bootstrap: a command the engine refuses stops it; no credentials.json is written', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bootstrap-refused-'));
  const venue = new FakeVenue();
  const keyStore = new SqliteKeyStore(join(dataDir, 'keys.db'), SecretBox.fromText('66'.repeat(32)));
  const refusing: CommandPort = {
    now: () => venue.now(),
    submit: async (command) =>
      command.type === 'deposit'
        ? {
            ok: false,
            error: { name: 'invalid_amount', message: 'refused for the test', data: {} },
            events: [],
          }
        : venue.submit(command),
  };
  try {
    await assert.rejects(
      bootstrapDemo({ keyStore, commands: refusing, dataDir }),
      /deposit refused: invalid_amount refused for the test/,
    );
    assert.equal(existsSync(join(dataDir, 'credentials.json')), false);
    assert.equal(existsSync(join(dataDir, 'bootstrap.pending')), true, 'the next start resumes');
  } finally {
    keyStore.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('an interrupted bootstrap resumes with the keys it made: one key per demo user', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bootstrap-resume-keys-'));
  const engine = await startEngineVenue();
  const keyStore = new SqliteKeyStore(join(dataDir, 'keys.db'), SecretBox.fromText('77'.repeat(32)));
  let allowed = 9;
  const crashing: CommandPort = {
    now: () => engine.now(),
    submit: (command) => (allowed-- <= 0 ? Promise.reject(new Error('crash')) : engine.submit(command)),
  };
  try {
    await assert.rejects(
      bootstrapDemo({ keyStore, commands: crashing, reads: engine.reads, dataDir }),
      /crash/,
    );
    const keysBefore = keyStore.listKeys().map((k) => k.apiKey);
    assert.ok(keysBefore.length > 0, 'the first run made a key before the crash');
    const credentials = (await bootstrapDemo({ keyStore, commands: engine, reads: engine.reads, dataDir }))!;
    for (const credential of credentials) {
      assert.equal(keyStore.listKeys(credential.userId).length, 1, `user ${credential.userId}: one key`);
    }
    assert.ok(
      keysBefore.every((apiKey) => credentials.some((c) => c.apiKey === apiKey)),
      'the keys made before the crash are the ones handed out',
    );
  } finally {
    keyStore.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
