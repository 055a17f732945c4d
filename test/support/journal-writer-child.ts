/**
 * A child process for journal crash tests: opens the journal its arguments name (see
 * ./crash-journals.ts: `sqlite <path>`, `postgres <url>` or `nats <url> <stream>`), continues
 * after its last entry, and appends deterministic commands forever in bursts of random size,
 * printing `start <last seq>` once open and `acked <seq>` after each acknowledged burst. The
 * parent SIGKILLs it at a random moment.
 */
import { crashTestCommand } from './crash-commands.ts';
import { openAfterKill, parseTargetArgs } from './crash-journals.ts';

async function main(): Promise<void> {
  const target = parseTargetArgs(process.argv.slice(2));
  const journal = await openAfterKill<ReturnType<typeof crashTestCommand>>(target);
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

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
