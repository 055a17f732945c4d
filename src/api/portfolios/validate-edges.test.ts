/**
 * Portfolio body validation at its edges: the lot bound on parts holds when every leg is a hedge,
 * and a mirror may not be the submitting account.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { VenueError } from '../../domain/errors.ts';
import { validatePortfolioBody } from './validate.ts';
import { context } from './validate-testkit.ts';

const perpLeg = (overrides: Record<string, unknown> = {}) => ({
  instrument: 'BTC-PERPETUAL',
  instrumentType: 'PERPETUAL',
  side: 1,
  quantity: '100',
  priceOptions: { priceType: 'LIMIT', price: '60000', priceIn: 'USD' },
  ...overrides,
});
const balanceBody = (overrides: Record<string, unknown> = {}) => ({
  accountId: 7,
  portfolioType: 'BALANCE',
  balanceTrade: { parts: 3, eachLimitMs: 15_000, totalLimitMs: 0, totalEndAction: 2 },
  legs: [perpLeg()],
  ...overrides,
});

function refusal(body: unknown): { name: string; field: unknown; message: string } {
  try {
    validatePortfolioBody(body, context);
  } catch (error) {
    assert.ok(error instanceof VenueError, String(error));
    return { name: error.errorName, field: error.data?.field, message: error.message };
  }
  assert.fail('expected a refusal');
}

describe('portfolio body validation: edges', () => {
  test('BALANCE parts: when every leg is a hedge leg, each still bounds parts', () => {
    // 20 USD of the perpetual is 2 lots: 3 parts cannot each trade a lot.
    const body = balanceBody({ legs: [perpLeg({ quantity: '20', hedge: true })] });
    const got = refusal(body);
    assert.equal(got.name, 'invalid_params', got.message);
    assert.equal(got.field, 'balanceTrade.parts', got.message);
  });
  test("sendToDummyAccountIds naming the portfolio's own account is refused naming that entry", () => {
    // Mirroring onto the submitting account would trade the same account twice.
    const got = refusal(balanceBody({ sendToDummyAccountIds: [8, 7] }));
    assert.equal(got.name, 'invalid_portfolio', got.message);
    assert.equal(got.field, 'sendToDummyAccountIds[1]', got.message);
    assert.deepEqual(
      validatePortfolioBody(balanceBody({ sendToDummyAccountIds: [8, 9] }), context).mirrorAccountIds,
      [8, 9],
    );
  });
});
