/**
 * Portfolio conformance through the API (spec 2.1–2.5, SEMANTICS "Portfolios"), on the real core
 * and gateway with the typed sdk: what an edit of a child order by hand may do, and what `info`
 * reports (updateTimestamp, the echo of every leg field of spec 2.4).
 */

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiError } from '../../sdk/errors.ts';
import { PORTFOLIO_BASE_PATH } from '../../src/api/portfolios/routes.ts';
import { orderCommand } from '../../src/engine/testkit.ts';
import {
  PERP,
  PORTFOLIO_E2E_START,
  type PortfolioCore,
  type PortfolioHarness,
  startCore,
  startPortfolioHarness,
} from '../support/portfolio-harness.ts';

const MAKER = 1;
const MULTI = 3;
/** 59,000 and 59,500 USD in ticks of BTC-PERPETUAL (0.5). */
const PRICE_59K = 118_000;
const PRICE_59_5K = 119_000;

interface Info {
  portfolioStatus: string;
  updateTimestamp: number;
  sendToDummyAccountIds: number[];
  legs: {
    quantity: string;
    filledQuantity: string;
    timeInForce: number | null;
    tradeMode: number | null;
    positionSide: number | null;
    priceOptions: { dynamicPriceStrategy: string | null; dynamicPriceOffset: string | number | null };
  }[];
  childOrders: { orderId: string; quantity: string; open: boolean }[];
}

describe('portfolio conformance through the API', () => {
  let harness: PortfolioHarness;
  let core: PortfolioCore;

  before(async () => {
    core = await startCore();
    harness = await startPortfolioHarness(core);
  });
  after(() => harness.close());

  const leg = (extra: Record<string, unknown> = {}) => ({
    instrument: PERP,
    instrumentType: 'PERPETUAL',
    side: 1,
    quantity: '100',
    priceOptions: { priceType: 'LIMIT', price: '59000', priceIn: 'USD' },
    ...extra,
  });
  const submit = (body: Record<string, unknown>) =>
    harness
      .http(MULTI)
      .flat<{ portfolioId: number }>('POST', `${PORTFOLIO_BASE_PATH}/submit`, {
        accountId: harness.credentials[MULTI]!.accountIds[0],
        ...body,
      })
      .then((value) => value.portfolioId);
  const info = (portfolioId: number) =>
    harness.http(MULTI).flat<Info>('GET', `${PORTFOLIO_BASE_PATH}/info?portfolioId=${portfolioId}`);

  /** The maker rests `lots` for sale at 59,500 (above every child's bid); returns its order id. */
  const makerOffers = async (lots: number) => {
    const result = await core.ports.submit(
      orderCommand(harness.credentials[MAKER]!.accountIds[0]!, 'sell', lots, PRICE_59_5K, {
        instrumentName: PERP,
      }),
    );
    assert.ok(result.ok);
    return result.order!.orderId;
  };

  const cases = [
    {
      type: 'TWAP',
      body: {
        portfolioType: 'TWAP',
        twapTrade: { durationSec: 10, frequencySec: 2 },
        legs: [leg({ priceOptions: { priceType: 'LIMIT', price: 59000, priceIn: 'USD' } })],
      },
      open: '20',
    },
    {
      type: 'BALANCE',
      body: {
        portfolioType: 'BALANCE',
        balanceTrade: { parts: 2, eachLimitMs: 60_000, totalLimitMs: 0, totalEndAction: 1 },
        legs: [leg()],
      },
      open: '50',
    },
    { type: 'COMMON', body: { portfolioType: 'COMMON', legs: [leg()] }, open: '100' },
    {
      type: 'ICEBERG',
      body: { portfolioType: 'ICEBERG', icebergTrade: { displayQuantity: '30' }, legs: [leg()] },
      open: '30',
    },
  ] as const;

  for (const c of cases) {
    test(`${c.type}: private/edit may not grow a child (refused, nothing changes); a price-only edit trades`, async () => {
      const portfolioId = await submit(c.body);
      const before = await info(portfolioId);
      const child = before.childOrders[0]!;
      assert.equal(child.quantity, c.open);
      const ask = await makerOffers(1000);

      // Grown at a crossing price, the child would trade 1000 at once: the engine refuses it.
      await assert.rejects(
        harness
          .http(MULTI)
          .call('private/edit', { orderId: child.orderId, quantity: '1000', price: '59500' }),
        (error: unknown) => {
          assert.ok(error instanceof ApiError, String(error));
          assert.equal(error.code, 10021, error.message);
          assert.equal(error.data?.field, 'quantity');
          assert.match(error.message, new RegExp(`portfolio ${portfolioId}\\b`));
          return true;
        },
      );
      const resting = core.venue.getOrder(child.orderId)!;
      assert.deepEqual(
        [resting.amount, resting.filledAmount, resting.price, resting.orderState],
        [Number(c.open) / 10, 0, PRICE_59K, 'open'],
      );
      assert.deepEqual(await info(portfolioId), before, 'the portfolio is untouched');

      // Re-priced to cross, at its own quantity: it trades what the portfolio asked for.
      const edited = await harness
        .http(MULTI)
        .call('private/edit', { orderId: child.orderId, quantity: c.open, price: '59500' });
      assert.equal(edited.order.orderId, child.orderId);
      assert.equal(edited.order.filledQuantity, c.open);
      const after = await info(portfolioId);
      assert.equal(after.legs[0]!.filledQuantity, c.open, 'filled only what the portfolio asked for');
      assert.equal(after.childOrders[0]!.quantity, c.open);
      if (after.portfolioStatus === 'WORKING') {
        await harness.http(MULTI).flat('POST', `${PORTFOLIO_BASE_PATH}/cancel`, { portfolioId });
      } else {
        assert.equal(after.portfolioStatus, 'COMPLETED');
      }
      await core.ports.submit({
        type: 'cancel_order',
        accountId: harness.credentials[MAKER]!.accountIds[0]!,
        orderId: ask,
      });
    });
  }

  test('info: updateTimestamp moves with every change (a new slice, a placed child)', async () => {
    const submittedAt = core.clock.now();
    const portfolioId = await submit({
      portfolioType: 'TWAP',
      twapTrade: { durationSec: 10, frequencySec: 2 },
      legs: [leg({ priceOptions: { priceType: 'LIMIT', price: 59000, priceIn: 'USD' } })],
    });
    assert.equal((await info(portfolioId)).updateTimestamp, submittedAt);
    await core.advance(4_000);
    const later = await info(portfolioId);
    assert.equal(later.childOrders.length, 3, 'slices 0, 1 and 2 placed');
    assert.equal(later.updateTimestamp, submittedAt + 4_000, 'the latest slice');
    assert.ok(submittedAt >= PORTFOLIO_E2E_START);
    await harness.http(MULTI).flat('POST', `${PORTFOLIO_BASE_PATH}/cancel`, { portfolioId });
  });

  test('info echoes every leg field of spec 2.4 with its integer code, and sendToDummyAccountIds', async () => {
    const [, mirrorAccountId] = harness.credentials[MULTI]!.accountIds as [number, number];
    const portfolioId = await submit({
      portfolioType: 'COMMON',
      legs: [
        leg({ timeInForce: 1, tradeMode: 2, positionSide: 3 }),
        leg({ quantity: '50', timeInForce: 4, tradeMode: 3, positionSide: 1 }),
        leg({
          quantity: '20',
          priceOptions: { priceType: 'LIMIT', price: '59000', priceIn: 'USD', dynamicPriceOffset: '5' },
        }),
      ],
      sendToDummyAccountIds: [mirrorAccountId],
    });
    const original = await info(portfolioId);
    assert.deepEqual(
      original.legs.map((l) => [l.timeInForce, l.tradeMode, l.positionSide]),
      [
        [1, 2, 3],
        [4, 3, 1],
        [null, null, null],
      ],
    );
    // The dynamic fields of a LIMIT leg are all null, an offset sent there too (it is unused).
    assert.deepEqual(original.legs[2]!.priceOptions.dynamicPriceStrategy, null);
    assert.deepEqual(original.legs[2]!.priceOptions.dynamicPriceOffset, null);
    assert.deepEqual(original.sendToDummyAccountIds, [mirrorAccountId]);
    const mirror = await info(portfolioId + 1);
    assert.deepEqual(mirror.sendToDummyAccountIds, [], 'a mirror mirrors nothing');
    await harness.http(MULTI).flat('POST', `${PORTFOLIO_BASE_PATH}/cancel`, { portfolioId });
  });
});
