import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { tempDir } from '../../test/support/temp-dir.ts';
import { DEFAULT_SNAPSHOT_POLICY } from '../store/snapshotter.ts';
import { ConfigError, DEFAULT_CONFIG, loadConfig } from './config.ts';

describe('config', () => {
  test('defaults are pinned', () => {
    assert.deepEqual(loadConfig({ env: {} }), {
      port: 8080,
      host: '0.0.0.0',
      dataDir: './data',
      databaseUrl: null,
      journalUrl: null,
      journalStream: 'VENUE_JOURNAL',
      journalReplicas: 1,
      secretEncryptionKey: null,
      logLevel: 'info',
      simulator: true,
      metrics: true,
      snapshotReplica: true,
      readStoreOnReplica: true,
      historyWaitMs: 2_000,
      shutdownStepMs: 30_000,
      historyRetentionDays: null,
      journalRetentionDays: null,
      snapshots: { everyCommands: 1_000_000, everyMs: 600_000, checkpointEveryCommands: 250_000 },
      http: {
        bodyLimitBytes: 262_144,
        wsMaxMessageBytes: 65_536,
        wsMaxConnections: 10_000,
        wsMaxConnectionsPerAddress: 1_000,
        wsMaxSubscriptionsPerConnection: 1_000,
        wsMaxBufferedBytes: 1_048_576,
        wsMaxBufferedBytesTotal: 268_435_456,
        maxConnections: 10_000,
        maxConnectionsPerAddress: 1_000,
        requestTimeoutMs: 30_000,
        shutdownGraceMs: 5_000,
        shutdownIdleLingerMs: 200,
      },
      auth: {
        clockSkewMs: 15_000,
        replayMaxEntries: 1_000_000,
        replayMaxAnswerBytes: 268_435_456,
        replayMaxEntriesPerKey: null,
        replayMaxAnswerBytesPerKey: null,
      },
      rateLimits: {
        enabled: true,
        matching: { perSecond: 200, burst: 500 },
        nonMatching: { perSecond: 50, burst: 200 },
      },
    });
  });

  test('the result is deeply frozen and the defaults are untouched', () => {
    const config = loadConfig({ env: { PORT: '9000' } });
    assert.ok(Object.isFrozen(config.rateLimits.matching));
    assert.throws(() => {
      (config as { port: number }).port = 1;
    });
    assert.equal(DEFAULT_CONFIG.port, 8080);
  });

  test('env vars override, with types parsed', () => {
    const config = loadConfig({
      env: {
        PORT: '9001',
        SIMULATOR: 'off',
        DATABASE_URL: 'postgres://x',
        RATE_MATCHING_BURST: '7',
        REPLAY_MAX_ENTRIES: '5',
        JOURNAL_URL: 'nats://127.0.0.1:4222',
        JOURNAL_STREAM: 'VENUE_B',
        JOURNAL_REPLICAS: '3',
      },
    });
    assert.equal(config.journalUrl, 'nats://127.0.0.1:4222');
    assert.equal(config.journalStream, 'VENUE_B');
    assert.equal(config.journalReplicas, 3);
    assert.equal(config.port, 9001);
    assert.equal(config.simulator, false);
    assert.equal(config.databaseUrl, 'postgres://x');
    assert.equal(config.rateLimits.matching.burst, 7);
    assert.equal(config.auth.replayMaxEntries, 5);
  });

  test('bad env values are rejected with the variable named', () => {
    assert.throws(() => loadConfig({ env: { PORT: 'eighty' } }), /PORT/);
    assert.throws(() => loadConfig({ env: { PORT: '70000' } }), /port/);
    // One reason, listing the levels (it was "must be equal to constant" once per level).
    assert.throws(
      () => loadConfig({ env: { LOG_LEVEL: 'loud' } }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message ===
          'invalid configuration: /logLevel must be equal to one of the allowed values: fatal, error, warn, info, debug, trace, silent (LOG_LEVEL)',
    );
    assert.throws(() => loadConfig({ env: { SIMULATOR: 'maybe' } }), /SIMULATOR/);
    // A stream name is also a subject token: no dots, spaces or wildcards.
    assert.throws(() => loadConfig({ env: { JOURNAL_STREAM: 'a.b' } }), /journalStream/);
    // The secrets key is 32 bytes, as hex or base64; anything else is refused at start, named.
    assert.throws(() => loadConfig({ env: { SECRET_ENCRYPTION_KEY: 'abcd' } }), /SECRET_ENCRYPTION_KEY/);
    const hex = 'ab'.repeat(32);
    assert.equal(loadConfig({ env: { SECRET_ENCRYPTION_KEY: hex } }).secretEncryptionKey, hex);
    const base64 = Buffer.alloc(32, 7).toString('base64');
    assert.equal(loadConfig({ env: { SECRET_ENCRYPTION_KEY: base64 } }).secretEncryptionKey, base64);
  });

  test('the snapshot cadence comes from env vars; a bad value is refused naming the variable', () => {
    const config = loadConfig({
      env: { SNAPSHOT_EVERY_COMMANDS: '300', SNAPSHOT_EVERY_MS: '0', CHECKPOINT_EVERY_COMMANDS: '120' },
    });
    assert.deepEqual(config.snapshots, { everyCommands: 300, everyMs: 0, checkpointEveryCommands: 120 });
    // The defaults are the snapshotter's own, not a second copy of the numbers.
    assert.deepEqual(loadConfig({ env: {} }).snapshots, DEFAULT_SNAPSHOT_POLICY);
    assert.throws(() => loadConfig({ env: { SNAPSHOT_EVERY_COMMANDS: 'often' } }), /SNAPSHOT_EVERY_COMMANDS/);
    assert.throws(() => loadConfig({ env: { SNAPSHOT_EVERY_MS: '1.5' } }), /SNAPSHOT_EVERY_MS/);
    assert.throws(
      () => loadConfig({ env: { CHECKPOINT_EVERY_COMMANDS: '-1' } }),
      /\/snapshots\/checkpointEveryCommands must be >= 0 \(CHECKPOINT_EVERY_COMMANDS\)/,
    );
    // The variable is named only while its value is the one refused.
    assert.throws(
      () =>
        loadConfig({
          env: { SNAPSHOT_EVERY_COMMANDS: '5' },
          overrides: { snapshots: { everyCommands: -2 } },
        }),
      (error: Error) =>
        /everyCommands must be >= 0/.test(error.message) && !/SNAPSHOT_EVERY/.test(error.message),
    );
  });

  test('the history wait bound comes from HISTORY_WAIT_MS; 0 or a fraction is refused naming it', () => {
    assert.equal(loadConfig({ env: { HISTORY_WAIT_MS: '500' } }).historyWaitMs, 500);
    assert.throws(
      () => loadConfig({ env: { HISTORY_WAIT_MS: '0' } }),
      /historyWaitMs must be >= 1 \(HISTORY_WAIT_MS\)/,
    );
    assert.throws(() => loadConfig({ env: { HISTORY_WAIT_MS: '1.5' } }), /HISTORY_WAIT_MS/);
  });

  test('the bound of each stop step on the stores comes from SHUTDOWN_STEP_MS; 0 is refused naming it', () => {
    assert.equal(loadConfig({ env: { SHUTDOWN_STEP_MS: '60000' } }).shutdownStepMs, 60_000);
    assert.throws(
      () => loadConfig({ env: { SHUTDOWN_STEP_MS: '0' } }),
      /shutdownStepMs must be >= 1 \(SHUTDOWN_STEP_MS\)/,
    );
  });

  test('history retention: days from HISTORY_RETENTION_DAYS, off or empty keeps it forever, under 2 refused', () => {
    assert.equal(loadConfig({ env: { HISTORY_RETENTION_DAYS: '30' } }).historyRetentionDays, 30);
    assert.equal(loadConfig({ env: { HISTORY_RETENTION_DAYS: '2.5' } }).historyRetentionDays, 2.5);
    assert.equal(loadConfig({ env: { HISTORY_RETENTION_DAYS: 'off' } }).historyRetentionDays, null);
    assert.equal(loadConfig({ env: { HISTORY_RETENTION_DAYS: '' } }).historyRetentionDays, null);
    // Only the reason: not also that 1 is not null, nor that the union failed.
    assert.throws(
      () => loadConfig({ env: { HISTORY_RETENTION_DAYS: '1' } }),
      (error: Error) =>
        error.message ===
        'invalid configuration: /historyRetentionDays must be >= 2 (HISTORY_RETENTION_DAYS)',
    );
    assert.throws(
      () => loadConfig({ env: {}, overrides: { databaseUrl: '' } }),
      (error: Error) =>
        error.message === 'invalid configuration: /databaseUrl must NOT have fewer than 1 characters',
    );
    assert.throws(() => loadConfig({ env: { HISTORY_RETENTION_DAYS: 'a month' } }), /HISTORY_RETENTION_DAYS/);
  });

  test('journal retention: days from JOURNAL_RETENTION_DAYS; on every journal backend; refused under 1, under the history retention, without periodic snapshots', () => {
    assert.equal(loadConfig({ env: { JOURNAL_RETENTION_DAYS: '7' } }).journalRetentionDays, 7);
    assert.equal(loadConfig({ env: { JOURNAL_RETENTION_DAYS: 'off' } }).journalRetentionDays, null);
    const both = loadConfig({ env: { JOURNAL_RETENTION_DAYS: '30', HISTORY_RETENTION_DAYS: '30' } });
    assert.equal(both.journalRetentionDays, 30);
    const nats = loadConfig({ env: { JOURNAL_RETENTION_DAYS: '7', JOURNAL_URL: 'nats://127.0.0.1:4222' } });
    assert.equal(nats.journalRetentionDays, 7);
    const refused = (env: Record<string, string>, message: string) =>
      assert.throws(
        () => loadConfig({ env }),
        (error: Error) => error.message === `invalid configuration: ${message}`,
      );
    refused({ JOURNAL_RETENTION_DAYS: '0.5' }, '/journalRetentionDays must be >= 1 (JOURNAL_RETENTION_DAYS)');
    refused(
      { JOURNAL_RETENTION_DAYS: '7', HISTORY_RETENTION_DAYS: '30' },
      '/journalRetentionDays (JOURNAL_RETENTION_DAYS) must be >= /historyRetentionDays (HISTORY_RETENTION_DAYS) (30), so a read store rebuilt from the journal holds all the history it keeps',
    );
    refused(
      { JOURNAL_RETENTION_DAYS: '7', SNAPSHOT_EVERY_COMMANDS: '0', SNAPSHOT_EVERY_MS: '0' },
      '/journalRetentionDays (JOURNAL_RETENTION_DAYS) needs periodic snapshots: /snapshots/everyCommands (SNAPSHOT_EVERY_COMMANDS) and /snapshots/everyMs (SNAPSHOT_EVERY_MS) are both 0',
    );
  });

  test('journal retention needs only one periodic snapshot trigger: either one at 0 is accepted', () => {
    const noTimed = loadConfig({ env: { JOURNAL_RETENTION_DAYS: '7', SNAPSHOT_EVERY_MS: '0' } });
    assert.equal(noTimed.journalRetentionDays, 7);
    const noCounted = loadConfig({ env: { JOURNAL_RETENTION_DAYS: '7', SNAPSHOT_EVERY_COMMANDS: '0' } });
    assert.equal(noCounted.journalRetentionDays, 7);
  });

  test('subscriptions per WebSocket connection: WS_MAX_SUBSCRIPTIONS_PER_CONNECTION; 0 refused naming it', () => {
    const config = loadConfig({ env: { WS_MAX_SUBSCRIPTIONS_PER_CONNECTION: '250' } });
    assert.equal(config.http.wsMaxSubscriptionsPerConnection, 250);
    assert.throws(
      () => loadConfig({ env: { WS_MAX_SUBSCRIPTIONS_PER_CONNECTION: '0' } }),
      (error: Error) =>
        error.message ===
        'invalid configuration: /http/wsMaxSubscriptionsPerConnection must be >= 1 (WS_MAX_SUBSCRIPTIONS_PER_CONNECTION)',
    );
    assert.throws(
      () => loadConfig({ env: { WS_MAX_SUBSCRIPTIONS_PER_CONNECTION: 'many' } }),
      /WS_MAX_SUBSCRIPTIONS_PER_CONNECTION/,
    );
  });

  test('connection caps, the request timeout and the WebSocket send buffers from the env; 0 refused naming it', () => {
    const config = loadConfig({
      env: {
        MAX_CONNECTIONS: '500',
        MAX_CONNECTIONS_PER_ADDRESS: '20',
        REQUEST_TIMEOUT_MS: '5000',
        WS_MAX_BUFFERED_BYTES: '65536',
        WS_MAX_BUFFERED_BYTES_TOTAL: '1048576',
      },
    });
    assert.equal(config.http.maxConnections, 500);
    assert.equal(config.http.maxConnectionsPerAddress, 20);
    assert.equal(config.http.requestTimeoutMs, 5000);
    assert.equal(config.http.wsMaxBufferedBytes, 65_536);
    assert.equal(config.http.wsMaxBufferedBytesTotal, 1_048_576);
    for (const [name, path] of [
      ['MAX_CONNECTIONS', '/http/maxConnections'],
      ['MAX_CONNECTIONS_PER_ADDRESS', '/http/maxConnectionsPerAddress'],
      ['REQUEST_TIMEOUT_MS', '/http/requestTimeoutMs'],
    ] as const) {
      assert.throws(
        () => loadConfig({ env: { [name]: '0' } }),
        (error: Error) => error.message === `invalid configuration: ${path} must be >= 1 (${name})`,
      );
    }
    assert.throws(() => loadConfig({ env: { WS_MAX_BUFFERED_BYTES: '100' } }), /WS_MAX_BUFFERED_BYTES\)/);
  });

  test('a key’s share of the replay memory: auto by default, an integer from the env, 0 refused naming it', () => {
    const config = loadConfig({
      env: { REPLAY_MAX_ENTRIES_PER_KEY: '5000', REPLAY_MAX_ANSWER_BYTES_PER_KEY: 'auto' },
    });
    assert.equal(config.auth.replayMaxEntriesPerKey, 5000);
    assert.equal(config.auth.replayMaxAnswerBytesPerKey, null);
    assert.equal(loadConfig({ env: { REPLAY_MAX_ENTRIES_PER_KEY: '' } }).auth.replayMaxEntriesPerKey, null);
    assert.throws(
      () => loadConfig({ env: { REPLAY_MAX_ANSWER_BYTES_PER_KEY: '0' } }),
      (error: Error) =>
        error.message ===
        'invalid configuration: /auth/replayMaxAnswerBytesPerKey must be >= 1 (REPLAY_MAX_ANSWER_BYTES_PER_KEY)',
    );
    assert.throws(
      () => loadConfig({ env: { REPLAY_MAX_ENTRIES_PER_KEY: 'half' } }),
      /REPLAY_MAX_ENTRIES_PER_KEY/,
    );
  });

  test('store URLs: DATABASE_URL must be postgres(ql)://, JOURNAL_URL NATS servers; refused naming the variable, no password shown', () => {
    for (const url of [
      'postgres://x',
      'postgresql://u:p@db.example:5433/venue?sslmode=require',
      'PostgreSQL://h/d',
    ]) {
      assert.equal(loadConfig({ env: { DATABASE_URL: url } }).databaseUrl, url);
    }
    for (const url of [
      'nats://127.0.0.1:4222',
      'tls://nats.example:4222',
      'nats://a:4222, nats://b:4222,nats://c:4222',
      '127.0.0.1:4222',
      'localhost',
      '[::1]:4222',
    ]) {
      assert.equal(loadConfig({ env: { JOURNAL_URL: url } }).journalUrl, url);
    }
    const refused = (env: Record<string, string>, message: string) =>
      assert.throws(
        () => loadConfig({ env }),
        (error: Error) =>
          error instanceof ConfigError && error.message === `invalid configuration: ${message}`,
      );
    const database = '/databaseUrl (DATABASE_URL) must be a postgres:// or postgresql:// URL, got';
    refused({ DATABASE_URL: 'not a url' }, `${database} a value that is not a URL`);
    refused({ DATABASE_URL: 'mysql://root:secret@127.0.0.1/x' }, `${database} a mysql:// URL`);
    refused({ DATABASE_URL: '127.0.0.1:5432' }, `${database} a value that is not a URL`);
    const journal =
      '/journalUrl (JOURNAL_URL) must be NATS server URLs (nats://host:4222 or tls://host:4222, comma-separated), got';
    refused({ JOURNAL_URL: 'http://127.0.0.1:4222' }, `${journal} a http:// URL`);
    refused({ JOURNAL_URL: 'not a url' }, `${journal} a value that is not a URL`);
    refused({ JOURNAL_URL: 'nats://a:4222,ws://b:8080' }, `${journal} a ws:// URL`);
    refused({ JOURNAL_URL: ' , ' }, `${journal} a value that is not a URL`);
    // From a file or overrides too (no variable set it: the variable is still named, as the setting's).
    assert.throws(
      () => loadConfig({ env: {}, overrides: { databaseUrl: 'mysql://x' } }),
      /\/databaseUrl \(DATABASE_URL\) must be a postgres/,
    );
  });

  test('a JSON file is merged; unknown keys are rejected; env wins over the file', () => {
    const dir = tempDir('config-');
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify({ port: 7000, rateLimits: { nonMatching: { burst: 3 } } }));
    const fromFile = loadConfig({ env: { CONFIG_FILE: good } });
    assert.equal(fromFile.port, 7000);
    assert.equal(fromFile.rateLimits.nonMatching.burst, 3);
    assert.equal(fromFile.rateLimits.nonMatching.perSecond, 50);
    assert.equal(loadConfig({ env: { CONFIG_FILE: good, PORT: '7001' } }).port, 7001);

    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ http: { bodyLimit: 5 } }));
    assert.throws(() => loadConfig({ env: {}, file: bad }), /unknown config key 'http.bodyLimit'/);
    writeFileSync(bad, JSON.stringify({ port: '80' }));
    assert.throws(() => loadConfig({ env: {}, file: bad }), /\/port/);
  });

  test('numeric bounds: each edge is accepted, one past it is refused naming the variable', () => {
    const refusedAs = (env: Record<string, string>, message: string, why: string) =>
      assert.throws(
        () => loadConfig({ env }),
        (error: unknown) => error instanceof ConfigError && error.message === message,
        why,
      );
    assert.equal(
      loadConfig({ env: { PORT: '65535' } }).port,
      65_535,
      'PORT 65535, the highest TCP port, is accepted',
    );
    refusedAs(
      { PORT: '65536' },
      'invalid configuration: /port must be <= 65535 (PORT)',
      'PORT 65536 is refused naming PORT',
    );
    assert.equal(
      loadConfig({ env: { HISTORY_WAIT_MS: '600000' } }).historyWaitMs,
      600_000,
      'HISTORY_WAIT_MS of 10 minutes is accepted',
    );
    refusedAs(
      { HISTORY_WAIT_MS: '600001' },
      'invalid configuration: /historyWaitMs must be <= 600000 (HISTORY_WAIT_MS)',
      'HISTORY_WAIT_MS past 10 minutes is refused naming it',
    );
    assert.equal(
      loadConfig({ env: { RATE_MATCHING_PER_SEC: '0.5' } }).rateLimits.matching.perSecond,
      0.5,
      'a fractional refill rate is accepted',
    );
    // A bucket that never refills would lock every key out for good after its first burst.
    refusedAs(
      { RATE_MATCHING_PER_SEC: '0' },
      'invalid configuration: /rateLimits/matching/perSecond must be > 0 (RATE_MATCHING_PER_SEC)',
      'a refill rate of 0 is refused naming RATE_MATCHING_PER_SEC',
    );
    for (const raw of ['Infinity', '0x10', '0b11', '1_000']) {
      refusedAs(
        { RATE_MATCHING_PER_SEC: raw },
        'RATE_MATCHING_PER_SEC must be a number',
        `RATE_MATCHING_PER_SEC=${raw} is refused: a rate is written in decimal`,
      );
    }
    assert.equal(
      loadConfig({ env: { RATE_MATCHING_PER_SEC: '2.5e2' } }).rateLimits.matching.perSecond,
      250,
      'a decimal with an exponent is a number',
    );
    assert.equal(
      loadConfig({ env: {}, overrides: { auth: { clockSkewMs: 1_000 } } }).auth.clockSkewMs,
      1_000,
      'a clock skew window of 1 s is accepted',
    );
    assert.throws(
      () => loadConfig({ env: {}, overrides: { auth: { clockSkewMs: 999 } } }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message === 'invalid configuration: /auth/clockSkewMs must be >= 1000',
      'a clock skew window under 1 s is refused',
    );
  });

  test('an integer too big for a double is refused naming the variable, not taken as Infinity', () => {
    for (const raw of [`1${'0'.repeat(400)}`, '9007199254740993']) {
      for (const name of [
        'REQUEST_TIMEOUT_MS',
        'SHUTDOWN_GRACE_MS',
        'SNAPSHOT_EVERY_MS',
        'RATE_MATCHING_BURST',
      ]) {
        assert.throws(
          () => loadConfig({ env: { [name]: raw } }),
          (error: unknown) =>
            error instanceof ConfigError && error.message.startsWith(`${name} must be an integer of at most`),
          `${name}=${raw.slice(0, 20)}… is refused naming ${name}`,
        );
      }
    }
  });

  test('a setting whose size drives an allocation or a window has a maximum, refused naming the setting (stop 43)', () => {
    assert.equal(
      loadConfig({ env: {}, overrides: { auth: { clockSkewMs: 300_000 } } }).auth.clockSkewMs,
      300_000,
      'a clock skew window of 5 minutes is accepted',
    );
    assert.throws(
      () => loadConfig({ env: {}, overrides: { auth: { clockSkewMs: 86_400_000_000 } } }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message === 'invalid configuration: /auth/clockSkewMs must be <= 300000',
      'a clock skew window of 1,000 days is refused naming auth.clockSkewMs (it ran the start out of memory)',
    );
    const dir = tempDir('config-max-');
    const file = join(dir, 'config.json');
    writeFileSync(file, JSON.stringify({ auth: { clockSkewMs: 86_400_000 } }));
    assert.throws(
      () => loadConfig({ env: {}, file }),
      (error: unknown) =>
        error instanceof ConfigError && error.message.includes('/auth/clockSkewMs must be <='),
      'a day-long window from the config file is refused too',
    );
    for (const [name, pointer, top] of [
      ['BODY_LIMIT_BYTES', '/http/bodyLimitBytes', 67_108_864],
      ['WS_MAX_MESSAGE_BYTES', '/http/wsMaxMessageBytes', 67_108_864],
      ['REQUEST_TIMEOUT_MS', '/http/requestTimeoutMs', 3_600_000],
    ] as const) {
      assert.doesNotThrow(() => loadConfig({ env: { [name]: String(top) } }), `${name}=${top} is accepted`);
      assert.throws(
        () => loadConfig({ env: { [name]: String(top + 1) } }),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.message === `invalid configuration: ${pointer} must be <= ${top} (${name})`,
        `${name}=${top + 1} is refused naming ${pointer} and ${name}`,
      );
    }
  });

  test("a key's share of the replay memory larger than the memory is refused naming both (stop 43)", () => {
    assert.throws(
      () =>
        loadConfig({ env: {}, overrides: { auth: { replayMaxEntries: 10, replayMaxEntriesPerKey: 100 } } }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message ===
          "invalid configuration: /auth/replayMaxEntriesPerKey (REPLAY_MAX_ENTRIES_PER_KEY) must be <= /auth/replayMaxEntries (REPLAY_MAX_ENTRIES) (10), a key's share of it",
    );
    assert.throws(
      () => loadConfig({ env: { REPLAY_MAX_ANSWER_BYTES: '1000', REPLAY_MAX_ANSWER_BYTES_PER_KEY: '1001' } }),
      (error: unknown) =>
        error instanceof ConfigError && error.message.includes('REPLAY_MAX_ANSWER_BYTES_PER_KEY'),
    );
    assert.equal(
      loadConfig({ env: { REPLAY_MAX_ENTRIES: '10', REPLAY_MAX_ENTRIES_PER_KEY: '10' } }).auth
        .replayMaxEntriesPerKey,
      10,
      'a share of the whole memory is accepted',
    );
  });

  test('a shutdown grace longer than an hour is refused (past 2^31 − 1 ms a timer fires at once)', () => {
    assert.equal(
      loadConfig({ env: { SHUTDOWN_GRACE_MS: '3600000' } }).http.shutdownGraceMs,
      3_600_000,
      'an hour is accepted',
    );
    assert.throws(
      () => loadConfig({ env: { SHUTDOWN_GRACE_MS: '2147483648' } }),
      (error: unknown) => error instanceof ConfigError && error.message.includes('SHUTDOWN_GRACE_MS'),
      'a grace Node would shorten to 1 ms is refused naming SHUTDOWN_GRACE_MS',
    );
  });

  test('empty values: an empty store URL or key means none; an empty switch is refused naming it', () => {
    const config = loadConfig({ env: { DATABASE_URL: '', JOURNAL_URL: '', SECRET_ENCRYPTION_KEY: '' } });
    assert.equal(config.databaseUrl, null, 'DATABASE_URL= means SQLite under dataDir');
    assert.equal(config.journalUrl, null, 'JOURNAL_URL= means the journal stays with the stores');
    assert.equal(config.secretEncryptionKey, null, 'SECRET_ENCRYPTION_KEY= means the key file under dataDir');
    for (const name of ['SIMULATOR', 'METRICS', 'RATE_LIMITS']) {
      assert.throws(
        () => loadConfig({ env: { [name]: '' } }),
        (error: unknown) =>
          error instanceof ConfigError && error.message === `${name} must be on/off, got ''`,
        `an empty ${name} is refused naming it, not taken as on or off`,
      );
    }
  });
});
