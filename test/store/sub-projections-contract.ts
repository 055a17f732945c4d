/**
 * The RFQ and portfolio projections' contract, run on SQLite and PostgreSQL: fed with the events
 * the real core machine (engine + RFQ desk + portfolio algorithms) produces, checked against
 * the machine's own in-memory answers (the desk's `get_trades` paging is the oracle for the
 * 7-day window and the continuation), plus partial-update columns, re-feed and retention.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FINISHED_RETENTION_MS, type PortfolioMachine } from '../../src/algo/machine.ts';
import type { RfqDesk } from '../../src/rfq/desk.ts';
import { pageTrades, TRADES_LOOKBACK_MS } from '../../src/rfq/trades.ts';
import type { RfqTradeRecord } from '../../src/rfq/types.ts';
import {
  portfolioEvents,
  portfolioHistory,
  portfolioLegFills,
  portfolioSummary,
  prunedPortfolio,
} from '../../src/store/read/portfolio-queries.ts';
import { type CommittedEvents, RowBatch } from '../../src/store/read/projection.ts';
import { ReadStore, type RetentionSettings } from '../../src/store/read/read-store.ts';
import { deskQuotes, rfqById, rfqTrades, takerRfqs } from '../../src/store/read/rfq-queries.ts';
import { subMachineProjections } from '../../src/store/read/sub-projections.ts';
import { leg, portfolio } from '../algo/harness.ts';
import { CoreDriver, DESK, MIRROR, PERP_60K, T0, TAKER, TRADER } from './core-driver.ts';
import type { NewDatabase } from './read-store-contract.ts';

const DAY = 24 * 3_600_000;

/** RFQ trades on three days (several per timestamp), one cancelled and one expired RFQ. */
function rfqHistory(): CoreDriver {
  const d = CoreDriver.withMarket();
  d.tradeRfqs(3);
  d.at(T0 + 3 * DAY);
  d.tradeRfqs(2);
  d.at(T0 + 8 * DAY);
  d.tradeRfqs(4);
  const cancelled = d.createRfq('to-cancel');
  d.ok({ type: 'rfq_cancel', accountId: TAKER, blockRfqId: cancelled.blockRfqId });
  d.createRfq('to-expire');
  d.tradeRfqs(3);
  d.at(d.ts + 10 * 60_000);
  return d;
}

/**
 * A completed ICEBERG (three fills), a cancelled COMMON whose mirror is cancelled with it, and
 * a COMMON still working in the mirror account.
 */
function portfolioHistoryDriver(): { d: CoreDriver; iceberg: number; cancelled: number; active: number } {
  const d = CoreDriver.withMarket();
  const iceberg = d.submit(
    portfolio({
      accountId: TRADER,
      portfolioType: 'ICEBERG',
      legs: [leg({ amount: 50 })],
      iceberg: { displayAmount: 20, refreshAmount: 10 },
    }),
  );
  d.ts += 1_000;
  d.makerOrder('sell', 20, PERP_60K);
  d.ts += 1_000;
  d.makerOrder('sell', 25, PERP_60K);
  d.ts += 1_000;
  d.makerOrder('sell', 5, PERP_60K);
  d.ts += 1_000;
  const cancelled = d.submit(
    portfolio({
      accountId: TRADER,
      legs: [leg({ amount: 10, pricing: { ...leg().pricing, price: 59_000 } })],
      mirrorAccountIds: [MIRROR],
    }),
  );
  d.ts += 1_000;
  d.ok({ type: 'cancel_portfolio', portfolioId: cancelled, accountId: TRADER });
  d.ts += 1_000;
  const active = d.submit(
    portfolio({
      accountId: MIRROR,
      legs: [leg({ amount: 10, pricing: { ...leg().pricing, price: 58_000 } })],
    }),
  );
  return { d, iceberg, cancelled, active };
}

/** How many rows each table would hold for `committed` with nothing deleted. */
function projectedRows(committed: readonly CommittedEvents[]): (table: string) => number {
  const projections = subMachineProjections();
  const batch = new RowBatch(new Map(projections.flatMap((p) => p.tables.map((t) => [t.name, t]))));
  for (const c of committed) for (const projection of projections) projection.project(c, batch);
  const changes = batch.drain();
  return (table) => changes.filter((change) => change.table === table && change.op === 'upsert').length;
}

export function subProjectionsContract(backend: string, newDatabase: NewDatabase): void {
  const projections = () => subMachineProjections();

  async function withStore(
    run: (store: ReadStore, reopen: () => Promise<ReadStore>) => Promise<void>,
    retention?: RetentionSettings,
  ): Promise<void> {
    const database = await newDatabase();
    const open = async () =>
      ReadStore.open({
        db: await database.open(),
        projections: projections(),
        ...(retention === undefined ? {} : { retention }),
      });
    let store = await open();
    try {
      await run(store, async () => {
        await store.close();
        store = await open();
        return store;
      });
    } finally {
      await store.close();
    }
  }

  async function feed(store: ReadStore, committed: readonly CommittedEvents[]): Promise<void> {
    for (const c of committed) store.push(c);
    await store.flush();
  }

  /** Every page of rfqTrades, checking each against the desk's own paging (when given a desk). */
  async function walkTrades(
    store: ReadStore,
    desk: RfqDesk | null,
    currency: string,
    now: number,
    count: number,
  ): Promise<RfqTradeRecord[]> {
    const all: RfqTradeRecord[] = [];
    let continuation: string | null = null;
    for (let guard = 0; guard < 100; guard++) {
      const page = await rfqTrades(store, { currency, now, count, continuation });
      if (desk !== null) {
        const oracle = pageTrades(desk.trades(), { currency, now, count, continuation });
        assert.deepEqual(page.results, oracle.results);
        assert.equal(page.continuation, oracle.continuation);
      }
      all.push(...page.results);
      if (page.continuation === null) return all;
      continuation = page.continuation;
    }
    throw new Error('paging did not end');
  }

  describe(`RFQ and portfolio projections: ${backend}`, () => {
    test('RFQ trades: 7-day window, newest first, paging equals the desk and never repeats', () =>
      withStore(async (store) => {
        const d = rfqHistory();
        await feed(store, d.committed);
        const desk = d.machine.sub<RfqDesk>('rfq');
        const now = d.ts;
        const everything = await walkTrades(store, desk, 'any', now, 1000);
        // 3 trades 8 days ago are outside the window; 2 + 4 + 3 remain.
        assert.equal(everything.length, 9);
        for (const count of [1, 2, 4]) {
          const paged = await walkTrades(store, desk, 'any', now, count);
          assert.deepEqual(
            paged.map((t) => t.blockRfqId),
            everything.map((t) => t.blockRfqId),
          );
          assert.equal(new Set(paged.map((t) => t.blockRfqId)).size, paged.length);
        }
        const keys = everything.map((t) => [t.timestamp, t.number] as const);
        for (let i = 1; i < keys.length; i++) {
          const [ts, n] = keys[i]!;
          const [pts, pn] = keys[i - 1]!;
          assert.ok(ts < pts || (ts === pts && n < pn), 'strictly newest first');
        }
        assert.equal((await walkTrades(store, desk, 'btc', now, 3)).length, 9);
        assert.deepEqual((await rfqTrades(store, { currency: 'ETH', now })).results, []);
        // An earlier clock reaches back to day 0 (the live desk has dropped those trades from memory
        // by now, so it is no oracle here; the store keeps them): all 12 trades, once each.
        const atDay3 = await walkTrades(store, null, 'any', T0 + 3 * DAY + 10_000, 5);
        assert.equal(atDay3.length, 12);
        assert.equal(new Set(atDay3.map((t) => t.blockRfqId)).size, 12);
        assert.equal((await walkTrades(store, null, 'any', T0 + 8 * DAY - 1, 5)).length, 9, 'day 0 gone');
        // A malformed token reads as none, as on the desk.
        assert.equal(
          (await rfqTrades(store, { currency: 'any', now, continuation: 'x:y' })).results.length,
          9,
        );
        await assert.rejects(rfqTrades(store, { currency: 'any', now, count: 0 }), RangeError);
      }));

    test('RFQs and quotes: latest record per id, statuses, taker and desk listings', () =>
      withStore(async (store) => {
        const d = rfqHistory();
        await feed(store, d.committed);
        const desk = d.machine.sub<RfqDesk>('rfq');
        const all = await takerRfqs(store, { takerAccountId: TAKER, count: 1000 });
        assert.equal(all.rfqs.length, 14);
        assert.equal(all.continuation, null);
        for (const rfq of all.rfqs) {
          const live = desk.takerRfq(new Set([TAKER]), rfq.blockRfqId);
          if (live !== null && live !== undefined) assert.equal(rfq.status, live.status);
        }
        const byStatus = (status: 'filled' | 'cancelled' | 'expired') =>
          takerRfqs(store, { takerAccountId: TAKER, status, count: 1000 }).then((p) =>
            p.rfqs.map((r) => r.label),
          );
        assert.deepEqual(await byStatus('cancelled'), ['to-cancel']);
        assert.deepEqual(await byStatus('expired'), ['to-expire']);
        assert.equal((await byStatus('filled')).length, 12);
        const first = await takerRfqs(store, { takerAccountId: TAKER, count: 5 });
        const second = await takerRfqs(store, {
          takerAccountId: TAKER,
          count: 5,
          continuation: first.continuation,
        });
        assert.equal(new Set([...first.rfqs, ...second.rfqs].map((r) => r.blockRfqId)).size, 10);
        assert.ok(first.rfqs[0]!.number > second.rfqs[0]!.number, 'the second page is older');
        assert.deepEqual((await takerRfqs(store, { takerAccountId: 99 })).rfqs, []);
        const one = all.rfqs[0]!;
        assert.deepEqual(await rfqById(store, one.blockRfqId), one);
        const quotes = await deskQuotes(store, { desk: DESK, count: 1000 });
        assert.equal(quotes.quotes.length, 12);
        assert.ok(
          quotes.quotes.every((q) => q.status === 'filled'),
          'every quote filled',
        );
        for (const q of quotes.quotes) assert.deepEqual(q, desk.quote(q.quoteId) ?? q);
        await assert.rejects(takerRfqs(store, { takerAccountId: TAKER, continuation: 'abc' }), RangeError);
      }));

    test('portfolios: lifecycle rows keep submit time, link and end reason; events and leg fills', () =>
      withStore(async (store) => {
        const { d, iceberg, cancelled, active } = portfolioHistoryDriver();
        await feed(store, d.committed);
        const machine = d.machine.sub<PortfolioMachine>('portfolios');
        const mirror = cancelled + 1;
        const done = (await portfolioSummary(store, iceberg))!;
        assert.equal(done.status, 'COMPLETED');
        assert.equal(done.portfolioType, 'ICEBERG');
        assert.equal(done.createdAt, T0);
        assert.equal(done.endReason, 'filled');
        assert.equal(done.endedAt, machine.portfolio(iceberg)!.endedAt);
        const gone = (await portfolioSummary(store, cancelled))!;
        assert.equal(gone.status, 'CANCELLED');
        assert.equal(gone.endReason, 'user_cancel');
        assert.equal(gone.createdAt, T0 + 4_000);
        const mirrored = (await portfolioSummary(store, mirror))!;
        assert.equal(mirrored.accountId, MIRROR);
        assert.equal(mirrored.linkedTo, cancelled);
        assert.equal(mirrored.status, 'CANCELLED', 'cancelled with its original');
        assert.equal(mirrored.endReason, 'user_cancel');
        assert.equal(mirrored.endedAt, T0 + 5_000);
        const working = (await portfolioSummary(store, active))!;
        assert.equal(working.status, machine.portfolio(active)!.status);
        assert.equal(working.status, 'WORKING');
        assert.equal(working.endedAt, null);
        assert.equal(working.endReason, null);
        assert.equal(await portfolioSummary(store, 999), null);

        const fills = await portfolioLegFills(store, iceberg);
        assert.deepEqual(
          fills.map((f) => [f.legIndex, f.filledAmount]),
          [[0, machine.portfolio(iceberg)!.legs[0]!.filled]],
        );
        assert.equal(fills[0]!.filledAmount, 50);
        assert.ok(fills[0]!.fills >= 3, `${fills[0]!.fills} fills`);
        const events = await portfolioEvents(store, cancelled);
        assert.deepEqual(
          events.map((e) => e.messageType),
          [
            'PORTFOLIO_SUBMITTED',
            ...events.slice(1, -2).map((e) => e.messageType),
            'PORTFOLIO_CANCELLING',
            'PORTFOLIO_CANCELLED',
          ],
        );
        assert.ok(
          events.every((e) => e.portfolioId === cancelled),
          'only the portfolio’s own events',
        );

        const ids = async (q: Omit<Parameters<typeof portfolioHistory>[1], 'accountId'>) =>
          (await portfolioHistory(store, { accountId: TRADER, ...q })).portfolios.map((p) => p.portfolioId);
        assert.deepEqual(await ids({}), [cancelled, iceberg]);
        assert.deepEqual(await ids({ status: 'finished' }), [cancelled, iceberg]);
        assert.deepEqual(await ids({ status: 'active' }), []);
        assert.deepEqual(await ids({ status: 'COMPLETED' }), [iceberg]);
        assert.deepEqual(await ids({ portfolioType: 'COMMON' }), [cancelled]);
        const page1 = await portfolioHistory(store, { accountId: TRADER, count: 1 });
        assert.equal(page1.continuation, String(cancelled));
        const page2 = await portfolioHistory(store, {
          accountId: TRADER,
          count: 1,
          continuation: page1.continuation,
        });
        assert.deepEqual(
          page2.portfolios.map((p) => p.portfolioId),
          [iceberg],
        );
        assert.equal(page2.continuation, null);
        assert.deepEqual(
          (await portfolioHistory(store, { accountId: MIRROR, status: 'active' })).portfolios.map(
            (p) => p.portfolioId,
          ),
          [active],
        );
      }));

    test("a portfolio the core prunes keeps its final record in the store, for info; its row's columns stay", () =>
      withStore(async (store) => {
        const { d, iceberg, active } = portfolioHistoryDriver();
        const machine = d.machine.sub<PortfolioMachine>('portfolios');
        const record = JSON.parse(JSON.stringify(machine.portfolio(iceberg)));
        await feed(store, d.committed);
        assert.equal(await prunedPortfolio(store, iceberg), null, 'not pruned yet: the core answers info');
        const before = await portfolioSummary(store, iceberg);
        const fed = d.committed.length;
        d.at(d.ts + FINISHED_RETENTION_MS + 60_000);
        assert.equal(machine.portfolio(iceberg), undefined, 'the core has pruned it');
        await feed(store, d.committed.slice(fed));
        assert.deepEqual(await prunedPortfolio(store, iceberg), record);
        assert.deepEqual(await portfolioSummary(store, iceberg), before);
        assert.equal(await prunedPortfolio(store, active), null, 'a working portfolio is never pruned');
      }));

    test('command-by-command writes and one batch give the same rows; a reopened store resumes', () =>
      withStore(async (store, reopen) => {
        const { d, iceberg, cancelled, active } = portfolioHistoryDriver();
        // One write per command: later events of a portfolio meet its stored row in SQL.
        const half = d.committed.findIndex((c) => c.subEvents?.has('portfolios') === true) + 2;
        for (const c of d.committed.slice(0, half)) {
          store.push(c);
          await store.flush();
        }
        const again = await reopen();
        assert.equal(again.lastAppliedSeq, d.committed[half - 1]!.seq);
        for (const c of d.committed) {
          again.push(c); // already applied seqs are ignored
          await again.flush();
        }
        const other = await newDatabase();
        const batched = await ReadStore.open({ db: await other.open(), projections: projections() });
        try {
          await feed(batched, d.committed);
          for (const id of [iceberg, cancelled, cancelled + 1, active]) {
            assert.deepEqual(await portfolioSummary(again, id), await portfolioSummary(batched, id));
            assert.deepEqual(await portfolioEvents(again, id), await portfolioEvents(batched, id));
          }
          assert.equal((await portfolioSummary(again, iceberg))?.createdAt, T0);
        } finally {
          await batched.close();
        }
      }));

    test('retention prunes old RFQ history and finished portfolios, never open RFQs or active portfolios', () =>
      withStore(
        async (store) => {
          const d = rfqHistory();
          const open = d.createRfq('still-open');
          const { d: p, iceberg, cancelled, active } = portfolioHistoryDriver();
          // Same store, so re-sequence the portfolio commands after the RFQ ones.
          const offset = d.seq;
          const committed = [...d.committed, ...p.committed.map((c) => ({ ...c, seq: c.seq + offset }))];
          const kept = projectedRows(committed);
          await feed(store, committed);
          const now = d.ts + 60_000;
          // The store's writes swept most of it already as command time moved on (days here);
          // what the sweeps and the prune deleted together is what the settings say.
          const report = await store.prune(now);
          const rows = async (table: string) =>
            (await store.query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`, []))[0]!.n;
          // Trades older than 2 days (the 3 of day 0 and the 2 of day 3) are gone: 7 left.
          assert.equal(await rows('rfq_trades'), 7);
          assert.equal(await rows('rfqs'), kept('rfqs') - 5);
          assert.equal(await rows('rfq_quotes'), kept('rfq_quotes') - 5);
          // The three finished portfolios ended (on day 0) long before; one is still working.
          assert.equal(await rows('portfolios'), kept('portfolios') - 3);
          assert.equal(kept('rfq_trades'), 12);
          assert.equal(report.orders, 0);
          assert.equal((await rfqTrades(store, { currency: 'any', now, count: 1000 })).results.length, 7);
          assert.equal((await rfqById(store, open.blockRfqId))?.status, 'created');
          assert.equal(await portfolioSummary(store, iceberg), null);
          assert.deepEqual(await portfolioEvents(store, cancelled), []);
          assert.equal(await portfolioSummary(store, cancelled + 1), null);
          assert.notEqual(await portfolioSummary(store, active), null);
          assert.notEqual((await portfolioEvents(store, active)).length, 0);
          assert.deepEqual(await store.prune(now), {
            ...report,
            rfqs: { rfqs: 0, quotes: 0, trades: 0 },
            portfolios: 0,
          });
        },
        { closedOrdersMs: null, tradesMs: null, rfqsMs: 2 * DAY, finishedPortfoliosMs: DAY },
      ));

    test('without sub-machine retention settings the prune report keeps its old shape', () =>
      withStore(async (store) => {
        await feed(store, rfqHistory().committed);
        assert.deepEqual(await store.prune(T0 + 100 * DAY), { orders: 0, trades: 0 });
      }));

    test('RFQ trades: a trade exactly 7 days old is still listed, as on the desk', () =>
      withStore(async (store) => {
        const d = CoreDriver.withMarket();
        const [trade] = d.tradeRfqs(1);
        await feed(store, d.committed);
        const now = trade!.timestamp + TRADES_LOOKBACK_MS;
        const desk = d.machine.sub<RfqDesk>('rfq');
        const oracle = pageTrades(desk.trades(), { currency: 'any', now, count: 20, continuation: null });
        assert.equal(oracle.results.length, 1, 'the desk lists it');
        assert.deepEqual((await rfqTrades(store, { currency: 'any', now })).results, oracle.results);
        assert.deepEqual((await rfqTrades(store, { currency: 'any', now: now + 1 })).results, []);
      }));

    test('status active lists a CANCELLING portfolio', () =>
      withStore(async (store) => {
        const event = (status: string, messageType: string, timestamp: number) => ({
          type: 'portfolio',
          messageType,
          portfolioId: 7,
          accountId: TRADER,
          portfolioType: 'TWAP',
          status,
          timestamp,
        });
        store.push({
          seq: 1,
          ts: T0,
          events: [],
          subEvents: new Map([['portfolios', [event('WORKING', 'PORTFOLIO_SUBMITTED', T0)]]]),
        });
        store.push({
          seq: 2,
          ts: T0 + 1,
          events: [],
          subEvents: new Map([['portfolios', [event('CANCELLING', 'PORTFOLIO_CANCELLING', T0 + 1)]]]),
        });
        await store.flush();
        const page = await portfolioHistory(store, { accountId: TRADER, status: 'active' });
        assert.deepEqual(
          page.portfolios.map((p) => [p.portfolioId, p.status]),
          [[7, 'CANCELLING']],
        );
        assert.deepEqual(
          (await portfolioHistory(store, { accountId: TRADER, status: 'finished' })).portfolios,
          [],
        );
      }));

    test('RFQ retention counts from an RFQ’s and its quote’s last change, not their creation', async () => {
      const d = CoreDriver.withMarket();
      const t = d.ts;
      const rfq = d.createRfq('late-cancel');
      d.at(t + 5_000);
      d.quote(rfq);
      d.at(t + 60_000);
      d.ok({ type: 'rfq_cancel', accountId: TAKER, blockRfqId: rfq.blockRfqId });
      await withStore(
        async (store) => {
          await feed(store, d.committed);
          // Cut-off t + 30 s: created before it, cancelled after it (the quote with its RFQ).
          await store.prune(t + 120_000);
          assert.equal((await rfqById(store, rfq.blockRfqId))?.status, 'cancelled');
          const quotes = (await deskQuotes(store, { desk: DESK, rfqId: rfq.blockRfqId })).quotes;
          assert.deepEqual(
            quotes.map((q) => q.status),
            ['cancelled'],
          );
        },
        { closedOrdersMs: null, tradesMs: null, rfqsMs: 90_000 },
      );
    });

    test('RFQ retention never deletes an open RFQ or its open quote', async () => {
      const d = CoreDriver.withMarket();
      const t = d.ts;
      const quoted = d.createRfq('quoted');
      const unquoted = d.createRfq('unquoted');
      d.at(t + 5_000);
      d.quote(quoted);
      d.at(t + 65_000);
      await withStore(
        async (store) => {
          await feed(store, d.committed);
          // Cut-off t + 35 s: both RFQs and the quote last changed at t + 5 s, open since.
          await store.prune(t + 65_000);
          const rows = async (table: string) =>
            Number((await store.query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`, []))[0]!.n);
          assert.equal(await rows('rfq_quotes'), 1, 'the open quote stays');
          assert.equal(await rows('rfqs'), 2, 'the open RFQs stay');
          assert.equal((await rfqById(store, unquoted.blockRfqId))?.status, 'open');
        },
        { closedOrdersMs: null, tradesMs: null, rfqsMs: 30_000 },
      );
    });

    test('RFQ retention never deletes an RFQ still in its grace period (created)', async () => {
      const d = CoreDriver.withMarket();
      const t = d.ts;
      const created = d.createRfq('created');
      await withStore(
        async (store) => {
          await feed(store, d.committed);
          // Cut-off t + 3 s, the RFQ made at t: within the 5 s before it opens.
          await store.prune(t + 4_000);
          assert.equal((await rfqById(store, created.blockRfqId))?.status, 'created');
        },
        { closedOrdersMs: null, tradesMs: null, rfqsMs: 1_000 },
      );
    });

    test('the prune report counts RFQs, quotes and RFQ trades each in its own place', async () => {
      const d = CoreDriver.withMarket();
      d.tradeRfqs(2);
      const rfq = d.createRfq('cancelled');
      d.at(d.ts + 5_000);
      d.quote(rfq);
      d.ok({ type: 'rfq_cancel', accountId: TAKER, blockRfqId: rfq.blockRfqId });
      await withStore(
        async (store) => {
          await feed(store, d.committed);
          // Two traded RFQs with their quote and trade each, one cancelled RFQ with its quote.
          const report = await store.prune(d.ts + 10 * DAY);
          assert.deepEqual(report.rfqs, { rfqs: 3, quotes: 3, trades: 2 });
        },
        { closedOrdersMs: null, tradesMs: null, rfqsMs: DAY },
      );
    });
  });
}
