import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import fc from 'fast-check';
import { tradeView } from '../../test/store/read-store-contract.ts';
import { assertSettlementHistory, settlementBatches } from '../../test/store/settlement-history-contract.ts';
import { assertTransactionLog, transactionBatches } from '../../test/store/transaction-log-contract.ts';
import {
  COMBO,
  comboInstruments,
  comboTradeView,
  LONG_LEG,
  SHORT_LEG,
} from '../../test/support/combo-trade.ts';
import type { CoreEvent, OrderView } from '../core/events.ts';
import { SqliteReadDb } from '../store/read/read-db.ts';
import { ReadStore } from '../store/read/read-store.ts';
import { MemoryHistory } from './memory-history.ts';
import type { HistoryPort } from './ports.ts';

const NOW = 1_800_000_000_000;

function order(
  id: string,
  lastUpdatedAt: number,
  orderState: OrderView['orderState'],
  filledAmount: number,
): OrderView {
  return {
    orderId: id,
    accountId: 1,
    currency: 'BTC',
    instrumentName: 'BTC-PERPETUAL',
    lastUpdatedAt,
    orderState,
    filledAmount,
  } as unknown as OrderView;
}

/** Each order's last change in a command of its own, in time order (ties: the later listed later). */
function historyOf(orders: OrderView[]): MemoryHistory {
  const history = new MemoryHistory(() => 'future');
  const byTime = orders.map((order, i) => ({ order, i }));
  byTime.sort((a, b) => a.order.lastUpdatedAt - b.order.lastUpdatedAt || a.i - b.i);
  for (const [seq, { order }] of byTime.entries()) {
    history.record({ seq: seq + 1, ts: order.lastUpdatedAt, events: [{ type: 'order', order }] });
  }
  return history;
}

/** `n` filled orders BTC-1..BTC-n, the i-th (from 0) last changed at `at(i)` (default: a minute ago, 1 ms apart). */
function filledHistory(n: number, at = (i: number) => NOW - 60_000 + i): MemoryHistory {
  return historyOf(Array.from({ length: n }, (_, i) => order(`BTC-${i + 1}`, at(i), 'filled', 1)));
}

const BASE_QUERY = { accountId: 1, currency: 'BTC', now: NOW };

test('windows: recent, includeUnfilled, historical, includeOld', async () => {
  const history = historyOf([
    order('a', NOW - 1000, 'open', 0),
    order('b', NOW - 2000, 'cancelled', 0),
    order('c', NOW - 3000, 'filled', 5),
    order('d', NOW - 31 * 60_000, 'filled', 5),
    order('e', NOW - 3 * 24 * 3600_000, 'filled', 5),
  ]);
  const ids = async (q: object) =>
    (await history.orderHistory({ accountId: 1, currency: 'BTC', now: NOW, ...q })).orders.map(
      (o) => o.orderId,
    );
  assert.deepEqual(await ids({}), ['c']);
  assert.deepEqual(await ids({ includeUnfilled: true }), ['b', 'c']);
  assert.deepEqual(
    await ids({ historical: true }),
    ['b', 'c', 'd'].filter((id) => id !== 'b'),
  );
  assert.deepEqual(await ids({ historical: true, includeOld: true }), ['c', 'd', 'e']);
  await assert.rejects(
    history.orderHistory({ accountId: 1, currency: 'BTC', now: NOW, continuation: 'bad' }),
    RangeError,
  );
});

test('continuation pages through every order exactly once, newest first and by id number within a millisecond', async () => {
  await fc.assert(
    fc.asyncProperty(
      // Ids step by 7 so that a few orders already cross from one digit to two.
      fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 60 }),
      fc.integer({ min: 1, max: 7 }),
      async (ages, n) => {
        const history = historyOf(ages.map((age, i) => order(`BTC-${i * 7}`, NOW - age, 'filled', 1)));
        const seen: string[] = [];
        let continuation: string | null = null;
        for (let guard = 0; guard < 100; guard++) {
          const page = await history.orderHistory({
            accountId: 1,
            currency: 'BTC',
            count: n,
            continuation,
            now: NOW,
          });
          seen.push(...page.orders.map((o) => o.orderId));
          continuation = page.continuation;
          if (continuation === null) break;
        }
        const expected = ages
          .map((age, i) => ({ age, i }))
          .sort((a, b) => a.age - b.age || b.i - a.i)
          .map(({ i }) => `BTC-${i * 7}`);
        assert.deepEqual(seen, expected);
      },
    ),
  );
});

test('a combo trade is an entry of the combo kind with its legs, each leg trade one of the leg kind', async () => {
  const instruments = comboInstruments();
  const history = new MemoryHistory((name) => instruments.get(name)?.kind);
  const combo = comboTradeView({ timestamp: NOW - 60_000, taker: 1, maker: 2 });
  history.record({ seq: 1, ts: NOW, events: [{ type: 'trade', trade: combo }] });
  const found = async (kind?: string) =>
    (await history.userTrades({ accountId: 1, currency: 'BTC', now: NOW, ...(kind ? { kind } : {}) })).trades
      .map(({ trade, liquidity }) => `${trade.instrumentName}:${liquidity}`)
      .sort();
  const all = [`${LONG_LEG}:T`, `${SHORT_LEG}:T`, `${COMBO}:T`];
  assert.deepEqual(await found(), all);
  assert.deepEqual(await found('any'), all);
  assert.deepEqual(await found('option'), [`${LONG_LEG}:T`, `${SHORT_LEG}:T`]);
  assert.deepEqual(await found('option_combo'), [`${COMBO}:T`]);
  assert.deepEqual(await found('combo'), [`${COMBO}:T`]);
  assert.deepEqual(await found('future'), []);
  const [comboEntry] = (await history.userTrades({ accountId: 2, kind: 'combo', now: NOW })).trades;
  assert.equal(comboEntry?.liquidity, 'M');
  assert.equal(comboEntry?.trade.legs?.length, 2);
});

test('an unfilled untriggered order is no history, even with includeUnfilled; the recent windows take their edges', async () => {
  const history = historyOf([
    order('waiting', NOW - 60_000, 'untriggered', 0),
    order('resting', NOW - 60_000, 'open', 0),
    order('edge', NOW - 30 * 60_000, 'filled', 1),
    order('past-edge', NOW - 30 * 60_000 - 1, 'filled', 1),
  ]);
  history.record({
    seq: 10,
    ts: NOW,
    events: [
      { type: 'trade', trade: tradeView('BTC-1', NOW - 24 * 3_600_000, 1, 2) },
      { type: 'trade', trade: tradeView('BTC-2', NOW - 24 * 3_600_000 - 1, 1, 2) },
    ],
  });
  const orders = await history.orderHistory({
    accountId: 1,
    currency: 'BTC',
    now: NOW,
    includeUnfilled: true,
  });
  assert.deepEqual(
    orders.orders.map((o) => o.orderId),
    ['edge'],
    'an order 30 min old is recent, an open or untriggered one without fills never history',
  );
  const trades = await history.userTrades({ accountId: 1, now: NOW });
  assert.deepEqual(
    trades.trades.map((t) => t.trade.tradeId),
    ['BTC-1'],
    'a trade 24 h old is recent',
  );
});

describe('user trades: the memory port pages as the read store does, newest or oldest first', async () => {
  const store = await ReadStore.open({ db: new SqliteReadDb(':memory:', { writerThread: false }) });
  after(() => store.close());
  let account = 100;
  let tradeNumber = 0;
  let seq = 0;
  /** Commands in journal order: each a time (never going back) and its trades, taken or made. */
  const commandsArb = fc.array(
    fc.record({
      gapMs: fc.integer({ min: 0, max: 60_000 }),
      roles: fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
    }),
    { minLength: 1, maxLength: 6 },
  );

  async function walk(
    port: HistoryPort,
    accountId: number,
    count: number,
    sorting: 'asc' | 'desc',
    limit: number,
  ): Promise<string[]> {
    const walked: string[] = [];
    let continuation: string | null = null;
    for (let pages = 0; pages <= limit; pages++) {
      const page = await port.userTrades({ accountId, now: NOW, count, sorting, continuation });
      assert.ok(page.trades.length <= count, `a page of ${page.trades.length} trades for count ${count}`);
      assert.equal(page.hasMore, page.continuation !== null, 'hasMore says whether a continuation follows');
      walked.push(...page.trades.map((t) => `${t.trade.tradeId}:${t.liquidity}`));
      continuation = page.continuation;
      if (continuation === null) return walked;
    }
    assert.fail(`the walk did not end after ${limit} pages: ${walked.join(' ')}`);
  }

  test('every walk sees the same trades in the same order on both ports', async () => {
    await fc.assert(
      fc.asyncProperty(commandsArb, fc.integer({ min: 1, max: 4 }), async (commands, count) => {
        const accountId = ++account;
        const memory = new MemoryHistory(() => 'option');
        let at = NOW - 20 * 60_000;
        let rows = 0;
        for (const { gapMs, roles } of commands) {
          at += gapMs;
          const batch = {
            seq: ++seq,
            ts: at,
            events: roles.map(
              (taker): CoreEvent => ({
                type: 'trade',
                trade: tradeView(`BTC-${++tradeNumber}`, at, taker ? accountId : 1, taker ? 1 : accountId),
              }),
            ),
          };
          memory.record(batch);
          store.push(batch);
          rows += roles.length;
        }
        await store.flush();
        for (const sorting of ['asc', 'desc'] as const) {
          const expected = await walk(store, accountId, count, sorting, rows);
          assert.equal(expected.length, rows, `the read store walks every trade (${sorting})`);
          assert.deepEqual(await walk(memory, accountId, count, sorting, rows), expected, sorting);
        }
      }),
      { numRuns: 60, includeErrorInReport: true },
    );
  });
});

test('count defaults to 20 and must be 1..1000', async () => {
  const h = filledHistory(25);
  assert.equal((await h.orderHistory(BASE_QUERY)).orders.length, 20);
  assert.equal((await h.orderHistory({ ...BASE_QUERY, count: 1000 })).orders.length, 25);
  await assert.rejects(h.orderHistory({ ...BASE_QUERY, count: 1001 }), RangeError);
  await assert.rejects(h.orderHistory({ ...BASE_QUERY, count: 0 }), RangeError);
  await assert.rejects(h.userTrades({ ...BASE_QUERY, count: 0 }), RangeError);
  await assert.rejects(h.userTrades({ ...BASE_QUERY, count: 1001 }), RangeError);
});

test('offset skips rows; a page that ends exactly at the last row has no continuation', async () => {
  const h = filledHistory(5);
  const page = await h.orderHistory({ ...BASE_QUERY, offset: 2, count: 2 });
  assert.deepEqual(
    page.orders.map((o) => o.orderId),
    ['BTC-3', 'BTC-2'],
  );
  assert.notEqual(page.continuation, null);
  const exact = await h.orderHistory({ ...BASE_QUERY, offset: 1, count: 4 });
  assert.equal(exact.orders.length, 4);
  assert.equal(exact.continuation, null);
  const all = await h.orderHistory({ ...BASE_QUERY, count: 5 });
  assert.equal(all.continuation, null);
});

test('historical window edges: 1 s indexing delay, 2-day cutoff inclusive', async () => {
  const ats = [NOW - 500, NOW - 2 * 24 * 3_600_000, NOW - 2 * 24 * 3_600_000 - 1];
  const h = filledHistory(3, (i) => ats[i]!);
  const ids = (await h.orderHistory({ ...BASE_QUERY, historical: true })).orders.map((o) => o.orderId);
  assert.deepEqual(ids, ['BTC-2']);
});

test('a negative or fractional offset is a RangeError, as in the read store (history-queries.ts)', async () => {
  const h = filledHistory(3);
  const q = { ...BASE_QUERY, count: 2 };
  await assert.rejects(h.orderHistory({ ...q, offset: -1 }), RangeError);
  await assert.rejects(h.orderHistory({ ...q, offset: 0.5 }), RangeError);
});

test('userTrades: endTimestamp is inclusive, and a page holding exactly the rest has no more', async () => {
  const h = new MemoryHistory(() => 'future');
  for (let i = 1; i <= 3; i++) {
    const trade = tradeView(`BTC-T${i}`, NOW - 60_000 + i, 1, 2);
    h.record({ seq: i, ts: trade.timestamp, events: [{ type: 'trade', trade }] });
  }
  const upTo = await h.userTrades({ ...BASE_QUERY, endTimestamp: NOW - 60_000 + 2, count: 10 });
  assert.deepEqual(
    upTo.trades.map((t) => t.trade.tradeId),
    ['BTC-T2', 'BTC-T1'],
  );
  const exact = await h.userTrades({ ...BASE_QUERY, count: 3 });
  assert.equal(exact.trades.length, 3);
  assert.equal(exact.hasMore, false);
  assert.equal(exact.continuation, null);
});

test('settlement history: as the read store answers it (test/store/settlement-history-contract.ts)', async () => {
  const history = new MemoryHistory(() => 'option');
  for (const batch of settlementBatches()) history.record(batch);
  await assertSettlementHistory((q) => history.settlements(q));
});

test('transaction log: as the read store answers it (test/store/transaction-log-contract.ts)', async () => {
  const kinds: Record<string, string> = {
    'BTC-PERPETUAL': 'future',
    BTC_USDC: 'spot',
    'BTC-27DEC24-60000-C': 'option',
    [LONG_LEG]: 'option',
    [SHORT_LEG]: 'option',
    [COMBO]: 'option_combo',
  };
  const history = new MemoryHistory((name) => kinds[name]);
  for (const batch of transactionBatches()) history.record(batch);
  await assertTransactionLog((q) => history.transactions(q));
});
