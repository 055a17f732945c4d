/**
 * The order side's currency filters through the whole service (the real read store on SQLite and
 * on PostgreSQL): USDC finds the USDC-linear products, BTC finds them too, in open orders, order
 * history, user trades, positions, cancel_all_by_currency and the user.orders/user.trades
 * channels. Then the read tables are put back as the build before `quote_currency` left them, and
 * a restart on that data must answer the same.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { ApiError } from '../../sdk/errors.ts';
import type { HttpClient } from '../../sdk/http-client.ts';
import type { SubscriptionPush } from '../../sdk/types.ts';
import { startPostgres } from '../support/postgres.ts';
import { startTestService, type TestService } from '../support/service-harness.ts';
import { until } from '../support/until.ts';

const LINEAR_PERP = 'BTC_USDC-PERPETUAL';
const ETH_LINEAR_PERP = 'ETH_USDC-PERPETUAL';
const SPOT = 'BTC_USDC';
const INVERSE_PERP = 'BTC-PERPETUAL';

/** What the build before `quote_currency` had: no such column, index or schema versions. */
const PREVIOUS_SCHEMA = [
  'DROP INDEX orders_account_id_quote_currency_updated_seq_present_idx',
  'DROP INDEX trades_account_id_quote_currency_seq_present_idx',
  'ALTER TABLE orders DROP COLUMN quote_currency',
  'ALTER TABLE trades DROP COLUMN quote_currency',
  'ALTER TABLE positions DROP COLUMN quote_currency',
  "DELETE FROM read_meta WHERE key LIKE 'schema:%'",
];

async function markOf(client: HttpClient, instrumentName: string): Promise<number> {
  return Number((await client.call('public/ticker', { instrumentName })).markPrice);
}

const names = (items: ReadonlyArray<{ instrumentName: string }>) =>
  [...new Set(items.map((item) => item.instrumentName))].sort();

/** The history answers by currency that must hold before and after the upgrade. */
async function assertHistory(taker: HttpClient, filledOrderId: string): Promise<void> {
  const history = async (currency: string) => {
    const orders = await taker.call('private/get_order_history_by_currency', { currency });
    assert.ok(Array.isArray(orders));
    return orders.map((order) => order.orderId);
  };
  assert.ok((await history('USDC')).includes(filledOrderId), 'USDC order history');
  assert.ok((await history('BTC')).includes(filledOrderId), 'BTC order history keeps BTC_USDC');
  assert.deepEqual(await history('ETH'), []);
  const trades = async (currency: string, kind?: 'future') =>
    names(
      (await taker.call('private/get_user_trades_by_currency', { currency, ...(kind ? { kind } : {}) }))
        .trades,
    );
  assert.deepEqual(await trades('USDC'), [LINEAR_PERP]);
  assert.deepEqual(await trades('usdc', 'future'), [LINEAR_PERP]);
  assert.deepEqual(await trades('BTC'), [LINEAR_PERP]);
  assert.deepEqual(await trades('ETH'), []);
}

async function exercise(running: TestService): Promise<{ filledOrderId: string }> {
  const taker = running.http(0);
  const maker = running.http(1);
  const socket = running.ws(0);
  await socket.connect();
  await socket.auth();
  const pushes: SubscriptionPush[] = [];
  await socket.subscribe(['user.orders.any.USDC', 'user.trades.future.usdc', 'user.orders.any.ETH'], (push) =>
    pushes.push(push),
  );

  const mark = await markOf(taker, LINEAR_PERP);
  const price = String(Math.round(mark));
  await maker.call('private/sell', { instrumentName: LINEAR_PERP, quantity: '0.01', price });
  const filled = await taker.call('private/buy', { instrumentName: LINEAR_PERP, quantity: '0.01', price });
  assert.equal(filled.order.orderState, 'filled');
  const rest = async (instrumentName: string, quantity: string, priceOf: (mark: number) => string) =>
    (
      await taker.call('private/buy', {
        instrumentName,
        quantity,
        price: priceOf(await markOf(taker, instrumentName)),
      })
    ).order;
  const inverse = await rest(INVERSE_PERP, '30', (m) => String(Math.floor(m * 0.98)));
  const spot = await rest(SPOT, '0.001', (m) => String(Math.floor(m * 0.98)));
  const eth = await rest(ETH_LINEAR_PERP, '0.1', (m) => (Math.floor(m * 9.8) / 10).toFixed(1));
  for (const order of [inverse, spot, eth]) assert.equal(order.orderState, 'open');

  const open = async (currency: string, kind?: 'future' | 'spot') =>
    names(await taker.call('private/get_open_orders_by_currency', { currency, ...(kind ? { kind } : {}) }));
  assert.deepEqual(await open('USDC'), [SPOT, ETH_LINEAR_PERP].sort());
  assert.deepEqual(await open('USDC', 'future'), [ETH_LINEAR_PERP]);
  assert.deepEqual(await open('BTC'), [INVERSE_PERP, SPOT].sort());
  assert.deepEqual(await open('ETH'), [ETH_LINEAR_PERP]);

  const positions = async (currency: string) =>
    names(await taker.call('private/get_positions', { currency }));
  assert.deepEqual(await positions('USDC'), [LINEAR_PERP]);
  assert.deepEqual(await positions('BTC'), [LINEAR_PERP]);
  assert.deepEqual(await positions('ETH'), []);
  const summary = await taker.call('private/get_account_summary', { currency: 'usdc' });
  assert.equal(summary.currency, 'USDC');

  await assertHistory(taker, filled.order.orderId);

  // The channels: USDC pushes carry the USDC-linear products of both coins, ETH only ETH's.
  // Pushes carry the channel as subscribed (here in lower case).
  await until(() => pushes.some((p) => p.channel === 'user.trades.future.usdc' && !p.snapshot));
  const pushed = (channel: string) =>
    [
      ...new Set(
        pushes
          .filter((p) => p.channel === channel && !p.snapshot)
          .flatMap((p) => (Array.isArray(p.data) ? p.data : [p.data]) as Array<{ instrumentName: string }>)
          .map((item) => item.instrumentName),
      ),
    ].sort();
  await until(() => pushed('user.orders.any.USDC').length === 3);
  assert.deepEqual(pushed('user.orders.any.USDC'), [LINEAR_PERP, SPOT, ETH_LINEAR_PERP].sort());
  assert.deepEqual(pushed('user.trades.future.usdc'), [LINEAR_PERP]);
  assert.deepEqual(pushed('user.orders.any.ETH'), [ETH_LINEAR_PERP]);
  const snapshots: SubscriptionPush[] = [];
  await socket.subscribe(['user.orders.spot.USDC'], (push) => snapshots.push(push));
  await until(() => snapshots.some((p) => p.snapshot === true));
  assert.deepEqual(names(snapshots.find((p) => p.snapshot)!.data as Array<{ instrumentName: string }>), [
    SPOT,
  ]);
  await assert.rejects(socket.subscribe(['user.orders.any.USD'], () => undefined));

  // USD is no currency of the venue: refused, naming the field.
  await assert.rejects(
    taker.call('private/get_open_orders_by_currency', { currency: 'USD' }),
    (error) => error instanceof ApiError && error.data?.field === 'currency',
  );

  assert.equal(await taker.call('private/cancel_all_by_currency', { currency: 'USDC', kind: 'spot' }), 1);
  assert.equal(await taker.call('private/cancel_all_by_currency', { currency: 'usdc' }), 1);
  assert.deepEqual(await open('BTC'), [INVERSE_PERP]);
  assert.deepEqual(await open('USDC'), []);
  socket.close();
  return { filledOrderId: filled.order.orderId };
}

const server = await startPostgres();
after(() => server?.stop());

describe('currency filters: USDC finds the USDC-linear products', () => {
  test('on SQLite, and after an upgrade from a data directory without quote_currency', async () => {
    let running = await startTestService({ config: { simulator: false } });
    try {
      const { filledOrderId } = await exercise(running);
      await running.close();
      const db = new Database(join(running.dataDir, 'read.sqlite'));
      for (const sql of PREVIOUS_SCHEMA) db.exec(sql);
      db.close();
      running = await running.restart();
      await assertHistory(running.http(0), filledOrderId);
    } finally {
      await running.close();
    }
  });

  test('on PostgreSQL, and after an upgrade from a database without quote_currency', {
    skip: server === null && 'PostgreSQL is not installed',
  }, async () => {
    const url = await server!.createDatabase(`currency_${process.pid}`);
    let running = await startTestService({ config: { databaseUrl: url, simulator: false } });
    try {
      const { filledOrderId } = await exercise(running);
      await running.close();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      for (const sql of PREVIOUS_SCHEMA) await client.query(sql);
      await client.end();
      running = await running.restart();
      await assertHistory(running.http(0), filledOrderId);
    } finally {
      await running.close();
    }
  });
});
