/**
 * The embedded key store: SQLite (better-sqlite3) at `DATA_DIR/keys.db`, secrets sealed
 * with AES-256-GCM. Statements are prepared once; all calls are synchronous.
 *
 * The store records a sealed check value the first time it is opened, so every later opener
 * (the service, the CLI) is refused unless its encryption key is that one, even before any API
 * key exists: a key sealed with another key is never stored, so never issued.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import {
  type AccountRecord,
  type ApiKeyRecord,
  checkNewKey,
  DeskTakenError,
  deskFold,
  type KeyStore,
  type KeyWithSecret,
  type NewApiKey,
  nameProblem,
  newApiKeyId,
  newApiSecret,
  type UserRecord,
} from './key-store.ts';
import type { SecretBox } from './secret-box.ts';

/** The api_keys table. `desk_name` is not unique: a desk's owner may rotate keys on it. */
const API_KEYS_TABLE = (name: string) => `
CREATE TABLE ${name} (
  api_key TEXT PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id),
  secret_sealed TEXT NOT NULL,
  roles TEXT NOT NULL,
  desk_name TEXT,
  default_account_id INTEGER NOT NULL REFERENCES accounts(id),
  rate_limits TEXT,
  created_at INTEGER NOT NULL,
  disabled INTEGER NOT NULL DEFAULT 0
)`;

const API_KEYS_COLUMNS =
  'api_key, user_id, secret_sealed, roles, desk_name, default_account_id, rate_limits, created_at, disabled';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS users (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS accounts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL REFERENCES users(id),
  label TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
${API_KEYS_TABLE('IF NOT EXISTS api_keys')};
CREATE TABLE IF NOT EXISTS sealing_key_check (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  sealed TEXT NOT NULL
);
`;

/** The plaintext of the check value: what it says does not matter, only that it opens. */
const KEY_CHECK_TEXT = 'keys.db sealing key check';

/** An encryption key other than the one the stored secrets were sealed with. */
export class SecretsKeyMismatchError extends Error {
  constructor(path: string) {
    super(
      `the API secrets stored in ${path} cannot be opened with this encryption key: they were sealed with another one. Set SECRET_ENCRYPTION_KEY (or DATA_DIR/secret.key) to the key they were sealed with`,
    );
  }
}

/**
 * Whether the key store file at `path` holds anything sealed (an API secret or the key check),
 * read without writing to it; false when there is no such file.
 */
export function holdsSealedSecrets(path: string): boolean {
  if (!existsSync(path)) return false;
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const tables = new Set(
      (
        db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>
      ).map((row) => row.name),
    );
    return ['api_keys', 'sealing_key_check'].some(
      (table) => tables.has(table) && db.prepare(`SELECT 1 FROM ${table} LIMIT 1`).get() !== undefined,
    );
  } finally {
    db.close();
  }
}

/** Finds the owner of a desk name; created after the migration (the old table had its own index). */
const DESK_INDEX = 'CREATE INDEX IF NOT EXISTS api_keys_desk_name ON api_keys (desk_name)';

interface KeyRow {
  api_key: string;
  user_id: number;
  secret_sealed: string;
  roles: string;
  desk_name: string | null;
  default_account_id: number;
  rate_limits: string | null;
  created_at: number;
  disabled: number;
}

interface AccountRow {
  id: number;
  user_id: number;
  label: string;
  created_at: number;
}

export class SqliteKeyStore implements KeyStore {
  private readonly db: Database.Database;

  /** `path` is a file (its directory is created) or ':memory:'. */
  /**
   * `path` is a file (its directory is created) or ':memory:'. Throws SecretsKeyMismatchError
   * (the database closed) when `box` is not the key the stored secrets were sealed with.
   */
  constructor(
    private readonly path: string,
    private readonly box: SecretBox,
  ) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path);
    try {
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('foreign_keys = ON');
      this.db.exec(SCHEMA);
      this.migrateDeskNames();
      this.db.exec(DESK_INDEX);
      this.checkSealingKey();
    } catch (error) {
      this.db.close();
      throw error;
    }
  }

  /**
   * The box must open the stored check value; a store without one (new, or written before the
   * check) must have its oldest API secret open (the service's start-up check before), and then
   * records one sealed with this box. In one IMMEDIATE transaction: the CLI and the service
   * opening a new store at once cannot record two different keys.
   */
  private checkSealingKey(): void {
    this.db
      .transaction(() => {
        const check = this.db.prepare('SELECT sealed FROM sealing_key_check WHERE id = 1').get() as
          | { sealed: string }
          | undefined;
        const oldest = this.db
          .prepare('SELECT secret_sealed FROM api_keys ORDER BY created_at, api_key LIMIT 1')
          .get() as { secret_sealed: string } | undefined;
        const sealed = check?.sealed ?? oldest?.secret_sealed;
        if (sealed !== undefined) {
          try {
            this.box.open(sealed);
          } catch {
            throw new SecretsKeyMismatchError(this.path);
          }
        }
        if (check === undefined) {
          this.db
            .prepare('INSERT INTO sealing_key_check (id, sealed) VALUES (1, ?)')
            .run(this.box.seal(KEY_CHECK_TEXT));
        }
      })
      .immediate();
  }

  /**
   * Stores written before desk rotation declared `desk_name TEXT UNIQUE` (across every key,
   * disabled ones included). SQLite cannot drop a column constraint, so the table is rebuilt
   * without it, keeping every row, in one IMMEDIATE transaction (the CLI and the service may open
   * the store at once: the second finds the work done). Foreign keys are off during the rebuild,
   * as SQLite's documented procedure asks, and checked before the commit.
   */
  private migrateDeskNames(): void {
    if (!this.hasUniqueDeskNames()) return;
    this.db.pragma('foreign_keys = OFF');
    try {
      this.db
        .transaction(() => {
          if (!this.hasUniqueDeskNames()) return;
          const before = this.countKeys();
          this.db.exec(API_KEYS_TABLE('api_keys_rebuilt'));
          this.db.exec(
            `INSERT INTO api_keys_rebuilt (${API_KEYS_COLUMNS}) SELECT ${API_KEYS_COLUMNS} FROM api_keys`,
          );
          this.db.exec('DROP TABLE api_keys');
          this.db.exec('ALTER TABLE api_keys_rebuilt RENAME TO api_keys');
          if (this.countKeys() !== before) throw new Error('api_keys migration lost rows');
          const broken = this.db.pragma('foreign_key_check') as unknown[];
          if (broken.length > 0) throw new Error(`api_keys migration broke ${broken.length} references`);
        })
        .immediate();
    } finally {
      this.db.pragma('foreign_keys = ON');
    }
  }

  /** Whether api_keys still has the old UNIQUE(desk_name) constraint. */
  private hasUniqueDeskNames(): boolean {
    const indexes = this.db.pragma('index_list(api_keys)') as Array<{
      name: string;
      unique: number;
      origin: string;
    }>;
    return indexes.some((index) => {
      if (index.unique !== 1 || index.origin !== 'u') return false;
      const columns = this.db.pragma(`index_info(${JSON.stringify(index.name)})`) as Array<{ name: string }>;
      return columns.length === 1 && columns[0]!.name === 'desk_name';
    });
  }

  private countKeys(): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM api_keys').get() as { n: number }).n;
  }

  isEmpty(): boolean {
    return this.countUsers() === 0;
  }

  createUser(name: string, now: number): UserRecord {
    const problem = nameProblem(name);
    if (problem !== null) throw new Error(`name ${problem}`);
    const info = this.db.prepare('INSERT INTO users (name, created_at) VALUES (?, ?)').run(name, now);
    return { id: Number(info.lastInsertRowid), name, createdAt: now };
  }

  createAccount(userId: number, label: string, now: number): AccountRecord {
    if (!this.getUser(userId)) throw new Error(`user ${userId} does not exist`);
    const problem = nameProblem(label);
    if (problem !== null) throw new Error(`label ${problem}`);
    const info = this.db
      .prepare('INSERT INTO accounts (user_id, label, created_at) VALUES (?, ?, ?)')
      .run(userId, label, now);
    return { id: Number(info.lastInsertRowid), userId, label, createdAt: now };
  }

  /**
   * Checks and inserts in one IMMEDIATE transaction, so that two processes (the CLI and the
   * service) cannot both give a free desk name to different users.
   */
  createApiKey(input: NewApiKey, now: number): KeyWithSecret {
    return this.db.transaction(() => this.insertApiKey(input, now)).immediate();
  }

  private insertApiKey(input: NewApiKey, now: number): KeyWithSecret {
    const defaultAccountId = checkNewKey(input, this.accountsOf(input.userId));
    if (input.deskName) {
      const taken = this.deskOfAnother(input.deskName, input.userId);
      if (taken !== undefined) {
        throw new DeskTakenError(
          input.deskName,
          taken.userId,
          this.getUser(taken.userId)?.name ?? null,
          taken.deskName,
        );
      }
    }
    const apiKey = newApiKeyId();
    const apiSecret = newApiSecret();
    const record: ApiKeyRecord = {
      apiKey,
      userId: input.userId,
      roles: [...input.roles],
      deskName: input.deskName ?? null,
      defaultAccountId,
      rateLimits: input.rateLimits ?? null,
      createdAt: now,
      disabled: false,
    };
    this.db
      .prepare(
        `INSERT INTO api_keys (api_key, user_id, secret_sealed, roles, desk_name, default_account_id, rate_limits, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        apiKey,
        record.userId,
        this.box.seal(apiSecret),
        JSON.stringify(record.roles),
        record.deskName,
        defaultAccountId,
        record.rateLimits === null ? null : JSON.stringify(record.rateLimits),
        now,
      );
    return { record, apiSecret };
  }

  /**
   * Another user's desk that `deskName` equals ignoring letter case (disabled keys included): the
   * exact name first. A scan of the desks, which only key creation runs.
   */
  private deskOfAnother(deskName: string, userId: number): { deskName: string; userId: number } | undefined {
    const exact = this.deskOwner(deskName);
    if (exact !== undefined && exact !== userId) return { deskName, userId: exact };
    const folded = deskFold(deskName);
    const rows = this.db
      .prepare(
        'SELECT DISTINCT desk_name, user_id FROM api_keys WHERE desk_name IS NOT NULL AND user_id <> ?',
      )
      .all(userId) as Array<{ desk_name: string; user_id: number }>;
    const row = rows.find((r) => deskFold(r.desk_name) === folded);
    return row === undefined ? undefined : { deskName: row.desk_name, userId: row.user_id };
  }

  /** The user whose keys carry `deskName` (disabled ones included), if any. */
  deskOwner(deskName: string): number | undefined {
    const row = this.db.prepare('SELECT user_id FROM api_keys WHERE desk_name = ? LIMIT 1').get(deskName) as
      | { user_id: number }
      | undefined;
    return row?.user_id;
  }

  findKey(apiKey: string): KeyWithSecret | undefined {
    const row = this.db.prepare('SELECT * FROM api_keys WHERE api_key = ?').get(apiKey) as KeyRow | undefined;
    if (!row) return undefined;
    return { record: toKeyRecord(row), apiSecret: this.box.open(row.secret_sealed) };
  }

  disableKey(apiKey: string): boolean {
    return this.db.prepare('UPDATE api_keys SET disabled = 1 WHERE api_key = ?').run(apiKey).changes > 0;
  }

  getUser(userId: number): UserRecord | undefined {
    const row = this.db.prepare('SELECT * FROM users WHERE id = ?').get(userId) as
      | { id: number; name: string; created_at: number }
      | undefined;
    return row && { id: row.id, name: row.name, createdAt: row.created_at };
  }

  listUsers(): UserRecord[] {
    const rows = this.db.prepare('SELECT * FROM users ORDER BY id').all() as Array<{
      id: number;
      name: string;
      created_at: number;
    }>;
    return rows.map((row) => ({ id: row.id, name: row.name, createdAt: row.created_at }));
  }

  accountsOf(userId: number): AccountRecord[] {
    const rows = this.db
      .prepare('SELECT * FROM accounts WHERE user_id = ? ORDER BY id')
      .all(userId) as AccountRow[];
    return rows.map(toAccountRecord);
  }

  getAccount(accountId: number): AccountRecord | undefined {
    const row = this.db.prepare('SELECT * FROM accounts WHERE id = ?').get(accountId) as
      | AccountRow
      | undefined;
    return row && toAccountRecord(row);
  }

  listKeys(userId?: number): ApiKeyRecord[] {
    const rows = (
      userId === undefined
        ? this.db.prepare('SELECT * FROM api_keys ORDER BY created_at, api_key').all()
        : this.db.prepare('SELECT * FROM api_keys WHERE user_id = ? ORDER BY created_at, api_key').all(userId)
    ) as KeyRow[];
    return rows.map(toKeyRecord);
  }

  close(): void {
    this.db.close();
  }

  private countUsers(): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM users').get() as { n: number }).n;
  }
}

function toKeyRecord(row: KeyRow): ApiKeyRecord {
  return {
    apiKey: row.api_key,
    userId: row.user_id,
    roles: JSON.parse(row.roles),
    deskName: row.desk_name,
    defaultAccountId: row.default_account_id,
    rateLimits: row.rate_limits === null ? null : JSON.parse(row.rate_limits),
    createdAt: row.created_at,
    disabled: row.disabled !== 0,
  };
}

function toAccountRecord(row: AccountRow): AccountRecord {
  return { id: row.id, userId: row.user_id, label: row.label, createdAt: row.created_at };
}
