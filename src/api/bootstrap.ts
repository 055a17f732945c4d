/**
 * Demo bootstrap and account provisioning.
 *
 * On first start (an empty key store) `bootstrapDemo` creates: a taker, two makers (desks MAKER1,
 * MAKER2) and one user with two accounts; opens and funds every account in the engine through
 * the command port (CreateAccount, Deposit); and writes `DATA_DIR/credentials.json` (mode 0600)
 * as an array of `{apiKey, apiSecret, userId, accountIds, roles, deskName}`. Later starts do
 * nothing and return null. A bootstrap cut off by a crash (its `bootstrap.pending` marker still
 * there) is finished at the next start: what it created is reused, nothing is funded twice.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { currencyDecimals } from '../core/types.ts';
import { parseDecimal, toSafeInteger, toScale } from '../domain/decimal.ts';
import { VenueError } from '../domain/errors.ts';
import { fsyncPath, writeFileDurably } from '../store/durable-file.ts';
import type { KeyStore, Role } from './auth/key-store.ts';
import type { CommandPort, ReadPort } from './ports.ts';

export interface DemoCredential {
  readonly apiKey: string;
  readonly apiSecret: string;
  readonly userId: number;
  readonly accountIds: number[];
  readonly roles: Role[];
  readonly deskName: string | null;
}

/** Test funds per new demo account, as decimal strings. */
export const DEMO_DEPOSITS: Readonly<Record<string, string>> = {
  BTC: '100',
  ETH: '1000',
  USDC: '10000000',
  USDT: '10000000',
};

interface DemoUser {
  readonly name: string;
  readonly accounts: number;
  readonly roles: Role[];
  readonly deskName: string | null;
}

const DEMO_USERS: readonly DemoUser[] = [
  { name: 'taker', accounts: 1, roles: ['trade', 'taker'], deskName: null },
  { name: 'maker1', accounts: 1, roles: ['trade', 'maker'], deskName: 'MAKER1' },
  { name: 'maker2', accounts: 1, roles: ['trade', 'maker'], deskName: 'MAKER2' },
  { name: 'multi', accounts: 2, roles: ['trade', 'taker'], deskName: null },
];

/** Minor units of a decimal amount of `currency`. */
export function toMinorUnits(amount: string, currency: string, field = 'amount'): number {
  const value = toScale(parseDecimal(amount, field), currencyDecimals(currency), field);
  if (value <= 0n) throw new VenueError('invalid_amount', `${field} must be positive`, { field });
  return toSafeInteger(value, field);
}

async function mustSucceed(
  commands: CommandPort,
  command: Parameters<CommandPort['submit']>[0],
): Promise<void> {
  const result = await commands.submit(command);
  if (!result.ok) throw new Error(`${command.type} refused: ${result.error.name} ${result.error.message}`);
}

/** Opens an account in the engine and deposits test funds into it. */
export async function provisionAccount(
  commands: CommandPort,
  accountId: number,
  userId: number,
  deposits: Readonly<Record<string, string>> = DEMO_DEPOSITS,
): Promise<void> {
  await mustSucceed(commands, { type: 'create_account', accountId, userId });
  for (const [currency, amount] of Object.entries(deposits)) {
    await mustSucceed(commands, {
      type: 'deposit',
      accountId,
      currency,
      amount: toMinorUnits(amount, currency),
    });
  }
}

export interface BootstrapOptions {
  readonly keyStore: KeyStore;
  readonly commands: CommandPort;
  readonly dataDir: string;
  readonly deposits?: Readonly<Record<string, string>>;
  /** The engine's accounts, to resume an interrupted bootstrap without funding twice. */
  readonly reads?: Pick<ReadPort, 'accountSummary'>;
}

/** Marks a bootstrap under way: present at a start, the last one was interrupted and resumes. */
const PENDING_FILE = 'bootstrap.pending';

export async function bootstrapDemo(options: BootstrapOptions): Promise<DemoCredential[] | null> {
  const { keyStore, commands, dataDir } = options;
  const pending = join(dataDir, PENDING_FILE);
  const resuming = existsSync(pending);
  if (!keyStore.isEmpty() && !resuming) return null;
  mkdirSync(dataDir, { recursive: true });
  // Durable before the first key-store write: a crash from here on resumes at the next start.
  if (!resuming) writeFileDurably(pending, '');
  const now = commands.now();
  const credentials: DemoCredential[] = [];
  for (const spec of DEMO_USERS) {
    const user =
      keyStore.listUsers().find((u) => u.name === spec.name) ?? keyStore.createUser(spec.name, now);
    const accounts = keyStore.accountsOf(user.id);
    for (let i = accounts.length; i < spec.accounts; i++) {
      accounts.push(keyStore.createAccount(user.id, `${spec.name}-${i + 1}`, now));
    }
    for (const account of accounts) {
      await provisionDemoAccount(options, account.id, user.id, resuming);
    }
    const existing = keyStore.listKeys(user.id)[0];
    const key =
      (existing && keyStore.findKey(existing.apiKey)) ??
      keyStore.createApiKey({ userId: user.id, roles: spec.roles, deskName: spec.deskName }, now);
    credentials.push({
      apiKey: key.record.apiKey,
      apiSecret: key.apiSecret,
      userId: user.id,
      accountIds: accounts.map((account) => account.id),
      roles: spec.roles,
      deskName: spec.deskName,
    });
  }
  writeFileDurably(join(dataDir, 'credentials.json'), `${JSON.stringify(credentials, null, 2)}\n`);
  rmSync(pending);
  fsyncPath(dataDir);
  return credentials;
}

/**
 * Opens and funds a demo account. When resuming an interrupted bootstrap, what the engine already
 * has is kept: an open account is not opened again, and a currency already funded is not funded
 * twice (nobody held a key to trade with it before the bootstrap finished).
 */
async function provisionDemoAccount(
  options: BootstrapOptions,
  accountId: number,
  userId: number,
  resuming: boolean,
): Promise<void> {
  const deposits = options.deposits ?? DEMO_DEPOSITS;
  const reads = options.reads;
  if (!resuming || reads === undefined) {
    await provisionAccount(options.commands, accountId, userId, deposits);
    return;
  }
  const currencies = Object.keys(deposits);
  if (reads.accountSummary(accountId, currencies[0] ?? 'BTC') === undefined) {
    await mustSucceed(options.commands, { type: 'create_account', accountId, userId });
  }
  for (const [currency, amount] of Object.entries(deposits)) {
    if ((reads.accountSummary(accountId, currency)?.balance ?? 0) > 0) continue;
    await mustSucceed(options.commands, {
      type: 'deposit',
      accountId,
      currency,
      amount: toMinorUnits(amount, currency),
    });
  }
}
