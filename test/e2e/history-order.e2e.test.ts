/**
 * History order through the service, on SQLite and on PostgreSQL: the trades and orders one
 * command changes come newest first by the number their id ends in (BTC-T12 before BTC-T2), the
 * reverse with `sorting: "asc"`, and the continuation pages exactly through that order.
 *
 * Account 2 posts twelve sells and account 1 sweeps them with one buy (twelve trades and twelve
 * filled sells in one command), with a single trade before and after it, so pages of 5 cross
 * both the ties inside one command and the boundaries between commands.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { ApiError } from '../../sdk/errors.ts';
import type { HttpClient } from '../../sdk/http-client.ts';
import type { ResultOf } from '../../sdk/types.ts';
import { ERROR_CATALOGUE } from '../../src/domain/errors.ts';
import { startPostgres } from '../support/postgres.ts';
import { startTestService, type TestService } from '../support/service-harness.ts';

const INSTRUMENT = 'BTC-PERPETUAL';
const SWEPT = 12;

const idNumber = (id: string) => Number(/\d+$/.exec(id)?.[0]);
const newestFirst = (ids: readonly string[]) => [...ids].sort((a, b) => idNumber(b) - idNumber(a));

/** One trade of `size` sells by account 2, taken by account 1's single buy; the trade and order ids. */
async function sweep(
  taker: HttpClient,
  maker: HttpClient,
  price: string,
  sells: number,
): Promise<{ tradeIds: string[]; sellIds: string[] }> {
  const sellIds: string[] = [];
  for (let i = 0; i < sells; i++) {
    const placed = await maker.call('private/sell', { instrumentName: INSTRUMENT, quantity: '10', price });
    sellIds.push(placed.order.orderId);
  }
  const bought = await taker.call('private/buy', {
    instrumentName: INSTRUMENT,
    quantity: String(10 * sells),
    price,
  });
  assert.equal(bought.order.orderState, 'filled');
  assert.equal(bought.trades.length, sells);
  return { tradeIds: bought.trades.map((t) => t.tradeId), sellIds };
}

async function tradePages(client: HttpClient, sorting?: 'asc' | 'desc'): Promise<string[][]> {
  const pages: string[][] = [];
  let continuation: string | null = null;
  do {
    const page: ResultOf<'private/get_user_trades_by_currency'> = await client.call(
      'private/get_user_trades_by_currency',
      {
        currency: 'BTC',
        count: 5,
        ...(sorting === undefined ? {} : { sorting }),
        ...(continuation === null ? {} : { continuation }),
      },
    );
    pages.push(page.trades.map((t) => t.tradeId));
    assert.equal(page.hasMore, page.continuation !== null);
    continuation = page.continuation;
  } while (continuation !== null);
  return pages;
}

async function orderPages(client: HttpClient): Promise<string[][]> {
  const pages: string[][] = [];
  let continuation: string | null = null;
  do {
    const page: ResultOf<'private/get_order_history_by_currency'> = await client.call(
      'private/get_order_history_by_currency',
      {
        currency: 'BTC',
        count: 5,
        withContinuation: true,
        ...(continuation === null ? {} : { continuation }),
      },
    );
    assert.ok(!Array.isArray(page));
    pages.push(page.orders.map((o) => o.orderId));
    continuation = page.continuation;
  } while (continuation !== null);
  return pages;
}

const chunks = (ids: readonly string[], size: number) =>
  Array.from({ length: Math.ceil(ids.length / size) }, (_, i) => ids.slice(i * size, (i + 1) * size));

async function exercise(running: TestService): Promise<void> {
  const taker = running.http(0);
  const maker = running.http(1);
  const mark = Number((await taker.call('public/ticker', { instrumentName: INSTRUMENT })).markPrice);
  const price = String(Math.round(mark));
  const before = await sweep(taker, maker, price, 1);
  const swept = await sweep(taker, maker, price, SWEPT);
  const later = await sweep(taker, maker, price, 1);
  // The tie is there to break: the sweep's ids run past 9, where text order and number part ways.
  assert.ok(
    swept.tradeIds.some((id) => idNumber(id) >= 10) && swept.tradeIds.some((id) => idNumber(id) < 10),
  );

  const trades = [...later.tradeIds, ...newestFirst(swept.tradeIds), ...before.tradeIds];
  const whole = await taker.call('private/get_user_trades_by_currency', { currency: 'BTC', count: 20 });
  assert.deepEqual(
    whole.trades.map((t) => t.tradeId),
    trades,
  );
  const ascending = await taker.call('private/get_user_trades_by_currency', {
    currency: 'BTC',
    count: 20,
    sorting: 'asc',
  });
  assert.deepEqual(
    ascending.trades.map((t) => t.tradeId),
    [...trades].reverse(),
  );
  assert.deepEqual(await tradePages(taker), chunks(trades, 5));
  assert.deepEqual(await tradePages(taker, 'desc'), chunks(trades, 5));
  assert.deepEqual(await tradePages(taker, 'asc'), chunks([...trades].reverse(), 5));
  // The maker saw the same trades from the other side, in the same order.
  assert.deepEqual(await tradePages(maker), chunks(trades, 5));

  const sells = [...later.sellIds, ...newestFirst(swept.sellIds), ...before.sellIds];
  const history = await maker.call('private/get_order_history_by_currency', { currency: 'BTC', count: 20 });
  assert.ok(Array.isArray(history));
  assert.deepEqual(
    history.map((o) => o.orderId),
    sells,
  );
  assert.deepEqual(await orderPages(maker), chunks(sells, 5));

  // A token whose id ends in more digits than any id has is refused, naming the field.
  await assert.rejects(
    taker.call('private/get_user_trades_by_currency', {
      currency: 'BTC',
      continuation: `1:BTC-T${'9'.repeat(20)}`,
    }),
    (error) =>
      error instanceof ApiError &&
      error.code === ERROR_CATALOGUE.invalid_params.code &&
      error.data?.field === 'continuation',
  );
}

const server = await startPostgres();
after(() => server?.stop());

describe('history order: the rows one command changes, newest first by id number', () => {
  test('on SQLite', async () => {
    const running = await startTestService({ config: { simulator: false } });
    try {
      await exercise(running);
    } finally {
      await running.close();
    }
  });

  test('on PostgreSQL', { skip: server === null && 'PostgreSQL is not installed' }, async () => {
    const url = await server!.createDatabase(`history_order_${process.pid}`);
    const running = await startTestService({ config: { databaseUrl: url, simulator: false } });
    try {
      await exercise(running);
    } finally {
      await running.close();
    }
  });
});
