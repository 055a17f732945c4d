/**
 * The service with its journal on NATS and its database on PostgreSQL, when the connection holding
 * the database's lock is ended (its backend terminated from another session):
 * - nobody took the lock meanwhile: the service takes it again (on its clock) and runs on;
 * - another session took it first: the service reports it fatal (`onFatal`, a fatal log line) and
 *   its close saves no final snapshot to a database that may be another service's;
 * - the database refused connections a while (the replica failed writing the read store): once the
 *   lock is held again the replica starts at once, not after its restart delay (up to 60 s, here
 *   10 minutes so that only the fix can start it within the test's bound), and history catches up.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, test } from 'node:test';
import pg from 'pg';
import pino from 'pino';
import { VirtualClock } from '../../src/app/clock.ts';
import { loadConfig } from '../../src/app/config.ts';
import type { RestartPolicy } from '../../src/app/replica-supervisor.ts';
import { type RunningService, startService } from '../../src/app/service.ts';
import { DATABASE_LOCK_KEY, DatabaseLockLostError } from '../../src/store/postgres/pg-fence.ts';
import { queryOnce as query } from '../support/postgres.ts';
import { SERVICE_T0 } from '../support/service-harness.ts';
import { startStoreServers } from '../support/store-servers.ts';
import { tempDir } from '../support/temp-dir.ts';
import { until } from '../support/until.ts';

const servers = await startStoreServers();
after(() => servers.stop());
const { postgres, nats } = servers;
const skip = (postgres === null || nats === null) && 'PostgreSQL or nats-server is not installed';

const nameOf = (url: string) => new URL(url).pathname.slice(1);

async function lockHolders(url: string): Promise<number[]> {
  const rows = await query(
    postgres!.url,
    `SELECT l.pid FROM pg_locks l JOIN pg_database d ON d.oid = l.database
      WHERE l.locktype = 'advisory' AND l.granted AND d.datname = $1`,
    [nameOf(url)],
  );
  return rows.map((row) => row.pid as number);
}

async function terminateLockHolder(url: string): Promise<void> {
  const holders = await lockHolders(url);
  assert.equal(holders.length, 1, 'one session holds the lock');
  await query(postgres!.url, 'SELECT pg_terminate_backend($1)', [holders[0]]);
}

const snapshotCount = async (url: string) =>
  (await query(url, 'SELECT count(*)::int AS n FROM snapshots'))[0]!.n as number;

interface Started {
  readonly service: RunningService;
  readonly clock: VirtualClock;
  readonly fatal: Error[];
  readonly logs: Array<Record<string, unknown>>;
}

async function start(
  name: string,
  extra: { replicaRestart?: RestartPolicy } = {},
): Promise<Started & { databaseUrl: string }> {
  const databaseUrl = await postgres!.createDatabase(`${name}_${process.pid}`);
  const clock = new VirtualClock(SERVICE_T0);
  const fatal: Error[] = [];
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const config = loadConfig({
    env: {},
    overrides: {
      port: 0,
      host: '127.0.0.1',
      dataDir: tempDir('service-fence-'),
      databaseUrl,
      journalUrl: nats!.url,
      journalStream: `${name.toUpperCase()}_${process.pid}`,
      simulator: false,
      rateLimits: { enabled: false },
    },
  });
  const service = await startService({
    config,
    clock,
    logger: pino({ level: 'info' }, sink),
    onFatal: (error) => fatal.push(error),
    ...extra,
  });
  return { service, clock, fatal, logs, databaseUrl };
}

test('the lock connection ended, nobody took the lock: taken again, the service runs on', {
  skip,
}, async () => {
  const { service, clock, fatal, logs, databaseUrl } = await start('fence_retake');
  try {
    const [before] = await lockHolders(databaseUrl);
    await terminateLockHolder(databaseUrl);
    await until(
      () => logs.some((line) => /lock dropped: taking the lock again/.test(String(line.msg))),
      10_000,
    );
    // The first try is at once on the service clock.
    clock.advance(0);
    await until(() => logs.some((line) => line.msg === 'the PostgreSQL database lock is held again'), 10_000);
    const holders = await lockHolders(databaseUrl);
    assert.equal(holders.length, 1);
    assert.notEqual(holders[0], before);
    assert.deepEqual(fatal, []);
    assert.equal(service.core.failed, null);
    // A clean stop as ever: the final snapshot is saved.
    const snapshotsBefore = await snapshotCount(databaseUrl);
    await service.close();
    assert.equal(await snapshotCount(databaseUrl), snapshotsBefore + 1);
  } finally {
    await service.close();
  }
  assert.deepEqual(await lockHolders(databaseUrl), []);
});

test('the lock connection ended and another session took the lock: fatal, and no final snapshot', {
  skip,
}, async () => {
  const { service, clock, fatal, logs, databaseUrl } = await start('fence_lost');
  const other = new pg.Client({ connectionString: databaseUrl });
  try {
    assert.ok(service.core.sequence > 0, 'the start journaled commands (demo accounts)');
    await terminateLockHolder(databaseUrl);
    await until(() => logs.some((line) => /lock dropped/.test(String(line.msg))), 10_000);
    await other.connect();
    await other.query('SELECT pg_advisory_lock($1)', [DATABASE_LOCK_KEY]);
    clock.advance(0);
    await until(() => fatal.length === 1, 10_000);
    assert.ok(fatal[0] instanceof DatabaseLockLostError);
    const line = logs.find((entry) => entry.level === 60);
    assert.match(String(line?.msg), /PostgreSQL database lock is lost: the service stops/);
    const snapshotsBefore = await snapshotCount(databaseUrl);
    await service.close();
    assert.equal(await snapshotCount(databaseUrl), snapshotsBefore, 'no final snapshot saved');
  } finally {
    await service.close();
    await other.end();
  }
});

/** `until` with the step named in its failure. */
const waitFor = (what: string, predicate: () => boolean) =>
  until(predicate, 10_000).catch(() => assert.fail(`${what}: not within 10 s`));

test('the database refused connections and the replica failed: once the lock is held again, the replica restarts at once', {
  skip,
}, async () => {
  const tenMinutes = { firstDelayMs: 600_000, maxDelayMs: 600_000, healthyAfterMs: 600_000 };
  const { service, clock, fatal, logs, databaseUrl } = await start('fence_replica', {
    replicaRestart: tenMinutes,
  });
  const name = nameOf(databaseUrl);
  const supervisor = service.snapshotReplica!;
  try {
    await supervisor.caughtUp();
    // The database refuses connections: the lock's and the replica's are ended, new ones refused.
    await query(postgres!.url, `ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
    await query(postgres!.url, 'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [
      name,
    ]);
    await waitFor('the lock dropped', () =>
      logs.some((line) => /lock dropped: taking the lock again/.test(String(line.msg))),
    );
    clock.advance(0); // the first try, refused
    // A command for the replica to write: its write fails, and it waits out its restart delay.
    await service.core.submit({ type: 'deposit', accountId: 1, currency: 'BTC', amount: 1 });
    await waitFor('the replica failed', () => supervisor.current === null);
    assert.ok(logs.some((line) => /snapshot replica stopped/.test(String(line.msg))));
    // The database is back; the lock is taken again at its next try (1 s on the service clock).
    await query(postgres!.url, `ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
    clock.advance(1_000);
    await waitFor('the lock held again', () =>
      logs.some((line) => line.msg === 'the PostgreSQL database lock is held again'),
    );
    await waitFor('the replica restarted', () => supervisor.current !== null);
    await service.core.drain();
    const durable = supervisor.handedSeq;
    await supervisor.caughtUp(durable);
    assert.ok(supervisor.lastAppliedSeq >= durable, 'the read store caught up');
    assert.deepEqual(fatal, []);
    assert.equal(service.core.failed, null);
  } finally {
    await query(postgres!.url, `ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
    await service.close();
  }
});
