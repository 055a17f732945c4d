/** The backend switch: SQLite files under dataDir, or PostgreSQL for everything by URL. */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { openFollowerStores, openStores, SQLITE_FILES } from '../../src/store/open-stores.ts';
import { startPostgres } from '../support/postgres.ts';

const server = await startPostgres();
after(() => server?.stop());

async function roundTrip(settings: { dataDir: string; databaseUrl: string | null }) {
  const stores = await openStores<{ type: string }>(settings);
  await stores.journal.append({ seq: 1, ts: 5, command: { type: 'x' } });
  await stores.snapshots.saveSnapshot({ seq: 1, ts: 5, stateHash: 'h', state: { a: 1 } });
  stores.readStore.push({ seq: 1, ts: 5, events: [] });
  await stores.close();
  const again = await openStores<{ type: string }>(settings);
  try {
    assert.deepEqual(await again.journal.last(), { seq: 1, ts: 5 });
    assert.equal((await again.snapshots.latestSnapshot())?.stateHash, 'h');
    assert.equal(again.readStore.lastAppliedSeq, 1);
    return again.backend;
  } finally {
    await again.close();
  }
}

test('without a database URL everything lives in SQLite files under dataDir', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'stores-'));
  try {
    const dataDir = join(dir, 'nested', 'data');
    assert.equal(await roundTrip({ dataDir, databaseUrl: null }), 'sqlite');
    for (const f of ['journal.sqlite', 'snapshots.sqlite', 'read.sqlite'])
      assert.ok(existsSync(join(dataDir, f)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('with a database URL everything lives in PostgreSQL', {
  skip: server === null ? 'PostgreSQL is not installed' : false,
}, async () => {
  const url = await server!.createDatabase('stores');
  const dir = mkdtempSync(join(tmpdir(), 'stores-'));
  try {
    assert.equal(await roundTrip({ dataDir: dir, databaseUrl: url }), 'postgres');
    assert.ok(!existsSync(join(dir, 'journal.sqlite')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * Snapshots 1 and 2, the newest then damaged (its checksum no longer matches): the service's
 * stores and the follower's (the snapshot replica's) each tell `onSnapshotSkipped` its seq.
 */
async function skippedReported(
  settings: { dataDir: string; databaseUrl: string | null },
  damageChecksum: (seq: number) => Promise<void>,
): Promise<void> {
  const stores = await openStores(settings);
  for (const seq of [1, 2])
    await stores.snapshots.saveSnapshot({ seq, ts: seq, stateHash: `h${seq}`, state: {} });
  await stores.close();
  await damageChecksum(2);
  const skipped: string[] = [];
  const again = await openStores({ ...settings, onSnapshotSkipped: (seq) => skipped.push(`service ${seq}`) });
  try {
    assert.equal((await again.snapshots.latestSnapshot())?.stateHash, 'h1');
  } finally {
    await again.close();
  }
  const follower = await openFollowerStores({
    ...settings,
    natsJournal: null,
    onSnapshotSkipped: (seq) => skipped.push(`follower ${seq}`),
  });
  try {
    assert.equal((await follower.snapshots.latestSnapshot())?.stateHash, 'h1');
  } finally {
    await follower.close();
  }
  assert.deepEqual(skipped, ['service 2', 'follower 2']);
}

test("a snapshot that fails its checksum is reported by the SQLite stores, the follower's too", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'stores-'));
  try {
    await skippedReported({ dataDir, databaseUrl: null }, async (seq) => {
      const db = new Database(join(dataDir, SQLITE_FILES.snapshots));
      db.prepare('UPDATE snapshots SET checksum = checksum + 1 WHERE seq = ?').run(seq);
      db.close();
    });
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("a snapshot that fails its checksum is reported by the PostgreSQL stores, the follower's too", {
  skip: server === null ? 'PostgreSQL is not installed' : false,
}, async () => {
  const url = await server!.createDatabase('stores_skipped');
  const dataDir = mkdtempSync(join(tmpdir(), 'stores-'));
  try {
    await skippedReported({ dataDir, databaseUrl: url }, async (seq) => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query('UPDATE snapshots SET checksum = checksum # 1 WHERE seq = $1', [seq]);
      } finally {
        await client.end();
      }
    });
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
