/**
 * A store that cannot be opened is reported naming the setting to fix (DATABASE_URL, JOURNAL_URL)
 * (DATA_DIR/<file> for the embedded ones) and its cause, with no password and no stack trace: by
 * openStores, and by `npm start`, which prints any failed start as one line (the stack at debug).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { lockDataDir, StoreOpenError } from '../../src/store/data-dir-lock.ts';
import { redactedServers } from '../../src/store/nats/nats-journal.ts';
import { openStores, SQLITE_FILES } from '../../src/store/open-stores.ts';
import { spawnTs } from '../support/child-process.ts';
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

test('a NATS server that cannot be reached: JOURNAL_URL named with its password masked', async () => {
  await assert.rejects(
    openStores({
      dataDir: dir,
      databaseUrl: null,
      natsJournal: { servers: 'nats://alice:hunter2@127.0.0.1:1', stream: 'VENUE_JOURNAL', replicas: 1 },
    }),
    (error: unknown) => {
      assert.ok(error instanceof StoreOpenError);
      assert.match(
        error.message,
        /^JOURNAL_URL \(nats:\/\/alice:\*\*\*@127\.0\.0\.1:1, stream VENUE_JOURNAL\): /,
      );
      assert.doesNotMatch(error.message, /hunter2/);
      return true;
    },
  );
});

test('JOURNAL_URL to print: passwords and lone tokens masked, bare servers kept', () => {
  assert.equal(
    redactedServers('nats://alice:hunter2@a:4222, tls://s3cret@b:4222,c:4222'),
    'nats://alice:***@a:4222,tls://***@b:4222,c:4222',
  );
});

test('a NATS server without JetStream: the message masks the password', {
  skip: plain === null && 'nats-server is not installed',
}, async () => {
  const servers = plain!.url.replace('nats://', 'nats://alice:hunter2@');
  await assert.rejects(
    openStores({
      dataDir: dir,
      databaseUrl: null,
      natsJournal: { servers, stream: 'NO_JETSTREAM_AUTH', replicas: 1 },
    }),
    (error: unknown) => {
      assert.ok(error instanceof StoreOpenError, String(error));
      assert.match(error.message, /^JetStream is not enabled on JOURNAL_URL \(nats:\/\/alice:\*\*\*@/);
      assert.doesNotMatch(error.message, /hunter2/);
      return true;
    },
  );
});

for (const file of Object.values(SQLITE_FILES)) {
  test(`a damaged ${file}: StoreOpenError naming the file, the others closed again`, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'open-errors-sqlite-'));
    try {
      const stores = await openStores({ dataDir, databaseUrl: null });
      await stores.close();
      truncateSync(join(dataDir, file), 3000);
      await assert.rejects(openStores({ dataDir, databaseUrl: null }), (error: unknown) => {
        assert.ok(error instanceof StoreOpenError, String(error));
        assert.equal(
          error.message,
          `DATA_DIR/${file} (${join(dataDir, file)}): database disk image is malformed`,
        );
        return true;
      });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
}

/** `npm start` on `dataDir` with `env` added; its exit code, stdout and stderr. */
function npmStart(dataDir: string, env: Record<string, string>) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/app/main.ts'], {
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      SIMULATOR: 'off',
      LOG_LEVEL: 'silent',
      DATABASE_URL: '',
      JOURNAL_URL: '',
      CONFIG_FILE: '',
      SECRET_ENCRYPTION_KEY: '',
      ...env,
    },
    encoding: 'utf8',
    timeout: 30_000,
  });
}

test('npm start with a damaged key file: one line naming the file, exit 1, no stack', () => {
  const dataDir = join(dir, 'bad-key');
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(join(dataDir, 'secret.key'), 'garbage\n');
  const result = npmStart(dataDir, {});
  assert.equal(result.status, 1, result.stderr);
  assert.equal(
    result.stderr,
    `cannot start: DATA_DIR/secret.key (${join(dataDir, 'secret.key')}): the secret encryption key must be 32 bytes\n`,
  );
});

test('npm start on a HOST that is no address: one line naming HOST, exit 1, nothing written', () => {
  const dataDir = join(dir, 'bad-host');
  const result = npmStart(dataDir, { HOST: '999.1.1.1' });
  assert.equal(result.status, 1, result.stderr);
  assert.match(
    result.stderr,
    /^cannot start: cannot listen on HOST 999\.1\.1\.1 \(PORT 0\): .*ENOTFOUND.*\n$/,
  );
  assert.equal(existsSync(dataDir), false, 'nothing written');
});

test('npm start with LOG_LEVEL=debug: the one line, then the stack', () => {
  const dataDir = join(dir, 'bad-key-debug');
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(join(dataDir, 'secret.key'), 'garbage\n');
  const result = npmStart(dataDir, { LOG_LEVEL: 'debug' });
  assert.equal(result.status, 1, result.stderr);
  assert.match(result.stderr, /^cannot start: DATA_DIR\/secret\.key .*\n/);
  assert.match(result.stderr, /\n\s+at /);
});

test('SIGTERM during the start: the start is undone, one log line, exit 0, the directory free', async () => {
  const dataDir = join(dir, 'signal-during-start');
  const child = spawnTs('src/app/main.ts', [], {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    SIMULATOR: 'off',
    LOG_LEVEL: 'info',
    DATABASE_URL: '',
    JOURNAL_URL: '',
    CONFIG_FILE: '',
    SECRET_ENCRYPTION_KEY: '',
  });
  try {
    // Before the fix no line said "starting": the signal then came once recovery was logged.
    await child.waitForLine((line) => /"msg":"(starting|recovered)"/.test(line));
    child.process.kill('SIGTERM');
    assert.equal(await child.exited, 0, child.lines.join('\n'));
    assert.ok(
      child.lines.some((line) =>
        line.includes('"msg":"start aborted by SIGTERM: everything it started is stopped"'),
      ),
      child.lines.join('\n'),
    );
    assert.ok(!child.lines.some((line) => line.includes('"msg":"listening"')), 'it never served');
    lockDataDir(dataDir).release();
  } finally {
    await child.killHard();
  }
});
