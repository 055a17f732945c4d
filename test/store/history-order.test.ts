/**
 * The order of the history queries within one command's rows, on SQLite and on a real
 * PostgreSQL: newest first by the number the id ends in (BTC-T12 before BTC-T2, BTC-TS-100 before
 * BTC-SL-10), ids with the same number by their text, and every continuation walk exact in that
 * order. On SQLite, the continuation reads the account indexes from the token's seq on.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { CoreEvent } from '../../src/core/events.ts';
import {
  DEFAULT_HISTORY_WINDOWS,
  queryOrderHistory,
  queryUserTrades,
} from '../../src/store/read/history-queries.ts';
import type { RowValue } from '../../src/store/read/projection.ts';
import { PgReadDb, type ReadDb, SqliteReadDb } from '../../src/store/read/read-db.ts';
import { ReadStore } from '../../src/store/read/read-store.ts';
import { startPostgres } from '../support/postgres.ts';
import { orderView, tradeView } from './read-store-contract.ts';

const MIN = 60_000;
const NOW = 1_800_000_000_000;

/** A trade taken by account 1 from account 2 on BTC-PERPETUAL (or ETH-PERPETUAL for ETH ids). */
function trade(tradeId: string): CoreEvent {
  const eth = tradeId.startsWith('ETH');
  return {
    type: 'trade',
    trade: {
      ...tradeView(tradeId, NOW - MIN, 1, 2),
      tradeSeq: Number(/\d+$/.exec(tradeId)![0]),
      instrumentName: eth ? 'ETH-PERPETUAL' : 'BTC-PERPETUAL',
      currency: eth ? 'ETH' : 'BTC',
    },
  };
}

function filled(orderId: string): CoreEvent {
  return {
    type: 'order',
    order: orderView({
      orderId,
      accountId: 2,
      instrumentName: 'BTC-PERPETUAL',
      orderState: 'filled',
      filledAmount: 10,
    }),
  };
}

const SWEEP = Array.from({ length: 12 }, (_, i) => `BTC-T${i + 1}`);
/** Trades of account 1, newest first: seq 3, then seq 2's sweep (and an ETH trade numbered as one), then seq 1. */
const TRADES_NEWEST_FIRST = ['BTC-T14', 'ETH-T12', ...[...SWEEP].reverse(), 'BTC-T13'];
/** Orders of account 2, newest first: seq 2's in the order they were numbered, then seq 1's. */
const ORDERS_NEWEST_FIRST = [
  'BTC-TS-100',
  'BTC-TP-12',
  'BTC-11',
  'BTC-SL-10',
  'BTC-9',
  'BTC-2',
  'legacy',
  'BTC-1',
];

async function fill(store: ReadStore): Promise<void> {
  store.push({ seq: 1, ts: NOW - 3 * MIN, events: [trade('BTC-T13'), filled('BTC-1')] });
  store.push({
    seq: 2,
    ts: NOW - 2 * MIN,
    events: [
      ...SWEEP.map(trade),
      trade('ETH-T12'),
      ...['BTC-9', 'BTC-SL-10', 'BTC-11', 'BTC-TP-12', 'BTC-TS-100', 'BTC-2', 'legacy'].map(filled),
    ],
  });
  store.push({ seq: 3, ts: NOW - MIN, events: [trade('BTC-T14')] });
  await store.flush();
}

/** More pages than any walk here needs (15 rows by 1): a walk still going after them repeats rows. */
const MAX_PAGES = 20;

async function walkTrades(
  store: ReadStore,
  count: number,
  sorting: 'asc' | 'desc',
  currency?: string,
): Promise<string[]> {
  const seen: string[] = [];
  let continuation: string | null = null;
  for (let pages = 0; pages < MAX_PAGES; pages++) {
    const page = await store.userTrades({
      accountId: 1,
      now: NOW,
      count,
      sorting,
      continuation,
      ...(currency === undefined ? {} : { currency }),
    });
    assert.ok(page.trades.length <= count, `a page of ${page.trades.length} trades for count ${count}`);
    seen.push(...page.trades.map((t) => t.trade.tradeId));
    continuation = page.continuation;
    if (continuation === null) return seen;
  }
  assert.fail(`the ${sorting} walk by ${count} did not end after ${MAX_PAGES} pages: ${seen.join(' ')}`);
}

async function walkOrders(store: ReadStore, count: number): Promise<string[]> {
  const seen: string[] = [];
  let continuation: string | null = null;
  for (let pages = 0; pages < MAX_PAGES; pages++) {
    const page = await store.orderHistory({ accountId: 2, currency: 'BTC', now: NOW, count, continuation });
    seen.push(...page.orders.map((o) => o.orderId));
    continuation = page.continuation;
    if (continuation === null) return seen;
  }
  assert.fail(`the order walk by ${count} did not end after ${MAX_PAGES} pages: ${seen.join(' ')}`);
}

function historyOrderContract(backend: string, open: () => Promise<ReadDb>): void {
  describe(`history order: ${backend}`, () => {
    test('one command’s trades and orders come by id number, and every walk is exact', async () => {
      const store = await ReadStore.open({ db: await open() });
      try {
        await fill(store);
        const all = await store.userTrades({ accountId: 1, now: NOW, count: 100 });
        assert.deepEqual(
          all.trades.map((t) => t.trade.tradeId),
          TRADES_NEWEST_FIRST,
        );
        const btc = TRADES_NEWEST_FIRST.filter((id) => id.startsWith('BTC'));
        for (const count of [1, 2, 5, 7, 13]) {
          assert.deepEqual(await walkTrades(store, count, 'desc'), TRADES_NEWEST_FIRST, `desc by ${count}`);
          assert.deepEqual(
            await walkTrades(store, count, 'asc'),
            [...TRADES_NEWEST_FIRST].reverse(),
            `asc by ${count}`,
          );
          assert.deepEqual(await walkTrades(store, count, 'desc', 'BTC'), btc, `BTC desc by ${count}`);
          assert.deepEqual(
            await walkTrades(store, count, 'asc', 'BTC'),
            [...btc].reverse(),
            `BTC asc by ${count}`,
          );
          assert.deepEqual(await walkOrders(store, count), ORDERS_NEWEST_FIRST, `orders by ${count}`);
        }
        // Offsets count along the same order.
        const offset = await store.orderHistory({
          accountId: 2,
          currency: 'BTC',
          now: NOW,
          count: 3,
          offset: 2,
        });
        assert.deepEqual(
          offset.orders.map((o) => o.orderId),
          ORDERS_NEWEST_FIRST.slice(2, 5),
        );
        // A token names a row; a page goes on right after it (here: one a build before wrote,
        // naming the last row of a command, pages as it did then).
        const afterSweep = await store.userTrades({ accountId: 1, now: NOW, continuation: '2:BTC-T1' });
        assert.deepEqual(
          afterSweep.trades.map((t) => t.trade.tradeId),
          ['BTC-T13'],
        );
        const midSweep = await store.userTrades({
          accountId: 1,
          now: NOW,
          count: 3,
          continuation: '2:BTC-T10',
        });
        assert.deepEqual(
          midSweep.trades.map((t) => t.trade.tradeId),
          ['BTC-T9', 'BTC-T8', 'BTC-T7'],
        );
        // More trailing digits than an id has: refused, not passed on to the database.
        await assert.rejects(
          store.userTrades({ accountId: 1, now: NOW, continuation: `2:BTC-T${'9'.repeat(16)}` }),
          RangeError,
        );
        await assert.rejects(
          store.orderHistory({
            accountId: 2,
            currency: 'BTC',
            now: NOW,
            continuation: `2:${'1'.repeat(30)}`,
          }),
          RangeError,
        );
      } finally {
        await store.close();
      }
    });
  });
}

const root = mkdtempSync(join(tmpdir(), 'history-order-test-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
historyOrderContract('sqlite', async () => new SqliteReadDb(join(root, `read-${++n}.sqlite`)));

const server = await startPostgres();
after(() => server?.stop());
if (server === null) {
  test('history order: postgres', {
    skip: 'PostgreSQL is not installed (run scripts/ensure-system-deps.sh)',
  });
} else {
  historyOrderContract('postgres', async () =>
    PgReadDb.open(await server.createDatabase(`history_order_${process.pid}_${++n}`)),
  );
}

/** A ReadDb that records the statements the history queries send, and answers none. */
function recorder(): { db: ReadDb; seen: { sql: string; params: readonly RowValue[] }[] } {
  const seen: { sql: string; params: readonly RowValue[] }[] = [];
  const db = {
    query: async (sql: string, params: readonly RowValue[]) => {
      seen.push({ sql, params });
      return [];
    },
  } as unknown as ReadDb;
  return { db, seen };
}

test('SQLite: history pages read the account indexes from the token’s seq on', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'history-plan-test-'));
  const path = join(dir, 'plan.sqlite');
  await (await ReadStore.open({ db: new SqliteReadDb(path) })).close();
  const plain = new SqliteReadDb(path, { writerThread: false });
  const { db, seen } = recorder();
  const windows = DEFAULT_HISTORY_WINDOWS;
  const cases: [() => Promise<unknown>, RegExp[]][] = [
    [
      () =>
        queryOrderHistory(db, windows, { accountId: 1, currency: 'BTC', now: NOW, continuation: '5:BTC-3' }),
      [
        /SEARCH orders USING INDEX orders_account_id_currency_updated_seq_idx \(account_id=\? AND currency=\? AND updated_seq<\?\)/,
        /SEARCH orders USING INDEX orders_account_id_quote_currency_updated_seq_present_idx \(account_id=\? AND quote_currency=\? AND updated_seq<\?\)/,
      ],
    ],
    [
      () =>
        queryUserTrades(db, windows, { accountId: 1, currency: 'BTC', now: NOW, continuation: '5:BTC-T3' }),
      [
        /SEARCH trades USING INDEX trades_account_id_currency_seq_idx \(account_id=\? AND currency=\? AND seq<\?\)/,
        /SEARCH trades USING INDEX trades_account_id_quote_currency_seq_present_idx \(account_id=\? AND quote_currency=\? AND seq<\?\)/,
      ],
    ],
    [
      () =>
        queryUserTrades(db, windows, {
          accountId: 1,
          currency: 'BTC',
          sorting: 'asc',
          now: NOW,
          continuation: '5:BTC-T3',
        }),
      [
        /SEARCH trades USING INDEX trades_account_id_currency_seq_idx \(account_id=\? AND currency=\? AND seq>\?\)/,
        /SEARCH trades USING INDEX trades_account_id_quote_currency_seq_present_idx \(account_id=\? AND quote_currency=\? AND seq>\?\)/,
      ],
    ],
    [
      () =>
        queryUserTrades(db, windows, {
          accountId: 1,
          instrumentName: 'BTC-PERPETUAL',
          now: NOW,
          continuation: '5:BTC-T3',
        }),
      [
        /SEARCH trades USING INDEX trades_account_id_instrument_name_seq_idx \(account_id=\? AND instrument_name=\? AND seq<\?\)/,
      ],
    ],
  ];
  try {
    for (const [run, expected] of cases) {
      seen.length = 0;
      await run();
      const { sql, params } = seen[0]!;
      const plan = (await plain.query<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, params))
        .map((p) => p.detail)
        .join('\n');
      for (const line of expected) assert.match(plan, line, sql);
      // Only the ties within one seq are sorted, never the account's rows as a whole.
      assert.doesNotMatch(plan, /TEMP B-TREE FOR ORDER BY/, sql);
    }
  } finally {
    await plain.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
