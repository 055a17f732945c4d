/**
 * The embedded key store: SQLite (better-sqlite3) at `DATA_DIR/keys.db`, secrets sealed
 * with AES-256-GCM. Statements are prepared once; all calls are synchronous.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import {
  type AccountRecord,
  type ApiKeyRecord,
  checkNewKey,
  type KeyStore,
  type KeyWithSecret,
  type NewApiKey,
  newApiKeyId,
  newApiSecret,
  type UserRecord,
} from './key-store.ts';
import type { SecretBox } from './secret-box.ts';

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
CREATE TABLE IF NOT EXISTS api_keys (
  api_key TEXT PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id),
  secret_sealed TEXT NOT NULL,
  roles TEXT NOT NULL,
  desk_name TEXT UNIQUE,
  default_account_id INTEGER NOT NULL REFERENCES accounts(id),
  rate_limits TEXT,
  created_at INTEGER NOT NULL,
  disabled INTEGER NOT NULL DEFAULT 0
);
`;

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
  constructor(
    path: string,
    private readonly box: SecretBox,
  ) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('foreign_keys = ON');
    this.db.exec(SCHEMA);
  }

  isEmpty(): boolean {
    return this.countUsers() === 0;
  }

  createUser(name: string, now: number): UserRecord {
    const info = this.db.prepare('INSERT INTO users (name, created_at) VALUES (?, ?)').run(name, now);
    return { id: Number(info.lastInsertRowid), name, createdAt: now };
  }

  createAccount(userId: number, label: string, now: number): AccountRecord {
    if (!this.getUser(userId)) throw new Error(`user ${userId} does not exist`);
    const info = this.db
      .prepare('INSERT INTO accounts (user_id, label, created_at) VALUES (?, ?, ?)')
      .run(userId, label, now);
    return { id: Number(info.lastInsertRowid), userId, label, createdAt: now };
  }

  createApiKey(input: NewApiKey, now: number): KeyWithSecret {
    const defaultAccountId = checkNewKey(input, this.accountsOf(input.userId));
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
