/**
 * The `trade` role on the flat portfolio routes (docs/decisions.md, "Roles"), through the real
 * gateway and core: a key of the user without `trade` is refused `forbidden` on submit, cancel and
 * cancel-all, in the flat error shape, and nothing is submitted or cancelled; `info` still answers.
 * A key with `trade` of another user cannot cancel-all this user's account: `account_not_owned`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ApiError } from '../../../sdk/errors.ts';
import { HttpClient } from '../../../sdk/http-client.ts';
import { PERP, type PortfolioCore, startCore } from '../../../test/support/portfolio-harness.ts';
import { SystemClock } from '../../app/clock.ts';
import { type Config, type DeepPartial, loadConfig } from '../../app/config.ts';
import { ERROR_CATALOGUE } from '../../domain/errors.ts';
import type { Role } from '../auth/key-store.ts';
import { SecretBox } from '../auth/secret-box.ts';
import { SqliteKeyStore } from '../auth/sqlite-key-store.ts';
import { bootstrapDemo, type DemoCredential } from '../bootstrap.ts';
import { createGateway, type Gateway } from '../gateway.ts';
import { PORTFOLIO_BASE_PATH, registerPortfolioRoutes } from './routes.ts';

/** The demo user with two accounts (trade and taker). */
const MULTI = 3;

describe('portfolio routes need the trade role', () => {
  let core: PortfolioCore;
  let gateway: Gateway;
  let keyStore: SqliteKeyStore;
  let dataDir: string;
  let user: DemoCredential;
  /** The demo taker: another user, whose key has `trade`. */
  let stranger: DemoCredential;
  let baseUrl: string;
  /** A client of a new key of the demo user with `roles`. */
  let clientWith: (roles: Role[]) => HttpClient;

  before(async () => {
    core = await startCore();
    dataDir = mkdtempSync(join(tmpdir(), 'portfolio-roles-'));
    const config = loadConfig({
      env: {},
      overrides: { port: 0, host: '127.0.0.1', logLevel: 'silent', dataDir } as DeepPartial<Config>,
    });
    keyStore = new SqliteKeyStore(':memory:', SecretBox.fromText('33'.repeat(32)));
    const demo = (await bootstrapDemo({ keyStore, commands: core.ports, dataDir }))!;
    user = demo[MULTI]!;
    stranger = demo[0]!;
    gateway = createGateway({
      config,
      commands: core.ports,
      reads: core.ports.reads,
      history: core.ports.history,
      events: core.ports,
      keyStore,
      clock: new SystemClock(),
    });
    registerPortfolioRoutes(gateway, {
      submitMachine: (command) => core.submitMachine(command),
      now: () => core.ports.now(),
      instrument: (name) => core.ports.reads.instrument(name),
      portfolios: () => core.algos,
    });
    const { port } = await gateway.listen();
    baseUrl = `http://127.0.0.1:${port}`;
    clientWith = (roles) => {
      const { record, apiSecret } = keyStore.createApiKey({ userId: user.userId, roles }, 0);
      return new HttpClient({
        baseUrl,
        credentials: { apiKey: record.apiKey, apiSecret },
        now: () => core.ports.now(),
      });
    };
  });
  after(async () => {
    await gateway.close();
    keyStore.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const twap = (accountId: number) => ({
    accountId,
    portfolioType: 'TWAP' as const,
    twapTrade: { durationSec: 60, frequencySec: 10 },
    legs: [
      {
        instrument: PERP,
        instrumentType: 'PERPETUAL' as const,
        side: 1 as const,
        quantity: '100',
        priceOptions: { priceType: 'LIMIT' as const, price: 59000, priceIn: 'USD' },
      },
    ],
  });

  /** The raw flat answer of a signed call, for the exact error shape. */
  const raw = (client: HttpClient, path: string, body: unknown) =>
    client.send(client.sign('POST', `${PORTFOLIO_BASE_PATH}/${path}`, JSON.stringify(body)));

  const forbidden = (path: string) => ({
    succ: false,
    code: ERROR_CATALOGUE.forbidden.code,
    message: `POST ${PORTFOLIO_BASE_PATH}/${path} needs role trade`,
    value: null,
    data: { field: 'path', roles: ['trade'] },
  });

  test('a key without trade: submit, cancel and cancel-all are refused and change nothing; info answers', async () => {
    const [accountId, otherAccount] = user.accountIds as [number, number];
    const trader = clientWith(['trade', 'taker']);
    const { portfolioId } = await trader.submitPortfolio(twap(accountId));
    const other = await trader.submitPortfolio(twap(otherAccount));
    const before = core.algos.portfoliosOf(accountId).length;

    const taker = clientWith(['taker']);
    const submitted = await raw(taker, 'submit', twap(accountId));
    assert.equal(submitted.status, 200);
    assert.deepEqual(submitted.body, forbidden('submit'));
    assert.equal(core.algos.portfoliosOf(accountId).length, before, 'nothing submitted');

    const cancelled = await raw(taker, 'cancel', { portfolioId });
    assert.equal(cancelled.status, 200);
    assert.deepEqual(cancelled.body, forbidden('cancel'));
    const all = await raw(taker, 'cancel-all', { accountId: otherAccount });
    assert.equal(all.status, 200);
    assert.deepEqual(all.body, forbidden('cancel-all'));

    // The sdk's typed calls see the same refusal.
    await assert.rejects(taker.cancelPortfolio({ portfolioId }), (error: unknown) => {
      assert.ok(error instanceof ApiError);
      assert.equal(error.errorName, 'forbidden');
      assert.deepEqual(error.data, { field: 'path', roles: ['trade'] });
      return true;
    });

    // info is a read: any key of the user. Both portfolios are still working.
    assert.equal((await taker.portfolioInfo(portfolioId)).portfolioStatus, 'WORKING');
    assert.equal((await taker.portfolioInfo(other.portfolioId)).portfolioStatus, 'WORKING');
    assert.equal(core.algos.portfolio(portfolioId)!.status, 'WORKING');
    assert.equal(core.algos.portfolio(other.portfolioId)!.status, 'WORKING');

    // A key with trade may cancel them.
    await trader.cancelPortfolio({ portfolioId });
    assert.deepEqual(await trader.cancelAllPortfolios({ accountId: otherAccount }), {
      portfolioIds: [other.portfolioId],
    });
  });

  test("another user's key with trade: cancel-all of this user's account is account_not_owned and cancels nothing", async () => {
    const [accountId] = user.accountIds as [number, number];
    const trader = clientWith(['trade', 'taker']);
    const { portfolioId } = await trader.submitPortfolio(twap(accountId));
    assert.ok(
      !stranger.accountIds.includes(accountId) && stranger.roles.includes('trade'),
      'the stranger is another user with the trade role',
    );
    const strangerClient = new HttpClient({
      baseUrl,
      credentials: { apiKey: stranger.apiKey, apiSecret: stranger.apiSecret },
      now: () => core.ports.now(),
    });
    for (const body of [{ accountId }, { accountId, portfolioType: 'TWAP' as const }]) {
      await assert.rejects(strangerClient.cancelAllPortfolios(body), (error: unknown) => {
        assert.ok(error instanceof ApiError, `an ApiError, not ${String(error)}`);
        assert.equal(error.errorName, 'account_not_owned');
        assert.equal((error.data as { field?: unknown }).field, 'accountId');
        return true;
      });
    }
    assert.equal((await trader.portfolioInfo(portfolioId)).portfolioStatus, 'WORKING');
    assert.equal(core.algos.portfolio(portfolioId)!.status, 'WORKING');
    // Its own user may.
    assert.deepEqual(await trader.cancelAllPortfolios({ accountId }), { portfolioIds: [portfolioId] });
  });
});
