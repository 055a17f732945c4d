/**
 * Portfolios end to end: the real engine and algorithm layer inside the core machine, the real
 * sequencer on a virtual clock, the real gateway, driven through the sdk over HTTP (flat signed
 * routes) and WebSocket (trade-news, order.change.any). Timers are submitted by the test when
 * the machine asks for a wakeup, as the core service does.
 */

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiError } from '../../sdk/errors.ts';
import type { SubscriptionPush } from '../../sdk/types.ts';
import { PORTFOLIO_BASE_PATH } from '../../src/api/portfolios/routes.ts';
import { ERROR_CATALOGUE } from '../../src/domain/errors.ts';
import { optionSpec, orderCommand } from '../../src/engine/testkit.ts';
import {
  PERP,
  type PortfolioCore,
  type PortfolioHarness,
  restingBalance,
  startCore,
  startPortfolioHarness,
} from '../support/portfolio-harness.ts';
import { until } from '../support/until.ts';

const MAKER = 1;
const MULTI = 3;

describe('portfolios through the API', () => {
  let harness: PortfolioHarness;
  let core: PortfolioCore;

  before(async () => {
    core = await startCore();
    harness = await startPortfolioHarness(core);
  });
  after(() => harness.close());

  test('TWAP: submit, pushes with portfolioId, slices on the clock, info, cancel', async () => {
    const user = harness.credentials[MULTI]!;
    const [accountId, mirrorAccountId] = user.accountIds as [number, number];
    const makerAccount = harness.credentials[MAKER]!.accountIds[0]!;
    await core.ports.submit(orderCommand(makerAccount, 'sell', 5, 120_000, { instrumentName: PERP }));
    const http = harness.http(MULTI);
    const ws = harness.ws(MULTI);
    await ws.connect();
    await ws.auth();
    const news: SubscriptionPush[] = [];
    const changes: SubscriptionPush[] = [];
    await ws.subscribe(['trade-news'], (push) => news.push(push));
    await ws.subscribe(['order.change.any'], (push) => changes.push(push));
    await until(() => changes.length === 1);
    assert.equal(changes[0]!.snapshot, true);

    const body = {
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
          hidden: true,
        },
      ],
      sendToDummyAccountIds: [mirrorAccountId],
    };
    const { portfolioId } = await http.flat<{ portfolioId: number }>(
      'POST',
      `${PORTFOLIO_BASE_PATH}/submit`,
      body,
    );
    assert.equal(typeof portfolioId, 'number');

    await until(() => news.some((p) => (p.data as { type: string }).type === 'ORDER_FILLED'));
    const types = news
      .filter((p) => (p.data as { portfolioId: number }).portfolioId === portfolioId)
      .map((p) => (p.data as { type: string }).type);
    assert.deepEqual(types.slice(0, 4), [
      'PORTFOLIO_SUBMITTED',
      'PORTFOLIO_WORKING',
      'PART_STARTED',
      'ORDER_PLACED',
    ]);
    assert.ok(
      news.every((p, i) => p.seq === i + 1),
      'per-channel sequence numbers without gaps',
    );
    await until(() => changes.some((p) => (p.data as { portfolioId?: number }).portfolioId === portfolioId));

    type Info = {
      portfolioStatus: string;
      legs: {
        filledQuantity: string;
        averagePrice: string | null;
        arrivalPrice: string | null;
        slippageBps: number | null;
        childOrderIds: string[];
      }[];
      parts: unknown[];
      mirrorPortfolioIds: number[];
    };
    let info = await http.flat<Info>('GET', `${PORTFOLIO_BASE_PATH}/info?portfolioId=${portfolioId}`);
    assert.equal(info.portfolioStatus, 'WORKING');
    assert.equal(info.legs[0]!.filledQuantity, '50');
    assert.equal(info.legs[0]!.averagePrice, '60000');
    assert.equal(info.legs[0]!.arrivalPrice, '60000', 'one-sided book at submit: the mark');
    assert.equal(info.legs[0]!.slippageBps, 0);
    assert.equal(info.mirrorPortfolioIds.length, 1);

    await core.advance(4_000);
    info = await http.flat<Info>('GET', `${PORTFOLIO_BASE_PATH}/info?portfolioId=${portfolioId}`);
    assert.equal(info.parts.length, 3);
    assert.equal(info.legs[0]!.childOrderIds.length, 3);

    // Another user cannot see it.
    await assert.rejects(
      harness.http(0).flat('GET', `${PORTFOLIO_BASE_PATH}/info?portfolioId=${portfolioId}`),
      (error: unknown) =>
        error instanceof ApiError && error.code === ERROR_CATALOGUE.portfolio_not_found.code,
    );

    const cancelled = await http.flat('POST', `${PORTFOLIO_BASE_PATH}/cancel`, { portfolioId, accountId });
    assert.equal(cancelled, null);
    info = await http.flat<Info>('GET', `${PORTFOLIO_BASE_PATH}/info?portfolioId=${portfolioId}`);
    assert.equal(info.portfolioStatus, 'CANCELLED');
    await until(() => news.some((p) => (p.data as { type: string }).type === 'PORTFOLIO_CANCELLED'));
    const order = news
      .map((p) => p.data as { type: string; portfolioId: number })
      .filter((d) => d.portfolioId === portfolioId)
      .map((d) => d.type);
    assert.ok(order.indexOf('PORTFOLIO_CANCELLING') < order.indexOf('PORTFOLIO_CANCELLED'));
    assert.equal(core.venue.openOrders({ accountId }).length, 0);
  });

  test('validation failures answer succ=false with the code and the field', async () => {
    const user = harness.credentials[MULTI]!;
    const http = harness.http(MULTI);
    await assert.rejects(
      http.flat('POST', `${PORTFOLIO_BASE_PATH}/submit`, {
        accountId: user.accountIds[0],
        portfolioType: 'BALANCE',
        legs: [],
        balanceTrade: { parts: 1, eachLimitMs: 1000, totalLimitMs: 0, totalEndAction: 1 },
      }),
      (error: unknown) =>
        error instanceof ApiError &&
        error.code === ERROR_CATALOGUE.invalid_portfolio.code &&
        error.data?.field === 'legs',
    );
    await assert.rejects(
      http.flat('POST', `${PORTFOLIO_BASE_PATH}/submit`, {
        accountId: 999_999,
        portfolioType: 'COMMON',
        legs: [],
      }),
      (error: unknown) => error instanceof ApiError && error.code === ERROR_CATALOGUE.account_not_owned.code,
    );
  });

  test('every answer under the portfolio prefix is flat, unrouted failures included', async () => {
    const http = harness.http(MULTI);
    const tooLarge = JSON.stringify({ pad: 'x'.repeat(300_000) });
    const notFound = ERROR_CATALOGUE.method_not_found.code;
    const cases = [
      { method: 'POST', path: '/submit', body: tooLarge, status: 413, code: -32600 },
      { method: 'POST', path: '/info', body: '{}', status: 404, code: notFound },
      { method: 'GET', path: '/submit', body: '', status: 404, code: notFound },
      { method: 'POST', path: '/nope', body: '{}', status: 404, code: notFound },
      { method: 'GET', path: '', body: '', status: 404, code: notFound },
      // A path that is no valid percent-encoding, refused before routing.
      { method: 'GET', path: '/%ZZ', body: '', status: 400, code: ERROR_CATALOGUE.bad_request.code },
    ] as const;
    for (const c of cases) {
      const answer = await http.send(http.sign(c.method, `${PORTFOLIO_BASE_PATH}${c.path}`, c.body));
      assert.equal(answer.status, c.status, `${c.method} ${c.path}`);
      const body = answer.body as Record<string, unknown>;
      assert.deepEqual(Object.keys(body).sort(), ['code', 'data', 'message', 'succ', 'value'], answer.text);
      assert.equal(body.succ, false);
      assert.equal(body.code, c.code, `${c.method} ${c.path}`);
      assert.equal(body.value, null);
    }
    await assert.rejects(
      http.flat('POST', `${PORTFOLIO_BASE_PATH}/submit`, { pad: 'x'.repeat(300_000) }),
      (error: unknown) =>
        error instanceof ApiError &&
        error.code === ERROR_CATALOGUE.request_too_large.code &&
        error.httpStatus === 413,
    );
    const notJson = await http.send(http.sign('POST', `${PORTFOLIO_BASE_PATH}/submit`, '{bad'));
    assert.equal(notJson.status, 400);
    assert.deepEqual(notJson.body, {
      succ: false,
      code: -32700,
      message: 'the body is not JSON',
      value: null,
      data: { field: 'body' },
    });
    // JSON of the wrong shape is a bad request too, on every flat POST route, as on /api.
    for (const route of ['submit', 'cancel', 'cancel-all']) {
      for (const text of ['[]', '"x"', 'null', '7']) {
        const answer = await http.send(http.sign('POST', `${PORTFOLIO_BASE_PATH}/${route}`, text));
        assert.equal(answer.status, 400, `${route} ${text}`);
        assert.deepEqual(answer.body, {
          succ: false,
          code: ERROR_CATALOGUE.bad_request.code,
          message: 'the body must be a JSON object',
          value: null,
          data: { field: 'body' },
        });
      }
    }
    const outside = await http.send(http.sign('GET', '/tt/core-broker/openapi/elsewhere', ''));
    assert.equal(outside.status, 404);
    assert.equal((outside.body as { error: { code: number } }).error.code, notFound, 'envelope elsewhere');
  });

  test('a mirror is cancelled with its own account or its original’s; info echoes a string price', async () => {
    const user = harness.credentials[MULTI]!;
    const [accountId, mirrorAccountId] = user.accountIds as [number, number];
    const http = harness.http(MULTI);
    const { portfolioId } = await http.flat<{ portfolioId: number }>(
      'POST',
      `${PORTFOLIO_BASE_PATH}/submit`,
      { ...restingBalance(accountId, '59000.0'), sendToDummyAccountIds: [mirrorAccountId] },
    );
    type Info = {
      portfolioStatus: string;
      mirrorPortfolioIds: number[];
      legs: { priceOptions: { price: unknown } }[];
    };
    const info = (id: number) => http.flat<Info>('GET', `${PORTFOLIO_BASE_PATH}/info?portfolioId=${id}`);
    const original = await info(portfolioId);
    assert.equal(original.legs[0]!.priceOptions.price, '59000.0', 'echoed as sent, a string');
    const mirrorId = original.mirrorPortfolioIds[0]!;

    await assert.rejects(
      http.flat('POST', `${PORTFOLIO_BASE_PATH}/cancel`, { portfolioId, accountId: mirrorAccountId }),
      (error: unknown) =>
        error instanceof ApiError &&
        error.code === ERROR_CATALOGUE.invalid_params.code &&
        error.data?.field === 'accountId',
      'the original is not cancelled through its mirror’s account',
    );
    await http.flat('POST', `${PORTFOLIO_BASE_PATH}/cancel`, { portfolioId: mirrorId, accountId });
    assert.equal((await info(mirrorId)).portfolioStatus, 'CANCELLED');
    assert.equal((await info(portfolioId)).portfolioStatus, 'WORKING', 'only the mirror');
    await http.flat('POST', `${PORTFOLIO_BASE_PATH}/cancel`, { portfolioId, accountId });
  });

  test('cancel-all cancels the account’s active portfolios of a type', async () => {
    const user = harness.credentials[MULTI]!;
    const accountId = user.accountIds[0]!;
    const http = harness.http(MULTI);
    const balance = restingBalance(accountId);
    const a = await http.flat<{ portfolioId: number }>('POST', `${PORTFOLIO_BASE_PATH}/submit`, balance);
    const b = await http.flat<{ portfolioId: number }>('POST', `${PORTFOLIO_BASE_PATH}/submit`, balance);
    const result = await http.flat<{ portfolioIds: number[] }>('POST', `${PORTFOLIO_BASE_PATH}/cancel-all`, {
      accountId,
      portfolioType: 'BALANCE',
    });
    assert.deepEqual(result.portfolioIds, [a.portfolioId, b.portfolioId]);
  });

  test('trade-news carries a portfolio on the user’s account other than the key’s default', async () => {
    const [, second] = harness.credentials[MULTI]!.accountIds as [number, number];
    const http = harness.http(MULTI);
    const ws = harness.ws(MULTI);
    await ws.connect();
    await ws.auth();
    const news: SubscriptionPush[] = [];
    await ws.subscribe(['trade-news'], (push) => news.push(push));
    const { portfolioId } = await http.flat<{ portfolioId: number }>(
      'POST',
      `${PORTFOLIO_BASE_PATH}/submit`,
      restingBalance(second),
    );
    const ours = () =>
      news
        .map((push) => push.data as { type: string; portfolioId: number; accountId: number })
        .filter((data) => data.portfolioId === portfolioId);
    await until(() => ours().length > 0);
    assert.deepEqual([ours()[0]!.type, ours()[0]!.accountId], ['PORTFOLIO_SUBMITTED', second]);
    await http.flat('POST', `${PORTFOLIO_BASE_PATH}/cancel`, { portfolioId, accountId: second });
    await ws.close();
  });

  test('order.change.any’s snapshot holds the open orders of every account of the user', async () => {
    const [first, second] = harness.credentials[MULTI]!.accountIds as [number, number];
    const placed = await core.ports.submit(orderCommand(second, 'buy', 5, 59_000, { instrumentName: PERP }));
    assert.ok(placed.ok, 'an order resting on the second account');
    const ws = harness.ws(MULTI);
    await ws.connect();
    await ws.auth();
    const changes: SubscriptionPush[] = [];
    await ws.subscribe(['order.change.any'], (push) => changes.push(push));
    await until(() => changes.length === 1);
    const shown = (changes[0]!.data as { openOrders: Array<{ orderId: string }> }).openOrders;
    const open = (accountId: number) => core.venue.openOrders({ accountId }).map((order) => order.orderId);
    assert.ok(open(second).length > 0, 'the second account has open orders');
    assert.deepEqual(shown.map((order) => order.orderId).sort(), [...open(first), ...open(second)].sort());
    await core.ports.submit({ type: 'cancel_all', accountId: second });
    await ws.close();
  });
});

describe('a portfolio leg expiring, through the API', () => {
  const OPTION = 'BTC-27DEC26-70000-C';
  let harness: PortfolioHarness;
  let core: PortfolioCore;

  before(async () => {
    core = await startCore([optionSpec({ name: OPTION })]);
    const marks = await core.ports.submit({
      type: 'update_prices',
      indexPrices: [{ currency: 'BTC', price: 60_000 }],
      markPrices: [{ instrumentName: OPTION, markPrice: 500 }],
    });
    assert.ok(marks.ok);
    harness = await startPortfolioHarness(core);
  });
  after(() => harness.close());

  test('an ICEBERG ends FAILED (instrument_expired) at the settlement; a new submit is refused 22002', async () => {
    const accountId = harness.credentials[MULTI]!.accountIds[0]!;
    const http = harness.http(MULTI);
    const ws = harness.ws(MULTI);
    await ws.connect();
    await ws.auth();
    const news: SubscriptionPush[] = [];
    await ws.subscribe(['trade-news'], (push) => news.push(push));
    const body = {
      accountId,
      portfolioType: 'ICEBERG',
      icebergTrade: { displayQuantity: '1' },
      legs: [
        {
          instrument: OPTION,
          instrumentType: 'OPTION',
          side: 1,
          quantity: '5',
          priceOptions: { priceType: 'LIMIT', price: 0.04, priceIn: 'BTC' },
        },
      ],
    };
    const { portfolioId } = await http.flat<{ portfolioId: number }>(
      'POST',
      `${PORTFOLIO_BASE_PATH}/submit`,
      body,
    );
    assert.equal(core.venue.openOrders({ accountId }).length, 1);

    await core.advance(1_000);
    assert.ok(
      (await core.ports.submit({ type: 'settle_instrument', instrumentName: OPTION, settlementPrice: 0 })).ok,
    );
    type Data = {
      type: string;
      portfolioId: number;
      portfolioStatus: string;
      endReason?: string;
      endMessage?: string;
    };
    await until(() => news.some((p) => (p.data as Data).type === 'PORTFOLIO_FAILED'));
    const failed = news.map((p) => p.data as Data).find((d) => d.type === 'PORTFOLIO_FAILED')!;
    assert.equal(failed.portfolioId, portfolioId);
    assert.equal(failed.portfolioStatus, 'FAILED');
    assert.equal(failed.endReason, 'instrument_expired');
    assert.match(failed.endMessage!, /legs\[0\] instrument BTC-27DEC26-70000-C expired/);

    type Info = { portfolioStatus: string; endReason: string | null; endTimestamp: number | null };
    const info = await http.flat<Info>('GET', `${PORTFOLIO_BASE_PATH}/info?portfolioId=${portfolioId}`);
    assert.equal(info.portfolioStatus, 'FAILED');
    assert.equal(info.endReason, 'instrument_expired');
    assert.equal(info.endTimestamp, core.clock.now());
    assert.equal(core.venue.openOrders({ accountId }).length, 0);
    assert.equal(core.algos.nextWakeup(), null, 'no timer polls a portfolio that cannot fill');

    await assert.rejects(
      http.flat('POST', `${PORTFOLIO_BASE_PATH}/submit`, body),
      (error: unknown) =>
        error instanceof ApiError &&
        error.code === ERROR_CATALOGUE.instrument_expired.code &&
        error.data?.field === 'legs[0].instrument',
    );
  });
});
