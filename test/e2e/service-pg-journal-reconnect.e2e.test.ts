/**
 * The service with its journal in PostgreSQL (DATABASE_URL alone) when the journal's writer
 * connection, which holds the database's lock, is lost:
 * - its session terminated (pg_terminate_backend) while orders flow: the journal connects again,
 *   every acknowledged order is in the journal once, and the service goes on taking orders;
 * - the server crashes (a backend killed with SIGKILL: PostgreSQL ends every session and
 *   recovers, in about a second) while orders flow: the same;
 * - another session takes the lock while the server is out of reach: the service stops as before
 *   (the core fails, the order in flight is answered `unavailable` with `outcome: unknown`);
 * - the server stays out of reach past the journal's deadline (30 s on the service's virtual
 *   clock): the same.
 * The server is reached through a proxy (test/support/cutting-proxy.ts) that can refuse new
 * connections, a server away; established connections (history, snapshots) are left alone.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, test } from 'node:test';
import pg from 'pg';
import pino from 'pino';
import { ApiError } from '../../sdk/errors.ts';
import { DATABASE_LOCK_KEY } from '../../src/store/postgres/pg-fence.ts';
import { readPgJournal } from '../../src/store/postgres/pg-journal.ts';
import { type CuttingProxy, startCuttingProxy } from '../support/cutting-proxy.ts';
import { queryOnce as query, startPostgres } from '../support/postgres.ts';
import { restingBuy, startTestService, type TestService } from '../support/service-harness.ts';
import { until } from '../support/until.ts';

const postgres = await startPostgres();
after(() => postgres?.stop());
const skip = postgres === null && 'PostgreSQL is not installed';

/** Ends the session holding the database's lock: the journal's writer. */
async function terminateWriter(url: string): Promise<void> {
  const rows = await query(
    url,
    `SELECT pg_terminate_backend(pid) AS ended FROM pg_locks
      WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  assert.deepEqual(
    rows.map((row) => row.ended),
    [true],
    'one session (the writer) held the lock',
  );
}

interface Started {
  readonly running: TestService;
  readonly proxy: CuttingProxy;
  readonly url: string;
  readonly logs: Array<Record<string, unknown>>;
  /** Moves the service clock 100 ms every 5 ms of real time until stopped. */
  tick(): () => void;
  dispose(): Promise<void>;
}

async function start(name: string): Promise<Started> {
  const url = await postgres!.createDatabase(`${name}_${process.pid}`);
  const proxy = await startCuttingProxy(postgres!.port);
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const running = await startTestService({
    config: { databaseUrl: proxy.via(url), simulator: false },
    logger: pino({ level: 'info' }, sink),
  });
  return {
    running,
    proxy,
    url,
    logs,
    tick() {
      const timer = setInterval(() => running.clock.advance(100), 5);
      return () => clearInterval(timer);
    },
    async dispose() {
      proxy.refuse = false;
      await running.close().catch(() => undefined);
      await proxy.close();
    },
  };
}

const logged = (logs: Array<Record<string, unknown>>, pattern: RegExp) =>
  logs.some((line) => pattern.test(String(line.msg)));

/** Every journaled command's JSON, read on a pool of its own (the service holds the lock). */
async function journaledCommands(url: string): Promise<string[]> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    const commands: string[] = [];
    for await (const batch of readPgJournal(pool, 1))
      for (const e of batch) commands.push(JSON.stringify(e.command));
    return commands;
  } finally {
    await pool.end();
  }
}

test("the journal's session is terminated while orders flow: it connects again, nothing acknowledged is lost or doubled, orders go on", {
  skip,
}, async () => {
  const s = await start('pgj_terminate');
  const stopTicking = s.tick();
  try {
    const acknowledged: string[] = [];
    const failures: unknown[] = [];
    let flowing = true;
    const worker = async (w: number) => {
      for (let i = 0; flowing; i++) {
        const label = `flow-${w}-${i}`;
        try {
          await restingBuy(s.running, String(1000 + i), label);
          acknowledged.push(label);
        } catch (error) {
          failures.push(error);
        }
      }
    };
    const workers = [0, 1, 2].map(worker);
    await until(() => acknowledged.length >= 30, 10_000);
    await terminateWriter(s.url);
    const before = acknowledged.length;
    await until(() => logged(s.logs, /PostgreSQL journal is connected again/), 10_000);
    await until(() => acknowledged.length >= before + 30, 10_000);
    flowing = false;
    await Promise.all(workers);
    assert.deepEqual(failures, []);
    assert.ok(logged(s.logs, /PostgreSQL journal's connection was lost/));
    assert.equal(s.running.service.core.failed, null);
    await s.running.service.core.drain();
    const commands = await journaledCommands(s.url);
    for (const label of acknowledged) {
      const times = commands.filter((c) => c.includes(`"${label}"`)).length;
      assert.equal(times, 1, `${label} journaled ${times} times`);
    }
    // And it goes on: a new order, acknowledged.
    assert.ok(await restingBuy(s.running, '999', 'after'));
  } finally {
    stopTicking();
    await s.dispose();
  }
});

test('PostgreSQL crashes (a backend killed: the server ends every session and recovers) while orders flow: the journal connects again', {
  skip,
}, async () => {
  const s = await start('pgj_crash');
  const stopTicking = s.tick();
  try {
    const acknowledged: string[] = [];
    let flowing = true;
    const worker = async (w: number) => {
      for (let i = 0; flowing; i++) {
        const label = `crash-${w}-${i}`;
        // Refusals are possible while the read store's connections are lost too; none is lost.
        if (
          await restingBuy(s.running, String(1000 + i), label).then(
            () => true,
            () => false,
          )
        )
          acknowledged.push(label);
      }
    };
    const workers = [0, 1].map(worker);
    await until(() => acknowledged.length >= 20, 10_000);
    const [holder] = await query(
      s.url,
      "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
    );
    process.kill(holder!.pid as number, 'SIGKILL');
    const before = acknowledged.length;
    await until(() => logged(s.logs, /PostgreSQL journal is connected again/), 10_000);
    await until(() => acknowledged.length >= before + 20, 10_000);
    flowing = false;
    await Promise.all(workers);
    assert.equal(s.running.service.core.failed, null);
    await s.running.service.core.drain();
    const commands = await journaledCommands(s.url);
    for (const label of acknowledged) {
      const times = commands.filter((c) => c.includes(`"${label}"`)).length;
      assert.equal(times, 1, `${label} journaled ${times} times`);
    }
  } finally {
    stopTicking();
    await s.dispose();
  }
});

/** Places an order while the server is out of reach; resolves with its outcome. */
function orderDuringOutage(s: Started): Promise<unknown> {
  return restingBuy(s.running, '1000', 'during').then(
    () => 'acknowledged',
    (error: unknown) => error,
  );
}

function assertOutcomeUnknown(outcome: unknown): void {
  assert.ok(outcome instanceof ApiError, `answered: ${String(outcome)}`);
  assert.equal(outcome.errorName, 'unavailable');
  assert.equal(outcome.data?.outcome, 'unknown');
}

test('another session takes the lock while the server is out of reach: the service stops as before', {
  skip,
}, async () => {
  const s = await start('pgj_fenced');
  const other = new pg.Client({ connectionString: s.url });
  await other.connect();
  let stopTicking: () => void = () => undefined;
  try {
    await restingBuy(s.running, '1000', 'before');
    s.proxy.refuse = true;
    await terminateWriter(s.url);
    const order = orderDuringOutage(s);
    await until(() => logged(s.logs, /PostgreSQL journal's connection was lost/), 10_000);
    await other.query('SELECT pg_advisory_lock($1)', [DATABASE_LOCK_KEY]);
    s.proxy.refuse = false;
    stopTicking = s.tick();
    assertOutcomeUnknown(await order);
    assert.ok(s.running.service.core.failed !== null, 'the core failed');
    const fatal = s.logs.find((line) => line.level === 60);
    assert.match(String(fatal?.msg), /the core stopped taking commands/);
    assert.match(JSON.stringify(fatal), /another session took the database lock/);
  } finally {
    stopTicking();
    await s.dispose();
    await other.end();
  }
});

test("the server stays out of reach past the journal's deadline: the service stops as before, at the deadline", {
  skip,
}, async () => {
  const s = await start('pgj_deadline');
  let stopTicking: () => void = () => undefined;
  try {
    await restingBuy(s.running, '1000', 'before');
    s.proxy.refuse = true;
    await terminateWriter(s.url);
    const lost = s.running.clock.now();
    let answeredAt = 0;
    const order = orderDuringOutage(s).finally(() => {
      answeredAt = s.running.clock.now();
    });
    stopTicking = s.tick();
    assertOutcomeUnknown(await order);
    const waited = answeredAt - lost;
    assert.ok(waited >= 30_000 && waited < 33_000, `answered after ${waited} ms of service time`);
    assert.ok(s.running.service.core.failed !== null, 'the core failed');
  } finally {
    stopTicking();
    await s.dispose();
  }
});
