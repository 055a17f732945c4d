/**
 * A child process for journal crash tests: opens the SQLite journal at argv[2], continues after
 * its last entry, and appends deterministic commands forever in bursts of random size, printing
 * `acked <seq>` after each acknowledged burst. The parent SIGKILLs it at a random moment.
 */
import { SqliteJournal } from '../../src/store/sqlite/sqlite-journal.ts';
import { crashTestCommand } from './crash-commands.ts';

async function main(): Promise<void> {
  const path = process.argv[2];
  if (path === undefined) throw new Error('usage: journal-writer-child <journal path>');
  const journal = SqliteJournal.open<ReturnType<typeof crashTestCommand>>({ path });
  let seq = await journal.lastSeq();
  process.stdout.write(`start ${seq}\n`);
  for (;;) {
    const burst = 1 + Math.floor(Math.random() * 300);
    const pending: Promise<void>[] = [];
    for (let i = 0; i < burst; i++) {
      seq++;
      pending.push(journal.append({ seq, ts: 1_700_000_000_000 + seq, command: crashTestCommand(seq) }));
    }
    await Promise.all(pending);
    process.stdout.write(`acked ${seq}\n`);
  }
}

void main();
