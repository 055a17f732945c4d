/** The backend switch: SQLite files under dataDir, or PostgreSQL for everything by URL. */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { openStores } from '../../src/store/open-stores.ts';
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
