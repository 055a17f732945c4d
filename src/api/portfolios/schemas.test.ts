import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { Instrument, type InstrumentSpec } from '../../domain/instrument.ts';
import { optionSpec, perpetualSpec } from '../../engine/testkit.ts';
import {
  CancelAllPortfoliosBody,
  CancelPortfolioBody,
  PortfolioInfoQuery,
  SubmitPortfolioBody,
} from './schemas.ts';
import { type PortfolioValidationContext, validatePortfolioBody } from './validate.ts';

const specs: InstrumentSpec[] = [perpetualSpec(), optionSpec()];
const instruments = new Map(specs.map((spec, i) => [spec.name, new Instrument(i, spec)]));
const context: PortfolioValidationContext = {
  accountIds: new Set([7, 8]),
  instrument: (name) => instruments.get(name),
  now: Date.UTC(2026, 0, 5, 12),
};

const optionLeg = (priceOptions: Record<string, unknown>) => ({
  instrument: 'BTC-27DEC26-70000-C',
  instrumentType: 'OPTION',
  side: 2,
  quantity: 1.5,
  priceOptions,
});
const perpLeg = (priceOptions: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  instrument: 'BTC-PERPETUAL',
  instrumentType: 'PERPETUAL',
  side: 1,
  quantity: '100',
  priceOptions,
  ...extra,
});

const accepted: Record<string, unknown> = {
  BALANCE: {
    accountId: 7,
    portfolioType: 'BALANCE',
    strategy: 'Straddle',
    balanceTrade: { parts: 3, eachLimitMs: 15_000, totalLimitMs: 0, totalEndAction: 2 },
    legs: [
      optionLeg({ priceType: 'LIMIT', price: '55', priceIn: 'IV' }),
      perpLeg({ priceType: 'DYNAMIC', price: '60000', priceIn: 'USD', dynamicPriceStrategy: 'MID' }),
    ],
    customizedNote: 'a note',
    sendToDummyAccountIds: [8],
  },
  TWAP: {
    accountId: 7,
    portfolioType: 'TWAP',
    twapTrade: { startTimestamp: null, durationSec: 60, frequencySec: 10 },
    legs: [
      perpLeg(
        { priceType: 'LIMIT', price: 60000, priceIn: 'USD' },
        { timeInForce: 1, postOnly: false, hedge: null, tradeMode: 2, positionSide: 3, forCcy: 'BTC' },
      ),
    ],
  },
  'TWAP at MARKET with nulls': {
    accountId: 7,
    portfolioType: 'TWAP',
    twapTrade: { durationSec: 60, frequencySec: 10 },
    legs: [perpLeg({ priceType: 'MARKET', price: null, priceIn: null, dynamicPriceStrategy: null })],
  },
  COMMON: {
    accountId: 7,
    portfolioType: 'COMMON',
    legs: [perpLeg({ priceType: 'LIMIT', price: 60000.5 })],
  },
  ICEBERG: {
    accountId: 7,
    portfolioType: 'ICEBERG',
    icebergTrade: { displayQuantity: '10', refreshQuantity: 20 },
    legs: [perpLeg({ priceType: 'LIMIT', price: '60000' })],
  },
};

describe('portfolio schemas describe what the handlers accept', () => {
  for (const [name, body] of Object.entries(accepted)) {
    test(`${name}: accepted by validate.ts and by the submit schema`, () => {
      validatePortfolioBody(body, context);
      assert.deepEqual(
        [...Value.Errors(SubmitPortfolioBody, body)].map((e) => e.path),
        [],
      );
    });
  }

  test('the spec type differences: BALANCE price is a string, TWAP price a number', () => {
    const balance = structuredClone(accepted.BALANCE) as { legs: { priceOptions: { price: unknown } }[] };
    balance.legs[0]!.priceOptions.price = 55;
    assert.equal(Value.Check(SubmitPortfolioBody, balance), false);
    assert.throws(() => validatePortfolioBody(balance, context), { errorName: 'invalid_params' });
    const twap = structuredClone(accepted.TWAP) as { legs: { priceOptions: { price: unknown } }[] };
    twap.legs[0]!.priceOptions.price = '60000';
    assert.equal(Value.Check(SubmitPortfolioBody, twap), false);
    assert.throws(() => validatePortfolioBody(twap, context), { errorName: 'invalid_params' });
  });

  test('customizedNote is at most 100 characters', () => {
    const body = { ...(accepted.COMMON as object), customizedNote: 'x'.repeat(101) };
    assert.equal(Value.Check(SubmitPortfolioBody, body), false);
    assert.throws(() => validatePortfolioBody(body, context), { errorName: 'invalid_params' });
  });

  test('the bounds validate.ts enforces are in the schema (and so in the OpenAPI document)', () => {
    interface Spoilable {
      strategy?: string;
      balanceTrade: { parts: number; eachLimitMs: number };
      twapTrade: { durationSec: number };
      legs: { priceOptions: { dynamicMs?: number } }[];
    }
    const cases: [string, (body: Spoilable) => void][] = [
      ['strategy', (b) => (b.strategy = 'x'.repeat(65))],
      ['parts', (b) => (b.balanceTrade.parts = 1001)],
      ['eachLimitMs', (b) => (b.balanceTrade.eachLimitMs = 31 * 86_400_000)],
      ['dynamicMs', (b) => (b.legs[1]!.priceOptions.dynamicMs = 99)],
    ];
    for (const [field, spoil] of cases) {
      const body = structuredClone(accepted.BALANCE) as unknown as Spoilable;
      spoil(body);
      assert.equal(Value.Check(SubmitPortfolioBody, body), false, field);
      assert.throws(() => validatePortfolioBody(body, context), { errorName: 'invalid_params' }, field);
    }
    const twap = structuredClone(accepted.TWAP) as unknown as Spoilable;
    twap.twapTrade.durationSec = 31 * 86_400;
    assert.equal(Value.Check(SubmitPortfolioBody, twap), false);
    assert.throws(() => validatePortfolioBody(twap, context), { errorName: 'invalid_params' });
  });

  test('cancel, cancel-all and info', () => {
    assert.ok(Value.Check(CancelPortfolioBody, { portfolioId: 5 }));
    assert.ok(Value.Check(CancelPortfolioBody, { portfolioId: 5, accountId: null }));
    assert.equal(Value.Check(CancelPortfolioBody, { accountId: 7 }), false);
    assert.ok(Value.Check(CancelAllPortfoliosBody, { accountId: 7, portfolioType: 'TWAP' }));
    assert.equal(Value.Check(CancelAllPortfoliosBody, { accountId: 7, portfolioType: 'OTHER' }), false);
    assert.ok(Value.Check(PortfolioInfoQuery, { portfolioId: '12' }));
    assert.equal(Value.Check(PortfolioInfoQuery, {}), false);
  });
});
