/**
 * One service per PostgreSQL database, whichever layout (openStores): with the journal on NATS the
 * database is locked as with the journal in it, and a database records the journal its snapshots
 * and history describe, so a start with another journal is refused (running or not) instead of
 * discarding them. And a failed open leaves nothing open behind it. With the journal on NATS, a
 * lock whose connection drops (its backend terminated) is taken again, or reported lost when
 * another session took it or the server does not let it be taken again in time.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { VirtualClock } from '../../src/app/clock.ts';
import { StoreOpenError } from '../../src/store/data-dir-lock.ts';
import { openStores, type StoreSettings } from '../../src/store/open-stores.ts';
import {
  DATABASE_LOCK_KEY,
  DatabaseLockLostError,
  type FenceWatch,
} from '../../src/store/postgres/pg-fence.ts';
import { queryOnce as query } from '../support/postgres.ts';
import { startStoreServers } from '../support/store-servers.ts';
import { until } from '../support/until.ts';

const servers = await startStoreServers();
after(() => servers.stop());
const { postgres, nats } = servers;
const skip = postgres === null || nats === null ? 'PostgreSQL or nats-server is not installed' : false;

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fence-'));
  dirs.push(dir);
  return dir;
}

let databases = 0;
const database = () => postgres!.createDatabase(`fence_${process.pid}_${++databases}`);

function onNats(databaseUrl: string | null, stream: string): StoreSettings {
  return {
    dataDir: dataDir(),
    databaseUrl,
    natsJournal: { servers: nats!.url, stream: `${stream}_${process.pid}`, replicas: 1 },
  };
}

const onPostgres = (databaseUrl: string): StoreSettings => ({ dataDir: dataDir(), databaseUrl });

const inUse = (error: unknown) =>
  error instanceof StoreOpenError &&
  /database at DATABASE_URL is in use by another running service/.test(error.message);

const otherJournal = (error: unknown) =>
  error instanceof StoreOpenError &&
  /DATABASE_URL holds the snapshots and history of the journal/.test(error.message) &&
  /JOURNAL_URL and JOURNAL_STREAM/.test(error.message);

const nameOf = (url: string) => new URL(url).pathname.slice(1);

/** The backends holding an advisory lock on the database at `url` (asked from another database). */
async function lockHolders(url: string): Promise<number[]> {
  const rows = (await query(
    postgres!.url,
    `SELECT l.pid FROM pg_locks l JOIN pg_database d ON d.oid = l.database
      WHERE l.locktype = 'advisory' AND l.granted AND d.datname = '${nameOf(url)}'`,
  )) as Array<{ pid: number }>;
  return rows.map((row) => row.pid);
}

describe('one service per PostgreSQL database', { skip }, () => {
  test('with the journal on NATS: a second service on the database is refused, running or stopped, with another stream or none', async () => {
    const url = await database();
    const first = await openStores(onNats(url, 'FENCE_A'));
    await first.journal.append({ seq: 1, ts: 5, command: { type: 'x' } });
    await first.snapshots.saveSnapshot({ seq: 1, ts: 5, stateHash: 'a1', state: {} });
    first.readStore.push({ seq: 1, ts: 5, events: [] });
    // Running: the lock refuses another stream, and the journal in PostgreSQL alike.
    await assert.rejects(openStores(onNats(url, 'FENCE_B')), inUse);
    await assert.rejects(openStores(onPostgres(url)), inUse);
    await first.close();
    // Stopped: the database says whose snapshots and history it holds.
    await assert.rejects(openStores(onNats(url, 'FENCE_B')), otherJournal);
    await assert.rejects(openStores(onPostgres(url)), otherJournal);
    // Nothing was discarded; the service with its own journal starts as before.
    const again = await openStores(onNats(url, 'FENCE_A'));
    try {
      assert.equal((await again.snapshots.latestSnapshot())?.stateHash, 'a1');
      assert.equal(again.readStore.lastAppliedSeq, 1);
      assert.deepEqual(await again.journal.last(), { seq: 1, ts: 5 });
    } finally {
      await again.close();
    }
  });

  test('with the journal in PostgreSQL: one lock (no self-deadlock), and a NATS journal refused on its database, also on one from before the record', async () => {
    const url = await database();
    const first = await openStores(onPostgres(url));
    await first.journal.append({ seq: 1, ts: 5, command: { type: 'x' } });
    await assert.rejects(openStores(onPostgres(url)), inUse);
    await assert.rejects(openStores(onNats(url, 'FENCE_C')), inUse);
    await first.close();
    await assert.rejects(openStores(onNats(url, 'FENCE_C')), otherJournal);
    // A database a build before the record wrote: its own journal holds entries, so it is its.
    await query(url, 'DELETE FROM store_meta');
    await assert.rejects(openStores(onNats(url, 'FENCE_C')), otherJournal);
    const again = await openStores(onPostgres(url));
    try {
      assert.deepEqual(await again.journal.last(), { seq: 1, ts: 5 });
    } finally {
      await again.close();
    }
    assert.deepEqual(await query(url, 'SELECT key, value FROM store_meta'), [
      { key: 'journal', value: 'postgres' },
    ]);
  });
});

describe('a failed open leaves nothing open', { skip }, () => {
  test('a start refused as the database describes another journal has released the lock when it rejects', async () => {
    const url = await database();
    const first = await openStores(onNats(url, 'FREE_A'));
    await first.close();
    for (let i = 0; i < 20; i++) {
      await assert.rejects(openStores(onNats(url, 'FREE_B')), otherJournal);
      assert.deepEqual(await lockHolders(url), [], `try ${i}: the lock is free once the start rejected`);
    }
  });

  test('a database that cannot be reached: the NATS stream is not left claimed', async () => {
    const settings = onNats('postgresql://postgres@127.0.0.1:1/nowhere', 'LEAK_A');
    await assert.rejects(openStores(settings), StoreOpenError);
    const stores = await openStores({ ...settings, databaseUrl: await database() });
    await stores.close();
  });

  test('a read store that cannot be opened: the NATS journal opened before it is closed', async () => {
    const settings = onNats(null, 'LEAK_B');
    // read.sqlite is a directory: SQLite cannot open it.
    mkdirSync(join(settings.dataDir, 'read.sqlite'), { recursive: true });
    await assert.rejects(openStores(settings));
    rmSync(join(settings.dataDir, 'read.sqlite'), { recursive: true });
    const stores = await openStores(settings);
    await stores.close();
  });

  test('a NATS journal that cannot be opened: the database lock taken before it is released', async () => {
    const url = await database();
    const running = await openStores(onNats(await database(), 'LEAK_C'));
    try {
      // The stream is in use: refused after the database was locked.
      await assert.rejects(openStores(onNats(url, 'LEAK_C')), /in use by another running service/);
      const other = await openStores(onNats(url, 'LEAK_D'));
      await other.close();
    } finally {
      await running.close();
    }
  });
});

describe('the lock connection dropping, journal on NATS', { skip }, () => {
  /** A fence watch on a virtual clock, recording what it reports. */
  function watched(retakeTries?: number) {
    const clock = new VirtualClock(0);
    const dropped: Error[] = [];
    const retaken: number[] = [];
    const lost: Error[] = [];
    const fenceWatch: FenceWatch = {
      schedule: (ms, run) => clock.schedule(clock.now() + ms, run),
      onDropped: (error) => dropped.push(error),
      onRetaken: (tries) => retaken.push(tries),
      onLost: (error) => lost.push(error),
      ...(retakeTries === undefined ? {} : { retakeTries }),
    };
    return { clock, dropped, retaken, lost, fenceWatch };
  }

  /** Ends the session holding the lock, as a network cut or an administrator would. */
  async function terminateLockHolder(url: string): Promise<number> {
    const [holder] = await lockHolders(url);
    assert.ok(holder !== undefined, 'someone holds the lock');
    await query(postgres!.url, `SELECT pg_terminate_backend(${holder})`);
    return holder;
  }

  const allowConnections = (url: string, allow: boolean) =>
    query(postgres!.url, `ALTER DATABASE "${nameOf(url)}" ALLOW_CONNECTIONS ${allow}`);

  test('its backend terminated: the lock is taken again at once on a new connection, and still refuses a second service', async () => {
    const url = await database();
    const watch = watched();
    const stores = await openStores({ ...onNats(url, 'RETAKE_A'), fenceWatch: watch.fenceWatch });
    try {
      const before = await terminateLockHolder(url);
      await until(() => watch.dropped.length === 1, 10_000);
      assert.deepEqual(await lockHolders(url), [], 'the lock went with the session');
      // The first try is at once (on the fence's clock).
      watch.clock.advance(0);
      await until(() => watch.retaken.length === 1, 10_000);
      assert.deepEqual(watch.retaken, [1]);
      assert.deepEqual(watch.lost, []);
      const holders = await lockHolders(url);
      assert.equal(holders.length, 1);
      assert.notEqual(holders[0], before);
      await assert.rejects(openStores(onPostgres(url)), inUse);
      await assert.rejects(openStores(onNats(url, 'RETAKE_B')), inUse);
      // The new connection is watched too.
      await terminateLockHolder(url);
      await until(() => watch.dropped.length === 2, 10_000);
      watch.clock.advance(0);
      await until(() => watch.retaken.length === 2, 10_000);
    } finally {
      await stores.close();
    }
    assert.deepEqual(await lockHolders(url), [], 'closing released it');
  });

  test('another session takes the lock first: it is lost, reported once, and left to the other', async () => {
    const url = await database();
    const watch = watched();
    const stores = await openStores({ ...onNats(url, 'RETAKE_C'), fenceWatch: watch.fenceWatch });
    const other = new pg.Client({ connectionString: url });
    try {
      await terminateLockHolder(url);
      await until(() => watch.dropped.length === 1, 10_000);
      await other.connect();
      await other.query('SELECT pg_advisory_lock($1)', [DATABASE_LOCK_KEY]);
      watch.clock.advance(0);
      await until(() => watch.lost.length === 1, 10_000);
      assert.ok(watch.lost[0] instanceof DatabaseLockLostError, String(watch.lost[0]));
      assert.match(watch.lost[0].message, /another session took the lock/);
      assert.deepEqual(watch.retaken, []);
      // No further try.
      assert.equal(watch.clock.pendingTimers(), 0);
      const [holder] = await lockHolders(url);
      assert.equal(holder, (await other.query('SELECT pg_backend_pid() AS pid')).rows[0].pid);
    } finally {
      await stores.close();
      await other.end();
    }
  });

  test('the server refusing connections for a while: tried again every second, held again once it lets them in', async () => {
    const url = await database();
    const watch = watched();
    const stores = await openStores({ ...onNats(url, 'RETAKE_D'), fenceWatch: watch.fenceWatch });
    try {
      await allowConnections(url, false);
      await terminateLockHolder(url);
      await until(() => watch.dropped.length === 1, 10_000);
      watch.clock.advance(0);
      // The first try fails; the next waits its second.
      await until(() => watch.clock.pendingTimers() === 1, 10_000);
      assert.deepEqual(watch.retaken, []);
      await allowConnections(url, true);
      watch.clock.advance(999);
      assert.deepEqual(watch.retaken, []);
      watch.clock.advance(1);
      await until(() => watch.retaken.length === 1, 10_000);
      assert.deepEqual(watch.retaken, [2]);
      assert.deepEqual(watch.lost, []);
      assert.equal((await lockHolders(url)).length, 1);
    } finally {
      await allowConnections(url, true);
      await stores.close();
    }
  });

  test('the server refusing connections past the last try: the lock is lost', async () => {
    const url = await database();
    const watch = watched(2);
    const stores = await openStores({ ...onNats(url, 'RETAKE_E'), fenceWatch: watch.fenceWatch });
    try {
      await allowConnections(url, false);
      await terminateLockHolder(url);
      await until(() => watch.dropped.length === 1, 10_000);
      watch.clock.advance(0);
      await until(() => watch.clock.pendingTimers() === 1, 10_000);
      watch.clock.advance(1_000);
      await until(() => watch.lost.length === 1, 10_000);
      assert.ok(watch.lost[0] instanceof DatabaseLockLostError, String(watch.lost[0]));
      assert.match(watch.lost[0].message, /could not be taken again in 2 tries/);
      assert.deepEqual(watch.retaken, []);
    } finally {
      await allowConnections(url, true);
      await stores.close();
    }
  });

  test('the lock taken again on a database that now describes another journal: lost, not held', async () => {
    const url = await database();
    const watch = watched();
    const stores = await openStores({ ...onNats(url, 'RETAKE_F'), fenceWatch: watch.fenceWatch });
    try {
      await terminateLockHolder(url);
      await until(() => watch.dropped.length === 1, 10_000);
      await query(url, "UPDATE store_meta SET value = 'nats:SOMEONE_ELSE' WHERE key = 'journal'");
      watch.clock.advance(0);
      await until(() => watch.lost.length + watch.retaken.length > 0, 10_000);
      assert.deepEqual(watch.retaken, []);
      assert.equal(watch.lost.length, 1);
      assert.ok(watch.lost[0] instanceof DatabaseLockLostError, String(watch.lost[0]));
      assert.match(watch.lost[0].message, /no longer describes this journal/);
      for (let i = 0; i < 100 && (await lockHolders(url)).length > 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.deepEqual(await lockHolders(url), [], 'the lock is not kept');
    } finally {
      await stores.close();
    }
  });
});
