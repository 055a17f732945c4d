/**
 * Crash test of the journals, on each backend (test/support/crash-journals.ts): a child process
 * (test/support/journal-writer-child.ts) appends continuously and is SIGKILLed at random moments;
 * after each kill every acknowledged entry must be there, contiguous and intact, and the next
 * writer continues after the last durable one. On SQLite a final cycle tears the WAL file's tail
 * (a partial write) and checks that what remains is an intact prefix.
 *
 * PostgreSQL runs with fsync on, as in production (test/support/service-backends.ts). On NATS
 * JetStream only the writer is killed; nats-server keeps running, so every acknowledged append
 * must survive (docs/decisions.md, "What a JetStream ack guarantees": the ack is not an fsync, so
 * a server crash is out of scope). Opening right after a kill may be refused as in use for a few
 * milliseconds, until the server sees the dead writer go; that refusal alone is retried.
 *
 * Checked by making the writer's journal acknowledge before its write completed (its batch write
 * not awaited): on PostgreSQL 9 of 9 cycles lost acknowledged entries (8 of 9 even with fsync
 * off: nothing then holds the writer back, so the unsent queue grows). On NATS, publishing
 * without waiting for the ack lost nothing in 9 of 9 cycles: the message is already on its way to
 * the server, which outlives the writer (as in test/crash/crash-restart.test.ts).
 *
 * The same on each backend with the writer trimming the journal as it appends: after each kill the
 * journal is intact and contiguous from its first seq, with every acknowledged entry the trims were
 * not asked to delete (NATS deletes a trim's messages one by one, so a kill can cut one short).
 *
 * JOURNAL_CRASH_CYCLES sets the kill/restart cycles on each backend (default 4; a cycle takes
 * about 1.5 s on each). A missing PostgreSQL or nats-server skips its backend, except under
 * CI=true, where starting it fails.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { spawnTs } from '../support/child-process.ts';
import { crashTestCommand } from '../support/crash-commands.ts';
import { type CrashJournalTarget, openAfterKill, targetArgs } from '../support/crash-journals.ts';
import { startStoreServers } from '../support/store-servers.ts';

const childFile = fileURLToPath(new URL('../support/journal-writer-child.ts', import.meta.url));
const CYCLES = Number(process.env.JOURNAL_CRASH_CYCLES ?? 4);

const servers = await startStoreServers({ fsync: true });
after(() => servers.stop());
const { postgres, nats } = servers;

/**
 * Checks the journal holds entries first..n, intact and contiguous (first is 1 unless trimmed),
 * and returns n and first.
 */
async function verifyFrom(target: CrashJournalTarget): Promise<{ last: number; first: number }> {
  const journal = await openAfterKill<ReturnType<typeof crashTestCommand>>(target);
  try {
    const first = await journal.firstSeq();
    let expected = first;
    for await (const entry of journal.readFrom(1)) {
      assert.equal(entry.seq, expected);
      assert.equal(entry.ts, 1_700_000_000_000 + entry.seq);
      assert.deepEqual(entry.command, crashTestCommand(entry.seq));
      expected++;
    }
    assert.equal(await journal.lastSeq(), expected - 1);
    return { last: expected - 1, first };
  } finally {
    await journal.close();
  }
}

/** Checks the journal holds entries 1..n, intact and contiguous, and returns n. */
async function verify(target: CrashJournalTarget): Promise<number> {
  const { last, first } = await verifyFrom(target);
  assert.equal(first, 1);
  return last;
}

async function runAndKill(
  target: CrashJournalTarget,
  minAckedAhead: number,
  trimBehind = 0,
): Promise<{ start: number; acked: number }> {
  const child = spawnTs(childFile, targetArgs(target), {
    ...process.env,
    JOURNAL_TRIM_BEHIND: String(trimBehind),
  });
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

async function killCycles(target: CrashJournalTarget, cycles: number): Promise<void> {
  let durable = 0;
  for (let cycle = 0; cycle < cycles; cycle++) {
    const { start, acked } = await runAndKill(target, 500 + Math.floor(Math.random() * 3000));
    assert.equal(start, durable, 'the writer continues right after the last durable entry');
    durable = await verify(target);
    assert.ok(durable >= acked, `acknowledged up to ${acked} but only ${durable} survived`);
  }
}

test(`SQLite: every acknowledged append survives SIGKILL (${CYCLES} kill/restart cycles)`, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'journal-crash-'));
  try {
    await killCycles({ kind: 'sqlite', path: join(dir, 'journal.sqlite') }, CYCLES);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test(`PostgreSQL: every acknowledged append survives SIGKILL (${CYCLES} kill/restart cycles)`, {
  skip: postgres === null ? 'PostgreSQL is not installed (run scripts/ensure-system-deps.sh)' : false,
}, async () => {
  const url = await postgres!.createDatabase(`journal_crash_${process.pid}`);
  await killCycles({ kind: 'postgres', url }, CYCLES);
});

test(`NATS JetStream: every acknowledged append survives SIGKILL of the writer (${CYCLES} kill/restart cycles)`, {
  skip: nats === null ? 'nats-server is not installed (run scripts/ensure-system-deps.sh)' : false,
}, async () => {
  await killCycles({ kind: 'nats', url: nats!.url, stream: `JOURNAL_CRASH_${process.pid}` }, CYCLES);
});

/**
 * Trimming while appending: after each kill the journal is an intact, contiguous run from its
 * first seq, holding every acknowledged entry the trims were not asked to delete.
 */
async function trimKillCycles(target: CrashJournalTarget, cycles: number): Promise<void> {
  const behind = 1_000;
  let durable = 0;
  let trimmed = false;
  for (let cycle = 0; cycle < cycles; cycle++) {
    const { start, acked } = await runAndKill(target, 1_500 + Math.floor(Math.random() * 3000), behind);
    assert.equal(start, durable, 'the writer continues right after the last durable entry');
    const { last, first } = await verifyFrom(target);
    durable = last;
    assert.ok(durable >= acked, `acknowledged up to ${acked} but only ${durable} survived`);
    assert.ok(
      first - 1 <= Math.max(0, acked - behind),
      `trimmed through ${first - 1}, asked ${acked - behind}`,
    );
    trimmed ||= first > 1;
  }
  assert.ok(trimmed, 'the trims deleted something');
}

const TRIM_BACKENDS: ReadonlyArray<{
  readonly name: string;
  readonly skip: string | false;
  /** The journal to crash, and how to clean up after it. */
  readonly target: () => Promise<{ target: CrashJournalTarget; dispose?: () => void }>;
}> = [
  {
    name: 'SQLite',
    skip: false,
    target: async () => {
      const dir = mkdtempSync(join(tmpdir(), 'journal-trim-crash-'));
      return {
        target: { kind: 'sqlite', path: join(dir, 'journal.sqlite') },
        dispose: () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: 'PostgreSQL',
    skip: postgres === null ? 'PostgreSQL is not installed (run scripts/ensure-system-deps.sh)' : false,
    target: async () => ({
      target: { kind: 'postgres', url: await postgres!.createDatabase(`journal_trim_crash_${process.pid}`) },
    }),
  },
  {
    name: 'NATS JetStream',
    skip: nats === null ? 'nats-server is not installed (run scripts/ensure-system-deps.sh)' : false,
    target: async () => ({
      target: { kind: 'nats', url: nats!.url, stream: `JOURNAL_TRIM_CRASH_${process.pid}` },
    }),
  },
];

for (const backend of TRIM_BACKENDS) {
  test(`${backend.name}: trims while appending lose nothing acknowledged across SIGKILL (${CYCLES} cycles)`, {
    skip: backend.skip,
  }, async () => {
    const { target, dispose } = await backend.target();
    try {
      await trimKillCycles(target, CYCLES);
    } finally {
      dispose?.();
    }
  });
}

test('SQLite: a torn WAL tail leaves an intact, contiguous prefix', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'journal-torn-'));
  const target: CrashJournalTarget = { kind: 'sqlite', path: join(dir, 'journal.sqlite') };
  try {
    await runAndKill(target, 2000);
    const wal = `${target.path}-wal`;
    const size = statSync(wal, { throwIfNoEntry: false })?.size ?? 0;
    assert.ok(size > 0, 'the killed writer left a WAL behind');
    truncateSync(wal, Math.max(0, size - 1 - Math.floor(Math.random() * Math.min(size - 1, 50_000))));
    const survived = await verify(target);
    const { start } = await runAndKill(target, 100);
    assert.equal(start, survived);
    await verify(target);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
