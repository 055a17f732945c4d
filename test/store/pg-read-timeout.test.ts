/**
 * The PostgreSQL read store against a server that stops answering (every process of this file's
 * own server stopped with SIGSTOP, then resumed): a query and a commit fail after the deadline,
 * as an outage history answers `unavailable`, instead of waiting forever; closing does not wait
 * for the server; once it answers again the store works, on fresh connections.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { isStorageOutage } from '../../src/api/history-outages.ts';
import { PgReadDb, ReadDbTimeoutError } from '../../src/store/read/read-db.ts';
import { freezePostgres } from '../support/pg-freeze.ts';
import { startPostgres } from '../support/postgres.ts';

const server = await startPostgres();
after(() => server?.stop());

/** `promise`'s outcome, or a failure when it has none within `ms` (the test's own bound). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no outcome within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

const timedOut = (error: unknown) => {
  assert.ok(error instanceof ReadDbTimeoutError, String(error));
  assert.ok(isStorageOutage(error), 'history answers it as an outage');
  return true;
};

test('a server that stops answering: queries and commits fail after the deadline, close does not wait', {
  skip: server === null && 'PostgreSQL is not installed',
}, async () => {
  const url = await server!.createDatabase(`read_timeout_${process.pid}`);
  const db = await PgReadDb.open(url, { timeoutMs: 400, writeTimeoutMs: 400 });
  await db.init(['CREATE TABLE IF NOT EXISTS t (id BIGINT PRIMARY KEY, v TEXT NOT NULL)']);
  await db.commit([{ sql: 'INSERT INTO t (id, v) VALUES (?, ?)', params: [1, 'a'] }], 1);
  // Two idle connections in the pool, and room for two more to be dialled.
  await Promise.all([db.query('SELECT pg_sleep(0.05)', []), db.query('SELECT pg_sleep(0.05)', [])]);
  const frozen = await freezePostgres(url);
  try {
    // On connections the pool holds, and on new ones (which the stopped server never accepts).
    const queries = await within(
      Promise.allSettled([1, 2, 3, 4, 5].map((id) => db.query('SELECT v FROM t WHERE id = ?', [id]))),
      5_000,
      'queries',
    );
    for (const query of queries) {
      assert.equal(query.status, 'rejected');
      timedOut((query as PromiseRejectedResult).reason);
    }
    await assert.rejects(
      within(
        db.commit([{ sql: 'INSERT INTO t (id, v) VALUES (?, ?)', params: [2, 'b'] }], 2),
        5_000,
        'commit',
      ),
      timedOut,
    );
    await within(db.close(), 2_000, 'close');
  } finally {
    frozen.resume();
  }
  const again = await PgReadDb.open(url, { timeoutMs: 400, writeTimeoutMs: 400 });
  try {
    // The commit that timed out was never committed; the first one was.
    assert.deepEqual(await again.query('SELECT id, v FROM t ORDER BY id', []), [{ id: 1, v: 'a' }]);
    assert.equal(await again.lastAppliedSeq(), 1);
  } finally {
    await again.close();
  }
});

test('a commit whose statement timed out drops its connection: the next commit does not queue behind the stuck one', {
  skip: server === null && 'PostgreSQL is not installed',
}, async () => {
  const url = await server!.createDatabase(`read_timeout_drop_${process.pid}`);
  const db = await PgReadDb.open(url, { timeoutMs: 400, writeTimeoutMs: 400 });
  try {
    await db.init(['CREATE TABLE IF NOT EXISTS t (id BIGINT PRIMARY KEY, v TEXT NOT NULL)']);
    // A statement slower than the deadline (the server answers; this one statement does not in time).
    await assert.rejects(
      db.commit([{ sql: 'INSERT INTO t (id, v) SELECT ?, ? FROM pg_sleep(3)', params: [1, 'slow'] }], 1),
      timedOut,
    );
    const started = Date.now();
    for (let i = 2; i <= 6; i++) {
      await db.commit([{ sql: 'INSERT INTO t (id, v) VALUES (?, ?)', params: [i, 'fast'] }], i);
    }
    assert.ok(Date.now() - started < 2_000, `${Date.now() - started} ms for five commits`);
    assert.equal(await db.lastAppliedSeq(), 6);
  } finally {
    await db.close();
  }
});

test('a COMMIT that does not answer within the deadline fails the write too (BEGIN and COMMIT are timed)', {
  skip: server === null && 'PostgreSQL is not installed',
}, async () => {
  const url = await server!.createDatabase(`read_timeout_commit_${process.pid}`);
  const db = await PgReadDb.open(url, { timeoutMs: 400, writeTimeoutMs: 400 });
  try {
    await db.init([
      'CREATE TABLE IF NOT EXISTS t (id BIGINT PRIMARY KEY, v TEXT NOT NULL)',
      // Every statement answers at once; the COMMIT runs a deferred trigger that takes 2 s.
      'CREATE OR REPLACE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(2); RETURN NULL; END $$',
      'CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON t DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit()',
    ]);
    await assert.rejects(
      within(
        db.commit([{ sql: 'INSERT INTO t (id, v) VALUES (?, ?)', params: [1, 'a'] }], 1),
        1_500,
        'commit',
      ),
      timedOut,
    );
  } finally {
    await db.close();
  }
});
