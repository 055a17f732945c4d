/**
 * Operator endpoints for the CLI, on the same port: provision an account in the engine and
 * deposit test funds (a deposit may carry a `depositId`, so that a retry credits at most once).
 * Authenticated by the admin token in `DATA_DIR/admin.token` (created once, mode 0600), so only
 * someone who can read the data directory can use them. A wrong token costs the client address a
 * non-matching credit, as failed API authentication does (429 once it has none). Answers use the flat
 * `{succ, code, message, value}` shape.
 *
 * Also here: `provisionMissingAccounts`, run at start, which opens in the engine every account the
 * key store knows but the engine does not (e.g. created by the CLI while the server was down).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { DEPOSIT_ID_MAX_LENGTH, DEPOSIT_ID_PATTERN } from '../core/commands.ts';
import { VenueError } from '../domain/errors.ts';
import { writeFileDurably } from '../store/durable-file.ts';
import type { KeyStore } from './auth/key-store.ts';
import { DEMO_DEPOSITS, provisionAccount, toMinorUnits } from './bootstrap.ts';
import type { Gateway } from './gateway.ts';
import { flatAnswer, flatFailure } from './http-routes.ts';
import type { CommandPort, ReadPort } from './ports.ts';
import { compileValidator } from './validation.ts';
import { mapError } from './wire-errors.ts';

export const ADMIN_TOKEN_HEADER = 'x-admin-token';

/** Shorter admin tokens are refused at start: an empty one matched a request that sent none. */
export const MIN_ADMIN_TOKEN_LENGTH = 16;

/** Reads (or creates, mode 0600) the admin token under dataDir. */
export function loadAdminToken(dataDir: string): string {
  const path = join(dataDir, 'admin.token');
  if (!existsSync(path)) {
    mkdirSync(dataDir, { recursive: true });
    writeFileDurably(path, randomBytes(24).toString('base64url'), { exclusive: true });
  }
  const token = readFileSync(path, 'utf8').trim();
  if (token.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw new Error(
      `the admin token in ${path} is shorter than ${MIN_ADMIN_TOKEN_LENGTH} characters: delete the file to have a new one made, or write a longer one`,
    );
  }
  return token;
}

const ProvisionBody = Type.Object(
  {
    accountId: Type.Integer({ minimum: 1 }),
    deposits: Type.Optional(Type.Record(Type.String(), Type.String())),
  },
  { additionalProperties: false },
);
const DepositBody = Type.Object(
  {
    accountId: Type.Integer({ minimum: 1 }),
    currency: Type.String({ minLength: 1, maxLength: 16 }),
    amount: Type.String({ minLength: 1, maxLength: 40 }),
    /**
     * Recommended: a retry with the same id (after a dropped connection) credits at most once.
     * The same id with the same account, currency and amount answers as the first call did;
     * with anything else it is refused naming depositId. The CLI sends one per invocation.
     */
    depositId: Type.Optional(
      Type.String({ minLength: 1, maxLength: DEPOSIT_ID_MAX_LENGTH, pattern: DEPOSIT_ID_PATTERN }),
    ),
  },
  { additionalProperties: false },
);

export interface AdminDeps {
  readonly commands: CommandPort;
  /** The currencies instruments are filed under: a deposit names one of them (or a test-fund one). */
  readonly reads: Pick<ReadPort, 'currencies' | 'accountSummary'>;
  readonly keyStore: KeyStore;
  readonly adminToken: string;
}

export function registerAdminRoutes(gateway: Gateway, deps: AdminDeps): void {
  if (deps.adminToken.length < MIN_ADMIN_TOKEN_LENGTH) throw new Error('the admin token is too short');
  const expected = Buffer.from(deps.adminToken);
  // As get_account_summary: a balance in a currency the venue does not hold would be a typo no
  // API call can show. Gives the currency upper-cased.
  const heldCurrency = (raw: string, field: string): string => {
    const currency = raw.toUpperCase();
    const held = [...new Set([...deps.reads.currencies(), ...Object.keys(DEMO_DEPOSITS)])].sort();
    if (!held.includes(currency)) {
      throw new VenueError('invalid_params', `unknown currency ${raw}; the venue holds ${held.join(', ')}`, {
        field,
      });
    }
    return currency;
  };
  const route = <T>(
    url: string,
    schema: Parameters<typeof compileValidator>[0],
    run: (body: T) => Promise<unknown>,
  ) => {
    const validate = compileValidator(schema, 'body');
    gateway.fastify.post(url, async (request, reply) => {
      const presented = Buffer.from(String(request.headers[ADMIN_TOKEN_HEADER] ?? ''));
      reply.header('content-type', 'application/json; charset=utf-8');
      try {
        if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) {
          // Charged to the client address as failed API authentication is: 429 once it has no credit.
          throw gateway.chargeAddressRefusal(
            request,
            new VenueError('unauthorized', 'admin token required', { field: ADMIN_TOKEN_HEADER }),
          );
        }
        let body: unknown;
        try {
          body = JSON.parse(typeof request.body === 'string' ? request.body : '');
        } catch {
          throw new VenueError('parse_error', undefined, { field: 'body' });
        }
        validate(body);
        return reply.code(200).send(flatAnswer(await run(body as T)));
      } catch (error) {
        // As the flat routes answer: `data` names the field at fault; an unexpected error is logged.
        const mapped = mapError(error, (unexpected) =>
          gateway.fastify.log.error(
            { err: unexpected, route: url },
            'unexpected error answered as internal_error',
          ),
        );
        return reply.code(mapped.httpStatus).send(flatFailure(mapped.error));
      }
    });
  };
  route<{ accountId: number; deposits?: Record<string, string> }>(
    '/admin/accounts/provision',
    ProvisionBody,
    async (body) => {
      const account = deps.keyStore.getAccount(body.accountId);
      if (account === undefined) throw new VenueError('account_not_found', undefined, { field: 'accountId' });
      // Every deposit is checked before the account is opened: a refusal changes nothing.
      const deposits: Record<string, string> = {};
      for (const [raw, amount] of Object.entries(body.deposits ?? {})) {
        const field = `deposits.${raw}`;
        const currency = heldCurrency(raw, field);
        if (deposits[currency] !== undefined)
          throw new VenueError('invalid_params', `${currency} is named twice`, { field });
        toMinorUnits(amount, currency, field);
        deposits[currency] = amount;
      }
      if (deps.reads.accountSummary(account.id, 'BTC') !== undefined) {
        throw new VenueError(
          'invalid_params',
          `account ${account.id} is already open; fund it with /admin/deposit`,
          { field: 'accountId' },
        );
      }
      await provisionAccount(deps.commands, account.id, account.userId, deposits);
      return { accountId: account.id };
    },
  );
  route<{ accountId: number; currency: string; amount: string; depositId?: string }>(
    '/admin/deposit',
    DepositBody,
    async (body) => {
      const currency = heldCurrency(body.currency, 'currency');
      // The engine keeps the ids (journaled, snapshotted): a retry is answered as the first call,
      // whether that one's answer was lost or not, across restarts too.
      const result = await deps.commands.submit({
        type: 'deposit',
        accountId: body.accountId,
        currency,
        amount: toMinorUnits(body.amount, currency),
        ...(body.depositId === undefined ? {} : { depositId: body.depositId }),
      });
      if (!result.ok) throw new VenueError(result.error.name, result.error.message, result.error.data);
      return {
        accountId: body.accountId,
        currency,
        amount: body.amount,
        ...(body.depositId === undefined ? {} : { depositId: body.depositId }),
      };
    },
  );
}

/** Opens in the engine every key-store account it does not know yet (no deposits). */
export async function provisionMissingAccounts(
  keyStore: KeyStore,
  commands: CommandPort,
  reads: ReadPort,
): Promise<number[]> {
  const opened: number[] = [];
  for (const user of keyStore.listUsers()) {
    for (const account of keyStore.accountsOf(user.id)) {
      if (reads.accountSummary(account.id, 'BTC') !== undefined) continue;
      await provisionAccount(commands, account.id, user.id, {});
      opened.push(account.id);
    }
  }
  return opened;
}
