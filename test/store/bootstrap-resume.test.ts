/**
 * A demo bootstrap cut off part way (here: the engine refuses to go on after a few commands, as a
 * crash would stop it) is finished at the next start: the users, accounts and keys it made are
 * reused, every account ends funded exactly once, and credentials.json appears.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { SecretBox } from '../../src/api/auth/secret-box.ts';
import { SqliteKeyStore } from '../../src/api/auth/sqlite-key-store.ts';
import { bootstrapDemo, DEMO_DEPOSITS, type DemoCredential, toMinorUnits } from '../../src/api/bootstrap.ts';
import type { CommandPort } from '../../src/api/ports.ts';
import { startEngineVenue } from '../support/engine-venue.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'bootstrap-resume-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

test('an interrupted bootstrap resumes: same keys, each account funded once, credentials written', async () => {
  const engine = await startEngineVenue();
  const keyStore = new SqliteKeyStore(join(dataDir, 'keys.db'), SecretBox.fromText('44'.repeat(32)));
  let allowed = 9;
  const crashing: CommandPort = {
    now: () => engine.now(),
    submit: (command) => {
      if (allowed-- <= 0) return Promise.reject(new Error('crash'));
      return engine.submit(command);
    },
  };
  await assert.rejects(
    bootstrapDemo({ keyStore, commands: crashing, reads: engine.reads, dataDir }),
    /crash/,
  );
  assert.equal(existsSync(join(dataDir, 'credentials.json')), false);
  assert.equal(keyStore.isEmpty(), false);
  const usersBefore = keyStore.listUsers().map((u) => u.id);

  const credentials = await bootstrapDemo({ keyStore, commands: engine, reads: engine.reads, dataDir });
  assert.ok(credentials !== null);
  const written = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as DemoCredential[];
  assert.deepEqual(written, credentials);
  assert.deepEqual(
    credentials.map((c) => c.accountIds.length),
    [1, 1, 1, 2],
  );
  assert.ok(
    usersBefore.every((id) => credentials.some((c) => c.userId === id)),
    'users reused',
  );
  for (const credential of credentials) {
    assert.equal(keyStore.findKey(credential.apiKey)?.apiSecret, credential.apiSecret);
    for (const accountId of credential.accountIds) {
      for (const [currency, amount] of Object.entries(DEMO_DEPOSITS)) {
        assert.equal(
          engine.reads.accountSummary(accountId, currency)?.balance,
          toMinorUnits(amount, currency),
          `account ${accountId} ${currency} funded once`,
        );
      }
    }
  }
  assert.equal(existsSync(join(dataDir, 'bootstrap.pending')), false);
  // A later start does nothing.
  assert.equal(await bootstrapDemo({ keyStore, commands: engine, reads: engine.reads, dataDir }), null);
  keyStore.close();
});
