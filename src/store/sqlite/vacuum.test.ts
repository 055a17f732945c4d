import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { lockDataDir, StoreOpenError } from '../data-dir-lock.ts';
import { SqliteJournal } from './sqlite-journal.ts';
import { vacuumSqliteStores } from './vacuum.ts';

const command = (seq: number) => ({ type: 'noop', seq, pad: 'x'.repeat(200) });

test('vacuum gives a trimmed journal its space back and keeps every stored entry', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'vacuum-'));
  try {
    const path = join(dataDir, 'journal.sqlite');
    let journal = SqliteJournal.open({ path });
    let seq = 0;
    for (let record = 0; record < 400; record++) {
      const appended: Promise<void>[] = [];
      for (let i = 0; i < 25; i++) {
        seq++;
        appended.push(journal.append({ seq, ts: 1_000 + seq, command: command(seq) }));
      }
      await Promise.all(appended);
    }
    while (!(await journal.trimThrough(9_000, 64)).done) {}
    const first = await journal.firstSeq();
    assert.ok(first > 8_900 && first <= 9_001);
    await journal.close();

    const [vacuumed, ...others] = vacuumSqliteStores(dataDir);
    assert.deepEqual(others, [], 'only the stores that exist');
    assert.equal(vacuumed!.file, 'journal.sqlite');
    assert.ok(vacuumed!.after < vacuumed!.before / 4, `${vacuumed!.before} → ${vacuumed!.after} bytes`);

    journal = SqliteJournal.open({ path });
    try {
      assert.equal(await journal.firstSeq(), first);
      assert.deepEqual(await journal.last(), { seq: 10_000, ts: 11_000 });
      let expected = first;
      for await (const entry of journal.readFrom(first)) {
        assert.equal(entry.seq, expected++);
        assert.deepEqual(entry.command, command(entry.seq));
      }
      assert.equal(expected, 10_001);
    } finally {
      await journal.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('vacuum refuses while a service holds the data directory', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'vacuum-'));
  const lock = lockDataDir(dataDir);
  try {
    assert.throws(
      () => vacuumSqliteStores(dataDir),
      (error: unknown) =>
        error instanceof StoreOpenError && /is in use by another running service/.test(error.message),
    );
  } finally {
    lock.release();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
