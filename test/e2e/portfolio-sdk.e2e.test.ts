/**
 * The sdk's typed portfolio calls (`submitPortfolio`, `portfolioInfo`, `cancelPortfolio`,
 * `cancelAllPortfolios`) through the real gateway, engine and algorithm layer on a virtual clock:
 * the same routes as `flat`, with bodies and answers typed from the server's schemas. The
 * compile-time refusals of misspelled bodies are in sdk/types.test.ts.
 */

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiError } from '../../sdk/errors.ts';
import { PORTFOLIO_PATH } from '../../sdk/http-client.ts';
import type { PortfolioInfo, SubmitPortfolioBody } from '../../sdk/types.ts';
import { PORTFOLIO_BASE_PATH } from '../../src/api/portfolios/routes.ts';
import { ERROR_CATALOGUE } from '../../src/domain/errors.ts';
import { orderCommand } from '../../src/engine/testkit.ts';
import {
  PERP,
  type PortfolioCore,
  type PortfolioHarness,
  restingBalance,
  startCore,
  startPortfolioHarness,
} from '../support/portfolio-harness.ts';

const MAKER = 1;
const MULTI = 3;

describe('the typed portfolio calls of the sdk', () => {
  let harness: PortfolioHarness;
  let core: PortfolioCore;

  before(async () => {
    core = await startCore();
    harness = await startPortfolioHarness(core);
  });
  after(() => harness.close());

  test('the sdk names the service’s route prefix', () => {
    assert.equal(PORTFOLIO_PATH, PORTFOLIO_BASE_PATH);
  });

  test('TWAP: submitPortfolio, portfolioInfo, cancelPortfolio', async () => {
    const accountId = harness.credentials[MULTI]!.accountIds[0]!;
    const makerAccount = harness.credentials[MAKER]!.accountIds[0]!;
    await core.ports.submit(orderCommand(makerAccount, 'sell', 5, 120_000, { instrumentName: PERP }));
    const http = harness.http(MULTI);
    const body: SubmitPortfolioBody = {
      accountId,
      portfolioType: 'TWAP',
      strategy: 'Custom',
      twapTrade: { startTimestamp: null, durationSec: 10, frequencySec: 2 },
      legs: [
        {
          instrument: PERP,
          instrumentType: 'PERPETUAL',
          side: 1,
          quantity: '1000',
          priceOptions: { priceType: 'LIMIT', price: 60000, priceIn: 'USD' },
        },
      ],
    };
    const { portfolioId } = await http.submitPortfolio(body);
    assert.equal(typeof portfolioId, 'number');

    let info: PortfolioInfo = await http.portfolioInfo(portfolioId);
    assert.equal(info.portfolioId, portfolioId);
    assert.equal(info.accountId, accountId);
    assert.equal(info.portfolioType, 'TWAP');
    assert.equal(info.portfolioStatus, 'WORKING');
    assert.equal(info.twapTrade?.durationSec, 10);
    assert.equal(info.legs[0]!.instrument, PERP);
    assert.equal(info.legs[0]!.quantity, '1000');

    await assert.rejects(
      harness.http(0).portfolioInfo(portfolioId),
      (error: unknown) =>
        error instanceof ApiError && error.code === ERROR_CATALOGUE.portfolio_not_found.code,
    );

    assert.equal(await http.cancelPortfolio({ portfolioId, accountId }), undefined);
    info = await http.portfolioInfo(portfolioId);
    assert.equal(info.portfolioStatus, 'CANCELLED');
  });

  test('BALANCE: cancelAllPortfolios answers the ids it cancelled', async () => {
    const accountId = harness.credentials[MULTI]!.accountIds[0]!;
    const http = harness.http(MULTI);
    const balance = restingBalance(accountId);
    const a = await http.submitPortfolio(balance);
    const b = await http.submitPortfolio(balance);
    const { portfolioIds } = await http.cancelAllPortfolios({ accountId, portfolioType: 'BALANCE' });
    assert.deepEqual(portfolioIds, [a.portfolioId, b.portfolioId]);
    assert.equal((await http.portfolioInfo(a.portfolioId)).portfolioStatus, 'CANCELLED');
  });

  test('a refusal of the service comes back as an ApiError with its field', async () => {
    const accountId = harness.credentials[MULTI]!.accountIds[0]!;
    await assert.rejects(
      harness.http(MULTI).submitPortfolio({
        accountId,
        portfolioType: 'COMMON',
        legs: [
          {
            instrument: 'NOPE-PERPETUAL',
            instrumentType: 'PERPETUAL',
            side: 2,
            quantity: '10',
            priceOptions: { priceType: 'MARKET' },
          },
        ],
      }),
      (error: unknown) => error instanceof ApiError && typeof error.data?.field === 'string',
    );
  });
});
