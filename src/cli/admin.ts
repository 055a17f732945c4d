/**
 * Operator CLI: users, accounts, API keys and test funds.
 *
 *   npm run cli -- user:create <name>
 *   npm run cli -- account:create <userId> [label] [--fund]     (opens it in the running server)
 *   npm run cli -- key:create <userId> --roles trade,taker [--desk NAME] [--account ID]
 *                  [--rate-matching <perSecond>:<burst>] [--rate-non-matching <perSecond>:<burst>]
 *   npm run cli -- key:list [userId]  |  key:disable <apiKey>  |  users
 *   npm run cli -- deposit <accountId> <currency> <amount> [--id ID]  (through the running server)
 *   npm run cli -- storage:vacuum                                (the service stopped)
 *   npm run cli -- storage:backup <dir> [--verify]               (while the service runs)
 *
 * Users, accounts and keys go straight to the key store under DATA_DIR (same config as the
 * server). Engine changes (opening an account, deposits) go through the running server's admin
 * endpoints with the admin token from DATA_DIR; an account created while the server is down is
 * opened (unfunded) at the server's next start. Every deposit carries a deposit id (a new one per
 * invocation, printed, or `--id` to retry one): the service credits an id at most once.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ADMIN_TOKEN_HEADER } from '../api/admin.ts';
import { DeskTakenError, nameProblem, ROLES, type Role } from '../api/auth/key-store.ts';
import { KEYS_FILE, openKeyStore } from '../api/auth/open-key-store.ts';
import { DEMO_DEPOSITS } from '../api/bootstrap.ts';
import { loadConfig } from '../app/config.ts';
import { type BackupCheck, backupDataDir, verifyBackup } from '../app/data-dir-backup.ts';
import { DEPOSIT_ID_PATTERN } from '../core/commands.ts';
import { vacuumSqliteStores } from '../store/sqlite/vacuum.ts';

export const USAGE = `usage: npm run cli -- <command> [options]
  user:create <name>
  users
  account:create <userId> [label] [--fund]     opens it in the running service (--fund: test funds)
  key:create <userId> [--roles trade,taker,maker] [--desk NAME] [--account ID]
             [--rate-matching <perSecond>:<burst>] [--rate-non-matching <perSecond>:<burst>]
  key:list [userId]
  key:disable <apiKey>
  deposit <accountId> <currency> <amount> [--id ID]
                                               through the running service; prints its deposit id:
                                               run again with --id ID after a failure, it credits once
  storage:vacuum                               with the service stopped: gives the embedded SQLite
                                               stores' freed space back (after retention trimmed them)
  storage:backup <dir> [--verify]              a consistent copy of DATA_DIR's SQLite stores and key
                                               files, taken while the service runs; restore = start
                                               the service with DATA_DIR=<dir>; --verify checks the
                                               copy (every journal record, the snapshot it needs)
options: --url <service>  default http://127.0.0.1:$PORT;  -h, --help
The key store is DATA_DIR/keys.db (DATA_DIR as for the service, default ./data).`;

/** A mistake in the command line: the message (and usage) is printed, the exit code is 1. */
class UsageError extends Error {}

class Unreachable extends Error {
  constructor(url: string, error: unknown) {
    const reason = (error as { cause?: { code?: string; message?: string } }).cause;
    const cause = reason?.code ?? reason?.message ?? (error as Error).message;
    super(`cannot reach the service at ${url} (${cause}): is it running? (--url, or PORT)`);
  }
}

/** Errors of a connection that was never made: nothing reached the service. */
const NOT_CONNECTED = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'EADDRNOTAVAIL',
]);

/**
 * Calls an admin endpoint of the running service; says so plainly when it cannot be reached.
 * `retry`: how to repeat the call safely when it fails without an answer (it may have been applied).
 */
async function admin(
  url: string,
  token: string,
  path: string,
  body: unknown,
  retry = 'check (e.g. the balance) before running it again',
): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [ADMIN_TOKEN_HEADER]: token },
      body: JSON.stringify(body),
    });
  } catch (error) {
    const code = (error as { cause?: { code?: string } }).cause?.code;
    if (code !== undefined && NOT_CONNECTED.has(code)) throw new Unreachable(url, error);
    // The request may have reached the service: it may have been applied.
    throw new Error(
      `the call to ${url}${path} failed without an answer (${code ?? (error as Error).message}); it may have been applied: ${retry}`,
    );
  }
  const text = await response.text();
  // Flat answers; a refusal made before the admin route runs (a shutdown, a wrong Content-Type)
  // comes as an envelope error.
  let answer: {
    succ?: boolean;
    code?: number;
    message?: string;
    value?: unknown;
    error?: { code: number; message: string };
  };
  try {
    answer = JSON.parse(text);
  } catch {
    // Not the service (a wrong --url, a proxy's error page): what it was is unknown.
    throw new Error(
      `${url}${path} answered HTTP ${response.status} with something that is not the service's answer (${JSON.stringify(text.slice(0, 80))}); it may have been applied: ${retry}`,
    );
  }
  if (answer.succ !== true) {
    const refusal = answer.error ?? answer;
    throw new Error(`the service refused: ${refusal.code} ${refusal.message}`);
  }
  return answer.value;
}

/** The admin token the service wrote under DATA_DIR (read only: a missing one is not created). */
function adminToken(dataDir: string): string {
  const path = join(dataDir, 'admin.token');
  if (!existsSync(path))
    throw new UsageError(`no admin token at ${path}: start the service once with this DATA_DIR`);
  return readFileSync(path, 'utf8').trim();
}

/** A positive integer written in plain decimal digits (no `0x2`, `1e0` or spaces: a mistyped id must not reach a real one). */
function integer(text: string | undefined, name: string): number {
  const value = Number(text);
  if (text === undefined || !/^[1-9]\d*$/.test(text) || !Number.isSafeInteger(value)) {
    throw new UsageError(
      `${name} must be a positive integer, got ${text === undefined ? 'nothing' : `'${text}'`}`,
    );
  }
  return value;
}

/** `--rate-matching 100:500` = 100 requests/s sustained, burst 500 (per key). */
function bucket(text: string | undefined, name: string): { perSecond: number; burst: number } | undefined {
  if (text === undefined) return undefined;
  const match = /^(\d+(?:\.\d+)?):(\d+)$/.exec(text);
  const perSecond = Number(match?.[1]);
  const burst = Number(match?.[2]);
  // As the service's own limits (config): a positive rate and a burst of at least one request.
  if (match === null || !(perSecond > 0) || !Number.isSafeInteger(burst) || burst < 1) {
    throw new UsageError(
      `${name} must be <perSecond>:<burst> with perSecond > 0 and burst >= 1, got '${text}'`,
    );
  }
  return { perSecond, burst };
}

function rateOverrides(matching: string | undefined, nonMatching: string | undefined) {
  const m = bucket(matching, '--rate-matching');
  const n = bucket(nonMatching, '--rate-non-matching');
  if (m === undefined && n === undefined) return null;
  return { ...(m ? { matching: m } : {}), ...(n ? { nonMatching: n } : {}) };
}

const COMMANDS = new Set([
  'user:create',
  'users',
  'account:create',
  'key:create',
  'key:list',
  'key:disable',
  'deposit',
  'storage:vacuum',
  'storage:backup',
]);

export async function runCli(
  argv: readonly string[],
  print: (line: string) => void = console.log,
): Promise<void> {
  let parsed: ReturnType<typeof parseCli>;
  try {
    parsed = parseCli(argv);
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  const [command, ...args] = positionals;
  if (values.help) {
    print(USAGE);
    return;
  }
  if (command === undefined) throw new UsageError(USAGE);
  if (!COMMANDS.has(command)) throw new UsageError(`unknown command '${command}'\n${USAGE}`);
  const config = loadConfig();
  if (command === 'storage:vacuum') {
    if (config.databaseUrl !== null) {
      throw new UsageError(
        'storage:vacuum compacts the embedded SQLite stores; with DATABASE_URL, PostgreSQL reclaims space itself (VACUUM)',
      );
    }
    for (const file of vacuumSqliteStores(config.dataDir)) {
      print(`${file.file}: ${file.before} → ${file.after} bytes`);
    }
    return;
  }
  if (command === 'storage:backup') {
    const target = args[0];
    if (!target) throw new UsageError('usage: storage:backup <dir>');
    if (!existsSync(join(config.dataDir, KEYS_FILE))) {
      throw new UsageError(`nothing to back up: no service data in ${config.dataDir} (set DATA_DIR)`);
    }
    for (const file of backupDataDir(config.dataDir, target)) print(`${file.file}: ${file.bytes} bytes`);
    if (values.verify) {
      print(`verified: ${describeBackup(await verifyBackup(target))}`);
    }
    if (config.databaseUrl !== null || config.journalUrl !== null) {
      print(
        'the journal, snapshots and read store outside DATA_DIR (DATABASE_URL, JOURNAL_URL) are not in it',
      );
    }
    return;
  }
  const url = values.url ?? `http://127.0.0.1:${config.port}`;
  // A wrong DATA_DIR must not quietly start a second, empty key store (and admin token) that the
  // service never reads: the CLI works only on the store the service created.
  const keysFile = join(config.dataDir, KEYS_FILE);
  if (!existsSync(keysFile)) {
    throw new UsageError(
      `no key store at ${keysFile}: set DATA_DIR to the service's data directory (the service creates the store at its first start)`,
    );
  }
  // Refused here, before any write, unless the configured key (or DATA_DIR/secret.key) is the one
  // the stored secrets were sealed with: a key sealed with another one would never authenticate.
  const store = openKeyStore(config);
  const now = Date.now();
  const out = (value: unknown) => print(JSON.stringify(value, null, 2));
  try {
    switch (command) {
      case 'user:create': {
        const name = args[0];
        if (name === undefined) throw new UsageError('usage: user:create <name>');
        const problem = nameProblem(name);
        if (problem !== null) throw new UsageError(`name ${problem}, got ${JSON.stringify(name)}`);
        if (store.listUsers().some((user) => user.name === name)) {
          throw new UsageError(`a user named '${name}' already exists`);
        }
        out(store.createUser(name, now));
        return;
      }
      case 'users':
        out(
          store
            .listUsers()
            .map((user) => ({ ...user, accounts: store.accountsOf(user.id).map((a) => a.id) })),
        );
        return;
      case 'account:create': {
        const userId = integer(args[0], 'userId');
        if (store.getUser(userId) === undefined) throw new UsageError(`user ${userId} does not exist`);
        const token = adminToken(config.dataDir);
        const label = args[1] ?? 'account';
        const labelProblem = nameProblem(label);
        if (labelProblem !== null)
          throw new UsageError(`label ${labelProblem}, got ${JSON.stringify(label)}`);
        const account = store.createAccount(userId, label, now);
        out(account);
        try {
          await admin(url, token, '/admin/accounts/provision', {
            accountId: account.id,
            deposits: values.fund ? DEMO_DEPOSITS : {},
          });
          print(`opened account ${account.id} in the running server${values.fund ? ' with test funds' : ''}`);
        } catch (error) {
          if (!(error instanceof Unreachable)) {
            throw new Error(
              `account ${account.id} stored; the service will open it at its next start (${(error as Error).message})`,
            );
          }
          const stored = `account ${account.id} stored; the service will open it at its next start`;
          // Asked to fund it and could not: a failure (exit 1), so a script does not go on as if funded.
          if (values.fund) {
            throw new Error(`${stored}, unfunded: run deposit once it is up (${error.message})`);
          }
          print(`${stored} (${error.message})`);
        }
        return;
      }
      case 'key:create': {
        const userId = integer(args[0], 'userId');
        if (store.getUser(userId) === undefined) throw new UsageError(`user ${userId} does not exist`);
        const roles = (values.roles ?? 'trade').split(',').map((role) => role.trim()) as Role[];
        for (const role of roles) {
          if (!ROLES.includes(role)) {
            throw new UsageError(`unknown role '${role}' in --roles (roles: ${ROLES.join(', ')})`);
          }
        }
        const twice = roles.find((role, i) => roles.indexOf(role) !== i);
        if (twice !== undefined) throw new UsageError(`role '${twice}' is listed twice in --roles`);
        if (values.desk !== undefined) {
          const problem = nameProblem(values.desk);
          if (problem !== null) throw new UsageError(`--desk ${problem}, got ${JSON.stringify(values.desk)}`);
        }
        const input = {
          userId,
          roles,
          deskName: values.desk ?? null,
          ...(values.account ? { defaultAccountId: integer(values.account, '--account') } : {}),
          rateLimits: rateOverrides(values['rate-matching'], values['rate-non-matching']),
        };
        let key: ReturnType<typeof store.createApiKey>;
        try {
          key = store.createApiKey(input, now);
        } catch (error) {
          // A desk belongs to one user; that user's new keys may carry it (key rotation).
          if (error instanceof DeskTakenError) {
            const spelled =
              error.existing === error.deskName
                ? ''
                : ` (it is the desk ${error.existing} but for letter case)`;
            throw new UsageError(
              `--desk ${error.deskName}: the desk belongs to user ${error.ownerUserId}${spelled}; another user's key cannot carry it (to replace a key of user ${error.ownerUserId}, create the new key for that user with --desk ${error.existing}, then key:disable the old one)`,
            );
          }
          throw error;
        }
        out({
          ...key.record,
          apiSecret: key.apiSecret,
          accountIds: store.accountsOf(userId).map((a) => a.id),
        });
        return;
      }
      case 'key:list':
        out(store.listKeys(args[0] ? integer(args[0], 'userId') : undefined));
        return;
      case 'key:disable':
        if (!args[0]) throw new UsageError('usage: key:disable <apiKey>');
        if (!store.disableKey(args[0])) throw new UsageError(`no API key '${args[0]}'`);
        // The service keeps keys it has seen in a cache for up to 30 s (docs/decisions.md).
        out({ disabled: true });
        return;
      case 'deposit': {
        const accountId = integer(args[0], 'accountId');
        if (!args[1] || !args[2])
          throw new UsageError('usage: deposit <accountId> <currency> <amount> [--id ID]');
        if (!/^(\d+\.?\d*|\.\d+)$/.test(args[2]) || !/[1-9]/.test(args[2])) {
          throw new UsageError(`amount must be positive (a decimal number), got '${args[2]}'`);
        }
        const depositId = values.id ?? randomUUID();
        if (!new RegExp(DEPOSIT_ID_PATTERN).test(depositId)) {
          throw new UsageError(
            `--id must be 1 to 64 characters of A-Z a-z 0-9 . _ : -, got '${depositId}' (the deposit id printed by an earlier deposit)`,
          );
        }
        const token = adminToken(config.dataDir);
        // Printed first: whatever happens to the call, the operator can retry with this id.
        print(`depositId ${depositId}`);
        const retry = `run it again with --id ${depositId} (the same account, currency and amount): the service credits that id once`;
        out(
          await admin(
            url,
            token,
            '/admin/deposit',
            { accountId, currency: args[1], amount: args[2], depositId },
            retry,
          ),
        );
        return;
      }
    }
  } finally {
    store.close();
  }
}

function describeBackup(check: BackupCheck): string {
  if (check.journal === null) {
    return check.snapshotSeq === null
      ? 'the copy holds no journal and no snapshot'
      : `the copy holds no journal; its newest snapshot that loads is at seq ${check.snapshotSeq}`;
  }
  const start =
    check.snapshotSeq === null ? 'seq 1 (no snapshot)' : `the snapshot at seq ${check.snapshotSeq}`;
  return `journal seqs ${check.journal.firstSeq}–${check.journal.lastSeq}, a restore starts from ${start}`;
}

/** Marks a negative number so parseArgs takes it as a value, not as an unknown option `-1`. */
const NEGATIVE = '\u0000';

/**
 * The arguments parsed. A negative number (`deposit 6 BTC -1`, `account:create -1`) would be an
 * unknown option to parseArgs, refused with the usage; it is kept as a value instead, so the
 * check of its argument refuses it by name (`amount must be …`, `userId must be …`).
 */
function parseCli(argv: readonly string[]) {
  const parsed = parseWithOptions(argv.map((arg) => (/^-\d/.test(arg) ? `${NEGATIVE}${arg}` : arg)));
  const restore = (text: string) => (text.startsWith(NEGATIVE) ? text.slice(1) : text);
  const values = Object.fromEntries(
    Object.entries(parsed.values).map(([name, value]) => [
      name,
      typeof value === 'string' ? restore(value) : value,
    ]),
  ) as typeof parsed.values;
  return { values, positionals: parsed.positionals.map(restore) };
}

function parseWithOptions(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      roles: { type: 'string' },
      desk: { type: 'string' },
      account: { type: 'string' },
      fund: { type: 'boolean' },
      verify: { type: 'boolean' },
      url: { type: 'string' },
      id: { type: 'string' },
      'rate-matching': { type: 'string' },
      'rate-non-matching': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

if (process.argv[1]?.endsWith('admin.ts')) {
  runCli(process.argv.slice(2)).catch((error: unknown) => {
    console.error((error as Error).message);
    process.exitCode = 1;
  });
}
