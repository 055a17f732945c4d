/**
 * A read store written inline (`READ_STORE_ON_REPLICA=off`, or no replica) whose write fails: the
 * write is tried again with a backoff, with the commands pushed since, so the store catches up
 * once the database answers again; meanwhile a query that needs a command the store has not
 * written waits up to the bound and is then refused as behind (never answered stale), while one
 * whose rows are written answers at once. Faults are injected into the database's commits, and
 * time is a virtual clock.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { VirtualClock } from '../../src/app/clock.ts';
import type { CoreEvent } from '../../src/core/events.ts';
import { SqliteReadDb } from '../../src/store/read/read-db.ts';
import { ReadStore, ReadStoreBehindError } from '../../src/store/read/read-store.ts';
import { orderView } from './read-store-contract.ts';

const NOW = 1_800_000_000_000;
const WAIT_MS = 2_000;
const root = mkdtempSync(join(tmpdir(), 'read-store-behind-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

/** A read store on SQLite whose commits fail while `failing` is set. */
async function flakyStore(clock: VirtualClock) {
  const db = new SqliteReadDb(join(root, `read-${++n}.sqlite`), { writerThread: false });
  const commit = db.commit.bind(db);
  const fault = { failing: false, commits: 0, refused: 0 };
  db.commit = (statements, lastSeq) => {
    fault.commits++;
    if (!fault.failing) return commit(statements, lastSeq);
    fault.refused++;
    return Promise.reject(Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' }));
  };
  const errors: unknown[] = [];
  const store = await ReadStore.open({
    db,
    writeDelayMs: 0,
    maxWaitMs: WAIT_MS,
    schedule: (ms, callback) => clock.schedule(clock.now() + ms, callback),
    onError: (error) => errors.push(error),
  });
  return { store, fault, errors };
}

const filled = (orderId: string, accountId: number): CoreEvent => ({
  type: 'order',
  order: orderView({ orderId, accountId, filledAmount: 1 }),
});

async function orderIds(store: ReadStore, accountId: number): Promise<string[]> {
  const page = await store.orderHistory({ accountId, currency: 'BTC', now: NOW });
  return page.orders.map((o) => o.orderId);
}

/** Lets promise callbacks and the turn's I/O run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

test('a failed write is tried again with a backoff, with what was pushed since: the store catches up', async () => {
  const clock = new VirtualClock(NOW);
  const { store, fault, errors } = await flakyStore(clock);
  try {
    store.push({ seq: 1, ts: NOW, events: [filled('a', 1)] });
    assert.deepEqual(await orderIds(store, 1), ['a']);

    fault.failing = true;
    store.push({ seq: 2, ts: NOW, events: [filled('b', 1)] });
    await settle();
    assert.equal(fault.refused, 1, 'the write was tried');
    assert.equal(errors.length, 1, 'and its failure reported');
    assert.equal(store.lastAppliedSeq, 1);
    assert.notEqual(store.failure, null);

    // The database answers again; commands keep coming. A query waits for them (no account
    // mapping here: for everything pushed), and does not hurry the retry.
    fault.failing = false;
    const tried = fault.commits;
    store.push({ seq: 3, ts: NOW, events: [filled('c', 1)] });
    let answered: string[] | null = null;
    const waiting = orderIds(store, 1).then((ids) => {
      answered = ids;
    });
    await settle();
    assert.equal(store.lastAppliedSeq, 1, 'nothing is written before the backoff ends');
    assert.equal(fault.commits, tried, 'no write was tried before it either');
    for (let step = 0; step < 20 && answered === null; step++) {
      clock.advance(50);
      await settle();
    }
    await waiting;
    assert.deepEqual(answered, ['c', 'b', 'a'], 'the waiting query saw the retry write');
    assert.equal(store.lastAppliedSeq, 3, 'the retry wrote the failed write and what came after it');
    assert.equal(store.failure, null);
  } finally {
    await store.close();
  }
});

test('a failure that lasts: retried at growing intervals, queries refused as behind, caught up when it ends', async () => {
  const clock = new VirtualClock(NOW);
  const { store, fault } = await flakyStore(clock);
  try {
    const accountSeqs = new Map<number, number>();
    store.waitPerAccount((accountId) => accountSeqs.get(accountId) ?? 0);
    store.push({ seq: 1, ts: NOW, events: [filled('a', 1), filled('x', 2)] });
    accountSeqs.set(1, 1);
    accountSeqs.set(2, 1);
    assert.deepEqual(await orderIds(store, 1), ['a']);

    fault.failing = true;
    store.push({ seq: 2, ts: NOW, events: [filled('b', 1)] });
    accountSeqs.set(1, 2);
    await settle();

    // Account 2's rows are all written: answered at once.
    assert.deepEqual(await orderIds(store, 2), ['x']);
    // Account 1's last command is not: the query waits, then is refused, never answered stale.
    let answered = null as unknown;
    const seen = () => answered;
    const waiting = orderIds(store, 1).then(
      (ids) => {
        answered = ids;
      },
      (error: unknown) => {
        answered = error;
      },
    );
    await settle();
    assert.equal(seen(), null, 'waiting for the store');
    clock.advance(WAIT_MS - 1);
    await settle();
    assert.equal(seen(), null, 'still waiting within the bound');
    clock.advance(1);
    await waiting;
    assert.ok(answered instanceof ReadStoreBehindError, `refused as behind: ${String(answered)}`);
    assert.equal(answered.neededSeq, 2);
    assert.equal(answered.writtenSeq, 1);
    assert.equal(answered.waitedMs, WAIT_MS);

    // Retried with a backoff (not at every turn), and never given up.
    const refusedSoFar = fault.refused;
    for (let i = 0; i < 20; i++) {
      clock.advance(1_000);
      await settle();
    }
    const retries = fault.refused - refusedSoFar;
    assert.ok(retries >= 3 && retries <= 12, `retried at growing intervals: ${retries} tries in 20 s`);

    fault.failing = false;
    for (let step = 0; step < 20 && store.lastAppliedSeq < 2; step++) {
      clock.advance(500);
      await settle();
    }
    assert.equal(store.lastAppliedSeq, 2, 'the next retry caught the store up');
    assert.deepEqual(await orderIds(store, 1), ['b', 'a']);
  } finally {
    await store.close();
  }
});
