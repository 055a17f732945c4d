import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { longerThan } from '../../core/types.ts';
import { VenueError } from '../../domain/errors.ts';
import { spotSpec } from '../../engine/testkit.ts';
import {
  MAX_BALANCE_PARTS,
  MAX_TWAP_SLICES,
  MIN_DYNAMIC_MS,
  PORTFOLIO_HORIZON_MS,
  validatePortfolioBody,
} from './validate.ts';
import { context, instruments, NOW } from './validate-testkit.ts';

const perpLeg = (overrides: Record<string, unknown> = {}) => ({
  instrument: 'BTC-PERPETUAL',
  instrumentType: 'PERPETUAL',
  side: 1,
  quantity: '100',
  priceOptions: { priceType: 'LIMIT', price: '60000', priceIn: 'USD' },
  ...overrides,
});
const optionLeg = (overrides: Record<string, unknown> = {}) => ({
  instrument: 'BTC-27DEC26-70000-C',
  instrumentType: 'OPTION',
  side: 2,
  quantity: 1.5,
  priceOptions: { priceType: 'LIMIT', price: '55', priceIn: 'IV' },
  ...overrides,
});
const balanceBody = (overrides: Record<string, unknown> = {}) => ({
  accountId: 7,
  portfolioType: 'BALANCE',
  balanceTrade: { parts: 3, eachLimitMs: 15_000, totalLimitMs: 0, totalEndAction: 2 },
  legs: [optionLeg()],
  ...overrides,
});
const twapBody = (overrides: Record<string, unknown> = {}) => ({
  accountId: 7,
  portfolioType: 'TWAP',
  twapTrade: { durationSec: 60, frequencySec: 10 },
  legs: [perpLeg({ priceOptions: { priceType: 'LIMIT', price: 60000, priceIn: 'USD' } })],
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

function expectRefusal(body: unknown, name: string, field: string): void {
  const got = refusal(body);
  assert.equal(got.field, field, got.message);
  assert.equal(got.name, name, got.message);
  assert.ok(
    got.message.includes(field.split('.')[0]!.replace(/\[.*$/, '')),
    `message names the field: ${got.message}`,
  );
}

describe('portfolio body validation', () => {
  test('a valid BALANCE body becomes a spec in lots with resolved flags', () => {
    const spec = validatePortfolioBody(
      balanceBody({ legs: [optionLeg({ priority: true }), perpLeg()] }),
      context,
    );
    assert.equal(spec.portfolioType, 'BALANCE');
    assert.equal(spec.legs[0]!.amount, 15);
    assert.equal(spec.legs[0]!.side, 'sell');
    assert.equal(spec.legs[1]!.hedge, true, 'non-option leg of a mixed portfolio becomes a hedge');
    assert.deepEqual(spec.balance, {
      parts: 3,
      eachLimitMs: 15_000,
      totalLimitMs: 0,
      totalEndAction: 'FILL_BY_MARKET',
    });
  });
  test('a valid TWAP body derives forCcy and keeps the start', () => {
    const spec = validatePortfolioBody(
      twapBody({ twapTrade: { startTimestamp: NOW + 1000, durationSec: 60, frequencySec: 10 } }),
      context,
    );
    assert.equal(spec.legs[0]!.forCcy, 'BTC');
    assert.deepEqual(spec.twap, { startTimestamp: NOW + 1000, durationMs: 60_000, frequencyMs: 10_000 });
  });
  test('a TWAP of option and perpetual legs marks no hedge (the default is false; only BALANCE marks one)', () => {
    const option = optionLeg({ priceOptions: { priceType: 'LIMIT', price: 0.05, priceIn: 'BTC' } });
    const spec = validatePortfolioBody(twapBody({ legs: [option, twapBody().legs[0]] }), context);
    assert.deepEqual(
      spec.legs.map((leg) => leg.hedge),
      [false, false],
    );
  });
  test('reduceOnly on a spot leg is refused, as placing refuses it (the leg would fail at its first child)', () => {
    const spot = instruments.get(spotSpec().name)!;
    const leg = perpLeg({
      instrument: spot.spec.name,
      instrumentType: 'SPOT',
      reduceOnly: true,
      priceOptions: { priceType: 'LIMIT', price: 60000, priceIn: 'USD' },
    });
    expectRefusal(twapBody({ legs: [leg] }), 'invalid_arguments', 'legs[0].reduceOnly');
    assert.doesNotThrow(() =>
      validatePortfolioBody(twapBody({ legs: [{ ...leg, reduceOnly: false }] }), context),
    );
  });
  test('a buy priced in its quote currency below one tick is refused; a sell, or another unit, is not', () => {
    const subTick = { priceType: 'LIMIT', price: 0.00005, priceIn: 'BTC' };
    const buy = optionLeg({ side: 1, priceOptions: subTick });
    expectRefusal(twapBody({ legs: [buy] }), 'invalid_params', 'legs[0].priceOptions.price');
    const common = {
      accountId: 7,
      portfolioType: 'COMMON',
      legs: [perpLeg({ priceOptions: { priceType: 'LIMIT', price: 0.2 } })],
    };
    expectRefusal(common, 'invalid_params', 'legs[0].priceOptions.price');
    assert.ok(
      validatePortfolioBody(twapBody({ legs: [optionLeg({ side: 2, priceOptions: subTick })] }), context),
    );
    const inUsd = { priceType: 'LIMIT', price: 1, priceIn: 'USD' };
    assert.ok(
      validatePortfolioBody(twapBody({ legs: [optionLeg({ side: 1, priceOptions: inUsd })] }), context),
    );
  });
  test("another algorithm's block is refused naming it, not ignored", () => {
    const twapTrade = { durationSec: 60, frequencySec: 10 };
    expectRefusal(balanceBody({ twapTrade }), 'invalid_portfolio', 'twapTrade');
    expectRefusal(twapBody({ icebergTrade: { displayQuantity: '10' } }), 'invalid_portfolio', 'icebergTrade');
    const common = { accountId: 7, portfolioType: 'COMMON', legs: [perpLeg()] };
    expectRefusal(
      { ...common, balanceTrade: balanceBody().balanceTrade },
      'invalid_portfolio',
      'balanceTrade',
    );
    assert.ok(validatePortfolioBody({ ...common, twapTrade: null }, context), 'null is as good as absent');
  });
  test('an ICEBERG display larger than its leg is refused: nothing would stay hidden', () => {
    const iceberg = (displayQuantity: string) => ({
      accountId: 7,
      portfolioType: 'ICEBERG',
      icebergTrade: { displayQuantity },
      legs: [perpLeg({ quantity: '100' })],
    });
    expectRefusal(iceberg('110'), 'invalid_portfolio', 'icebergTrade.displayQuantity');
    assert.equal(
      validatePortfolioBody(iceberg('100'), context).iceberg?.displayAmount,
      10,
      'the whole leg may show',
    );
  });
  test('at least one leg', () => expectRefusal(balanceBody({ legs: [] }), 'invalid_portfolio', 'legs'));
  test('legs is required', () => expectRefusal(balanceBody({ legs: undefined }), 'value_required', 'legs'));
  test('at most 20 legs and 20 price snapshots per leg', () => {
    assert.ok(
      validatePortfolioBody(balanceBody({ legs: Array.from({ length: 20 }, () => optionLeg()) }), context),
    );
    expectRefusal(
      balanceBody({ legs: Array.from({ length: 21 }, () => optionLeg()) }),
      'invalid_params',
      'legs',
    );
    const entry = { placePriceIn: 'USD', placePrice: 1, price: 1, priceIn: 'USD' };
    const withSnapshots = (n: number) =>
      balanceBody({ legs: [optionLeg({ priceSnapshot: Array.from({ length: n }, () => entry) })] });
    assert.ok(validatePortfolioBody(withSnapshots(20), context));
    expectRefusal(withSnapshots(21), 'invalid_params', 'legs[0].priceSnapshot');
  });
  test('customizedNote at most 100 characters', () => {
    assert.ok(validatePortfolioBody(balanceBody({ customizedNote: 'x'.repeat(100) }), context));
    expectRefusal(balanceBody({ customizedNote: 'x'.repeat(101) }), 'invalid_params', 'customizedNote');
  });
  test('strategy at most 64 characters', () => {
    assert.ok(validatePortfolioBody(balanceBody({ strategy: '😀'.repeat(64) }), context));
    expectRefusal(balanceBody({ strategy: 'x'.repeat(65) }), 'invalid_params', 'strategy');
  });
  test('customizedNote counts characters (code points), not UTF-16 units', () => {
    assert.ok(validatePortfolioBody(balanceBody({ customizedNote: '😀'.repeat(100) }), context));
    expectRefusal(balanceBody({ customizedNote: '😀'.repeat(101) }), 'invalid_params', 'customizedNote');
    assert.equal(longerThan('😀'.repeat(51), 100), false, '51 emoji are 102 UTF-16 units');
    assert.equal(longerThan(`${'é'.repeat(99)}😀`, 100), false);
    assert.equal(longerThan('x'.repeat(101), 100), true);
  });
  test('balanceTrade required for BALANCE', () =>
    expectRefusal(balanceBody({ balanceTrade: null }), 'invalid_portfolio', 'balanceTrade'));
  test('twapTrade required for TWAP', () =>
    expectRefusal(twapBody({ twapTrade: undefined }), 'invalid_portfolio', 'twapTrade'));
  test('icebergTrade required for ICEBERG', () =>
    expectRefusal(
      { accountId: 7, portfolioType: 'ICEBERG', legs: [perpLeg()] },
      'invalid_portfolio',
      'icebergTrade',
    ));
  test('balanceTrade fields are required and in range', () => {
    expectRefusal(
      balanceBody({ balanceTrade: { parts: 3, eachLimitMs: 1000, totalEndAction: 1 } }),
      'value_required',
      'balanceTrade.totalLimitMs',
    );
    expectRefusal(
      balanceBody({ balanceTrade: { parts: 0, eachLimitMs: 1000, totalLimitMs: 0, totalEndAction: 1 } }),
      'invalid_params',
      'balanceTrade.parts',
    );
    expectRefusal(
      balanceBody({ balanceTrade: { parts: 2, eachLimitMs: 1000, totalLimitMs: 0, totalEndAction: 3 } }),
      'invalid_params',
      'balanceTrade.totalEndAction',
    );
  });
  test('BALANCE parts: at most the lots of every non-hedge leg, and at most MAX_BALANCE_PARTS', () => {
    const parts = (n: number, legs: unknown[] = [optionLeg()]) =>
      balanceBody({ legs, balanceTrade: { parts: n, eachLimitMs: 1, totalLimitMs: 0, totalEndAction: 1 } });
    assert.ok(validatePortfolioBody(parts(15), context), 'the option leg is 15 lots');
    expectRefusal(parts(16), 'invalid_params', 'balanceTrade.parts');
    assert.match(refusal(parts(16)).message, /at most 15, the lots of legs\[0\]\.quantity/);
    expectRefusal(parts(1_000_000), 'invalid_params', 'balanceTrade.parts');
    const withHedge = [optionLeg(), perpLeg({ quantity: '10' })];
    assert.ok(validatePortfolioBody(parts(15, withHedge), context), 'a 1-lot hedge leg does not bound parts');
    const big = [perpLeg({ quantity: '100000' })];
    assert.ok(validatePortfolioBody(parts(MAX_BALANCE_PARTS, big), context));
    expectRefusal(parts(MAX_BALANCE_PARTS + 1, big), 'invalid_params', 'balanceTrade.parts');
  });
  test('BALANCE times lie within the horizon', () => {
    const trade = (balanceTrade: Record<string, unknown>) =>
      balanceBody({
        balanceTrade: { parts: 3, eachLimitMs: 1000, totalLimitMs: 0, totalEndAction: 1, ...balanceTrade },
      });
    const third = Math.floor(PORTFOLIO_HORIZON_MS / 3);
    assert.ok(validatePortfolioBody(trade({ eachLimitMs: third }), context));
    expectRefusal(trade({ eachLimitMs: third + 1 }), 'invalid_params', 'balanceTrade.eachLimitMs');
    assert.ok(
      validatePortfolioBody(trade({ eachLimitMs: third + 1, totalLimitMs: PORTFOLIO_HORIZON_MS }), context),
      'a total cap within the horizon bounds the run',
    );
    expectRefusal(
      trade({ eachLimitMs: Number.MAX_SAFE_INTEGER }),
      'invalid_params',
      'balanceTrade.eachLimitMs',
    );
    expectRefusal(
      trade({ totalLimitMs: PORTFOLIO_HORIZON_MS + 1 }),
      'invalid_params',
      'balanceTrade.totalLimitMs',
    );
  });
  test('TWAP duration, slices and start lie within bounds', () => {
    const trade = (twapTrade: Record<string, unknown>) =>
      twapBody({ twapTrade: { durationSec: 60, frequencySec: 10, ...twapTrade } });
    const horizonSec = PORTFOLIO_HORIZON_MS / 1000;
    expectRefusal(trade({ durationSec: Number.MAX_SAFE_INTEGER }), 'invalid_params', 'twapTrade.durationSec');
    expectRefusal(trade({ durationSec: horizonSec + 1 }), 'invalid_params', 'twapTrade.durationSec');
    const minFrequency = Math.ceil(horizonSec / MAX_TWAP_SLICES);
    assert.ok(validatePortfolioBody(trade({ durationSec: horizonSec, frequencySec: minFrequency }), context));
    expectRefusal(
      trade({ durationSec: horizonSec, frequencySec: minFrequency - 1 }),
      'invalid_params',
      'twapTrade.frequencySec',
    );
    assert.ok(validatePortfolioBody(trade({ startTimestamp: NOW + PORTFOLIO_HORIZON_MS }), context));
    expectRefusal(
      trade({ startTimestamp: NOW + PORTFOLIO_HORIZON_MS + 1 }),
      'invalid_params',
      'twapTrade.startTimestamp',
    );
    expectRefusal(
      trade({ startTimestamp: Number.MAX_SAFE_INTEGER }),
      'invalid_params',
      'twapTrade.startTimestamp',
    );
  });
  test('TWAP slices are counted rounding up: 20,000 s every 2 s is 10,000 slices, 20,001 s is 10,001', () => {
    assert.equal(MAX_TWAP_SLICES, 10_000);
    const trade = (durationSec: number) => twapBody({ twapTrade: { durationSec, frequencySec: 2 } });
    assert.deepEqual(validatePortfolioBody(trade(20_000), context).twap, {
      startTimestamp: null,
      durationMs: 20_000_000,
      frequencyMs: 2_000,
    });
    expectRefusal(trade(20_001), 'invalid_params', 'twapTrade.frequencySec');
  });
  test('dynamicMs is at least MIN_DYNAMIC_MS and within the horizon', () => {
    const dynamic = (dynamicMs: number) =>
      balanceBody({
        legs: [
          perpLeg({
            priceOptions: {
              priceType: 'DYNAMIC',
              price: '60000',
              priceIn: 'USD',
              dynamicPriceStrategy: 'MID',
              dynamicMs,
            },
          }),
        ],
      });
    assert.ok(validatePortfolioBody(dynamic(MIN_DYNAMIC_MS), context));
    expectRefusal(dynamic(MIN_DYNAMIC_MS - 1), 'invalid_params', 'legs[0].priceOptions.dynamicMs');
    expectRefusal(dynamic(Number.MAX_SAFE_INTEGER), 'invalid_params', 'legs[0].priceOptions.dynamicMs');
  });
  test('price and dynamicPriceOffset are kept as sent, for info to echo', () => {
    const spec = validatePortfolioBody(
      balanceBody({
        legs: [
          perpLeg({
            priceOptions: {
              priceType: 'DYNAMIC',
              price: '60000.50',
              priceIn: 'USD',
              dynamicPriceStrategy: 'BID',
              dynamicPriceOffset: '-1.0',
            },
          }),
        ],
      }),
      context,
    );
    const pricing = spec.legs[0]!.pricing;
    assert.equal(pricing.price, 60000.5);
    assert.equal(pricing.priceAsSent, '60000.50');
    assert.equal(pricing.dynamicOffset, -1);
    assert.equal(pricing.dynamicOffsetAsSent, '-1.0');
    const twap = validatePortfolioBody(twapBody(), context);
    assert.equal(twap.legs[0]!.pricing.priceAsSent, 60000);
  });
  test('at most one priority leg', () =>
    expectRefusal(
      balanceBody({ legs: [optionLeg({ priority: true }), optionLeg({ priority: true })] }),
      'invalid_portfolio',
      'legs[1].priority',
    ));
  test('a priority leg cannot be a hedge leg', () =>
    expectRefusal(
      balanceBody({ legs: [optionLeg({ priority: true, hedge: true })] }),
      'invalid_portfolio',
      'legs[0].priority',
    ));
  test('in mixed option + linear portfolios the non-option legs are hedges (so cannot be priority)', () =>
    expectRefusal(
      balanceBody({ legs: [optionLeg(), perpLeg({ priority: true })] }),
      'invalid_portfolio',
      'legs[1].priority',
    ));
  test('priority is for BALANCE only', () =>
    expectRefusal(
      twapBody({ legs: [perpLeg({ priority: true, priceOptions: { priceType: 'MARKET' } })] }),
      'invalid_portfolio',
      'legs[0].priority',
    ));
  test('TWAP legs share one forCcy, derived from the instrument when not sent', () => {
    expectRefusal(
      twapBody({
        legs: [
          perpLeg({ priceOptions: { priceType: 'MARKET' } }),
          perpLeg({ instrument: 'ETH-PERPETUAL', priceOptions: { priceType: 'MARKET' } }),
        ],
      }),
      'invalid_portfolio',
      'legs[1].forCcy',
    );
    expectRefusal(
      twapBody({
        legs: [
          perpLeg({ priceOptions: { priceType: 'MARKET' } }),
          perpLeg({ forCcy: 'ETH', priceOptions: { priceType: 'MARKET' } }),
        ],
      }),
      'invalid_params',
      'legs[1].forCcy',
    );
  });
  test('forCcy names a currency of its leg: base, quote or settlement', () => {
    for (const forCcy of ['XYZ', '', 'ETH'])
      expectRefusal(
        twapBody({ legs: [perpLeg({ forCcy, priceOptions: { priceType: 'MARKET' } })] }),
        'invalid_params',
        'legs[0].forCcy',
      );
    // Both quantities in USD: one forCcy, legs of two coins.
    const usd = validatePortfolioBody(
      twapBody({
        legs: [
          perpLeg({ forCcy: 'usd', priceOptions: { priceType: 'MARKET' } }),
          perpLeg({ instrument: 'ETH-PERPETUAL', forCcy: 'USD', priceOptions: { priceType: 'MARKET' } }),
        ],
      }),
      context,
    );
    assert.deepEqual(
      usd.legs.map((leg) => leg.forCcy),
      ['USD', 'USD'],
    );
  });
  test('a number JSON writes in exponent form is refused saying plain notation is needed', () => {
    assert.throws(
      () =>
        validatePortfolioBody(
          twapBody({
            legs: [perpLeg({ priceOptions: { priceType: 'LIMIT', price: 1e-7, priceIn: 'USD' } })],
          }),
          context,
        ),
      (error: unknown) =>
        error instanceof VenueError &&
        error.data?.field === 'legs[0].priceOptions.price' &&
        /must be a number in plain notation/.test(error.message),
    );
  });
  test('prices and offsets beyond 1e9, or in exponent form, are refused naming the field', () => {
    for (const price of [1e300, 1e9])
      expectRefusal(
        twapBody({ legs: [perpLeg({ priceOptions: { priceType: 'LIMIT', price, priceIn: 'USD' } })] }),
        'invalid_params',
        'legs[0].priceOptions.price',
      );
    expectRefusal(
      twapBody({
        legs: [
          perpLeg({
            priceOptions: {
              priceType: 'DYNAMIC',
              price: 60000,
              priceIn: 'USD',
              dynamicPriceStrategy: 'MID',
              dynamicPriceOffset: 1e20,
              dynamicMs: 1000,
            },
          }),
        ],
      }),
      'invalid_params',
      'legs[0].priceOptions.dynamicPriceOffset',
    );
  });
  test('Balance price is a string; a number is refused', () =>
    expectRefusal(
      balanceBody({ legs: [optionLeg({ priceOptions: { priceType: 'LIMIT', price: 55, priceIn: 'IV' } })] }),
      'invalid_params',
      'legs[0].priceOptions.price',
    ));
  test('TWAP price is a number; a string is refused', () =>
    expectRefusal(
      twapBody({ legs: [perpLeg({ priceOptions: { priceType: 'LIMIT', price: '60000', priceIn: 'USD' } })] }),
      'invalid_params',
      'legs[0].priceOptions.price',
    ));
  test('Balance price and priceIn are required for LIMIT and DYNAMIC', () => {
    expectRefusal(
      balanceBody({ legs: [optionLeg({ priceOptions: { priceType: 'LIMIT', priceIn: 'IV' } })] }),
      'value_required',
      'legs[0].priceOptions.price',
    );
    expectRefusal(
      balanceBody({ legs: [optionLeg({ priceOptions: { priceType: 'LIMIT', price: '0.05' } })] }),
      'value_required',
      'legs[0].priceOptions.priceIn',
    );
  });
  test('TWAP price and priceIn are required for LIMIT and DYNAMIC', () => {
    expectRefusal(
      twapBody({
        legs: [
          perpLeg({
            priceOptions: {
              priceType: 'DYNAMIC',
              dynamicPriceStrategy: 'MID',
              dynamicMs: 100,
              priceIn: 'USD',
            },
          }),
        ],
      }),
      'value_required',
      'legs[0].priceOptions.price',
    );
    expectRefusal(
      twapBody({ legs: [perpLeg({ priceOptions: { priceType: 'LIMIT', price: 60000 } })] }),
      'value_required',
      'legs[0].priceOptions.priceIn',
    );
  });
  test('COMMON and ICEBERG LIMIT legs need a price (a DYNAMIC one may go without)', () => {
    const blocks = { COMMON: {}, ICEBERG: { icebergTrade: { displayQuantity: '20' } } };
    for (const [portfolioType, block] of Object.entries(blocks)) {
      const body = (priceOptions: Record<string, unknown>) => ({
        accountId: 7,
        portfolioType,
        ...block,
        legs: [perpLeg({ priceOptions })],
      });
      const got = refusal(body({ priceType: 'LIMIT', priceIn: 'USD' }));
      assert.deepEqual(
        [got.name, got.field],
        ['value_required', 'legs[0].priceOptions.price'],
        `${portfolioType}: ${got.message}`,
      );
      assert.equal(
        validatePortfolioBody(body({ priceType: 'LIMIT', price: 60000, priceIn: 'USD' }), context).legs[0]!
          .pricing.price,
        60000,
        portfolioType,
      );
      assert.equal(
        validatePortfolioBody(body({ priceType: 'DYNAMIC', dynamicPriceStrategy: 'MID' }), context).legs[0]!
          .pricing.price,
        null,
        `${portfolioType}: a DYNAMIC leg without a price`,
      );
    }
  });
  test('MARKET legs may send price, priceIn and dynamic fields as null', () => {
    const spec = validatePortfolioBody(
      balanceBody({
        legs: [
          optionLeg({
            priceOptions: {
              priceType: 'MARKET',
              price: null,
              priceIn: null,
              dynamicPriceStrategy: null,
              dynamicMs: null,
            },
          }),
        ],
      }),
      context,
    );
    assert.equal(spec.legs[0]!.pricing.priceType, 'MARKET');
  });
  test('dynamicPriceStrategy required for DYNAMIC', () =>
    expectRefusal(
      balanceBody({
        legs: [optionLeg({ priceOptions: { priceType: 'DYNAMIC', price: '60', priceIn: 'IV' } })],
      }),
      'value_required',
      'legs[0].priceOptions.dynamicPriceStrategy',
    ));
  test('dynamicMs required for TWAP when a strategy is given (optional for Balance)', () => {
    expectRefusal(
      twapBody({
        legs: [
          perpLeg({
            priceOptions: { priceType: 'DYNAMIC', price: 61000, priceIn: 'USD', dynamicPriceStrategy: 'MID' },
          }),
        ],
      }),
      'value_required',
      'legs[0].priceOptions.dynamicMs',
    );
    assert.ok(
      validatePortfolioBody(
        balanceBody({
          legs: [
            optionLeg({
              priceOptions: {
                priceType: 'DYNAMIC',
                price: '60',
                priceIn: 'IV',
                dynamicPriceStrategy: 'MARK',
              },
            }),
          ],
        }),
        context,
      ),
    );
  });
  test('dynamicPriceStrategy must be MID, MARK, MODEL, BID or ASK', () =>
    expectRefusal(
      balanceBody({
        legs: [
          optionLeg({
            priceOptions: { priceType: 'DYNAMIC', price: '60', priceIn: 'IV', dynamicPriceStrategy: 'LAST' },
          }),
        ],
      }),
      'invalid_params',
      'legs[0].priceOptions.dynamicPriceStrategy',
    ));
  test('priceIn values: USD, USDT, USDC, the coin, IV', () => {
    for (const unit of ['USD', 'USDT', 'USDC', 'BTC', 'IV']) {
      assert.ok(
        validatePortfolioBody(
          balanceBody({
            legs: [optionLeg({ priceOptions: { priceType: 'LIMIT', price: '50', priceIn: unit } })],
          }),
          context,
        ),
      );
    }
    expectRefusal(
      balanceBody({
        legs: [optionLeg({ priceOptions: { priceType: 'LIMIT', price: '50', priceIn: 'EUR' } })],
      }),
      'invalid_params',
      'legs[0].priceOptions.priceIn',
    );
  });
  test('priceIn BTC, listed by spec 2.5, is taken on an ETH leg too', () => {
    const body = balanceBody({
      legs: [
        perpLeg({
          instrument: 'ETH-PERPETUAL',
          priceOptions: { priceType: 'LIMIT', price: '0.05', priceIn: 'BTC' },
        }),
      ],
    });
    assert.equal(validatePortfolioBody(body, context).legs[0]!.pricing.priceIn, 'BTC');
  });
  test('priceIn IV is for options only', () =>
    expectRefusal(
      balanceBody({ legs: [perpLeg({ priceOptions: { priceType: 'LIMIT', price: '50', priceIn: 'IV' } })] }),
      'invalid_params',
      'legs[0].priceOptions.priceIn',
    ));
  test('priceType enum', () =>
    expectRefusal(
      balanceBody({ legs: [optionLeg({ priceOptions: { priceType: 'STOP' } })] }),
      'invalid_params',
      'legs[0].priceOptions.priceType',
    ));
  test('side enum', () =>
    expectRefusal(balanceBody({ legs: [optionLeg({ side: 3 })] }), 'invalid_params', 'legs[0].side'));
  test('timeInForce enum', () =>
    expectRefusal(
      balanceBody({ legs: [optionLeg({ timeInForce: 5 })] }),
      'invalid_params',
      'legs[0].timeInForce',
    ));
  test('timeInForce codes are spec 2.4’s: 1 GTC, 2 IOC, 3 FOK, 4 GTD', () => {
    const timeInForce = (code: number) =>
      validatePortfolioBody(balanceBody({ legs: [optionLeg({ timeInForce: code })] }), context).legs[0]!
        .timeInForce;
    assert.equal(timeInForce(1), 'good_til_cancelled');
    assert.equal(timeInForce(2), 'immediate_or_cancel');
    assert.equal(timeInForce(3), 'fill_or_kill');
    assert.equal(timeInForce(4), 'good_til_day');
  });
  test('tradeMode enum', () =>
    expectRefusal(
      balanceBody({ legs: [optionLeg({ tradeMode: 0 })] }),
      'invalid_params',
      'legs[0].tradeMode',
    ));
  test('positionSide enum', () =>
    expectRefusal(
      balanceBody({ legs: [optionLeg({ positionSide: 'LONG' })] }),
      'invalid_params',
      'legs[0].positionSide',
    ));
  test('instrumentType enum', () =>
    expectRefusal(
      balanceBody({ legs: [optionLeg({ instrumentType: 'FUTURE' })] }),
      'invalid_params',
      'legs[0].instrumentType',
    ));
  test('portfolioType enum', () =>
    expectRefusal(balanceBody({ portfolioType: 'VWAP' }), 'invalid_params', 'portfolioType'));
  test('accountId must belong to the key’s user', () =>
    expectRefusal(balanceBody({ accountId: 1 }), 'account_not_owned', 'accountId'));
  test('sendToDummyAccountIds must belong to the key’s user', () => {
    assert.deepEqual(
      validatePortfolioBody(balanceBody({ sendToDummyAccountIds: [8, 9] }), context).mirrorAccountIds,
      [8, 9],
    );
    expectRefusal(
      balanceBody({ sendToDummyAccountIds: [8, 2] }),
      'account_not_owned',
      'sendToDummyAccountIds[1]',
    );
  });
  test('instruments must exist', () =>
    expectRefusal(
      balanceBody({ legs: [optionLeg({ instrument: 'BTC-1JAN20-1-C' })] }),
      'invalid_instrument',
      'legs[0].instrument',
    ));
  test('instruments must match instrumentType', () => {
    expectRefusal(
      balanceBody({ legs: [perpLeg({ instrumentType: 'DELIVERY_FUTURES' })] }),
      'invalid_instrument',
      'legs[0].instrumentType',
    );
    assert.ok(
      validatePortfolioBody(
        balanceBody({ legs: [perpLeg({ instrument: 'BTC-27DEC26', instrumentType: 'DELIVERY_FUTURES' })] }),
        context,
      ),
    );
  });
  test('quantity on the lot grid', () => {
    expectRefusal(balanceBody({ legs: [perpLeg({ quantity: '15' })] }), 'off_grid', 'legs[0].quantity');
    expectRefusal(
      balanceBody({ legs: [optionLeg({ quantity: '0.15' })] }),
      'precision_exceeded',
      'legs[0].quantity',
    );
    expectRefusal(
      balanceBody({ legs: [optionLeg({ quantity: '-1' })] }),
      'invalid_amount',
      'legs[0].quantity',
    );
  });
  test('a TWAP start in the past beyond the clock tolerance is refused', () =>
    expectRefusal(
      twapBody({ twapTrade: { startTimestamp: NOW - 20_000, durationSec: 60, frequencySec: 10 } }),
      'invalid_portfolio',
      'twapTrade.startTimestamp',
    ));
  test('ICEBERG has exactly one leg and a display quantity on the grid', () => {
    const iceberg = {
      accountId: 7,
      portfolioType: 'ICEBERG',
      icebergTrade: { displayQuantity: '20' },
      legs: [perpLeg()],
    };
    assert.equal(validatePortfolioBody(iceberg, context).iceberg?.displayAmount, 2);
    expectRefusal({ ...iceberg, legs: [perpLeg(), perpLeg()] }, 'invalid_portfolio', 'legs');
    expectRefusal(
      { ...iceberg, icebergTrade: { displayQuantity: '15' } },
      'off_grid',
      'icebergTrade.displayQuantity',
    );
  });
  test('the body must be an object', () => expectRefusal([], 'invalid_params', 'body'));
});

describe('portfolio body validation: edges', () => {
  test('BALANCE parts: when every leg is a hedge leg, each still bounds parts', () => {
    // 20 USD of the perpetual is 2 lots: 3 parts cannot each trade a lot.
    expectRefusal(
      balanceBody({ legs: [perpLeg({ quantity: '20', hedge: true })] }),
      'invalid_params',
      'balanceTrade.parts',
    );
  });

  test("sendToDummyAccountIds naming the portfolio's own account is refused naming that entry", () => {
    // Mirroring onto the submitting account would trade the same account twice.
    expectRefusal(
      balanceBody({ sendToDummyAccountIds: [8, 7] }),
      'invalid_portfolio',
      'sendToDummyAccountIds[1]',
    );
    assert.deepEqual(
      validatePortfolioBody(balanceBody({ sendToDummyAccountIds: [8, 9] }), context).mirrorAccountIds,
      [8, 9],
    );
  });
});

describe('priceSnapshot entries (spec 2.4: placePriceIn, placePrice, price, priceIn, all required)', () => {
  const entry = (overrides: Record<string, unknown> = {}) => ({
    placePriceIn: 'IV',
    placePrice: 55,
    price: 0.0425,
    priceIn: 'BTC',
    ...overrides,
  });
  /** An option leg whose second snapshot entry is `bad`; the first is valid. */
  const optionWith = (bad: Record<string, unknown>) =>
    balanceBody({ legs: [optionLeg({ priceSnapshot: [entry(), bad] })] });
  /** A perpetual leg (TWAP) with one snapshot entry. */
  const perpWith = (bad: Record<string, unknown>) =>
    twapBody({
      legs: [
        perpLeg({
          priceOptions: { priceType: 'LIMIT', price: 60000, priceIn: 'USD' },
          priceSnapshot: [bad],
        }),
      ],
    });
  const at = (key: string) => `legs[0].priceSnapshot[1].${key}`;

  test('valid entries are kept, their units upper-cased as the leg priceIn', () => {
    const spec = validatePortfolioBody(
      optionWith(entry({ placePriceIn: 'iv', priceIn: 'usd', price: 2500 })),
      context,
    );
    assert.deepEqual(spec.legs[0]!.priceSnapshot, [
      entry(),
      { placePriceIn: 'IV', placePrice: 55, price: 2500, priceIn: 'USD' },
    ]);
  });
  for (const key of ['placePriceIn', 'placePrice', 'price', 'priceIn'] as const) {
    test(`${key} is required: missing or null is value_required naming it`, () => {
      const { [key]: _dropped, ...without } = entry();
      expectRefusal(optionWith(without), 'value_required', at(key));
      expectRefusal(optionWith(entry({ [key]: null })), 'value_required', at(key));
    });
  }
  test('priceIn and placePriceIn take the units the leg priceIn takes', () => {
    expectRefusal(optionWith(entry({ priceIn: 'EUR' })), 'invalid_params', at('priceIn'));
    expectRefusal(optionWith(entry({ placePriceIn: '' })), 'invalid_params', at('placePriceIn'));
    expectRefusal(optionWith(entry({ priceIn: 7 })), 'invalid_params', at('priceIn'));
    // IV is for options only, as on the leg.
    expectRefusal(
      perpWith(entry({ placePriceIn: 'IV' })),
      'invalid_params',
      'legs[0].priceSnapshot[0].placePriceIn',
    );
    expectRefusal(
      perpWith(entry({ placePriceIn: 'USD', placePrice: 60000, priceIn: 'iv' })),
      'invalid_params',
      'legs[0].priceSnapshot[0].priceIn',
    );
    assert.ok(
      validatePortfolioBody(
        perpWith(entry({ placePriceIn: 'USD', placePrice: 60000, priceIn: 'USDC' })),
        context,
      ),
    );
  });
  test('prices are positive numbers; in IV a volatility in (0, 1000], as the leg price', () => {
    expectRefusal(optionWith(entry({ price: 0 })), 'invalid_params', at('price'));
    expectRefusal(optionWith(entry({ price: -0.01 })), 'invalid_params', at('price'));
    expectRefusal(optionWith(entry({ price: '0.0425' })), 'invalid_params', at('price'));
    expectRefusal(optionWith(entry({ price: 1e9 })), 'invalid_params', at('price'));
    expectRefusal(optionWith(entry({ placePrice: 0 })), 'invalid_params', at('placePrice'));
    expectRefusal(optionWith(entry({ placePrice: 1001 })), 'invalid_params', at('placePrice'));
    expectRefusal(optionWith(entry({ priceIn: 'IV', price: -5 })), 'invalid_params', at('price'));
    assert.ok(
      validatePortfolioBody(optionWith(entry({ placePrice: 1000, priceIn: 'IV', price: 0.5 })), context),
    );
  });
});

describe('free text kept in the read store', () => {
  test('strategy and customizedNote with a control character are refused naming the field', () => {
    for (const field of ['strategy', 'customizedNote'] as const) {
      const refused = refusal(balanceBody({ legs: [optionLeg(), perpLeg()], [field]: 'a\u0000b' }));
      assert.equal(refused.name, 'invalid_params');
      assert.equal(refused.field, field);
    }
  });
});
