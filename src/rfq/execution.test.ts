import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BlockTrade, CoreCommand } from '../core/commands.ts';
import type { CommandResult } from '../core/events.ts';
import { executeAccept } from './execution.ts';
import { quoteRecord } from './testkit.ts';
import type { QuoteRecord, RfqRecord } from './types.ts';

const rfq: RfqRecord = {
  blockRfqId: '1',
  number: 1,
  takerAccountId: 1,
  takerUserId: 1,
  takerAlias: null,
  makers: ['d'],
  makerRecords: [],
  disclosed: false,
  label: '',
  currency: 'BTC',
  quoteCurrency: 'BTC',
  legs: [{ instrumentName: 'BTC-PERPETUAL', side: 'buy', ratio: 1, lotsPerUnit: 1 }],
  hedge: null,
  comboId: null,
  quantity: 10,
  quantityStep: '10',
  minTradeAmount: 1,
  priceScale: 1,
  legTickUnits: [5],
  tradeAllocations: [],
  createdAt: 0,
  openAt: 0,
  expiresAt: 1_000_000,
  status: 'open',
  closedReason: null,
  lastUpdatedAt: 0,
  filledQuantity: 0,
  triggers: [],
};

function sellQuote(id: number, accountId: number): QuoteRecord {
  return {
    ...quoteRecord(id, 'sell', 100, 10),
    accountId,
    legs: [{ instrumentName: 'BTC-PERPETUAL', side: 'buy', ratio: 1, price: 100 }],
  };
}

function makerRefusal(accountId: number): CommandResult {
  return {
    ok: false,
    events: [],
    error: {
      name: 'not_enough_funds',
      message: 'not enough funds',
      data: { field: 'makerAccountId', accountId },
    },
  };
}

const stamp = { seq: 1, ts: 10 };

test('an accept the engine refuses for a maker cancels that maker and trades with the next', () => {
  const quotes = [sellQuote(1, 2), sellQuote(2, 3)];
  const commands: CoreCommand[] = [];
  const engine = {
    execute(command: CoreCommand): CommandResult {
      commands.push(command);
      return commands.length === 1 ? makerRefusal(2) : { ok: true, events: [], trades: [] };
    },
  };
  const outcome = executeAccept(rfq, quotes, 'buy', 100, 10, stamp, engine);
  assert.equal(outcome.kind, 'traded');
  assert.deepEqual(
    outcome.touched.map((quote) => [quote.quoteId, quote.status, quote.statusReason]),
    [
      ['1', 'cancelled', 'trade_refused'],
      ['2', 'filled', null],
    ],
  );
  assert.equal(commands.length, 2);
});

test("each block names the RFQ's id as its maker desk sees it", () => {
  const quotes = [sellQuote(1, 2), { ...sellQuote(2, 3), desk: 'e', quantity: 5 }];
  const withMakerIds = {
    ...rfq,
    makerRecords: [
      { desk: 'e', blockRfqId: '8' },
      { desk: 'd', blockRfqId: '7' },
    ],
  };
  const commands: CoreCommand[] = [];
  const engine = {
    execute(command: CoreCommand): CommandResult {
      commands.push(command);
      return { ok: true, events: [], trades: [] };
    },
  };
  quotes[0]!.price = 101;
  executeAccept(withMakerIds, quotes, 'buy', 101, 15, stamp, engine);
  const block = commands[0] as BlockTrade;
  assert.deepEqual(
    [block, ...(block.batch ?? [])].map((terms) => [
      terms.blockRfqQuoteId,
      terms.blockRfqId,
      terms.makerBlockRfqId,
    ]),
    [
      ['2', '1', '8'],
      ['1', '1', '7'],
    ],
  );
});

test('re-planning that cancels nothing fails the accept at once instead of looping forever', () => {
  const quotes = [sellQuote(1, 2), sellQuote(2, 3)];
  let calls = 0;
  const engine = {
    execute(command: CoreCommand): CommandResult {
      calls += 1;
      // A broken invariant: cancelled quotes come back open, so no round makes progress.
      for (const quote of quotes) quote.status = 'open';
      return makerRefusal((command as BlockTrade).makerAccountId);
    },
  };
  assert.throws(
    () => executeAccept(rfq, quotes, 'buy', 100, 10, stamp, engine),
    /did not end within 3 rounds/,
  );
  assert.equal(calls, 3);
});
