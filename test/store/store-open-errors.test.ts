/**
 * A store that cannot be opened is reported naming the setting to fix (DATABASE_URL, JOURNAL_URL)
 * and its cause, with no password and no stack trace: by openStores, and by `npm start`.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { StoreOpenError } from '../../src/store/data-dir-lock.ts';
import { openStores } from '../../src/store/open-stores.ts';
import { startNats } from '../support/nats.ts';

const dir = mkdtempSync(join(tmpdir(), 'open-errors-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('a database that cannot be reached: StoreOpenError naming DATABASE_URL (password masked) and the cause', async () => {
  await assert.rejects(
    openStores({ dataDir: dir, databaseUrl: 'postgresql://venue:s3cret@127.0.0.1:1/venue' }),
    (error: unknown) => {
      assert.ok(error instanceof StoreOpenError);
      assert.match(
        error.message,
        /^DATABASE_URL \(postgresql:\/\/venue:\*\*\*@127\.0\.0\.1:1\/venue\): .*ECONNREFUSED/,
      );
      assert.doesNotMatch(error.message, /s3cret/);
      return true;
    },
  );
});

const plain = await startNats({ jetstream: false });
after(() => plain?.stop());

test('a NATS server without JetStream is refused at once, saying so', {
  skip: plain === null && 'nats-server is not installed',
}, async () => {
  const started = Date.now();
  await assert.rejects(
    openStores({
      dataDir: dir,
      databaseUrl: null,
      natsJournal: { servers: plain!.url, stream: 'NO_JETSTREAM', replicas: 1 },
    }),
    (error: unknown) =>
      error instanceof StoreOpenError &&
      error.message.startsWith(`JetStream is not enabled on JOURNAL_URL (${plain!.url})`),
  );
  // Not after the 30 s an open waits for a cluster electing its JetStream leader.
  assert.ok(Date.now() - started < 5_000, `${Date.now() - started} ms`);
});

test('npm start with a database that cannot be reached: one line naming DATABASE_URL, exit 1, no stack', () => {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/app/main.ts'], {
    env: {
      ...process.env,
      DATA_DIR: join(dir, 'service'),
      PORT: '0',
      HOST: '127.0.0.1',
      SIMULATOR: 'off',
      LOG_LEVEL: 'silent',
      DATABASE_URL: 'postgresql://postgres@127.0.0.1:1/venue',
      JOURNAL_URL: '',
      CONFIG_FILE: '',
    },
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(result.status, 1, result.stderr);
  assert.match(
    result.stderr,
    /^cannot start: DATABASE_URL \(postgresql:\/\/postgres@127\.0\.0\.1:1\/venue\): .*ECONNREFUSED.*\n$/,
  );
  assert.doesNotMatch(result.stderr, /\n\s+at /);
});
