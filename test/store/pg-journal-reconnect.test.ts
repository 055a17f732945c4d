/**
 * The PostgreSQL journal when its writer connection is lost (a real throwaway server, reached
 * through a proxy that cuts a connection at a chosen moment: test/support/cutting-proxy.ts). The
 * reconnection's backoff and deadline run on a virtual clock, moved on while a test waits.
 * - The batch's statement committed but its answer was lost: acknowledged, not written twice;
 *   also when the server still runs the lost session (holding the lock), which is then ended.
 * - The statement never reached the server: written once on the new connection.
 * - Another session took the lock meanwhile, or another writer appended and left: the journal
 *   fails (never two writers).
 * - The connection ends while the journal is idle: connected again at once, the lock held again.
 * - The server stays away past the deadline: the journal fails then, not before.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import pg from 'pg';
import { VirtualClock } from '../../src/app/clock.ts';
import type { JournalEntry } from '../../src/store/journal.ts';
import { DATABASE_LOCK_KEY } from '../../src/store/postgres/pg-fence.ts';
import { PgJournal, type PgWriterWatch } from '../../src/store/postgres/pg-journal.ts';
import { WriterFencedError } from '../../src/store/postgres/pg-writer.ts';
import { type CuttingProxy, startCuttingProxy } from '../support/cutting-proxy.ts';
import { queryOnce as query, startPostgres } from '../support/postgres.ts';

const server = await startPostgres();
after(() => server?.stop());
const skip = server === null && 'PostgreSQL is not installed (run scripts/ensure-system-deps.sh)';

type Command = { type: string };

interface Opened {
  readonly journal: PgJournal<Command>;
  readonly clock: VirtualClock;
  readonly proxy: CuttingProxy;
  readonly url: string;
  readonly dropped: Error[];
  readonly reconnected: Array<{ tries: number; batchCommitted: boolean | null }>;
  dispose(): Promise<void>;
}

let databases = 0;
async function open(): Promise<Opened> {
  const url = await server!.createDatabase(`journal_reconnect_${process.pid}_${++databases}`);
  const proxy = await startCuttingProxy(server!.port);
  const clock = new VirtualClock(1_000_000);
  const dropped: Error[] = [];
  const reconnected: Array<{ tries: number; batchCommitted: boolean | null }> = [];
  const watch: PgWriterWatch = {
    clock: { now: () => clock.now(), schedule: (ms, run) => clock.schedule(clock.now() + ms, run) },
    onDropped: (error) => dropped.push(error),
    onReconnected: (report) => reconnected.push(report),
  };
  const journal = await PgJournal.open<Command>({ connectionString: proxy.via(url), watch });
  return {
    journal,
    clock,
    proxy,
    url,
    dropped,
    reconnected,
    async dispose() {
      proxy.refuse = false;
      await journal.close().catch(() => undefined);
      await proxy.close();
    },
  };
}

const entry = (seq: number): JournalEntry<Command> => ({ seq, ts: seq, command: { type: `c${seq}` } });

/**
 * `promise` settled, virtual time moving on meanwhile (100 ms every 5 ms of real time) so the
 * reconnection's pauses pass; fails past `realMs`.
 */
async function settle<T>(
  promise: Promise<T>,
  clock: VirtualClock,
  realMs = 10_000,
): Promise<PromiseSettledResult<T>> {
  let settled: PromiseSettledResult<T> | null = null;
  void promise.then(
    (value) => {
      settled = { status: 'fulfilled', value };
    },
    (reason: unknown) => {
      settled = { status: 'rejected', reason };
    },
  );
  const started = Date.now();
  while (settled === null) {
    if (Date.now() - started > realMs) assert.fail(`not settled within ${realMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
    clock.advance(100);
  }
  return settled;
}

async function stored(url: string): Promise<Array<{ first_seq: number; count: number }>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (
      await client.query('SELECT first_seq::float8 AS first_seq, count FROM journal ORDER BY first_seq')
    ).rows as Array<{ first_seq: number; count: number }>;
  } finally {
    await client.end();
  }
}

async function seqsOf(journal: PgJournal<Command>): Promise<number[]> {
  const seqs: number[] = [];
  for await (const e of journal.readFrom(1)) seqs.push(e.seq);
  return seqs;
}

test('the batch committed but its answer was lost: acknowledged, not written again, and the journal goes on', {
  skip,
}, async () => {
  const o = await open();
  try {
    await o.journal.append(entry(1));
    const cut = o.proxy.cutAnswer('INSERT 0 1');
    const result = await settle(o.journal.append(entry(2)), o.clock);
    await cut;
    assert.equal(result.status, 'fulfilled', String((result as PromiseRejectedResult).reason));
    assert.equal(o.dropped.length, 1);
    assert.deepEqual(
      o.reconnected.map((r) => r.batchCommitted),
      [true],
    );
    await o.journal.append(entry(3));
    assert.deepEqual(await stored(o.url), [
      { first_seq: 1, count: 1 },
      { first_seq: 2, count: 1 },
      { first_seq: 3, count: 1 },
    ]);
    assert.deepEqual(await seqsOf(o.journal), [1, 2, 3]);
  } finally {
    await o.dispose();
  }
});

test("the server has not noticed the lost connection: the writer's own old session, still holding the lock, is ended", {
  skip,
}, async () => {
  const o = await open();
  try {
    await o.journal.append(entry(1));
    const cut = o.proxy.cutAnswer('INSERT 0 1', { serverStays: true });
    const result = await settle(o.journal.append(entry(2)), o.clock);
    await cut;
    assert.equal(result.status, 'fulfilled', String((result as PromiseRejectedResult).reason));
    // The first try found the lock held by the old session, ended it; the second took the lock.
    assert.deepEqual(o.reconnected, [{ tries: 2, batchCommitted: true }]);
    await o.journal.append(entry(3));
    assert.deepEqual(await seqsOf(o.journal), [1, 2, 3]);
  } finally {
    await o.dispose();
  }
});

test('the batch never reached the server: written once on the new connection, with what waited behind it', {
  skip,
}, async () => {
  const o = await open();
  try {
    await o.journal.append(entry(1));
    const cut = o.proxy.cutRequest('INSERT INTO journal');
    const appended = Promise.all([2, 3, 4].map((seq) => o.journal.append(entry(seq))));
    const result = await settle(appended, o.clock);
    await cut;
    assert.equal(result.status, 'fulfilled', String((result as PromiseRejectedResult).reason));
    assert.deepEqual(
      o.reconnected.map((r) => r.batchCommitted),
      [false],
    );
    assert.deepEqual(await seqsOf(o.journal), [1, 2, 3, 4]);
  } finally {
    await o.dispose();
  }
});

test('another session took the lock while the writer was away: the journal fails, writing nothing', {
  skip,
}, async () => {
  const o = await open();
  const other = new pg.Client({ connectionString: o.url });
  await other.connect();
  try {
    await o.journal.append(entry(1));
    o.proxy.refuse = true;
    const cut = o.proxy.cutRequest('INSERT INTO journal');
    const appended = o.journal.append(entry(2));
    await cut;
    // Granted once the writer's lost session has ended.
    await other.query('SELECT pg_advisory_lock($1)', [DATABASE_LOCK_KEY]);
    o.proxy.refuse = false;
    const result = await settle(appended, o.clock);
    assert.equal(result.status, 'rejected');
    const cause = ((result as PromiseRejectedResult).reason as Error).cause;
    assert.ok(cause instanceof WriterFencedError, String(cause));
    assert.match(cause.message, /another session took the database lock/);
    await assert.rejects(o.journal.append(entry(3)), 'the journal stays failed');
    assert.deepEqual(await stored(o.url), [{ first_seq: 1, count: 1 }]);
  } finally {
    await other.end();
    await o.dispose();
  }
});

test('another writer appended and left while the writer was away: the journal fails on reconnecting', {
  skip,
}, async () => {
  const o = await open();
  try {
    await o.journal.append(entry(1));
    o.proxy.refuse = true;
    const cut = o.proxy.cutRequest('INSERT INTO journal');
    const appended = o.journal.append(entry(2));
    await cut;
    // Once the lost session has ended, another writer opens the database, appends its own seq 2.
    let intruder: PgJournal<Command> | null = null;
    for (let tries = 0; intruder === null; tries++) {
      assert.ok(tries < 100, 'the lost session ended');
      intruder = await PgJournal.open<Command>({ connectionString: o.url }).catch(() => null);
      if (intruder === null) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await intruder.append({ seq: 2, ts: 2, command: { type: 'intruder' } });
    await intruder.close();
    o.proxy.refuse = false;
    const result = await settle(appended, o.clock);
    assert.equal(result.status, 'rejected');
    const cause = ((result as PromiseRejectedResult).reason as Error).cause;
    assert.ok(cause instanceof WriterFencedError, String(cause));
    assert.match(cause.message, /another writer used the database meanwhile/);
    assert.deepEqual(await stored(o.url), [
      { first_seq: 1, count: 1 },
      { first_seq: 2, count: 1 },
    ]);
  } finally {
    await o.dispose();
  }
});

test('the connection ends while the journal is idle: connected again at once, holding the lock, with no append', {
  skip,
}, async () => {
  const o = await open();
  try {
    await o.journal.append(entry(1));
    const holders = async () =>
      (
        await query(
          o.url,
          "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        )
      ).map((row) => row.pid as number);
    const [before] = await holders();
    await query(o.url, 'SELECT pg_terminate_backend($1)', [before]);
    const result = await settle(
      (async () => {
        while (o.reconnected.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      })(),
      o.clock,
    );
    assert.equal(result.status, 'fulfilled');
    assert.deepEqual(o.reconnected, [{ tries: o.reconnected[0]!.tries, batchCommitted: null }]);
    const after = await holders();
    assert.equal(after.length, 1);
    assert.notEqual(after[0], before);
    await o.journal.append(entry(2));
    assert.deepEqual(await seqsOf(o.journal), [1, 2]);
    assert.equal(o.dropped.length, 1);
  } finally {
    await o.dispose();
  }
});

test('the server stays away past the deadline: the journal fails at the deadline, not before', {
  skip,
}, async () => {
  const o = await open();
  try {
    await o.journal.append(entry(1));
    o.proxy.refuse = true;
    const cut = o.proxy.cutRequest('INSERT INTO journal');
    const started = o.clock.now();
    let settledAt = 0;
    const appended = o.journal.append(entry(2)).finally(() => {
      settledAt = o.clock.now();
    });
    await cut;
    const result = await settle(appended, o.clock, 20_000);
    assert.equal(result.status, 'rejected');
    assert.match(String((result as PromiseRejectedResult).reason), /journal write failed/);
    const waited = settledAt - started;
    assert.ok(waited >= 30_000 && waited < 32_000, `failed after ${waited} ms of service time`);
    o.proxy.refuse = false;
    await assert.rejects(o.journal.append(entry(3)), 'the journal stays failed');
  } finally {
    await o.dispose();
  }
});
