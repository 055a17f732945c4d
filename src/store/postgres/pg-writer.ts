/**
 * The PostgreSQL journal's writer connection, which holds the database's lock (./pg-fence.ts), and
 * how it is taken again once lost (a server restart or crash, a failover, a terminated session).
 *
 * - `isConnectionLost` tells a connection that is gone (its session, and the lock with it) from a
 *   statement the server refused or a query that timed out on a connection still there; only the
 *   first is reconnected.
 * - `retakeWriter` connects again, with a bounded backoff on the caller's clock, until the
 *   deadline: each try connects, takes the lock and runs `onLocked` (the journal's identity check).
 *   The lock held by another session is `WriterFencedError` at once: another service may be
 *   writing, never two writers. The one exception is this writer's own previous session, which
 *   the server may not have ended yet (it still holds the lock while it exits, or, after a network
 *   cut, until it notices): told by its pid AND start time, it is terminated and the lock tried
 *   again. A database that no longer describes this journal (`StoreOpenError` from `onLocked`) is
 *   `WriterFencedError` too. Any other failure is tried again until the deadline, then thrown.
 * - Whatever the lost session was doing (the batch in flight) has either committed or not by the
 *   time the lock is free: the caller finds out which on the new connection before it writes.
 */
import pg from 'pg';
import { StoreOpenError } from '../data-dir-lock.ts';
import { DATABASE_LOCK_KEY } from './pg-fence.ts';
import { timedQuery } from './pg-transaction.ts';

/** A writer's session: its connection and what tells its server process from any other. */
export interface WriterSession {
  readonly client: pg.Client;
  readonly pid: number;
  /** pg_stat_activity.backend_start, as text: a pid the server reuses has another. */
  readonly started: string;
}

/** The lock is another session's, or the database describes another journal: the writer stops. */
export class WriterFencedError extends Error {
  override name = 'WriterFencedError';
}

/** Time for the reconnection: the service clock (tests: a virtual one). */
export interface WriterClock {
  now(): number;
  /** Runs `run` after `ms`; returns a cancel function. */
  schedule(ms: number, run: () => void): () => void;
}

export const realWriterClock: WriterClock = {
  now: () => performance.now(),
  schedule(ms, run) {
    const timer = setTimeout(run, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/** The pause after the first failed try; it doubles up to RETRY_MAX_MS. The first try is at once. */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 1_000;
/** How long one try waits to connect and for each of its queries, at most. */
const TRY_TIMEOUT_MS = 5_000;

/** SQLSTATEs of a session the server ended: admin_shutdown, crash_shutdown, cannot_connect_now. */
const SESSION_ENDED = new Set(['57P01', '57P02', '57P03']);
const CLIENT_GONE = new Set([
  'Connection terminated unexpectedly',
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
]);

/** The connection (and its session, and the lock) is gone; a timeout or a refused statement is not. */
export function isConnectionLost(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (CLIENT_GONE.has(error.message)) return true;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return false;
  // Class 08: connection exception; a socket error (ECONNRESET, EPIPE…) carries its syscall.
  return SESSION_ENDED.has(code) || code.startsWith('08') || 'syscall' in error;
}

/** Connects a writer: its session's pid and start time read at once. */
export async function connectWriter(connectionString: string, timeoutMs?: number): Promise<WriterSession> {
  const client = new pg.Client({
    connectionString,
    ...(timeoutMs === undefined ? {} : { connectionTimeoutMillis: timeoutMs }),
  });
  // A dropped connection must not crash the process: the next write fails and is reconnected.
  client.on('error', () => undefined);
  try {
    await client.connect();
    const row = (
      await client.query(
        timedQuery(
          'SELECT pg_backend_pid() AS pid, backend_start::text AS started FROM pg_stat_activity WHERE pid = pg_backend_pid()',
          [],
          timeoutMs ?? 0,
        ),
      )
    ).rows[0] as { pid: number; started: string };
    return { client, pid: row.pid, started: row.started };
  } catch (error) {
    client.end().catch(() => undefined);
    throw error;
  }
}

export interface RetakeOptions {
  readonly connectionString: string;
  /** The session that was lost. */
  readonly previous: WriterSession;
  /** On `clock`: no try starts after it, and none waits past it. */
  readonly deadline: number;
  readonly clock: WriterClock;
  /** Runs once the lock is held (the journal's identity check); `StoreOpenError` fences. */
  readonly onLocked?: (client: pg.ClientBase) => Promise<void>;
}

/** A new writer session holding the lock (see the module's docstring); `tries` it took. */
export async function retakeWriter(
  options: RetakeOptions,
): Promise<{ session: WriterSession; tries: number }> {
  let pause = 0;
  for (let tries = 1; ; tries++) {
    if (pause > 0) await sleep(options.clock, pause);
    const left = options.deadline - options.clock.now();
    if (left <= 0) {
      throw new Error(`the PostgreSQL journal could not connect again by its deadline (${tries - 1} tries)`);
    }
    const timeoutMs = Math.max(1, Math.min(TRY_TIMEOUT_MS, left));
    let session: WriterSession | null = null;
    try {
      session = await connectWriter(options.connectionString, timeoutMs);
      if (await tryLock(session, options.previous, timeoutMs)) {
        try {
          await options.onLocked?.(session.client);
        } catch (error) {
          if (!(error instanceof StoreOpenError)) throw error;
          throw new WriterFencedError(
            `the PostgreSQL journal reconnected, but the database no longer describes this journal: ${error.message}`,
            { cause: error },
          );
        }
        return { session, tries };
      }
    } catch (error) {
      session?.client.end().catch(() => undefined);
      if (error instanceof WriterFencedError) throw error;
      if (options.clock.now() >= options.deadline) {
        const why = error instanceof Error ? error.message : String(error);
        throw new Error(
          `the PostgreSQL journal could not connect again by its deadline (${tries} tries): ${why}`,
          {
            cause: error,
          },
        );
      }
      pause = pause === 0 ? RETRY_FIRST_MS : Math.min(pause * 2, RETRY_MAX_MS);
      continue;
    }
    // The previous session still held the lock: it was told to end; try again shortly.
    session.client.end().catch(() => undefined);
    pause = pause === 0 ? RETRY_FIRST_MS : Math.min(pause * 2, RETRY_MAX_MS);
  }
}

/**
 * Takes the lock on `session`: true when held; false when `previous` (this writer's lost session)
 * still holds it, which is then terminated; `WriterFencedError` when another session holds it.
 */
async function tryLock(session: WriterSession, previous: WriterSession, timeoutMs: number): Promise<boolean> {
  const run = (text: string, values: unknown[]) => session.client.query(timedQuery(text, values, timeoutMs));
  const lock = await run('SELECT pg_try_advisory_lock($1) AS locked', [DATABASE_LOCK_KEY]);
  if ((lock.rows[0] as { locked: boolean }).locked === true) return true;
  const holders = (
    await run(
      `SELECT a.pid, a.backend_start::text AS started FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND ((l.classid::bigint << 32) | l.objid::bigint) = $1`,
      [DATABASE_LOCK_KEY],
    )
  ).rows as Array<{ pid: number; started: string }>;
  const other = holders.find((h) => h.pid !== previous.pid || h.started !== previous.started);
  if (other !== undefined) {
    throw new WriterFencedError(
      'the PostgreSQL journal lost its connection, and another session took the database lock before it could be taken again: another service may be using the database (DATABASE_URL)',
    );
  }
  if (holders.length > 0) {
    // This writer's own lost session: it can write nothing more; ending it frees the lock.
    await run(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = $1 AND backend_start::text = $2',
      [previous.pid, previous.started],
    ).catch(() => undefined);
  }
  return false;
}

function sleep(clock: WriterClock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.schedule(ms, resolve));
}
