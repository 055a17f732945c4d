/**
 * One service per PostgreSQL database (DATABASE_URL), wherever its journal is.
 *
 * - The lock: a session advisory lock, held for as long as the stores are open. With the journal
 *   in PostgreSQL its writer connection holds it (`PgJournal`); with the journal on NATS a
 *   connection of its own does (`PgDatabaseFence`). Either way it is the same key, taken by the
 *   same code, so the two layouts exclude each other too. The server drops it with the session,
 *   so a killed service leaves none behind.
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

/**
 * The lock and the identity check on a connection of their own, for a database whose journal is
 * elsewhere (NATS): held until `close`.
 */
export class PgDatabaseFence {
  static async open(connectionString: string, identity: JournalIdentity): Promise<PgDatabaseFence> {
    const pool = new pg.Pool({ connectionString, max: 1 });
    // A dropped connection must not crash the process.
    pool.on('error', () => undefined);
    let client: pg.PoolClient | null = null;
    try {
      client = await pool.connect();
      client.on('error', () => undefined);
      await lockDatabase(client);
      await checkJournalIdentity(client, identity);
      return new PgDatabaseFence(pool, client, identity);
    } catch (error) {
      client?.release(true);
      await pool.end();
      throw error;
    }
  }

  private closed = false;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly client: pg.PoolClient,
    private readonly identity: JournalIdentity,
  ) {}

  /** Records the journal's identity (see `recordJournalIdentity`), once every store opened. */
  record(): Promise<void> {
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
    let unlocked = false;
    try {
      await this.client.query(
        timedQuery('SELECT pg_advisory_unlock($1)', [DATABASE_LOCK_KEY], CLOSE_TIMEOUT_MS),
      );
      unlocked = true;
    } catch {
      // The connection is dropped below, which ends the session.
    }
    // Destroyed when the unlock did not answer: a graceful end would wait for the server.
    this.client.release(!unlocked);
    await this.pool.end();
  }
}
