/**
 * Read-store behaviours the contract tests left unpinned (found by a mutation audit): the history
 * query bounds and `kind: 'any'`, retention keeping trades and closed orders by their own
 * settings, a chunked portfolio sweep never orphaning events, and the RFQ listings' filters.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { CoreEvent } from '../../src/core/events.ts';
import { portfolioHistory, portfolioSummary } from '../../src/store/read/portfolio-queries.ts';
import type { CommittedEvents } from '../../src/store/read/projection.ts';
import { SqliteReadDb } from '../../src/store/read/read-db.ts';
import { ReadStore } from '../../src/store/read/read-store.ts';
import { retentionDeletes } from '../../src/store/read/retention.ts';
import { deskQuotes, rfqTrades, takerRfqs } from '../../src/store/read/rfq-queries.ts';
import { subMachineProjections } from '../../src/store/read/sub-projections.ts';
import { orderView, tradeView } from './read-store-contract.ts';

const MIN = 60_000;
const DAY = 24 * 60 * MIN;
const NOW = 1_800_000_000_000;

const root = mkdtempSync(join(tmpdir(), 'read-store-gaps-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const newDb = () => new SqliteReadDb(join(root, `gaps-${++n}.sqlite`));

const order = (o: ReturnType<typeof orderView>): CoreEvent => ({ type: 'order', order: o });

test('history: count 1000 is the largest page, 0 and a negative offset are refused', async () => {
  const store = await ReadStore.open({ db: newDb() });
  try {
    store.push({ seq: 1, ts: NOW, events: [order(orderView({ orderId: 'o1', filledAmount: 1 }))] });
    store.push({ seq: 2, ts: NOW, events: [{ type: 'trade', trade: tradeView('BTC-1', NOW - MIN, 1, 2) }] });
    await store.flush();
    const base = { accountId: 1, currency: 'BTC', now: NOW };
    await assert.doesNotReject(
      store.orderHistory({ ...base, count: 1000 }),
      'count 1000 (the documented maximum) is a valid order-history page size',
    );
    await assert.doesNotReject(
      store.userTrades({ accountId: 1, now: NOW, count: 1000 }),
      'count 1000 is a valid user-trades page size',
    );
    await assert.rejects(store.orderHistory({ ...base, count: 0 }), RangeError, 'count 0 is refused');
    await assert.rejects(
      store.orderHistory({ ...base, offset: -1 }),
      RangeError,
      'a negative offset is refused',
    );
  } finally {
    await store.close();
  }
});

test("order history: kind 'any' is every kind, as no kind is", async () => {
  const store = await ReadStore.open({ db: newDb() });
  try {
    store.push({
      seq: 1,
      ts: NOW,
      events: [
        order(orderView({ orderId: 'opt', filledAmount: 1 })),
        order(orderView({ orderId: 'fut', instrumentName: 'BTC-PERPETUAL', filledAmount: 1 })),
      ],
    });
    await store.flush();
    const ids = async (kind?: string) =>
      (
        await store.orderHistory({ accountId: 1, currency: 'BTC', now: NOW, ...(kind ? { kind } : {}) })
      ).orders
        .map((o) => o.orderId)
        .sort();
    assert.deepEqual(await ids(), ['fut', 'opt'], 'no kind: both orders');
    assert.deepEqual(await ids('any'), ['fut', 'opt'], "kind 'any' finds the same orders as no kind");
  } finally {
    await store.close();
  }
});

test('retention keeps trades by tradesMs and closed orders by closedOrdersMs, each on its own', async () => {
  const store = await ReadStore.open({ db: newDb(), retention: { closedOrdersMs: DAY, tradesMs: 10 * DAY } });
  try {
    store.push({
      seq: 1,
      ts: 0,
      events: [
        order(
          orderView({
            orderId: 'done',
            orderState: 'filled',
            filledAmount: 10,
            lastUpdatedAt: NOW - 5 * DAY,
          }),
        ),
        { type: 'trade', trade: tradeView('BTC-1', NOW - 5 * DAY, 1, 2) },
      ],
    });
    await store.flush();
    assert.deepEqual(
      await store.prune(NOW),
      { orders: 1, trades: 0 },
      'a 5-day-old trade stays under a 10-day tradesMs while the 5-day-old closed order goes under 1 day',
    );
    const trades = await store.userTrades({ accountId: 1, now: NOW, historical: true, includeOld: true });
    assert.deepEqual(
      trades.trades.map((t) => t.trade.tradeId),
      ['BTC-1'],
      'the trade is still listed after the prune',
    );
  } finally {
    await store.close();
  }
});

/** A trade-news event of portfolio `id` (account 1, COMMON). */
function portfolioEvent(
  id: number,
  messageType: string,
  status: string,
  timestamp: number,
  extra: object = {},
) {
  return {
    type: 'portfolio',
    messageType,
    portfolioId: id,
    accountId: 1,
    portfolioType: 'COMMON',
    status,
    timestamp,
    ...extra,
  };
}
const portfolioCommand = (seq: number, events: object[]): CommittedEvents => ({
  seq,
  ts: NOW,
  events: [],
  subEvents: new Map([['portfolios', events]]),
});

test('a portfolio keeps its end reason when a later event of the same portfolio carries none', async () => {
  const store = await ReadStore.open({ db: newDb(), projections: subMachineProjections() });
  try {
    store.push(portfolioCommand(1, [portfolioEvent(5, 'PORTFOLIO_SUBMITTED', 'WORKING', NOW - 3 * MIN)]));
    store.push(
      portfolioCommand(2, [
        portfolioEvent(5, 'PORTFOLIO_CANCELLING', 'CANCELLING', NOW - 2 * MIN, { endReason: 'user_cancel' }),
      ]),
    );
    await store.flush();
    // A child fill that lands while the cancel is in flight: no endReason on it.
    store.push(
      portfolioCommand(3, [
        portfolioEvent(5, 'ORDER_FILLED', 'CANCELLING', NOW - MIN, { legIndex: 0, amount: 1, price: 1 }),
      ]),
    );
    await store.flush();
    const summary = await portfolioSummary(store, 5);
    assert.equal(summary?.lastMessage, 'ORDER_FILLED', 'the latest event is the fill');
    assert.equal(summary?.endReason, 'user_cancel', 'the end reason of the earlier event is kept');
    assert.equal(summary?.createdAt, NOW - 3 * MIN, 'as is the submit time');
  } finally {
    await store.close();
  }
});

test("portfolio history: 'finished' lists every terminal status, FAILED included", async () => {
  const store = await ReadStore.open({ db: newDb(), projections: subMachineProjections() });
  try {
    const ends = ['COMPLETED', 'CANCELLED', 'EXPIRED', 'FAILED'] as const;
    store.push(
      portfolioCommand(1, [
        portfolioEvent(1, 'PORTFOLIO_SUBMITTED', 'WORKING', NOW - MIN),
        ...ends.map((status, i) => portfolioEvent(10 + i, `PORTFOLIO_${status}`, status, NOW - MIN)),
      ]),
    );
    await store.flush();
    const finished = await portfolioHistory(store, { accountId: 1, status: 'finished' });
    assert.deepEqual(
      finished.portfolios.map((p) => p.status),
      ['FAILED', 'EXPIRED', 'CANCELLED', 'COMPLETED'],
      'finished: the four terminal portfolios, newest id first',
    );
    const active = await portfolioHistory(store, { accountId: 1, status: 'active' });
    assert.deepEqual(
      active.portfolios.map((p) => p.portfolioId),
      [1],
      'active: the working one only',
    );
  } finally {
    await store.close();
  }
});

test('a chunked portfolio sweep deletes a finished portfolio only after all its events', async () => {
  const db = newDb();
  const store = await ReadStore.open({ db, projections: subMachineProjections() });
  try {
    const event = (messageType: string, status: string, timestamp: number) => ({
      type: 'portfolio',
      messageType,
      portfolioId: 7,
      accountId: 1,
      portfolioType: 'COMMON',
      status,
      timestamp,
    });
    const committed: CommittedEvents = {
      seq: 1,
      ts: 0,
      events: [],
      subEvents: new Map([
        [
          'portfolios',
          [
            event('PORTFOLIO_SUBMITTED', 'WORKING', NOW - 5 * DAY),
            event('ORDER_PLACED', 'WORKING', NOW - 5 * DAY),
            event('ORDER_FILLED', 'WORKING', NOW - 5 * DAY),
            event('PORTFOLIO_COMPLETED', 'COMPLETED', NOW - 5 * DAY),
          ],
        ],
      ]),
    };
    store.push(committed);
    await store.flush();
    const tables = new Map(subMachineProjections().flatMap((p) => p.tables.map((t) => [t.name, t])));
    const settings = { closedOrdersMs: null, tradesMs: null, finishedPortfoliosMs: DAY };
    const count = async (table: string) =>
      Number((await db.query<{ c: number }>(`SELECT COUNT(*) AS c FROM ${table}`, []))[0]!.c);
    // One chunk of at most 2 rows per table: two of the four events go, the portfolio must stay.
    for (const { statement } of retentionDeletes(tables, settings, NOW, 2)) {
      await db.execute(statement.sql, statement.params);
    }
    assert.equal(await count('portfolio_events'), 2, 'the first chunk deletes 2 of the 4 events');
    assert.equal(await count('portfolios'), 1, 'the portfolio outlives its remaining events');
    for (let chunk = 0; chunk < 3; chunk++) {
      for (const { statement } of retentionDeletes(tables, settings, NOW, 2)) {
        await db.execute(statement.sql, statement.params);
      }
    }
    assert.equal(await count('portfolio_events'), 0, 'later chunks delete the rest of the events');
    assert.equal(await count('portfolios'), 0, 'and then the portfolio');
  } finally {
    await store.close();
  }
});

/** Minimal RFQ records: the columns the projection reads, and the `quoteCurrency` of the view. */
function rfqEvents(): CommittedEvents {
  const rfq = (number: number, currency: string, quoteCurrency: string, status: string) => ({
    blockRfqId: String(number),
    number,
    takerAccountId: 1,
    currency,
    quoteCurrency,
    status,
    label: `rfq-${number}`,
    quantity: 1,
    filledQuantity: 0,
    createdAt: NOW - MIN,
    expiresAt: NOW + MIN,
    lastUpdatedAt: NOW - MIN,
    legs: [],
  });
  const quote = (number: number, rfqId: string, status: string) => ({
    quoteId: `q${number}`,
    number,
    rfqId,
    makerRfqId: `m${rfqId}`,
    desk: 'desk-a',
    accountId: 2,
    status,
    createdAt: NOW - MIN,
    lastUpdatedAt: NOW - MIN,
  });
  const trade = (number: number, currency: string, quoteCurrency: string) => ({
    blockRfqId: String(number),
    number,
    timestamp: NOW - MIN,
    currency,
    quoteCurrency,
    takerAccountId: 1,
    side: 'buy',
    quantity: 1,
  });
  return {
    seq: 1,
    ts: NOW,
    events: [],
    subEvents: new Map([
      [
        'rfq',
        [
          // A linear BTC_USDC RFQ (filed under BTC and USDC) and an inverse ETH one.
          { type: 'rfq_changed', rfq: rfq(1, 'BTC', 'USDC', 'filled'), quotes: [quote(1, '1', 'filled')] },
          { type: 'rfq_changed', rfq: rfq(2, 'ETH', 'ETH', 'open'), quotes: [quote(2, '2', 'open')] },
          { type: 'rfq_quote_changed', quote: quote(3, '2', 'cancelled') },
          { type: 'rfq_traded', trade: trade(1, 'BTC', 'USDC') },
        ],
      ],
    ]),
  };
}

test('RFQ listings: a quote currency finds its linear RFQs and trades', async () => {
  const store = await ReadStore.open({ db: newDb(), projections: subMachineProjections() });
  try {
    store.push(rfqEvents());
    await store.flush();
    const trades = await rfqTrades(store, { currency: 'USDC', now: NOW });
    assert.deepEqual(
      trades.results.map((t) => t.blockRfqId),
      ['1'],
      'the BTC_USDC trade is filed under its quote currency USDC',
    );
    const rfqs = await takerRfqs(store, { takerAccountId: 1, currency: 'USDC' });
    assert.deepEqual(
      rfqs.rfqs.map((r) => r.blockRfqId),
      ['1'],
      'the BTC_USDC RFQ is filed under USDC, the ETH one is not',
    );
  } finally {
    await store.close();
  }
});

test("RFQ listings: a desk's quotes filtered by RFQ and by status", async () => {
  const store = await ReadStore.open({ db: newDb(), projections: subMachineProjections() });
  try {
    store.push(rfqEvents());
    await store.flush();
    const ids = async (q: object) =>
      (await deskQuotes(store, { desk: 'desk-a', ...q })).quotes.map((quote) => quote.quoteId);
    assert.deepEqual(await ids({}), ['q3', 'q2', 'q1'], 'every quote of the desk, newest first');
    assert.deepEqual(await ids({ rfqId: '2' }), ['q3', 'q2'], 'rfqId keeps the quotes of that RFQ only');
    assert.deepEqual(await ids({ status: 'open' }), ['q2'], 'status keeps the quotes in that status only');
  } finally {
    await store.close();
  }
});
