/**
 * The journal backends of the journal crash test (test/store/journal-crash.test.ts), named as the
 * writer child (./journal-writer-child.ts) takes them on its command line:
 *
 * - `sqlite <path>`: the SQLite journal file;
 * - `postgres <url>`: the PostgreSQL journal in that database;
 * - `nats <url> <stream>`: the JetStream journal on that stream (one replica).
 *
 * `openAfterKill` opens one, retrying for a few seconds only while it is refused as still in use:
 * a SIGKILLed writer's PostgreSQL session keeps the writer lock until the statement it was running
 * ends, and nats-server drops the writer's responder once it sees the connection close.
 */
import { StoreOpenError } from '../../src/store/data-dir-lock.ts';
import type { Journal } from '../../src/store/journal.ts';
import { NatsJournal } from '../../src/store/nats/nats-journal.ts';
import { PgJournal } from '../../src/store/postgres/pg-journal.ts';
import { SqliteJournal } from '../../src/store/sqlite/sqlite-journal.ts';

export type CrashJournalTarget =
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'postgres'; readonly url: string }
  | { readonly kind: 'nats'; readonly url: string; readonly stream: string };

export function targetArgs(target: CrashJournalTarget): string[] {
  switch (target.kind) {
    case 'sqlite':
      return ['sqlite', target.path];
    case 'postgres':
      return ['postgres', target.url];
    case 'nats':
      return ['nats', target.url, target.stream];
  }
}

export function parseTargetArgs(args: readonly string[]): CrashJournalTarget {
  const [kind, location, stream] = args;
  if (kind === 'sqlite' && location !== undefined) return { kind, path: location };
  if (kind === 'postgres' && location !== undefined) return { kind, url: location };
  if (kind === 'nats' && location !== undefined && stream !== undefined)
    return { kind, url: location, stream };
  throw new Error('usage: sqlite <path> | postgres <url> | nats <url> <stream>');
}

export function openCrashJournal<C>(target: CrashJournalTarget): Promise<Journal<C>> {
  switch (target.kind) {
    case 'sqlite':
      return Promise.resolve(SqliteJournal.open<C>({ path: target.path }));
    case 'postgres':
      return PgJournal.open<C>({ connectionString: target.url });
    case 'nats':
      return NatsJournal.open<C>({ servers: target.url, stream: target.stream, replicas: 1 });
  }
}

/** Refused because a writer still holds it (the PostgreSQL lock, the NATS writer responder). */
function inUse(error: unknown): boolean {
  return error instanceof StoreOpenError && /in use by another running service/.test(error.message);
}

export async function openAfterKill<C>(target: CrashJournalTarget): Promise<Journal<C>> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    try {
      return await openCrashJournal<C>(target);
    } catch (error) {
      if (!inUse(error) || Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}
