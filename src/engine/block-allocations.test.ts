/**
 * A block's `tradeAllocations` (a Block RFQ's list): recorded on the trades the block books (a
 * combo's trade, not its leg trades) and in their `trade` events, never on the public tape; the
 * engine's state does not depend on them, so a `block_trade` journaled before they existed (no
 * field) replays as it did, and the same block with them leaves the same state.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { BlockTrade, TradeAllocation, UnstampedCommand } from '../core/commands.ts';
import type { CoreEvent, TradeView } from '../core/events.ts';
import { HIGH_CALL, LOW_CALL, listCombos, SPREAD } from './combo-testkit.ts';
import { Harness } from './testkit.ts';

const ALLOCATIONS: TradeAllocation[] = [
  { amount: '12.5', userId: 3 },
  { amount: '5', clientInfo: { clientId: 7, clientLinkId: 8, name: null } },
];

function venue(): Harness {
  const h = new Harness();
  listCombos(h, [SPREAD]);
  h.account(1);
  h.account(2);
  h.ok({
    type: 'update_prices',
    indexPrices: [{ currency: 'BTC', price: 60_000 }],
    markPrices: [
      { instrumentName: LOW_CALL, markPrice: 500 },
      { instrumentName: HIGH_CALL, markPrice: 300 },
    ],
  });
  return h;
}

/** A Block RFQ's block: an outright leg and a leg on the call spread's book. */
function block(more: Partial<BlockTrade> = {}): UnstampedCommand {
  return {
    type: 'block_trade',
    takerAccountId: 1,
    makerAccountId: 2,
    legs: [
      { instrumentName: LOW_CALL, side: 'buy', amount: 10, price: 500 },
      { instrumentName: SPREAD, side: 'buy', amount: 10, price: 200 },
    ],
    blockRfqId: '7',
    blockRfqQuoteId: '9',
    ...more,
  } as UnstampedCommand;
}

const tradesOf = (events: readonly CoreEvent[]): TradeView[] =>
  events.flatMap((event) => (event.type === 'trade' ? [event.trade] : []));

describe('block trade allocations', () => {
  test("are on the block's trades and their events, on a combo's trade but not its legs", () => {
    const h = venue();
    const result = h.ok(block({ tradeAllocations: ALLOCATIONS }));
    const trades = result.trades ?? [];
    assert.equal(trades.length, 2);
    assert.deepEqual(tradesOf(result.events), trades);
    for (const trade of trades) assert.deepEqual(trade.tradeAllocations, ALLOCATIONS);
    const combo = trades[1]!;
    assert.equal(combo.instrumentName, SPREAD);
    assert.equal(combo.legs?.length, 2);
    for (const leg of combo.legs!) assert.equal('tradeAllocations' in leg, false);
    // The public tape does not show them.
    const tape = [LOW_CALL, SPREAD].flatMap((name) => h.venue.recentTrades(name, 10));
    assert.deepEqual(
      tape.map((t) => t.tradeId).sort(),
      [
        ...trades.map((t) => t.tradeId),
        ...combo.legs!.filter((leg) => leg.instrumentName === LOW_CALL).map((leg) => leg.tradeId),
      ].sort(),
    );
    for (const trade of tape) assert.equal('tradeAllocations' in trade, false);
    // A copy: the command's list is not shared with the trades.
    assert.notEqual(trades[0]!.tradeAllocations, ALLOCATIONS);
  });

  test('an old block_trade (no field) replays as before; with the field, the state is the same', () => {
    const old = venue();
    const before = old.ok(block());
    for (const trade of tradesOf(before.events)) assert.equal('tradeAllocations' in trade, false);
    const replay = venue();
    const again = replay.ok(block());
    assert.deepEqual(again.events, before.events);
    assert.equal(replay.venue.stateHash(), old.venue.stateHash());
    // An empty list is none.
    const empty = venue();
    assert.deepEqual(empty.ok(block({ tradeAllocations: [] })).events, before.events);
    // With allocations: the same events but for the trades' field, and the same engine state.
    const allocated = venue();
    const withField = allocated.ok(block({ tradeAllocations: ALLOCATIONS }));
    assert.deepEqual(
      withField.events.map((event) => {
        if (event.type !== 'trade') return event;
        const { tradeAllocations: _shown, ...trade } = event.trade;
        return { ...event, trade };
      }),
      before.events,
    );
    assert.equal(allocated.venue.stateHash(), old.venue.stateHash());
  });

  test('a malformed list is refused', () => {
    const h = venue();
    const refused = h.run(block({ tradeAllocations: [{ amount: 5 }] as unknown as TradeAllocation[] }));
    assert.equal(refused.ok, false);
    assert.equal(refused.ok ? '' : refused.error.data.field, 'tradeAllocations');
  });
});
