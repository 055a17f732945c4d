/**
 * One service per PostgreSQL database (DATABASE_URL), wherever its journal is.
 *
 * - The lock: a session advisory lock, held for as long as the stores are open. With the journal
 *   in PostgreSQL its writer connection holds it (`PgJournal`); with the journal on NATS a
 *   connection of its own does (`PgDatabaseFence`). Either way it is the same key, taken by the
 *   same code, so the two layouts exclude each other too. The server drops it with the session,
 *   so a killed service leaves none behind.
 * - A lock whose connection drops is gone (the session ended). On the journal's writer that
 *   fails the next write, and the service stops. On the fence's own connection nothing else
 *   would notice, so the fence watches it (`error`, `end`) and takes the lock again on a new
 *   connection, at once and then every `retryEveryMs` while the server cannot be reached (a
 *   restart, a network cut; meanwhile no other service can reach it either, and the journal on
 *   NATS keeps trading going: only history and snapshots wait). Another session holding the lock
 *   by then, the database now describing another journal, or no answer within `retakeTries`
 *   tries (by default no limit): the lock is lost for good (`onLost`), and the service must stop.
 * - The journal's identity: the snapshots and the read store describe one journal, so the
 *   database records which (`store_meta`: `postgres`, or `nats:<stream>`) the first time a
 *   service opens all its stores there, and a start with another journal is refused before
 *   anything is read: its recovery would discard the snapshots ahead of that journal and empty
 *   the history. A database from before the record was kept is taken to belong to its own
 *   `journal` table when that holds entries.
 */
import pg from 'pg';
import { StoreOpenError } from '../data-dir-lock.ts';
import { timedQuery } from './pg-transaction.ts';

/** The session advisory lock of the service that has the database open. */
export const DATABASE_LOCK_KEY = 7_305_611_001;

/** Where the journal the database's snapshots and history describe is. */
export type JournalIdentity =
  | { readonly backend: 'postgres' }
  | { readonly backend: 'nats'; readonly stream: string };

/** Takes the lock on `client`'s session; `StoreOpenError` when another session holds it. */
export async function lockDatabase(client: pg.ClientBase): Promise<void> {
  const lock = await client.query('SELECT pg_try_advisory_lock($1) AS locked', [DATABASE_LOCK_KEY]);
  if ((lock.rows[0] as { locked: boolean }).locked !== true) {
    throw new StoreOpenError(
      'the PostgreSQL database at DATABASE_URL is in use by another running service; stop it first or use another database',
    );
  }
}

/**
 * Releases the lock on `client`'s session at once (the server ends a closed session a moment
 * after its connection goes, and a start right after must find the database free): false when the
 * server did not answer within `timeoutMs` or refused, and the caller must drop the connection,
 * whose session's end releases the lock.
 */
export async function unlockDatabase(client: pg.ClientBase, timeoutMs: number): Promise<boolean> {
  try {
    await client.query(timedQuery('SELECT pg_advisory_unlock($1)', [DATABASE_LOCK_KEY], timeoutMs));
    return true;
  } catch {
    return false;
  }
}

const META_DDL = 'CREATE TABLE IF NOT EXISTS store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)';
const JOURNAL_KEY = 'journal';

function recordOf(identity: JournalIdentity): string {
  return identity.backend === 'postgres' ? 'postgres' : `nats:${identity.stream}`;
}

function described(record: string): string {
  if (record === 'postgres') return 'in the database itself (JOURNAL_URL unset)';
  if (record.startsWith('nats:')) {
    const stream = record.slice('nats:'.length);
    return `on the NATS JetStream stream ${stream} (JOURNAL_URL, JOURNAL_STREAM=${stream})`;
  }
  return `'${record}'`;
}

/**
 * Refuses (`StoreOpenError`) a database whose recorded journal is not `identity`; one with no
 * record passes, unless its own `journal` table holds entries and `identity` is not PostgreSQL.
 * Reads only: run on the connection holding the lock, before the journal is opened.
 */
export async function checkJournalIdentity(client: pg.ClientBase, identity: JournalIdentity): Promise<void> {
  const wanted = recordOf(identity);
  const present = await client.query("SELECT to_regclass('store_meta') IS NOT NULL AS present");
  const row =
    (present.rows[0] as { present: boolean }).present === true
      ? ((await client.query('SELECT value FROM store_meta WHERE key = $1', [JOURNAL_KEY])).rows[0] as
          | { value: string }
          | undefined)
      : undefined;
  const recorded = row?.value ?? ((await ownJournalHasEntries(client)) ? 'postgres' : wanted);
  if (recorded !== wanted) {
    throw new StoreOpenError(
      `the PostgreSQL database at DATABASE_URL holds the snapshots and history of the journal ${described(recorded)}, but this start's journal is ${described(wanted)}: its recovery would discard them. Set JOURNAL_URL and JOURNAL_STREAM as the service that wrote them had them, or use another DATABASE_URL`,
    );
  }
}

/**
 * Records `identity` in a database that has no record yet (a recorded one stays): once every
 * store opened, so a start that failed records nothing and a corrected one is not refused.
 */
export async function recordJournalIdentity(client: pg.ClientBase, identity: JournalIdentity): Promise<void> {
  await client.query(META_DDL);
  await client.query('INSERT INTO store_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [
    JOURNAL_KEY,
    recordOf(identity),
  ]);
}

/** `recordJournalIdentity` on a connection of its own. */
export async function recordJournalIdentityAt(
  connectionString: string,
  identity: JournalIdentity,
): Promise<void> {
  const client = new pg.Client({ connectionString });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await recordJournalIdentity(client, identity);
  } finally {
    await client.end();
  }
}

/** The database's own `journal` table exists and holds entries (a build before `store_meta`). */
async function ownJournalHasEntries(client: pg.ClientBase): Promise<boolean> {
  const table = await client.query("SELECT to_regclass('journal') IS NOT NULL AS present");
  if ((table.rows[0] as { present: boolean }).present !== true) return false;
  const rows = await client.query('SELECT EXISTS (SELECT 1 FROM journal) AS any');
  return (rows.rows[0] as { any: boolean }).any === true;
}

/** How long closing waits for the server to release the lock before it drops the connection. */
const CLOSE_TIMEOUT_MS = 2_000;
/** How long one try to take the lock again waits to connect, and for each of its queries. */
const RETAKE_TIMEOUT_MS = 5_000;

/** The fence's lock is gone and cannot be taken again: another service may open the database. */
export class DatabaseLockLostError extends Error {
  override name = 'DatabaseLockLostError';
}

/** What happens to the fence's lock connection after `open` (see the module's docstring). */
export interface FenceWatch {
  /** The connection holding the lock dropped: the lock is being taken again. */
  readonly onDropped?: (error: Error) => void;
  /** The lock is held again, on a new connection (`tries`: the tries it took). */
  readonly onRetaken?: (tries: number) => void;
  /** The lock is lost for good (`DatabaseLockLostError`): the service must stop. */
  readonly onLost: (error: DatabaseLockLostError) => void;
  /** Tries to take it again before giving up (default: no limit, as long as the server is away). */
  readonly retakeTries?: number;
  /** The pause between two tries (default 1 s); the first is at once. */
  readonly retryEveryMs?: number;
  /** Runs `run` after `ms` (default: an unref'd `setTimeout`); returns a cancel function. */
  readonly schedule?: (ms: number, run: () => void) => () => void;
}

const DEFAULT_RETAKE_TRIES = Number.POSITIVE_INFINITY;
const DEFAULT_RETRY_EVERY_MS = 1_000;

function scheduleTimeout(ms: number, run: () => void): () => void {
  const timer = setTimeout(run, ms);
  timer.unref();
  return () => clearTimeout(timer);
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** Ends a connection without waiting for a server that may not answer (nor failing). */
function dropConnection(client: pg.Client): void {
  client.end().catch(() => undefined);
}

/**
 * Ends a connection, and with it its session and any lock it holds, waiting for the server to
 * close it (so a start right after finds the lock free), but at most `ms`.
 */
export async function endConnection(client: pg.Client, ms = CLOSE_TIMEOUT_MS): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  await Promise.race([client.end().catch(() => undefined), late]);
  clearTimeout(timer);
}

/**
 * The lock and the identity check on a connection of their own, for a database whose journal is
 * elsewhere (NATS): held until `close`, and taken again when that connection drops (`watch`).
 */
export class PgDatabaseFence {
  static async open(
    connectionString: string,
    identity: JournalIdentity,
    watch: FenceWatch | null = null,
  ): Promise<PgDatabaseFence> {
    const client = new pg.Client({ connectionString });
    // A dropped connection must not crash the process.
    client.on('error', () => undefined);
    let locked = false;
    try {
      await client.connect();
      await lockDatabase(client);
      locked = true;
      await checkJournalIdentity(client, identity);
    } catch (error) {
      if (locked) await unlockDatabase(client, CLOSE_TIMEOUT_MS);
      await endConnection(client);
      throw error;
    }
    return new PgDatabaseFence(connectionString, client, identity, watch);
  }

  private closed = false;
  /** The connection holding the lock; null while it is being taken again, or lost. */
  private client: pg.Client | null;
  /** A try to take it again under way (its connection, to drop when the fence closes). */
  private retaking: pg.Client | null = null;
  private cancelRetry: (() => void) | null = null;
  private lost: DatabaseLockLostError | null = null;

  private constructor(
    private readonly connectionString: string,
    client: pg.Client,
    private readonly identity: JournalIdentity,
    private readonly watch: FenceWatch | null,
  ) {
    this.client = client;
    this.watchConnection(client);
  }

  /** Why the lock is lost for good, or null while it is held (or being taken again). */
  get lostLock(): DatabaseLockLostError | null {
    return this.lost;
  }

  /** Whether the lock is held right now (false while it is being taken again). */
  get holdsLock(): boolean {
    return this.client !== null;
  }

  /** Records the journal's identity (see `recordJournalIdentity`), once every store opened. */
  record(): Promise<void> {
    if (this.client === null) {
      return Promise.reject(this.lost ?? new DatabaseLockLostError('the database lock is being taken again'));
    }
    return recordJournalIdentity(this.client, this.identity);
  }

  /**
   * Releases the lock first, so a service started right after this finds the database free, then
   * drops the connection; never waits longer than a moment on a server that stopped answering
   * (the session's end releases the lock then).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.cancelRetry?.();
    this.cancelRetry = null;
    if (this.retaking !== null) dropConnection(this.retaking);
    this.retaking = null;
    const client = this.client;
    this.client = null;
    if (client === null) return;
    if (await unlockDatabase(client, CLOSE_TIMEOUT_MS)) await endConnection(client);
    else dropConnection(client);
  }

  /** The lock's connection dropping (once, whichever of `error` and `end` comes first). */
  private watchConnection(client: pg.Client): void {
    let dropped = false;
    const drop = (error: Error) => {
      if (dropped) return;
      dropped = true;
      this.dropped(client, error);
    };
    client.on('error', drop);
    client.on('end', () => drop(new Error('the connection ended')));
  }

  private dropped(client: pg.Client, error: Error): void {
    if (this.closed || this.client !== client) return;
    this.client = null;
    dropConnection(client);
    if (this.watch === null) {
      this.lost = new DatabaseLockLostError(
        'the connection holding the database lock dropped, and nothing takes it again',
        { cause: error },
      );
      return;
    }
    this.watch.onDropped?.(error);
    this.retryAfter(0, 1);
  }

  private retryAfter(ms: number, attempt: number): void {
    const schedule = this.watch?.schedule ?? scheduleTimeout;
    this.cancelRetry = schedule(ms, () => {
      this.cancelRetry = null;
      void this.retake(attempt);
    });
  }

  /** One try to take the lock again on a new connection; the next is scheduled when it fails. */
  private async retake(attempt: number): Promise<void> {
    if (this.closed || this.watch === null) return;
    const watch = this.watch;
    const client = new pg.Client({
      connectionString: this.connectionString,
      connectionTimeoutMillis: RETAKE_TIMEOUT_MS,
    });
    client.on('error', () => undefined);
    this.retaking = client;
    let cause: Error;
    try {
      await client.connect();
      const lock = await client.query(
        timedQuery('SELECT pg_try_advisory_lock($1) AS locked', [DATABASE_LOCK_KEY], RETAKE_TIMEOUT_MS),
      );
      if ((lock.rows[0] as { locked: boolean }).locked !== true) {
        return this.lose(
          client,
          new DatabaseLockLostError(
            'the connection holding the PostgreSQL database lock dropped, and another session took the lock before it could be taken again: another service may be using the database',
          ),
        );
      }
      try {
        await checkJournalIdentity(client, this.identity);
      } catch (error) {
        if (!(error instanceof StoreOpenError)) throw error;
        return this.lose(
          client,
          new DatabaseLockLostError(
            `the PostgreSQL database lock was taken again, but the database no longer describes this journal: ${error.message}`,
            { cause: error },
          ),
        );
      }
      if (this.closed) return endConnection(client);
      this.retaking = null;
      this.client = client;
      this.watchConnection(client);
      watch.onRetaken?.(attempt);
      return;
    } catch (error) {
      cause = asError(error);
    }
    this.retaking = null;
    dropConnection(client);
    if (this.closed) return;
    const tries = watch.retakeTries ?? DEFAULT_RETAKE_TRIES;
    if (attempt >= tries) {
      this.lose(
        null,
        new DatabaseLockLostError(
          `the connection holding the PostgreSQL database lock dropped, and the lock could not be taken again in ${tries} tries: ${cause.message}`,
          { cause },
        ),
      );
      return;
    }
    this.retryAfter(watch.retryEveryMs ?? DEFAULT_RETRY_EVERY_MS, attempt + 1);
  }

  private lose(client: pg.Client | null, error: DatabaseLockLostError): void {
    if (client !== null) dropConnection(client);
    this.retaking = null;
    if (this.closed) return;
    this.lost = error;
    this.watch?.onLost(error);
  }
}
