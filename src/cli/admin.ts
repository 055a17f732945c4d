/**
 * Operator CLI: users, accounts, API keys and test funds.
 *
 *   npm run cli -- user:create <name>
 *   npm run cli -- account:create <userId> [label] [--fund]     (opens it in the running server)
 *   npm run cli -- key:create <userId> --roles trade,taker [--desk NAME] [--account ID]
 *                  [--rate-matching <perSecond>:<burst>] [--rate-non-matching <perSecond>:<burst>]
 *   npm run cli -- key:list [userId]  |  key:disable <apiKey>  |  users
 *   npm run cli -- deposit <accountId> <currency> <amount>      (through the running server)
 *
 * Users, accounts and keys go straight to the key store under DATA_DIR (same config as the
 * server). Engine changes (opening an account, deposits) go through the running server's admin
 * endpoints with the admin token from DATA_DIR; an account created while the server is down is
 * opened (unfunded) at the server's next start.
 */
import { parseArgs } from 'node:util';
import { ADMIN_TOKEN_HEADER, loadAdminToken } from '../api/admin.ts';
import { ROLES, type Role } from '../api/auth/key-store.ts';
import { openKeyStore } from '../api/auth/open-key-store.ts';
import { DEMO_DEPOSITS } from '../api/bootstrap.ts';
import { loadConfig } from '../app/config.ts';

const USAGE = `usage: cli <user:create|users|account:create|key:create|key:list|key:disable|deposit> ...
  --url <server>   default http://127.0.0.1:$PORT`;

async function admin(url: string, token: string, path: string, body: unknown): Promise<unknown> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [ADMIN_TOKEN_HEADER]: token },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as { succ: boolean; code: number; message: string; value: unknown };
  if (!answer.succ) throw new Error(`server refused: ${answer.code} ${answer.message}`);
  return answer.value;
}

function integer(text: string | undefined, name: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  return value;
}

/** `--rate-matching 100:500` = 100 requests/s sustained, burst 500 (per key). */
function bucket(text: string | undefined, name: string): { perSecond: number; burst: number } | undefined {
  if (text === undefined) return undefined;
  const match = /^(\d+(?:\.\d+)?):(\d+)$/.exec(text);
  if (match === null) throw new Error(`${name} must look like <perSecond>:<burst>`);
  return { perSecond: Number(match[1]), burst: Number(match[2]) };
}

function rateOverrides(matching: string | undefined, nonMatching: string | undefined) {
  const m = bucket(matching, '--rate-matching');
  const n = bucket(nonMatching, '--rate-non-matching');
  if (m === undefined && n === undefined) return null;
  return { ...(m ? { matching: m } : {}), ...(n ? { nonMatching: n } : {}) };
}

export async function runCli(
  argv: readonly string[],
  print: (line: string) => void = console.log,
): Promise<void> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      roles: { type: 'string' },
      desk: { type: 'string' },
      account: { type: 'string' },
      fund: { type: 'boolean' },
      url: { type: 'string' },
      'rate-matching': { type: 'string' },
      'rate-non-matching': { type: 'string' },
    },
  });
  const config = loadConfig();
  const url = values.url ?? `http://127.0.0.1:${config.port}`;
  const store = openKeyStore(config);
  const now = Date.now();
  const [command, ...args] = positionals;
  const out = (value: unknown) => print(JSON.stringify(value, null, 2));
  try {
    switch (command) {
      case 'user:create':
        if (!args[0]) throw new Error('user:create <name>');
        out(store.createUser(args[0], now));
        return;
      case 'users':
        out(
          store
            .listUsers()
            .map((user) => ({ ...user, accounts: store.accountsOf(user.id).map((a) => a.id) })),
        );
        return;
      case 'account:create': {
        const userId = integer(args[0], 'userId');
        const account = store.createAccount(userId, args[1] ?? 'account', now);
        out(account);
        const token = loadAdminToken(config.dataDir);
        try {
          await admin(url, token, '/admin/accounts/provision', {
            accountId: account.id,
            deposits: values.fund ? DEMO_DEPOSITS : {},
          });
          print(`opened account ${account.id} in the running server${values.fund ? ' with test funds' : ''}`);
        } catch (error) {
          print(`account stored; the server will open it at its next start (${(error as Error).message})`);
        }
        return;
      }
      case 'key:create': {
        const userId = integer(args[0], 'userId');
        const roles = (values.roles ?? 'trade').split(',').map((role) => role.trim()) as Role[];
        for (const role of roles) if (!ROLES.includes(role)) throw new Error(`unknown role ${role}`);
        const key = store.createApiKey(
          {
            userId,
            roles,
            deskName: values.desk ?? null,
            ...(values.account ? { defaultAccountId: integer(values.account, 'account') } : {}),
            rateLimits: rateOverrides(values['rate-matching'], values['rate-non-matching']),
          },
          now,
        );
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
        if (!args[0]) throw new Error('key:disable <apiKey>');
        out({ disabled: store.disableKey(args[0]) });
        return;
      case 'deposit': {
        const accountId = integer(args[0], 'accountId');
        if (!args[1] || !args[2]) throw new Error('deposit <accountId> <currency> <amount>');
        out(
          await admin(url, loadAdminToken(config.dataDir), '/admin/deposit', {
            accountId,
            currency: args[1],
            amount: args[2],
          }),
        );
        return;
      }
      default:
        print(USAGE);
    }
  } finally {
    store.close();
  }
}

if (process.argv[1]?.endsWith('admin.ts')) {
  runCli(process.argv.slice(2)).catch((error: unknown) => {
    console.error((error as Error).message);
    process.exitCode = 1;
  });
}
