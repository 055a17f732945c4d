/**
 * The settlement history, as every HistoryPort answers it (the memory port, and the read store on
 * SQLite and PostgreSQL): the settlements' `balance` events, the filters, the order and paging.
 */
import assert from 'node:assert/strict';
import type { CoreEvent, SettlementDetail } from '../../src/core/events.ts';
import type { CommittedEvents } from '../../src/store/read/projection.ts';
import type {
  SettlementHistoryPage,
  SettlementHistoryQuery,
} from '../../src/store/read/settlement-queries.ts';

const NOW = 1_800_000_000_000;
const MIN = 60_000;
const DAY = 24 * 60 * MIN;

function settled(
  accountId: number,
  currency: string,
  change: number,
  balance: number,
  detail: Partial<SettlementDetail> & { instrumentName: string },
): CoreEvent {
  return {
    type: 'balance',
    accountId,
    currency,
    balance,
    change,
    reason: 'settlement',
    settlement: { size: 1, settlementPrice: 1, settlementIndex: null, profitLoss: change, ...detail },
  };
}

/** Settlements of accounts 1 and 2 over four commands (and balance changes that are none). */
export function settlementBatches(): CommittedEvents<CoreEvent>[] {
  return [
    {
      seq: 10,
      ts: NOW - 2 * DAY,
      events: [
        settled(1, 'BTC', 150, 1_150, {
          instrumentName: 'BTC-27DEC24-60000-C',
          size: 30,
          settlementPrice: 250,
          settlementIndex: '61000.52',
          profitLoss: 100,
        }),
        settled(2, 'BTC', -151, 849, {
          instrumentName: 'BTC-27DEC24-60000-C',
          size: -30,
          settlementPrice: 250,
          settlementIndex: '61000.52',
          profitLoss: -60,
        }),
      ],
    },
    {
      seq: 11,
      ts: NOW - DAY,
      events: [
        // A trade's balance change and a deposit: no settlement.
        { type: 'balance', accountId: 1, currency: 'USDC', balance: 5_000, change: -20, reason: 'trade' },
        { type: 'balance', accountId: 1, currency: 'USDC', balance: 6_000, change: 1_000, reason: 'deposit' },
        settled(1, 'USDC', -500, 5_500, {
          instrumentName: 'BTC_USDC-27DEC24-60000-P',
          size: -2,
          settlementPrice: 5_000,
          settlementIndex: '59500',
          profitLoss: -300,
        }),
      ],
    },
    {
      seq: 12,
      ts: NOW - MIN,
      events: [
        settled(1, 'BTC', 7, 1_157, {
          instrumentName: 'BTC-27DEC24',
          size: 1_000,
          settlementPrice: 24_400,
          profitLoss: 7,
        }),
        settled(1, 'ETH', 0, 10, { instrumentName: 'ETH-27DEC24-3000-C', size: 5, settlementPrice: 0 }),
      ],
    },
  ];
}

type Settlements = (query: SettlementHistoryQuery) => Promise<SettlementHistoryPage>;

export async function assertSettlementHistory(settlements: Settlements): Promise<void> {
  const names = async (q: Partial<SettlementHistoryQuery> = {}) =>
    (await settlements({ accountId: 1, ...q })).settlements.map((s) => s.instrumentName);
  assert.deepEqual(await names(), [
    'ETH-27DEC24-3000-C',
    'BTC-27DEC24',
    'BTC_USDC-27DEC24-60000-P',
    'BTC-27DEC24-60000-C',
  ]);
  // Filed as the other history: the base coin, and a linear pair's quote.
  assert.deepEqual(await names({ currency: 'BTC' }), [
    'BTC-27DEC24',
    'BTC_USDC-27DEC24-60000-P',
    'BTC-27DEC24-60000-C',
  ]);
  assert.deepEqual(await names({ currency: 'USDC' }), ['BTC_USDC-27DEC24-60000-P']);
  assert.deepEqual(await names({ currency: 'ETH' }), ['ETH-27DEC24-3000-C']);
  assert.deepEqual(await names({ currency: 'USDT' }), []);
  assert.deepEqual(await names({ instrumentName: 'BTC-27DEC24' }), ['BTC-27DEC24']);
  assert.deepEqual(await names({ currency: 'BTC', type: 'settlement' }), []);
  assert.deepEqual(await names({ type: 'bankruptcy' }), []);
  assert.equal((await names({ type: 'delivery' })).length, 4);
  // No newer than searchStartTimestamp, inclusive.
  assert.deepEqual(await names({ searchStartTimestamp: NOW - DAY }), [
    'BTC_USDC-27DEC24-60000-P',
    'BTC-27DEC24-60000-C',
  ]);
  assert.deepEqual(await names({ searchStartTimestamp: NOW - DAY - 1 }), ['BTC-27DEC24-60000-C']);
  // Each account its own.
  const other = await settlements({ accountId: 2 });
  assert.deepEqual(
    other.settlements.map((s) => [s.instrumentName, s.size, s.cashflow, s.balance]),
    [['BTC-27DEC24-60000-C', -30, -151, 849]],
  );
  assert.equal(other.continuation, null);
  assert.deepEqual((await settlements({ accountId: 3 })).settlements, []);
  // The whole record.
  const [put] = (await settlements({ accountId: 1, currency: 'USDC' })).settlements;
  assert.deepEqual(put, {
    accountId: 1,
    type: 'delivery',
    timestamp: NOW - DAY,
    instrumentName: 'BTC_USDC-27DEC24-60000-P',
    size: -2,
    settlementPrice: 5_000,
    settlementIndex: '59500',
    profitLoss: -300,
    cashflow: -500,
    currency: 'USDC',
    balance: 5_500,
  });
  // Pages of 1 and 3 walk every entry once, in order; the last page has no continuation.
  for (const count of [1, 3]) {
    const walked: string[] = [];
    let continuation: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const page: SettlementHistoryPage = await settlements({ accountId: 1, count, continuation });
      assert.ok(page.settlements.length <= count);
      walked.push(...page.settlements.map((s) => s.instrumentName));
      continuation = page.continuation;
      if (continuation === null) break;
    }
    assert.deepEqual(walked, await names(), `count ${count}`);
  }
  const exact = await settlements({ accountId: 1, count: 4 });
  assert.equal(exact.continuation, null, 'a page ending at the last entry has no continuation');
  // Two settlements of one command page apart too (ordered by instrument name, newest first).
  const first = await settlements({ accountId: 1, count: 1 });
  assert.equal(first.continuation, '12:ETH-27DEC24-3000-C');
  assert.deepEqual(
    (await settlements({ accountId: 1, count: 1, continuation: first.continuation })).settlements.map(
      (s) => s.instrumentName,
    ),
    ['BTC-27DEC24'],
  );
  await assert.rejects(settlements({ accountId: 1, count: 0 }), RangeError);
  await assert.rejects(settlements({ accountId: 1, count: 1001 }), RangeError);
  await assert.rejects(settlements({ accountId: 1, continuation: 'x:1' }), RangeError);
}
