/**
 * The transaction log, as every HistoryPort answers it (the memory port, and the read store on
 * SQLite and PostgreSQL): one entry per `balance` event with its cause, the filters, the order,
 * the paging, and balances that chain.
 */
import assert from 'node:assert/strict';
import type { CoreEvent, TradeView } from '../../src/core/events.ts';
import { tradeParty } from '../../src/engine/testkit.ts';
import type { CommittedEvents } from '../../src/store/read/projection.ts';
import type { TransactionLogPage, TransactionLogQuery } from '../../src/store/read/transaction-queries.ts';
import { COMBO, comboTradeView, LONG_LEG, SHORT_LEG } from '../support/combo-trade.ts';

const T = 1_800_000_000_000;
const MIN = 60_000;

function trade(
  tradeId: string,
  instrumentName: string,
  fees: { taker: number; maker: number; currency: string },
  more: Partial<TradeView> = {},
): TradeView {
  return {
    tradeId,
    tradeSeq: 1,
    instrumentName,
    currency: 'BTC',
    timestamp: T,
    price: 600,
    amount: 10,
    tickDirection: 0,
    indexPrice: null,
    markPrice: null,
    taker: tradeParty({
      accountId: 1,
      orderId: `T${tradeId}`,
      side: 'sell',
      liquidity: 'T',
      fee: fees.taker,
      feeCurrency: fees.currency,
    }),
    maker: tradeParty({
      accountId: 2,
      orderId: `M${tradeId}`,
      side: 'buy',
      liquidity: 'M',
      fee: fees.maker,
      feeCurrency: fees.currency,
    }),
    blockTradeId: null,
    blockRfqId: null,
    blockRfqQuoteId: null,
    ...more,
  };
}

function balance(
  accountId: number,
  currency: string,
  change: number,
  after: number,
  more: Partial<Extract<CoreEvent, { type: 'balance' }>> = {},
): CoreEvent {
  return { type: 'balance', accountId, currency, change, balance: after, reason: 'trade', ...more };
}

/**
 * Account 1: deposits, a perpetual trade (taker, a fee), a spot sale (the base out, the quote in
 * less its fee), a block trade, a delivery and a withdrawal; account 2 on the other sides.
 */
export function transactionBatches(): CommittedEvents<CoreEvent>[] {
  const perp = trade('BTC-1', 'BTC-PERPETUAL', { taker: 3, maker: 0, currency: 'BTC' });
  const spot = trade('BTC-2', 'BTC_USDC', { taker: 6, maker: 0, currency: 'USDC' });
  const block = trade(
    'BTC-3',
    'BTC-27DEC24-60000-C',
    { taker: 2, maker: 2, currency: 'BTC' },
    {
      blockTradeId: 'BLOCK-1',
    },
  );
  return [
    {
      seq: 1,
      ts: T,
      events: [
        balance(1, 'BTC', 1_000, 1_000, { reason: 'deposit', depositId: 'd-1' }),
        balance(1, 'USDC', 5_000, 5_000, { reason: 'deposit' }),
        balance(2, 'BTC', 900, 900, { reason: 'deposit' }),
      ],
    },
    {
      seq: 2,
      ts: T + MIN,
      events: [
        { type: 'trade', trade: perp },
        balance(1, 'BTC', -3, 997, { tradeId: 'BTC-1' }),
        balance(2, 'BTC', 0, 900, { tradeId: 'BTC-1' }),
      ],
    },
    {
      seq: 3,
      ts: T + 2 * MIN,
      events: [
        { type: 'trade', trade: spot },
        balance(1, 'BTC', -100, 897, { tradeId: 'BTC-2' }),
        balance(1, 'USDC', 5_994, 10_994, { tradeId: 'BTC-2' }),
        balance(2, 'BTC', 100, 1_000, { tradeId: 'BTC-2' }),
        balance(2, 'USDC', -6_000, -6_000, { tradeId: 'BTC-2' }),
      ],
    },
    {
      seq: 4,
      ts: T + 3 * MIN,
      events: [
        { type: 'trade', trade: block },
        balance(1, 'BTC', 58, 955, { tradeId: 'BTC-3' }),
        balance(2, 'BTC', -62, 938, { tradeId: 'BTC-3' }),
      ],
    },
    {
      seq: 5,
      ts: T + 4 * MIN,
      events: [
        balance(1, 'BTC', -20, 935, {
          reason: 'settlement',
          settlement: {
            instrumentName: 'BTC-27DEC24-60000-C',
            size: -10,
            settlementPrice: 20,
            settlementIndex: '61000',
            profitLoss: 40,
          },
        }),
      ],
    },
    { seq: 6, ts: T + 5 * MIN, events: [balance(1, 'BTC', -35, 900, { reason: 'withdraw' })] },
    {
      // A combo trade between accounts 5 and 6: each leg's cash is an entry naming its leg trade.
      seq: 7,
      ts: T + 6 * MIN,
      events: [
        {
          type: 'trade',
          trade: comboTradeView({ tradeId: 'BTC-20', taker: 5, maker: 6, timestamp: T + 6 * MIN }),
        },
        balance(5, 'BTC', -40, -40, { tradeId: 'BTC-20-L1' }),
        balance(5, 'BTC', 25, -15, { tradeId: 'BTC-20-L2' }),
      ],
    },
  ];
}

type Transactions = (query: TransactionLogQuery) => Promise<TransactionLogPage>;

export async function assertTransactionLog(transactions: Transactions): Promise<void> {
  const all = { accountId: 1, currency: 'BTC', startTimestamp: 0, endTimestamp: T + DAY_MS };
  const ids = async (q: Partial<TransactionLogQuery> = {}) =>
    (await transactions({ ...all, ...q })).logs.map((l) => `${l.id} ${l.type}`);
  assert.deepEqual(await ids(), [
    '6:0 withdrawal',
    '5:0 delivery',
    '4:1 trade',
    '3:1 trade',
    '2:1 trade',
    '1:0 deposit',
  ]);
  assert.deepEqual(await ids({ currency: 'USDC' }), ['3:2 trade', '1:1 deposit']);
  assert.deepEqual(await ids({ accountId: 2 }), ['4:2 trade', '3:3 trade', '2:2 trade', '1:2 deposit']);
  assert.deepEqual(await ids({ currency: 'ETH' }), []);

  // Walked oldest first, each balance is the one before plus the change.
  for (const [accountId, currency] of [
    [1, 'BTC'],
    [1, 'USDC'],
    [2, 'BTC'],
    [2, 'USDC'],
  ] as const) {
    const logs = (await transactions({ ...all, accountId, currency })).logs.reverse();
    let running = 0;
    for (const log of logs) {
      running += log.change;
      assert.equal(log.balance, running, `${accountId} ${currency} ${log.id}`);
    }
  }

  // The causes.
  const [withdrawal, delivery, block, spotBase, perp, deposit] = (await transactions(all)).logs;
  assert.deepEqual(deposit, {
    id: '1:0',
    accountId: 1,
    timestamp: T,
    type: 'deposit',
    currency: 'BTC',
    change: 1_000,
    balance: 1_000,
    depositId: 'd-1',
  });
  assert.deepEqual(perp!.trade, {
    tradeId: 'BTC-1',
    instrumentName: 'BTC-PERPETUAL',
    orderId: 'TBTC-1',
    side: 'sell',
    liquidity: 'T',
    price: 600,
    amount: 10,
    fee: 3,
    blockTradeId: null,
  });
  // The spot sale's base went out with no fee; its quote came in less the fee.
  assert.equal(spotBase!.trade?.fee, 0);
  const [spotQuote] = (await transactions({ ...all, currency: 'USDC', count: 1 })).logs;
  assert.deepEqual(
    [spotQuote!.change, spotQuote!.trade?.fee, spotQuote!.trade?.tradeId],
    [5_994, 6, 'BTC-2'],
  );
  assert.equal(block!.trade?.blockTradeId, 'BLOCK-1');
  assert.deepEqual(delivery!.settlement, {
    instrumentName: 'BTC-27DEC24-60000-C',
    size: -10,
    settlementPrice: 20,
    settlementIndex: '61000',
    profitLoss: 40,
  });
  assert.equal(withdrawal!.trade, undefined);
  // The other side of a trade: account 2's own order and role.
  const [, , makerPerp] = (await transactions({ ...all, accountId: 2 })).logs;
  assert.deepEqual(
    [makerPerp!.trade?.orderId, makerPerp!.trade?.side, makerPerp!.trade?.liquidity],
    ['MBTC-1', 'buy', 'M'],
  );

  // Each leg of a combo trade is an entry of its own, with the combo named.
  const legs = (await transactions({ ...all, accountId: 5 })).logs.reverse();
  assert.deepEqual(
    legs.map((l) => [l.id, l.trade?.tradeId, l.trade?.instrumentName, l.trade?.comboId, l.change, l.balance]),
    [
      ['7:1', 'BTC-20-L1', LONG_LEG, COMBO, -40, -40],
      ['7:2', 'BTC-20-L2', SHORT_LEG, COMBO, 25, -15],
    ],
  );

  // Query words: all must be the entry's.
  assert.deepEqual(await ids({ query: 'trade' }), ['4:1 trade', '3:1 trade', '2:1 trade']);
  assert.deepEqual(await ids({ query: 'deposit' }), ['1:0 deposit']);
  assert.deepEqual(await ids({ query: 'delivery, option' }), ['5:0 delivery']);
  assert.deepEqual(await ids({ query: 'block_trade' }), ['4:1 trade']);
  assert.deepEqual(await ids({ query: 'TAKER sell spot' }), ['3:1 trade']);
  assert.deepEqual(await ids({ query: 'future' }), ['2:1 trade']);
  assert.deepEqual(await ids({ query: 'maker' }), []);
  assert.deepEqual(await ids({ accountId: 2, query: 'maker buy' }), ['4:2 trade', '3:3 trade', '2:2 trade']);
  assert.deepEqual(await ids({ query: 'withdrawal' }), ['6:0 withdrawal']);
  // A combo's leg entries are the combo's trade too: its kind finds them, as their own kind does.
  assert.deepEqual(await ids({ accountId: 5, query: 'option_combo' }), ['7:2 trade', '7:1 trade']);
  assert.deepEqual(await ids({ accountId: 5, query: 'option taker' }), ['7:2 trade', '7:1 trade']);
  assert.deepEqual(await ids({ accountId: 5, query: 'future_combo' }), []);
  await assert.rejects(transactions({ ...all, query: 'trade funding' }), (e: unknown) => {
    return e instanceof RangeError && /^query word 'funding'/.test(e.message);
  });

  // Times bound inclusively.
  assert.deepEqual(await ids({ startTimestamp: T + MIN, endTimestamp: T + 3 * MIN }), [
    '4:1 trade',
    '3:1 trade',
    '2:1 trade',
  ]);
  assert.deepEqual(await ids({ startTimestamp: T + MIN + 1, endTimestamp: T + 3 * MIN - 1 }), ['3:1 trade']);

  // Pages walk every entry once, in order; the last has no continuation.
  for (const count of [1, 4]) {
    const walked: string[] = [];
    let continuation: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const page: TransactionLogPage = await transactions({ ...all, count, continuation });
      walked.push(...page.logs.map((l) => l.id));
      continuation = page.continuation;
      if (continuation === null) break;
    }
    assert.deepEqual(walked, ['6:0', '5:0', '4:1', '3:1', '2:1', '1:0'], `count ${count}`);
  }
  assert.equal((await transactions({ ...all, count: 6 })).continuation, null);
  assert.equal((await transactions({ ...all, count: 2 })).continuation, '5:0');
  await assert.rejects(transactions({ ...all, count: 0 }), RangeError);
  await assert.rejects(transactions({ ...all, count: 1001 }), RangeError);
  await assert.rejects(transactions({ ...all, continuation: '3:x' }), RangeError);
  assert.equal((await transactions({ ...all })).logs.length, 6, 'default count 100');
}

const DAY_MS = 24 * 3_600_000;
