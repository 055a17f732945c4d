/**
 * Every SQLite store checkpoints its WAL in small steps (src/store/sqlite/wal.ts): after many
 * megabytes of commits the `-wal` file stays near the checkpoint size, so no single commit ever
 * copies (and fsyncs) a large WAL into the database.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { SqliteReadDb } from '../../src/store/read/read-db.ts';
import { SqliteJournal } from '../../src/store/sqlite/sqlite-journal.ts';
import { SqliteSnapshotStore } from '../../src/store/sqlite/sqlite-snapshots.ts';
import { WAL_CHECKPOINT_PAGES } from '../../src/store/sqlite/wal.ts';

const PAGE_BYTES = 4096;
const WRITTEN_BYTES = 8 * 1024 * 1024;
/** One commit in these tests writes about 64 KiB; the WAL may hold one commit past the limit. */
const CHUNK_BYTES = 64 * 1024;
/** WAL frames carry a 24-byte header each; one commit's worth of slack, doubled for page overhead. */
const WAL_BOUND = WAL_CHECKPOINT_PAGES * (PAGE_BYTES + 24) + 4 * CHUNK_BYTES;

/** Incompressible text, so the frame encoding cannot shrink what the test writes. */
const chunk = () => randomBytes(CHUNK_BYTES / 2).toString('hex');
const walBytes = (path: string) => statSync(`${path}-wal`).size;

describe('SQLite WAL checkpoints', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-wal-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test(`the journal's WAL stays under ${WAL_CHECKPOINT_PAGES} pages and one commit`, async () => {
    const path = join(dir, 'journal.sqlite');
    const journal = SqliteJournal.open<{ type: string; blob: string }>({ path });
    let largest = 0;
    for (let seq = 1; seq * CHUNK_BYTES <= WRITTEN_BYTES; seq++) {
      await journal.append({ seq, ts: seq, command: { type: 'blob', blob: chunk() } });
      largest = Math.max(largest, walBytes(path));
    }
    await journal.close();
    assert.ok(largest <= WAL_BOUND, `WAL reached ${largest} bytes (bound ${WAL_BOUND})`);
  });

  test('so does the read store’s', async () => {
    const path = join(dir, 'read.sqlite');
    const db = new SqliteReadDb(path);
    await db.init(['CREATE TABLE IF NOT EXISTS blobs (n INTEGER PRIMARY KEY, blob TEXT NOT NULL)']);
    let largest = 0;
    for (let n = 1; n * CHUNK_BYTES <= WRITTEN_BYTES; n++) {
      await db.commit([{ sql: 'INSERT INTO blobs (n, blob) VALUES (?, ?)', params: [n, chunk()] }], n);
      largest = Math.max(largest, walBytes(path));
    }
    await db.close();
    assert.ok(largest <= WAL_BOUND, `WAL reached ${largest} bytes (bound ${WAL_BOUND})`);
  });

  test('and the snapshot store’s', async () => {
    const path = join(dir, 'snapshots.sqlite');
    const store = new SqliteSnapshotStore({ path, keep: 2 });
    let largest = 0;
    for (let seq = 1; seq * CHUNK_BYTES <= WRITTEN_BYTES; seq++) {
      await store.saveSnapshot({ seq, ts: seq, stateHash: `h${seq}`, state: { blob: chunk() } });
      largest = Math.max(largest, walBytes(path));
    }
    await store.close();
    assert.ok(largest <= WAL_BOUND, `WAL reached ${largest} bytes (bound ${WAL_BOUND})`);
  });
});
