/**
 * One service per PostgreSQL database, whichever layout (openStores): with the journal on NATS the
 * database is locked as with the journal in it, and a database records the journal its snapshots
 * and history describe, so a start with another journal is refused (running or not) instead of
 * discarding them. And a failed open leaves nothing open behind it.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { StoreOpenError } from '../../src/store/data-dir-lock.ts';
import { openStores, type StoreSettings } from '../../src/store/open-stores.ts';
import { startStoreServers } from '../support/store-servers.ts';

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

async function query(url: string, sql: string): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
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
