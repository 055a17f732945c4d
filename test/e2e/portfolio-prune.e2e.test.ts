/**
 * A finished portfolio the core has pruned (7 days after it ended) still answers `info`, from the
 * read store: the real core and sequencer on a virtual clock, a real SQLite read store fed every
 * committed batch with the sub-machine projections (as the service feeds it), and the real
 * gateway with the flat portfolio routes reading that store (`portfolioArchive`), through the sdk.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ApiError } from '../../sdk/errors.ts';
import { HttpClient } from '../../sdk/http-client.ts';
import { SecretBox } from '../../src/api/auth/secret-box.ts';
import { SqliteKeyStore } from '../../src/api/auth/sqlite-key-store.ts';
import { bootstrapDemo, type DemoCredential } from '../../src/api/bootstrap.ts';
import { createGateway, type Gateway } from '../../src/api/gateway.ts';
import { PORTFOLIO_BASE_PATH, registerPortfolioRoutes } from '../../src/api/portfolios/routes.ts';
import { SystemClock } from '../../src/app/clock.ts';
import { type Config, type DeepPartial, loadConfig } from '../../src/app/config.ts';
import { ERROR_CATALOGUE } from '../../src/domain/errors.ts';
import { orderCommand } from '../../src/engine/testkit.ts';
import { portfolioArchive } from '../../src/store/read/portfolio-queries.ts';
import { SqliteReadDb } from '../../src/store/read/read-db.ts';
import { ReadStore } from '../../src/store/read/read-store.ts';
import { subMachineProjections } from '../../src/store/read/sub-projections.ts';
import { PERP, type PortfolioCore, startCore } from '../support/portfolio-harness.ts';

const HORIZON = 7 * 24 * 3_600_000;
const MAKER = 1;
const USER = 3;
const OTHER = 2;

let core: PortfolioCore;
let store: ReadStore;
let gateway: Gateway;
let keyStore: SqliteKeyStore;
let credentials: DemoCredential[];
let port: number;
let dataDir: string;

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'portfolio-prune-e2e-'));
  core = await startCore();
  store = await ReadStore.open({
    db: new SqliteReadDb(join(dataDir, 'read.sqlite')),
    projections: subMachineProjections(),
  });
  core.ports.onCommitted((batch) => store.push(batch));
  const config = loadConfig({
    env: {},
    overrides: { port: 0, host: '127.0.0.1', logLevel: 'silent', dataDir } as DeepPartial<Config>,
  });
  keyStore = new SqliteKeyStore(':memory:', SecretBox.fromText('33'.repeat(32)));
  credentials = (await bootstrapDemo({ keyStore, commands: core.ports, dataDir }))!;
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
    // The live layer without its recently-pruned reads, as after a restart: only the store answers.
    portfolios: () => ({ portfolio: (id: number) => core.algos.portfolio(id) }),
    archive: portfolioArchive(store),
  });
  ({ port } = await gateway.listen());
});

after(async () => {
  await gateway.close();
  keyStore.close();
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

function http(index: number): HttpClient {
  const credential = credentials[index]!;
  return new HttpClient({
    baseUrl: `http://127.0.0.1:${port}`,
    credentials: { apiKey: credential.apiKey, apiSecret: credential.apiSecret },
    now: () => core.ports.now(),
  });
}

const refusedWith = (name: keyof typeof ERROR_CATALOGUE) => (error: unknown) =>
  error instanceof ApiError && error.code === ERROR_CATALOGUE[name].code;

test('info of a pruned portfolio answers from the read store as it did from the core', async () => {
  const accountId = credentials[USER]!.accountIds[0]!;
  const makerAccount = credentials[MAKER]!.accountIds[0]!;
  await core.ports.submit(orderCommand(makerAccount, 'sell', 10, 120_000, { instrumentName: PERP }));
  const user = http(USER);
  const { portfolioId } = await user.flat<{ portfolioId: number }>('POST', `${PORTFOLIO_BASE_PATH}/submit`, {
    accountId,
    portfolioType: 'COMMON',
    strategy: 'Custom',
    legs: [
      {
        instrument: PERP,
        instrumentType: 'PERPETUAL',
        side: 1,
        quantity: '100',
        priceOptions: { priceType: 'LIMIT', price: 60000, priceIn: 'USD' },
      },
    ],
  });
  const info = () =>
    user.flat<Record<string, unknown>>('GET', `${PORTFOLIO_BASE_PATH}/info?portfolioId=${portfolioId}`);
  const before = await info();
  assert.equal(before.portfolioStatus, 'COMPLETED');
  const endedAt = before.endTimestamp as number;
  const row = async () => {
    const rows = await store.query<Record<string, unknown>>(
      'SELECT * FROM portfolios WHERE portfolio_id = ?',
      [portfolioId],
    );
    const { state, updated_seq: _seq, ...rest } = rows[0]!;
    return { state, rest };
  };
  const rowBefore = await row();
  assert.equal(rowBefore.state, null, 'no record stored while the core holds it');

  // One command 7 days after it ended prunes it from the core.
  core.clock.set(endedAt + HORIZON);
  await core.submitMachine({ type: 'timer' });
  assert.equal(core.algos.portfolio(portfolioId), undefined, 'pruned from the core');
  assert.equal(core.algos.snapshot().portfolios.length, 0);

  const rowAfter = await row();
  assert.equal(typeof rowAfter.state, 'string', 'the final record stored by the prune');
  assert.deepEqual(rowAfter.rest, rowBefore.rest, 'the rest of the row as the last event left it');
  assert.deepEqual(await info(), before, 'info answers alike, from the read store');
  await assert.rejects(
    user.flat('POST', `${PORTFOLIO_BASE_PATH}/cancel`, { portfolioId }),
    refusedWith('portfolio_not_active'),
    'a pruned portfolio is refused as a finished one',
  );
  await assert.rejects(
    http(OTHER).flat('GET', `${PORTFOLIO_BASE_PATH}/info?portfolioId=${portfolioId}`),
    refusedWith('portfolio_not_found'),
    "another user's key still cannot see it",
  );
  await assert.rejects(
    user.flat('GET', `${PORTFOLIO_BASE_PATH}/info?portfolioId=${portfolioId + 100}`),
    refusedWith('portfolio_not_found'),
  );
});
