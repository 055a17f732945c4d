/**
 * The read-store contract, run on SQLite and PostgreSQL: projections from CoreEvents, history
 * windows, filters, pagination, re-feed after restart, retention, and extra projections.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CoreEvent, OrderView, TradeView } from '../../src/core/events.ts';
import { parseInstrumentName } from '../../src/domain/instrument.ts';
import { tradeParty } from '../../src/engine/testkit.ts';
import {
  coreProjection,
  ORDERS_TABLE,
  POSITIONS_TABLE,
  TRADES_TABLE,
} from '../../src/store/read/core-projections.ts';
import { type Projection, RowBatch, type TableSpec } from '../../src/store/read/projection.ts';
import type { ReadDb } from '../../src/store/read/read-db.ts';
import { ReadStore } from '../../src/store/read/read-store.ts';
import { prepareTables, tableVersion } from '../../src/store/read/schema.ts';
import { changeStatements, createIndexSql, createTableSql } from '../../src/store/read/sql.ts';
import { subMachineProjections } from '../../src/store/read/sub-projections.ts';
import { COMBO, comboTradeView, LONG_LEG, SHORT_LEG } from '../support/combo-trade.ts';
import { assertSettlementHistory, settlementBatches } from './settlement-history-contract.ts';
import { assertTransactionLog, transactionBatches } from './transaction-log-contract.ts';

const MIN = 60_000;
const DAY = 24 * 60 * MIN;
const NOW = 1_800_000_000_000;

export function orderView(overrides: Partial<OrderView> & { orderId: string }): OrderView {
  return {
    accountId: 1,
    instrumentName: 'BTC-27DEC24-60000-C',
    currency: 'BTC',
    side: 'buy',
    orderType: 'limit',
    originalOrderType: null,
    orderState: 'open',
    price: 100,
    amount: 10,
    filledAmount: 0,
    filledNotional: 0,
    averagePrice: 0,
    timeInForce: 'good_til_cancelled',
    createdAt: NOW - MIN,
    lastUpdatedAt: NOW - MIN,
    cancelReason: null,
    label: '',
    owner: null,
    api: true,
    web: false,
    mobile: false,
    postOnly: false,
    rejectPostOnly: false,
    reduceOnly: false,
    replaced: false,
    autoReplaced: false,
    mmp: false,
    mmpCancelled: false,
    hidden: false,
    displayAmount: null,
    refreshAmount: null,
    advanced: null,
    trigger: null,
    triggerPrice: null,
    triggerOffset: null,
    triggerReferencePrice: null,
    triggered: null,
    triggerOrderId: null,
    triggerFillCondition: null,
    otoOrderIds: null,
    primaryOrderId: null,
    ocoRef: null,
    blockTrade: false,
    isLiquidation: false,
    riskReducing: false,
    ...overrides,
  };
}

function party(accountId: number, orderId: string, liquidity: 'M' | 'T') {
  return tradeParty({ accountId, orderId, side: liquidity === 'T' ? 'buy' : 'sell', liquidity, fee: 1 });
}

export function tradeView(tradeId: string, timestamp: number, taker: number, maker: number): TradeView {
  return {
    tradeId,
    tradeSeq: Number(tradeId.split('-')[1] ?? 1),
    instrumentName: 'BTC-27DEC24-60000-C',
    currency: 'BTC',
    timestamp,
    price: 100,
    amount: 1,
    tickDirection: 0,
    indexPrice: null,
    markPrice: null,
    taker: party(taker, `T${tradeId}`, 'T'),
    maker: party(maker, `M${tradeId}`, 'M'),
    blockTradeId: null,
    blockRfqId: null,
    blockRfqQuoteId: null,
  };
}

const order = (o: OrderView): CoreEvent => ({ type: 'order', order: o });

/** Filled orders, trades and positions on inverse BTC, linear BTC_USDC and linear ETH_USDC products. */
function filedEvents(): CoreEvent[] {
  const filled = (orderId: string, instrumentName: string, currency: string, at: number): CoreEvent =>
    order(orderView({ orderId, instrumentName, currency, filledAmount: 1, lastUpdatedAt: NOW - at * MIN }));
  const trade = (tradeId: string, instrumentName: string, currency: string): CoreEvent => ({
    type: 'trade',
    trade: { ...tradeView(tradeId, NOW - MIN, 1, 2), instrumentName, currency },
  });
  const position = (instrumentName: string, size: number): CoreEvent => ({
    type: 'position',
    position: {
      accountId: 1,
      instrumentName,
      size,
      openCost: 0,
      averagePrice: 0,
      realisedPnl: 0,
      settlementCurrency: instrumentName.includes('_') ? 'USDC' : 'BTC',
    },
  });
  return [
    filled('btc-inverse', 'BTC-PERPETUAL', 'BTC', 3),
    filled('btc-linear', 'BTC_USDC-PERPETUAL', 'BTC', 2),
    filled('eth-linear', 'ETH_USDC-27DEC24-3000-C', 'ETH', 1),
    trade('BTC-1', 'BTC-PERPETUAL', 'BTC'),
    trade('BTC-2', 'BTC_USDC-PERPETUAL', 'BTC'),
    position('BTC-PERPETUAL', 10),
    position('BTC_USDC-PERPETUAL', 2),
  ];
}

async function assertFiledUnder(store: ReadStore): Promise<void> {
  const orders = async (currency: string) =>
    (await store.orderHistory({ accountId: 1, currency, now: NOW })).orders.map((o) => o.orderId);
  assert.deepEqual(await orders('USDC'), ['eth-linear', 'btc-linear']);
  assert.deepEqual(await orders('BTC'), ['btc-linear', 'btc-inverse']);
  assert.deepEqual(await orders('ETH'), ['eth-linear']);
  const trades = async (currency: string) =>
    (await store.userTrades({ accountId: 1, currency, now: NOW })).trades.map((t) => t.trade.tradeId);
  assert.deepEqual(await trades('USDC'), ['BTC-2']);
  assert.deepEqual((await trades('BTC')).sort(), ['BTC-1', 'BTC-2']);
  assert.deepEqual(await trades('ETH'), []);
  const positions = async (currency: string) =>
    (await store.positions(1, currency)).map((p) => p.instrumentName);
  assert.deepEqual(await positions('USDC'), ['BTC_USDC-PERPETUAL']);
  assert.deepEqual(await positions('BTC'), ['BTC-PERPETUAL', 'BTC_USDC-PERPETUAL']);
}

/** The core tables as the build before `quote_currency` (2943860) created them. */
const PREVIOUS_TABLES: TableSpec[] = [
  {
    name: 'orders',
    columns: [
      { name: 'order_id', type: 'text', required: true },
      { name: 'account_id', type: 'int', required: true },
      { name: 'currency', type: 'text', required: true },
      { name: 'kind', type: 'text' },
      { name: 'instrument_name', type: 'text', required: true },
      { name: 'order_state', type: 'text', required: true },
      { name: 'filled_amount', type: 'int', required: true },
      { name: 'created_at', type: 'int', required: true },
      { name: 'last_updated_at', type: 'int', required: true },
      { name: 'updated_seq', type: 'int', required: true },
      { name: 'view', type: 'text', required: true },
    ],
    primaryKey: ['order_id'],
    indexes: [['account_id', 'currency', 'updated_seq DESC'], ['last_updated_at']],
  },
  {
    name: 'trades',
    columns: [
      { name: 'trade_id', type: 'text', required: true },
      { name: 'role', type: 'text', required: true },
      { name: 'account_id', type: 'int', required: true },
      { name: 'order_id', type: 'text', required: true },
      { name: 'currency', type: 'text', required: true },
      { name: 'kind', type: 'text' },
      { name: 'instrument_name', type: 'text', required: true },
      { name: 'timestamp', type: 'int', required: true },
      { name: 'trade_seq', type: 'int', required: true },
      { name: 'seq', type: 'int', required: true },
      { name: 'block_rfq_id', type: 'text' },
      { name: 'view', type: 'text', required: true },
    ],
    primaryKey: ['trade_id', 'role'],
    indexes: [
      ['account_id', 'currency', 'seq DESC'],
      ['account_id', 'instrument_name', 'seq DESC'],
      ['order_id'],
      ['timestamp'],
    ],
  },
  {
    name: 'positions',
    columns: [
      { name: 'account_id', type: 'int', required: true },
      { name: 'instrument_name', type: 'text', required: true },
      { name: 'currency', type: 'text' },
      { name: 'kind', type: 'text' },
      { name: 'size', type: 'int', required: true },
      { name: 'updated_seq', type: 'int', required: true },
      { name: 'view', type: 'text', required: true },
    ],
    primaryKey: ['account_id', 'instrument_name'],
  },
];

/** The secondary indexes of the core tables before the quote_currency ones were partial. */
const INDEXES_BEFORE_PARTIAL = {
  orders: [
    ['account_id', 'currency', 'updated_seq DESC'],
    ['account_id', 'quote_currency', 'updated_seq DESC'],
    ['last_updated_at'],
  ],
  trades: [
    ['account_id', 'currency', 'seq DESC'],
    ['account_id', 'quote_currency', 'seq DESC'],
    ['account_id', 'instrument_name', 'seq DESC'],
    ['order_id'],
    ['timestamp'],
  ],
};

/** A table's secondary indexes by name, sorted (not the primary key's). */
async function indexNames(db: ReadDb, table: string): Promise<string[]> {
  const rows = await db.query<{ name: string }>(
    db.dialect === 'sqlite'
      ? "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL"
      : "SELECT indexname AS name FROM pg_indexes WHERE schemaname = current_schema() AND tablename = ? AND indexname NOT LIKE '%_pkey'",
    [table],
  );
  return rows.map((r) => r.name).sort();
}

/** A fresh, empty database per call; `open` may be called again to reopen the same one. */
export type NewDatabase = () => Promise<{ open(): Promise<ReadDb> }>;

export function readStoreContract(backend: string, newDatabase: NewDatabase): void {
  const makeDb = async () => (await newDatabase()).open();
  async function withStore(run: (store: ReadStore, reopen: () => Promise<ReadStore>) => Promise<void>) {
    const database = await newDatabase();
    let store = await ReadStore.open({ db: await database.open() });
    try {
      await run(store, async () => {
        await store.close();
        store = await ReadStore.open({ db: await database.open() });
        return store;
      });
    } finally {
      await store.close();
    }
  }

  describe(`read store contract: ${backend}`, () => {
    test('order history: recent window, fills vs unfilled, latest view wins, newest first', () =>
      withStore(async (store) => {
        store.push({
          seq: 1,
          ts: NOW - 40 * MIN,
          events: [
            order(
              orderView({
                orderId: 'old-filled',
                filledAmount: 10,
                orderState: 'filled',
                lastUpdatedAt: NOW - 40 * MIN,
              }),
            ),
          ],
        });
        store.push({
          seq: 2,
          ts: NOW - 5 * MIN,
          events: [order(orderView({ orderId: 'a', lastUpdatedAt: NOW - 5 * MIN }))],
        });
        store.push({
          seq: 3,
          ts: NOW - 4 * MIN,
          events: [order(orderView({ orderId: 'a', filledAmount: 4, lastUpdatedAt: NOW - 4 * MIN }))],
        });
        store.push({
          seq: 4,
          ts: NOW - 3 * MIN,
          events: [order(orderView({ orderId: 'b', orderState: 'cancelled', lastUpdatedAt: NOW - 3 * MIN }))],
        });
        store.push({
          seq: 5,
          ts: NOW - 2 * MIN,
          events: [order(orderView({ orderId: 'open-unfilled', lastUpdatedAt: NOW - 2 * MIN }))],
        });
        store.push({
          seq: 6,
          ts: NOW - 1 * MIN,
          events: [
            order(
              orderView({
                orderId: 'eth',
                currency: 'ETH',
                instrumentName: 'ETH-PERPETUAL',
                filledAmount: 1,
              }),
            ),
          ],
        });
        await store.flush();
        assert.equal(store.lastAppliedSeq, 6);
        const ids = async (q: object) =>
          (await store.orderHistory({ accountId: 1, currency: 'BTC', now: NOW, ...q })).orders.map(
            (o) => o.orderId,
          );
        assert.deepEqual(await ids({}), ['a']);
        assert.deepEqual(await ids({ includeUnfilled: true }), ['b', 'a']);
        // Historical: everything past the indexing delay (recent included), so 'a' and 'old-filled'.
        assert.deepEqual(await ids({ historical: true }), ['a', 'old-filled']);
        assert.deepEqual(await ids({ historical: true, now: NOW - 4 * MIN + 500 }), ['old-filled']);
        assert.deepEqual(await ids({ kind: 'future' }), []);
        assert.deepEqual(await ids({ kind: 'option' }), ['a']);
        const a = (await store.orderHistory({ accountId: 1, currency: 'BTC', now: NOW })).orders[0]!;
        assert.equal(a.filledAmount, 4);
        assert.deepEqual(await ids({ accountId: 2 }), []);
        assert.equal((await store.order('open-unfilled'))?.orderState, 'open');
      }));

    test('order history: includeOld reaches past 2 days in historical mode', () =>
      withStore(async (store) => {
        store.push({
          seq: 1,
          ts: 0,
          events: [order(orderView({ orderId: 'ancient', filledAmount: 1, lastUpdatedAt: NOW - 3 * DAY }))],
        });
        store.push({
          seq: 2,
          ts: 0,
          events: [order(orderView({ orderId: 'yesterday', filledAmount: 1, lastUpdatedAt: NOW - DAY }))],
        });
        await store.flush();
        const ids = async (q: object) =>
          (
            await store.orderHistory({ accountId: 1, currency: 'BTC', now: NOW, historical: true, ...q })
          ).orders.map((o) => o.orderId);
        assert.deepEqual(await ids({}), ['yesterday']);
        assert.deepEqual(await ids({ includeOld: true }), ['yesterday', 'ancient']);
      }));

    test('order history: count, offset and continuation walk every order exactly once', () =>
      withStore(async (store) => {
        for (let i = 1; i <= 25; i++) {
          store.push({
            seq: i,
            ts: NOW - MIN,
            events: [order(orderView({ orderId: `o${String(i).padStart(2, '0')}`, filledAmount: 1 }))],
          });
        }
        await store.flush();
        const base = { accountId: 1, currency: 'BTC', now: NOW };
        const first = await store.orderHistory({ ...base, count: 10 });
        assert.equal(first.orders[0]?.orderId, 'o25');
        const seen = first.orders.map((o) => o.orderId);
        let token = first.continuation;
        while (token !== null) {
          const page = await store.orderHistory({ ...base, count: 10, continuation: token });
          seen.push(...page.orders.map((o) => o.orderId));
          token = page.continuation;
        }
        assert.equal(seen.length, 25);
        assert.equal(new Set(seen).size, 25);
        const offset = await store.orderHistory({ ...base, count: 5, offset: 20 });
        assert.deepEqual(
          offset.orders.map((o) => o.orderId),
          ['o05', 'o04', 'o03', 'o02', 'o01'],
        );
        assert.equal(offset.continuation, null);
        await assert.rejects(store.orderHistory({ ...base, count: 1001 }), RangeError);
      }));

    test('user trades: one row per side, recent 24 h vs historical, sorting and continuation', () =>
      withStore(async (store) => {
        store.push({
          seq: 1,
          ts: 0,
          events: [{ type: 'trade', trade: tradeView('BTC-1', NOW - 2 * DAY + MIN, 1, 2) }],
        });
        store.push({
          seq: 2,
          ts: 0,
          events: [{ type: 'trade', trade: tradeView('BTC-2', NOW - MIN, 2, 1) }],
        });
        store.push({
          seq: 3,
          ts: 0,
          events: [{ type: 'trade', trade: tradeView('BTC-3', NOW - MIN, 1, 3) }],
        });
        await store.flush();
        const recent = await store.userTrades({ accountId: 1, now: NOW });
        assert.deepEqual(
          recent.trades.map((t) => [t.trade.tradeId, t.liquidity]),
          [
            ['BTC-3', 'T'],
            ['BTC-2', 'M'],
          ],
        );
        assert.equal(recent.hasMore, false);
        const historical = await store.userTrades({ accountId: 1, now: NOW, historical: true });
        assert.deepEqual(
          historical.trades.map((t) => t.trade.tradeId),
          ['BTC-3', 'BTC-2', 'BTC-1'],
        );
        const page1 = await store.userTrades({
          accountId: 1,
          now: NOW,
          historical: true,
          sorting: 'asc',
          count: 2,
        });
        assert.deepEqual(
          page1.trades.map((t) => t.trade.tradeId),
          ['BTC-1', 'BTC-2'],
        );
        assert.equal(page1.hasMore, true);
        const page2 = await store.userTrades({
          accountId: 1,
          now: NOW,
          historical: true,
          sorting: 'asc',
          count: 2,
          continuation: page1.continuation,
        });
        assert.deepEqual(
          page2.trades.map((t) => t.trade.tradeId),
          ['BTC-3'],
        );
        assert.equal((await store.userTrades({ accountId: 3, now: NOW })).trades[0]?.liquidity, 'M');
      }));

    test('a combo trade: its rows keep the legs, each leg trade has rows of its own; kind filters', () =>
      withStore(async (store) => {
        const combo = comboTradeView({ tradeId: 'BTC-10', timestamp: NOW - MIN, taker: 1, maker: 2 });
        store.push({
          seq: 1,
          ts: 0,
          events: [
            { type: 'trade', trade: tradeView('BTC-5', NOW - 2 * MIN, 1, 2) },
            { type: 'trade', trade: combo },
          ],
        });
        await store.flush();
        const trades = async (q: object) =>
          (await store.userTrades({ accountId: 1, currency: 'BTC', now: NOW, ...q })).trades;
        const ids = async (q: object) =>
          (await trades(q)).map((t) => [t.trade.tradeId, t.trade.instrumentName, t.liquidity]);
        const all = [
          ['BTC-10', COMBO, 'T'],
          ['BTC-10-L1', LONG_LEG, 'T'],
          ['BTC-10-L2', SHORT_LEG, 'T'],
          ['BTC-5', 'BTC-27DEC24-60000-C', 'T'],
        ];
        const sorted = (rows: unknown[][]) =>
          [...rows].sort((a, b) => String(a[0]).localeCompare(String(b[0])));
        assert.deepEqual(sorted(await ids({})), all);
        assert.deepEqual(sorted(await ids({ kind: 'any' })), all);
        assert.deepEqual(sorted(await ids({ kind: 'option' })), all.slice(1));
        assert.deepEqual(await ids({ kind: 'option_combo' }), [all[0]]);
        assert.deepEqual(await ids({ kind: 'combo' }), [all[0]]);
        assert.deepEqual(await ids({ kind: 'future' }), []);
        assert.deepEqual(await ids({ instrumentName: SHORT_LEG }), [all[2]]);
        // The views read back as the engine made them: the combo with its legs, the legs with
        // their combo's name and trade id, and neither field on the combo trade or a plain one.
        const [comboRow] = await trades({ kind: 'combo' });
        assert.deepEqual(comboRow!.trade, combo);
        const legs = await trades({ kind: 'option', instrumentName: LONG_LEG });
        assert.deepEqual(legs[0]!.trade, combo.legs![0]);
        const plain = (await trades({ instrumentName: 'BTC-27DEC24-60000-C' }))[0]!.trade;
        for (const field of ['comboId', 'comboTradeId', 'legs']) assert.equal(field in plain, false, field);
        // The maker's side: the same trades, as maker.
        const maker = await store.userTrades({ accountId: 2, now: NOW, kind: 'option' });
        assert.deepEqual(maker.trades.map((t) => [t.trade.tradeId, t.liquidity]).sort(), [
          ['BTC-10-L1', 'M'],
          ['BTC-10-L2', 'M'],
          ['BTC-5', 'M'],
        ]);
      }));

    test('history windows take their edges: 30 min and 24 h recent, 1 s and 2 days historical', () =>
      withStore(async (store) => {
        const filled = (orderId: string, lastUpdatedAt: number) =>
          order(orderView({ orderId, filledAmount: 1, orderState: 'filled', lastUpdatedAt }));
        const trade = (tradeId: string, timestamp: number): CoreEvent => ({
          type: 'trade',
          trade: tradeView(tradeId, timestamp, 1, 2),
        });
        store.push({
          seq: 1,
          ts: NOW,
          events: [
            filled('recent-edge', NOW - 30 * MIN),
            filled('past-recent-edge', NOW - 30 * MIN - 1),
            filled('one-second', NOW - 1_000),
            filled('under-one-second', NOW - 999),
            filled('two-days', NOW - 2 * DAY),
            filled('past-two-days', NOW - 2 * DAY - 1),
            trade('BTC-1', NOW - DAY),
            trade('BTC-2', NOW - DAY - 1),
            trade('BTC-3', NOW - 1_000),
            trade('BTC-4', NOW - 999),
            trade('BTC-5', NOW - 2 * DAY),
            trade('BTC-6', NOW - 2 * DAY - 1),
          ],
        });
        await store.flush();
        const orders = async (q: object) =>
          (await store.orderHistory({ accountId: 1, currency: 'BTC', now: NOW, ...q })).orders
            .map((o) => o.orderId)
            .sort();
        const trades = async (q: object) =>
          (await store.userTrades({ accountId: 1, now: NOW, ...q })).trades
            .map((t) => t.trade.tradeId)
            .sort();
        assert.deepEqual(
          await orders({}),
          ['one-second', 'recent-edge', 'under-one-second'],
          'an order exactly 30 min old is recent',
        );
        assert.deepEqual(await trades({}), ['BTC-1', 'BTC-3', 'BTC-4'], 'a trade exactly 24 h old is recent');
        assert.deepEqual(
          await orders({ historical: true }),
          ['one-second', 'past-recent-edge', 'recent-edge', 'two-days'],
          'historical: exactly 1 s and exactly 2 days old are in',
        );
        assert.deepEqual(
          await trades({ historical: true }),
          ['BTC-1', 'BTC-2', 'BTC-3', 'BTC-5'],
          'historical trades: exactly 1 s and exactly 2 days old are in',
        );
        assert.deepEqual(await orders({ historical: true, includeOld: true }), [
          'one-second',
          'past-recent-edge',
          'past-two-days',
          'recent-edge',
          'two-days',
        ]);
      }));

    test('filters: includeUnfilled finds rejected orders, kind combo finds future combo trades, timestamps bound inclusively', () =>
      withStore(async (store) => {
        const unfilled = (orderId: string, orderState: OrderView['orderState']) =>
          order(orderView({ orderId, orderState, lastUpdatedAt: NOW - MIN }));
        store.push({
          seq: 1,
          ts: NOW,
          events: [
            unfilled('rejected', 'rejected'),
            unfilled('cancelled', 'cancelled'),
            unfilled('resting', 'open'),
            unfilled('waiting', 'untriggered'),
          ],
        });
        // A future combo trade of account 4, and account 1's trades one minute apart.
        store.push({
          seq: 2,
          ts: NOW,
          events: [
            {
              type: 'trade',
              trade: { ...tradeView('BTC-7', NOW - MIN, 4, 2), instrumentName: 'BTC-FS-27DEC24_PERP' },
            },
          ],
        });
        for (const i of [1, 2, 3]) {
          store.push({
            seq: 2 + i,
            ts: NOW,
            events: [{ type: 'trade', trade: tradeView(`BTC-${i}`, NOW - i * MIN, 1, 2) }],
          });
        }
        await store.flush();
        const orders = async (q: object) =>
          (await store.orderHistory({ accountId: 1, currency: 'BTC', now: NOW, ...q })).orders
            .map((o) => o.orderId)
            .sort();
        assert.deepEqual(await orders({}), []);
        assert.deepEqual(await orders({ includeUnfilled: true }), ['cancelled', 'rejected']);
        const trades = async (q: object) =>
          (await store.userTrades({ accountId: 1, now: NOW, ...q })).trades.map((t) => t.trade.tradeId);
        for (const kind of ['combo', 'future_combo', 'any']) {
          assert.deepEqual(await trades({ accountId: 4, kind }), ['BTC-7'], kind);
        }
        assert.deepEqual(await trades({ accountId: 4, kind: 'option_combo' }), []);
        assert.deepEqual(await trades({ startTimestamp: NOW - 2 * MIN }), ['BTC-2', 'BTC-1']);
        assert.deepEqual(await trades({ endTimestamp: NOW - 2 * MIN }), ['BTC-3', 'BTC-2']);
        assert.deepEqual(await trades({ startTimestamp: NOW - 2 * MIN, endTimestamp: NOW - 2 * MIN }), [
          'BTC-2',
        ]);
      }));

    test('page sizes: 20 orders and 10 trades by default; a page of exactly count trades is the last', () =>
      withStore(async (store) => {
        for (let i = 1; i <= 25; i++) {
          store.push({
            seq: i,
            ts: NOW,
            events: [
              order(orderView({ orderId: `o${i}`, filledAmount: 1 })),
              ...(i <= 12 ? [{ type: 'trade', trade: tradeView(`BTC-${i}`, NOW - MIN, 1, 2) } as const] : []),
            ],
          });
        }
        await store.flush();
        const orders = await store.orderHistory({ accountId: 1, currency: 'BTC', now: NOW });
        assert.equal(orders.orders.length, 20);
        assert.notEqual(orders.continuation, null);
        const trades = await store.userTrades({ accountId: 1, now: NOW });
        assert.equal(trades.trades.length, 10);
        assert.equal(trades.hasMore, true);
        for (const sorting of ['asc', 'desc'] as const) {
          const whole = await store.userTrades({ accountId: 1, now: NOW, count: 12, sorting });
          assert.equal(whole.trades.length, 12, sorting);
          assert.equal(whole.hasMore, false, sorting);
          assert.equal(whole.continuation, null, sorting);
          const first = await store.userTrades({ accountId: 1, now: NOW, count: 6, sorting });
          assert.equal(first.hasMore, true, sorting);
          const last = await store.userTrades({
            accountId: 1,
            now: NOW,
            count: 6,
            sorting,
            continuation: first.continuation,
          });
          assert.equal(last.trades.length, 6, sorting);
          assert.equal(last.hasMore, false, `the second page of 6 ends the walk (${sorting})`);
          assert.equal(last.continuation, null, sorting);
        }
      }));

    test('positions are the latest view per account and instrument', () =>
      withStore(async (store) => {
        const position = (size: number) => ({
          type: 'position' as const,
          position: {
            accountId: 1,
            instrumentName: 'BTC-PERPETUAL',
            size,
            openCost: 0,
            averagePrice: 0,
            realisedPnl: 0,
            settlementCurrency: 'BTC',
          },
        });
        store.push({ seq: 1, ts: 0, events: [position(5)] });
        store.push({ seq: 2, ts: 0, events: [position(-3)] });
        await store.flush();
        assert.deepEqual(
          (await store.positions(1, 'BTC')).map((p) => p.size),
          [-3],
        );
        assert.deepEqual(await store.positions(1, 'ETH'), []);
      }));

    test('settlement history: one entry per settled position, filed by currency, newest first, paged', () =>
      withStore(async (store, reopen) => {
        for (const batch of settlementBatches()) store.push(batch);
        await store.flush();
        await assertSettlementHistory((q) => store.settlements(q));
        // Kept across a restart.
        const reopened = await reopen();
        await assertSettlementHistory((q) => reopened.settlements(q));
      }));

    test('transaction log: one entry per balance change with its cause, chained, filtered, paged', () =>
      withStore(async (store) => {
        for (const batch of transactionBatches()) store.push(batch);
        await store.flush();
        await assertTransactionLog((q) => store.transactions(q));
      }));

    test('a currency finds the base coin and the pair quote: USDC the linear products, BTC them too', () =>
      withStore(async (store) => {
        store.push({ seq: 1, ts: NOW, events: filedEvents() });
        await store.flush();
        await assertFiledUnder(store);
      }));

    test('a batch that deletes a row and upserts it again stores the upsert alone, partial columns and all', async () => {
      const db = await makeDb();
      try {
        const probe: TableSpec = {
          name: 'batch_probe',
          columns: [
            { name: 'id', type: 'int', required: true },
            { name: 'status', type: 'text', required: true },
            { name: 'created_at', type: 'int', keepWhenNull: true },
          ],
          primaryKey: ['id'],
        };
        const tables = new Map([[probe.name, probe]]);
        await db.init([createTableSql(probe, db.dialect), ...createIndexSql(probe)]);
        const batch = new RowBatch(tables);
        batch.upsert('batch_probe', { id: 1, status: 'new', created_at: 5 });
        await db.commit(changeStatements(batch.drain(), tables, db.maxParams), 1);
        batch.delete('batch_probe', { id: 1 });
        batch.upsert('batch_probe', { id: 1, status: 'again', created_at: null });
        await db.commit(changeStatements(batch.drain(), tables, db.maxParams), 2);
        const rows = await db.query<{ status: string; created_at: unknown }>(
          'SELECT status, created_at FROM batch_probe WHERE id = ?',
          [1],
        );
        assert.deepEqual(
          rows,
          [{ status: 'again', created_at: null }],
          'the deleted created_at does not come back',
        );
      } finally {
        await db.close();
      }
    });

    test('tables an older build wrote (no quote_currency, no schema version) are brought up to date', async () => {
      const database = await newDatabase();
      const old = await database.open();
      await old.init(PREVIOUS_TABLES.flatMap((t) => [createTableSql(t, old.dialect), ...createIndexSql(t)]));
      const tables = new Map(PREVIOUS_TABLES.map((t) => [t.name, t]));
      const batch = new RowBatch(tables);
      coreProjection().project({ seq: 7, ts: NOW, events: filedEvents() }, batch);
      await old.commit(changeStatements(batch.drain(), tables, old.maxParams), 7);
      await old.close();

      let store = await ReadStore.open({ db: await database.open() });
      try {
        assert.equal(store.lastAppliedSeq, 7, 'the rows stay where they were: nothing to re-feed');
        await assertFiledUnder(store);
        // New rows carry the column from the projection.
        const spot = orderView({
          orderId: 'new-spot',
          accountId: 3,
          instrumentName: 'BTC_USDC',
          filledAmount: 1,
        });
        store.push({ seq: 8, ts: NOW, events: [order(spot)] });
        await store.flush();
        const usdc = await store.orderHistory({ accountId: 3, currency: 'USDC', now: NOW });
        assert.deepEqual(
          usdc.orders.map((o) => o.orderId),
          ['new-spot'],
        );
        // A start cut off after the column was added, before the backfill and its version record,
        // is finished by the next one.
        await store.close();
        const raw = await database.open();
        await raw.execute("DELETE FROM read_meta WHERE key LIKE 'schema:%'", []);
        for (const table of tables.keys()) await raw.execute(`UPDATE ${table} SET quote_currency = NULL`, []);
        await raw.close();
        store = await ReadStore.open({ db: await database.open() });
        await assertFiledUnder(store);
        assert.equal(
          (await store.orderHistory({ accountId: 3, currency: 'USDC', now: NOW })).orders.length,
          1,
        );
        const versions = await store.query<{ key: string; value: number }>(
          "SELECT key, value FROM read_meta WHERE key LIKE 'schema:%' ORDER BY key",
          [],
        );
        assert.deepEqual(
          versions.map((v) => [v.key, v.value]),
          [
            ['schema:orders', 3],
            ['schema:positions', 3],
            ['schema:trades', 3],
          ],
        );
      } finally {
        await store.close();
      }
    });

    test('combo rows carry their kind, also those of builds that parsed single names only', async () => {
      const database = await newDatabase();
      const combo = (orderId: string, instrumentName: string) =>
        order(orderView({ orderId, instrumentName, filledAmount: 1, orderState: 'filled' }));
      // Before version 3 the kind came from single-instrument names only: combos had none.
      let store = await ReadStore.open({
        db: await database.open(),
        kindOf: (name) => parseInstrumentName(name)?.kind ?? null,
      });
      try {
        store.push({ seq: 1, ts: NOW, events: [combo('old-fs', 'BTC-FS-27DEC24_PERP')] });
        await store.flush();
        await store.close();
        const raw = await database.open();
        await raw.execute("UPDATE read_meta SET value = 2 WHERE key LIKE 'schema:%'", []);
        await raw.close();
        store = await ReadStore.open({ db: await database.open() });
        store.push({ seq: 2, ts: NOW, events: [combo('new-cs', 'BTC-CS-27DEC24-60000_65000')] });
        await store.flush();
        const ids = async (kind: string) =>
          (await store.orderHistory({ accountId: 1, currency: 'BTC', kind, now: NOW })).orders
            .map((o) => o.orderId)
            .sort();
        assert.deepEqual(await ids('combo'), ['new-cs', 'old-fs']);
        assert.deepEqual(await ids('future_combo'), ['old-fs']);
        assert.deepEqual(await ids('option_combo'), ['new-cs']);
        assert.deepEqual(await ids('option'), []);
      } finally {
        await store.close();
      }
    });

    test('rows an older versioned build wrote after an upgrade are backfilled at the next upgrade', async () => {
      const database = await newDatabase();
      const combo = (orderId: string, instrumentName: string) =>
        order(orderView({ orderId, instrumentName, filledAmount: 1, orderState: 'filled' }));
      let store = await ReadStore.open({ db: await database.open() });
      try {
        store.push({ seq: 1, ts: NOW, events: [combo('new-fs', 'BTC-FS-27DEC24_PERP')] });
        await store.flush();
        await store.close();
        // The older build (core tables at version 2, kinds from single names only) opens the
        // store: it records its own version, then writes a combo row without a kind.
        const older = await database.open();
        const olderTables = [ORDERS_TABLE, TRADES_TABLE, POSITIONS_TABLE].map((t) => ({
          ...t,
          version: 2,
          backfills: t.backfills?.filter((b) => b.version <= 2),
        }));
        await prepareTables(older, olderTables);
        const tables = new Map(olderTables.map((t) => [t.name, t]));
        const batch = new RowBatch(tables);
        coreProjection((name) => parseInstrumentName(name)?.kind ?? null).project(
          { seq: 2, ts: NOW, events: [combo('old-cs', 'BTC-CS-27DEC24-60000_65000')] },
          batch,
        );
        await older.commit(changeStatements(batch.drain(), tables, older.maxParams), 2);
        assert.equal(await tableVersion(older, 'orders'), 2);
        await older.close();
        // Upgraded again, the store fills the older build's rows.
        store = await ReadStore.open({ db: await database.open() });
        const ids = async (kind: string) =>
          (await store.orderHistory({ accountId: 1, currency: 'BTC', kind, now: NOW })).orders
            .map((o) => o.orderId)
            .sort();
        assert.deepEqual(await ids('option_combo'), ['old-cs']);
        assert.deepEqual(await ids('combo'), ['new-fs', 'old-cs']);
      } finally {
        await store.close();
      }
    });

    test('indexes an older build made are replaced: partial quote_currency and closed-order ones, no trades by order', async () => {
      const database = await newDatabase();
      // The core tables as the build before partial indexes made them.
      const fullQuoteIndexes = [
        { ...ORDERS_TABLE, indexes: INDEXES_BEFORE_PARTIAL.orders, retiredIndexes: [] },
        { ...TRADES_TABLE, indexes: INDEXES_BEFORE_PARTIAL.trades, retiredIndexes: [] },
        POSITIONS_TABLE,
      ];
      const older = await database.open();
      await prepareTables(older, fullQuoteIndexes);
      const tables = new Map(fullQuoteIndexes.map((t) => [t.name, t]));
      const batch = new RowBatch(tables);
      coreProjection().project({ seq: 1, ts: NOW, events: filedEvents() }, batch);
      await older.commit(changeStatements(batch.drain(), tables, older.maxParams), 1);
      assert.ok((await indexNames(older, 'trades')).includes('trades_order_id_idx'));
      await older.close();

      const store = await ReadStore.open({ db: await database.open() });
      try {
        const db = await database.open();
        try {
          assert.deepEqual(await indexNames(db, 'orders'), [
            'orders_account_id_currency_updated_seq_idx',
            'orders_account_id_quote_currency_updated_seq_present_idx',
            'orders_last_updated_at_closed_idx',
          ]);
          assert.deepEqual(await indexNames(db, 'trades'), [
            'trades_account_id_currency_seq_idx',
            'trades_account_id_instrument_name_seq_idx',
            'trades_account_id_quote_currency_seq_present_idx',
            'trades_timestamp_idx',
          ]);
        } finally {
          await db.close();
        }
        // The partial indexes hold the pair rows the build before wrote, and new ones.
        await assertFiledUnder(store);
        store.push({
          seq: 2,
          ts: NOW,
          events: [
            order(
              orderView({ orderId: 'new-spot', accountId: 3, instrumentName: 'BTC_USDC', filledAmount: 1 }),
            ),
          ],
        });
        await store.flush();
        const usdc = await store.orderHistory({ accountId: 3, currency: 'USDC', now: NOW });
        assert.ok(
          usdc.orders.some((o) => o.orderId === 'new-spot'),
          'the new spot order is filed under USDC',
        );
      } finally {
        await store.close();
      }
    });

    test('after a restart already applied seqs are ignored and new ones applied', () =>
      withStore(async (store, reopen) => {
        store.push({ seq: 1, ts: 0, events: [order(orderView({ orderId: 'x', filledAmount: 1 }))] });
        await store.flush();
        const again = await reopen();
        assert.equal(again.lastAppliedSeq, 1);
        again.push({ seq: 1, ts: 0, events: [order(orderView({ orderId: 'x', filledAmount: 9 }))] });
        again.push({ seq: 2, ts: 0, events: [order(orderView({ orderId: 'y', filledAmount: 2 }))] });
        await again.flush();
        assert.equal((await again.order('x'))?.filledAmount, 1);
        assert.equal((await again.order('y'))?.filledAmount, 2);
        assert.equal(again.lastAppliedSeq, 2);
      }));

    test('reset empties every projected table and sets lastAppliedSeq (0, or a given seq), keeps the schema versions; seqs are re-fed from the next', async () => {
      const database = await newDatabase();
      const projections = subMachineProjections();
      const open = async () => ReadStore.open({ db: await database.open(), projections });
      const portfolioEvent = {
        type: 'portfolio',
        messageType: 'PORTFOLIO_SUBMITTED',
        portfolioId: 7,
        accountId: 1,
        portfolioType: 'TWAP',
        status: 'WORKING',
        timestamp: NOW,
      };
      let store = await open();
      try {
        store.push({
          seq: 1,
          ts: NOW,
          events: [
            order(orderView({ orderId: 'lost', filledAmount: 1 })),
            { type: 'trade', trade: tradeView('BTC-1', NOW, 1, 2) },
            {
              type: 'position',
              position: {
                accountId: 1,
                instrumentName: 'BTC-PERPETUAL',
                size: 5,
                openCost: 0,
                averagePrice: 0,
                realisedPnl: 0,
                settlementCurrency: 'BTC',
              },
            },
          ],
          subEvents: new Map([['portfolios', [portfolioEvent]]]),
        });
        // Left pending: reset writes it first, then empties the tables.
        store.push({ seq: 2, ts: NOW, events: [order(orderView({ orderId: 'lost-too', filledAmount: 1 }))] });
        const tables = [
          'orders',
          'trades',
          'positions',
          ...projections.flatMap((p) => p.tables.map((t) => t.name)),
        ];
        const rows = async (table: string) =>
          (await store.query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`, []))[0]!.n;
        await store.flush();
        for (const table of ['orders', 'trades', 'positions', 'portfolios', 'portfolio_events']) {
          assert.ok(Number(await rows(table)) > 0, `${table} has rows`);
        }
        const versions = async () =>
          (
            await store.query<{ key: string; value: number }>(
              "SELECT key, value FROM read_meta WHERE key LIKE 'schema:%' ORDER BY key",
              [],
            )
          ).map((v) => [v.key, Number(v.value)]);
        const before = await versions();
        assert.ok(before.length >= tables.length, `a schema version per table: ${JSON.stringify(before)}`);

        await store.reset();
        assert.equal(store.lastAppliedSeq, 0);
        for (const table of tables) assert.equal(Number(await rows(table)), 0, `${table} emptied`);
        assert.deepEqual(await versions(), before, 'the schema versions stay');

        // Reopened, the store is at 0 and takes seq 1 again: another command now.
        await store.close();
        store = await open();
        assert.equal(store.lastAppliedSeq, 0);
        store.push({ seq: 1, ts: NOW, events: [order(orderView({ orderId: 'new', filledAmount: 1 }))] });
        await store.flush();
        assert.equal(store.lastAppliedSeq, 1);
        assert.deepEqual(
          (await store.orderHistory({ accountId: 1, currency: 'BTC', now: NOW })).orders.map(
            (o) => o.orderId,
          ),
          ['new'],
        );
        assert.equal(await store.order('lost'), null);

        // Reset to a seq (the snapshot a trimmed journal starts after): re-fed from the next one.
        await store.reset(40);
        assert.equal(store.lastAppliedSeq, 40);
        for (const table of tables) assert.equal(Number(await rows(table)), 0, `${table} emptied`);
        store.push({ seq: 40, ts: NOW, events: [order(orderView({ orderId: 'covered', filledAmount: 1 }))] });
        store.push({ seq: 41, ts: NOW, events: [order(orderView({ orderId: 'after', filledAmount: 1 }))] });
        await store.flush();
        await store.close();
        store = await open();
        assert.equal(store.lastAppliedSeq, 41);
        assert.equal(await store.order('covered'), null, 'a seq the reset seq covers is not written');
        assert.notEqual(await store.order('after'), null);
      } finally {
        await store.close();
      }
    });

    test('written elsewhere: queries wait for the other writer, pushes are refused', async () => {
      const database = await newDatabase();
      const writer = await ReadStore.open({ db: await database.open() });
      const reader = await ReadStore.open({ db: await database.open() });
      let failure: unknown = null;
      let waits = 0;
      let handedSeq = 0;
      reader.writeElsewhere({
        get lastAppliedSeq() {
          return writer.lastAppliedSeq;
        },
        get handedSeq() {
          return handedSeq;
        },
        get failure() {
          return failure;
        },
        caughtUp: async () => {
          waits++;
          await writer.flush();
        },
      });
      try {
        writer.push({ seq: 1, ts: 0, events: [order(orderView({ orderId: 'x', filledAmount: 1 }))] });
        handedSeq = 1;
        assert.equal((await reader.order('x'))?.filledAmount, 1, 'the query waited for the write');
        assert.equal(waits, 1);
        assert.equal(reader.lastAppliedSeq, 1);
        assert.throws(
          () => reader.push({ seq: 2, ts: 0, events: [order(orderView({ orderId: 'y' }))] }),
          /written elsewhere/,
        );
        failure = new Error('the other writer stopped');
        assert.equal(reader.failure, failure);
        await assert.rejects(reader.flush(), /the other writer stopped/);
      } finally {
        await writer.close();
        await reader.close().catch(() => undefined);
      }
    });

    test('retention prunes closed (filled or rejected) orders and old trades, never open orders', async () => {
      const db = await makeDb();
      const store = await ReadStore.open({ db, retention: { closedOrdersMs: DAY, tradesMs: DAY } });
      try {
        store.push({
          seq: 1,
          ts: 0,
          events: [order(orderView({ orderId: 'old-open', lastUpdatedAt: NOW - 5 * DAY }))],
        });
        store.push({
          seq: 2,
          ts: 0,
          events: [
            order(
              orderView({
                orderId: 'old-done',
                orderState: 'filled',
                filledAmount: 10,
                lastUpdatedAt: NOW - 5 * DAY,
              }),
            ),
            order(
              orderView({ orderId: 'old-rejected', orderState: 'rejected', lastUpdatedAt: NOW - 5 * DAY }),
            ),
          ],
        });
        store.push({
          seq: 3,
          ts: 0,
          events: [{ type: 'trade', trade: tradeView('BTC-9', NOW - 5 * DAY, 1, 2) }],
        });
        store.push({ seq: 4, ts: 0, events: [{ type: 'trade', trade: tradeView('BTC-10', NOW, 1, 2) }] });
        await store.flush();
        assert.deepEqual(await store.prune(NOW), { orders: 2, trades: 2 });
        assert.notEqual(await store.order('old-open'), null);
        assert.equal(await store.order('old-done'), null);
        assert.equal(await store.order('old-rejected'), null, 'a rejected order is closed history too');
      } finally {
        await store.close();
      }
    });

    test('the transaction log goes with the trades retention; settlements stay', async () => {
      const db = await makeDb();
      const store = await ReadStore.open({ db, retention: { closedOrdersMs: null, tradesMs: DAY } });
      try {
        for (const batch of transactionBatches()) store.push(batch);
        for (const batch of settlementBatches()) store.push({ ...batch, seq: batch.seq + 100 });
        await store.flush();
        const count = async (table: string) =>
          Number((await store.query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`, []))[0]!.n);
        // The store's own sweep already took the settlement batches' changes of two days ago.
        assert.equal(await count('transactions'), 17, 'a row per balance event within the day');
        assert.equal(await count('settlements'), 5);
        // The transaction batches run a minute apart from NOW; a day past the fifth, all but the
        // sixth (the withdrawal) are past the horizon, as are the settlement batches' changes.
        await store.prune(NOW + 4 * MIN + DAY + 1);
        const left = await store.transactions({
          accountId: 1,
          currency: 'BTC',
          startTimestamp: 0,
          endTimestamp: NOW + DAY,
        });
        assert.deepEqual(
          left.logs.map((l) => l.type),
          ['withdrawal'],
        );
        assert.equal(await count('transactions'), 3, 'the withdrawal and the combo legs');
        assert.equal(await count('settlements'), 5, 'settlements are kept');
      } finally {
        await store.close();
      }
    });

    test('retention keeps a closed order and a trade exactly at the horizon, deletes them 1 ms past it', async () => {
      const store = await ReadStore.open({
        db: await makeDb(),
        retention: { closedOrdersMs: DAY, tradesMs: DAY },
      });
      try {
        const filled = (orderId: string, lastUpdatedAt: number) =>
          order(orderView({ orderId, filledAmount: 1, orderState: 'filled', lastUpdatedAt }));
        // Written at a command time when nothing was old yet, so the store's own sweep deletes none.
        store.push({
          seq: 1,
          ts: NOW - 2 * DAY,
          events: [
            filled('at-horizon', NOW - DAY),
            filled('past-horizon', NOW - DAY - 1),
            { type: 'trade', trade: tradeView('BTC-1', NOW - DAY, 1, 2) },
            { type: 'trade', trade: tradeView('BTC-2', NOW - DAY - 1, 1, 2) },
          ],
        });
        await store.flush();
        // One order, and one trade's two rows (taker and maker).
        assert.deepEqual(await store.prune(NOW), { orders: 1, trades: 2 });
        assert.notEqual(await store.order('at-horizon'), null, 'an order exactly at the horizon stays');
        assert.equal(await store.order('past-horizon'), null);
        assert.deepEqual(
          (await store.userTrades({ accountId: 1, now: NOW, historical: true, includeOld: true })).trades.map(
            (t) => t.trade.tradeId,
          ),
          ['BTC-1'],
          'a trade exactly at the horizon stays',
        );
      } finally {
        await store.close();
      }
    });

    test('the store writes sweep history past retention, a bounded chunk per second of command time', async () => {
      const db = await makeDb();
      const store = await ReadStore.open({ db, retention: { closedOrdersMs: DAY, tradesMs: DAY } });
      const closedOrders = async () =>
        (
          await store.query<{ n: number }>("SELECT COUNT(*) AS n FROM orders WHERE order_id LIKE 'old-%'", [])
        )[0]!.n;
      try {
        const old = { orderState: 'cancelled' as const, lastUpdatedAt: NOW - 3 * DAY };
        const events: CoreEvent[] = [order(orderView({ orderId: 'open-old', lastUpdatedAt: NOW - 5 * DAY }))];
        for (let i = 0; i < 2_500; i++) events.push(order(orderView({ orderId: `old-${i}`, ...old })));
        events.push({ type: 'trade', trade: tradeView('BTC-9', NOW - 5 * DAY, 1, 2) });
        // Written at a command time when nothing was old yet.
        store.push({ seq: 1, ts: NOW - 3 * DAY, events });
        await store.flush();
        assert.equal(await closedOrders(), 2_500);
        // A write at NOW sweeps: at most 2,000 + 8 per command since the last sweep, per table.
        store.push({ seq: 2, ts: NOW, events: [order(orderView({ orderId: 'new', lastUpdatedAt: NOW }))] });
        await store.flush();
        assert.equal(await closedOrders(), 2_500 - 2_008);
        assert.equal(
          (await store.userTrades({ accountId: 1, historical: true, includeOld: true, now: NOW })).trades
            .length,
          0,
        );
        // Less than a second of command time later: no sweep.
        store.push({ seq: 3, ts: NOW + 999, events: [] });
        await store.flush();
        assert.equal(await closedOrders(), 492);
        store.push({ seq: 4, ts: NOW + 1_000, events: [] });
        await store.flush();
        assert.equal(await closedOrders(), 0);
        assert.notEqual(await store.order('open-old'), null, 'open orders stay whatever their age');
        assert.notEqual(await store.order('new'), null);
      } finally {
        await store.close();
      }
    });

    test('other modules add their own projections and query them', async () => {
      const rfqTrades: Projection = {
        name: 'rfq',
        tables: [
          {
            name: 'test_rfq_trades',
            columns: [
              { name: 'id', type: 'text', required: true },
              { name: 'ts', type: 'int', required: true },
            ],
            primaryKey: ['id'],
          },
        ],
        project(committed, out) {
          for (const e of committed.events as Array<{ type: string; id?: string }>) {
            if (e.type === 'rfq_trade') out.upsert('test_rfq_trades', { id: e.id!, ts: committed.ts });
          }
        },
      };
      const store = await ReadStore.open({ db: await makeDb(), projections: [rfqTrades] });
      try {
        store.push({ seq: 1, ts: 42, events: [{ type: 'rfq_trade', id: 'r1' }] });
        await store.flush();
        assert.deepEqual(await store.query('SELECT id, ts FROM test_rfq_trades WHERE ts >= ?', [40]), [
          { id: 'r1', ts: 42 },
        ]);
      } finally {
        await store.close();
      }
    });
  });
}
