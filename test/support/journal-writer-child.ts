/**
 * A child process for journal crash tests: opens the journal its arguments name (see
 * ./crash-journals.ts: `sqlite <path>`, `postgres <url>` or `nats <url> <stream>`), continues
 * after its last entry, and appends deterministic commands forever in bursts of random size,
 * printing `start <last seq>` once open and `acked <seq>` after each acknowledged burst. The
 * parent SIGKILLs it at a random moment. With JOURNAL_TRIM_BEHIND=n it also trims the journal
 * all the while, in steps of 16 records, through n entries behind the last acknowledged one
 * (what a retention trim deletes is always well behind the appends).
 */
import { crashTestCommand } from './crash-commands.ts';
import { openAfterKill, parseTargetArgs } from './crash-journals.ts';

async function main(): Promise<void> {
  const target = parseTargetArgs(process.argv.slice(2));
  const journal = await openAfterKill<ReturnType<typeof crashTestCommand>>(target);
  let seq = await journal.lastSeq();
  let acked = seq;
  process.stdout.write(`start ${seq}\n`);
  const trimBehind = Number(process.env.JOURNAL_TRIM_BEHIND ?? 0);
  if (trimBehind > 0) {
    void (async () => {
      for (;;) {
        if (acked > trimBehind) await journal.trimThrough(acked - trimBehind, 16);
        await new Promise((resolve) => setImmediate(resolve));
      }
    })().catch((error: unknown) => {
      process.stderr.write(
        `trim: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exit(1);
    });
  }
  for (;;) {
    const burst = 1 + Math.floor(Math.random() * 300);
    const pending: Promise<void>[] = [];
    for (let i = 0; i < burst; i++) {
      seq++;
      pending.push(journal.append({ seq, ts: 1_700_000_000_000 + seq, command: crashTestCommand(seq) }));
    }
    await Promise.all(pending);
    acked = seq;
    process.stdout.write(`acked ${seq}\n`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
