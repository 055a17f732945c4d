/**
 * Crash test of the SQLite journal: a child process appends continuously and is SIGKILLed at
 * random moments; after each kill every acknowledged entry must be there, contiguous and intact,
 * and the next writer continues after the last durable one. A final cycle tears the WAL file's
 * tail (a partial write) and checks that what remains is an intact prefix.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SqliteJournal } from '../../src/store/sqlite/sqlite-journal.ts';
import { spawnTs } from '../support/child-process.ts';
import { crashTestCommand } from '../support/crash-commands.ts';

const childFile = fileURLToPath(new URL('../support/journal-writer-child.ts', import.meta.url));
const CYCLES = Number(process.env.JOURNAL_CRASH_CYCLES ?? 4);

async function verify(path: string): Promise<number> {
  const journal = SqliteJournal.open<ReturnType<typeof crashTestCommand>>({ path });
  try {
    let expected = 1;
    for await (const entry of journal.readFrom(1)) {
      assert.equal(entry.seq, expected);
      assert.equal(entry.ts, 1_700_000_000_000 + entry.seq);
      assert.deepEqual(entry.command, crashTestCommand(entry.seq));
      expected++;
    }
    assert.equal(await journal.lastSeq(), expected - 1);
    return expected - 1;
  } finally {
    await journal.close();
  }
}

async function runAndKill(path: string, minAckedAhead: number): Promise<{ start: number; acked: number }> {
  const child = spawnTs(childFile, [path]);
  try {
    const start = Number((await child.waitForLine((l) => l.startsWith('start '))).slice(6));
    await child.waitForLine((l) => l.startsWith('acked ') && Number(l.slice(6)) >= start + minAckedAhead);
    await new Promise((r) => setTimeout(r, Math.random() * 50));
  } finally {
    await child.killHard();
  }
  const acked = Math.max(
    0,
    ...child.lines.filter((l) => l.startsWith('acked ')).map((l) => Number(l.slice(6))),
  );
  const start = Number(child.lines.find((l) => l.startsWith('start '))?.slice(6) ?? 0);
  return { start, acked };
}

test(`every acknowledged append survives SIGKILL (${CYCLES} kill/restart cycles)`, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'journal-crash-'));
  const path = join(dir, 'journal.sqlite');
  try {
    let durable = 0;
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const { start, acked } = await runAndKill(path, 500 + Math.floor(Math.random() * 3000));
      assert.equal(start, durable, 'the writer continues right after the last durable entry');
      durable = await verify(path);
      assert.ok(durable >= acked, `acknowledged up to ${acked} but only ${durable} survived`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a torn WAL tail leaves an intact, contiguous prefix', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'journal-torn-'));
  const path = join(dir, 'journal.sqlite');
  try {
    await runAndKill(path, 2000);
    const wal = `${path}-wal`;
    const size = statSync(wal, { throwIfNoEntry: false })?.size ?? 0;
    assert.ok(size > 0, 'the killed writer left a WAL behind');
    truncateSync(wal, Math.max(0, size - 1 - Math.floor(Math.random() * Math.min(size - 1, 50_000))));
    const survived = await verify(path);
    const { start } = await runAndKill(path, 100);
    assert.equal(start, survived);
    await verify(path);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
