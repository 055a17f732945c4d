/**
 * `recordAccountSeqs` must name every account whose order, trade or position rows
 * `coreProjection` writes for the same events: a query for an account waits only for the seq it
 * records, so an account it missed could read stale rows.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CoreEvent } from '../../src/core/events.ts';
import { coreProjection, recordAccountSeqs } from '../../src/store/read/core-projections.ts';
import type { RowSink } from '../../src/store/read/projection.ts';
import { comboTradeView } from '../support/combo-trade.ts';
import { orderView, tradeView } from './read-store-contract.ts';

const events: CoreEvent[] = [
  { type: 'order', order: orderView({ orderId: 'a', accountId: 7 }) },
  { type: 'trade', trade: tradeView('BTC-1', 1_000, 3, 4) },
  // A combo trade: rows for it and for each of its leg trades.
  { type: 'trade', trade: comboTradeView({ taker: 5, maker: 6 }) },
  {
    type: 'position',
    position: {
      accountId: 9,
      instrumentName: 'BTC-PERPETUAL',
      size: 5,
      openCost: 100,
      averagePrice: 20,
      realisedPnl: 0,
      settlementCurrency: 'BTC',
    },
  },
];

test('recordAccountSeqs names exactly the accounts whose rows the core projection writes', () => {
  const written = new Set<number>();
  const sink: RowSink = {
    upsert: (_table, row) => void written.add(row.account_id as number),
    delete: (_table, key) => void written.add(key.account_id as number),
  };
  coreProjection().project({ seq: 12, ts: 0, events }, sink);
  const seqs = new Map<number, number>([[1, 3]]);
  recordAccountSeqs(events, 12, seqs);
  assert.deepEqual([...written].sort(), [3, 4, 5, 6, 7, 9]);
  for (const account of written) assert.equal(seqs.get(account), 12, `account ${account}`);
  assert.equal(seqs.get(1), 3, 'other accounts keep their seq');
  assert.equal(seqs.size, written.size + 1);
});
