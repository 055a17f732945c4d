/**
 * The desk's limits with the real engine: anonymous RFQs need enough makers, quotes per desk
 * per side, open RFQs per taker account. Limits are derived from the records, so they survive
 * snapshot/restore unchanged.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_RFQ_CONFIG } from '../../src/rfq/types.ts';
import { DESK_A, DESK_B, MAKER_A, MAKER_C, quoteIdOf, RfqHarness, spreadLegs, TAKER } from './harness.ts';

const FIVE_DESKS = [DESK_A, DESK_B, 'desk-c', 'desk-d', 'desk-e'];

describe('anonymous RFQs', () => {
  test('disclosed: false needs at least 5 distinct target desks; the refusal names `disclosed`', () => {
    assert.equal(DEFAULT_RFQ_CONFIG.minMakersForAnonymous, 5);
    const h = new RfqHarness();
    const result = h.run({
      type: 'rfq_create',
      accountId: TAKER,
      userId: TAKER,
      takerAlias: null,
      makers: [DESK_A, DESK_B],
      targetDesks: [DESK_A, DESK_B],
      disclosed: false,
      label: '',
      legs: [{ instrumentName: 'BTC-27DEC26-70000-C', side: 'buy', amount: 10 }],
      hedge: null,
      tradeAllocations: [],
    });
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.equal(result.error.name, 'anonymous_rfq_too_few_makers');
    assert.equal(result.error.data.field, 'disclosed');
    assert.match(result.error.message, /at least 5 makers/);

    // Repeated names do not make up the count: a name listed twice is refused.
    const repeated = [DESK_A, DESK_A, DESK_A, DESK_B, DESK_B];
    assert.throws(() => h.callSpread({ disclosed: false, makers: repeated, targetDesks: repeated }));
    // No explicit list: the edge targets every maker desk; fewer than 5 is refused, 5 accepted.
    assert.throws(() => h.callSpread({ disclosed: false, makers: [], targetDesks: FIVE_DESKS.slice(0, 4) }));
    const all = h.callSpread({ disclosed: false, makers: [], targetDesks: FIVE_DESKS });
    assert.equal(all.disclosed, false);
    const listed = h.callSpread({ disclosed: false, makers: FIVE_DESKS, targetDesks: FIVE_DESKS });
    assert.equal(listed.makerRecords.length, 5);
    // Disclosed RFQs may target a single desk.
    assert.equal(h.callSpread({ makers: [DESK_A], targetDesks: [DESK_A] }).disclosed, true);
  });
});

describe('quotes per side', () => {
  test('a desk holds at most 5 open quotes on one side of an RFQ; 13905 still caps both sides at 10', () => {
    assert.equal(DEFAULT_RFQ_CONFIG.maxQuotesPerMakerPerRfqSide, 5);
    const h = new RfqHarness();
    const rfq = h.callSpread();
    h.at(h.now + 5_000);
    const asks = [0, 1, 2, 3, 4].map((i) =>
      quoteIdOf(h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500 + i * 5, 300)),
    );
    const sixth = h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 600, 300);
    assert.equal(sixth.ok, false);
    if (!sixth.ok) {
      assert.equal(sixth.error.name, 'too_many_quotes_per_block_rfq_side');
      assert.equal(sixth.error.data.field, 'side');
    }
    // Another desk has its own allowance.
    quoteIdOf(h.quote(rfq, DESK_B, 3, 'sell', 10, 600, 300));
    // The other side is still open; the 5th bid is the desk's 10th quote.
    const bids = [0, 1, 2, 3, 4].map((i) =>
      quoteIdOf(h.quote(rfq, DESK_A, MAKER_A, 'buy', 10, 400 - i * 5, 300)),
    );
    // An edit may not move a quote onto a full side.
    h.refused(
      {
        type: 'rfq_quote_edit',
        accountId: MAKER_A,
        desk: DESK_A,
        quoteId: bids[0]!,
        side: 'sell',
        quantity: 10,
        price: null,
        legs: spreadLegs(700, 300),
        hedge: null,
        executionInstruction: 'any_part_of',
        expiresAt: null,
        label: '',
      },
      'too_many_quotes_per_block_rfq_side',
    );
    // Both sides full: the per-RFQ limit answers first.
    h.refused({ ...h.quoteCommand(rfq), legs: spreadLegs(650, 300) }, 'too_many_quotes_per_block_rfq');
    // A cancelled ask frees a slot on its side (and one of the ten).
    h.ok({ type: 'rfq_quote_cancel', accountId: MAKER_A, desk: DESK_A, quoteId: asks[4]! });
    quoteIdOf(h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 650, 300));
  });
});

describe('open RFQs per taker', () => {
  test('a taker account holds at most 20 created/open RFQs; closing one frees a slot; survives restore', () => {
    assert.equal(DEFAULT_RFQ_CONFIG.maxOpenRfqsPerTaker, 20);
    const h = new RfqHarness();
    const rfqs = Array.from({ length: 20 }, () => h.callSpread());
    const over = h.run({ ...createCommand(), accountId: TAKER });
    assert.equal(over.ok, false);
    if (!over.ok) {
      assert.equal(over.error.name, 'too_many_open_block_rfqs');
      assert.equal(over.error.data.max, 20);
    }
    // Another taker account is not affected.
    assert.ok(h.run({ ...createCommand(), accountId: MAKER_C, userId: MAKER_C }).ok);

    // The count is derived from the records: a restored desk refuses the same way.
    const restored = new RfqHarness();
    restored.desk.restore(JSON.parse(JSON.stringify(h.desk.snapshot())));
    assert.equal(restored.desk.stateHash(), h.desk.stateHash());
    restored.refused(createCommand(), 'too_many_open_block_rfqs');

    h.ok({ type: 'rfq_cancel', accountId: TAKER, blockRfqId: rfqs[0]!.blockRfqId });
    assert.ok(h.run(createCommand()).ok);
    h.refused(createCommand(), 'too_many_open_block_rfqs');
    // Expiry (5 minutes, virtual clock) frees every slot.
    h.at(h.now + DEFAULT_RFQ_CONFIG.lifetimeMs);
    assert.ok(h.run(createCommand()).ok);
  });
});

function createCommand() {
  return {
    type: 'rfq_create' as const,
    accountId: TAKER,
    userId: TAKER,
    takerAlias: null,
    makers: [],
    targetDesks: [DESK_A, DESK_B],
    disclosed: true,
    label: '',
    legs: [{ instrumentName: 'BTC-27DEC26-70000-C', side: 'buy' as const, amount: 10 }],
    hedge: null,
    tradeAllocations: [],
  };
}
