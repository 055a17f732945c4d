/**
 * Field-by-field checks of the Block RFQ wire views (src/api/wire/rfq.ts) against spec 2.8/2.9:
 * the quote object a maker gets back, and the taker's bids/asks and closed-RFQ fields.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { quoteToWire, rfqToWire, rfqTradeToWire, triggerToWire } from '../../src/api/wire/rfq.ts';
import type { RfqRecord } from '../../src/rfq/types.ts';
import {
  accept,
  CALL_70,
  CALL_75,
  DESK_A,
  DESK_B,
  MAKER_A,
  MAKER_B,
  openRfq,
  PERP,
  quoteIdOf,
  RfqHarness,
  TAKER,
  TAKER_2,
} from './harness.ts';

/** 10 RFQ lots of the call spread, hedged by selling 3 lots (30 USD) of the perpetual. */
const HEDGE = { instrumentName: PERP, side: 'sell' as const, amount: 3, price: 120_000 };

const lookup = (h: RfqHarness) => (name: string) => h.venue.instrument(name)?.instrument;

function quoteWire(h: RfqHarness, quoteId: string) {
  const quote = h.desk.quote(quoteId)!;
  return quoteToWire(quote, h.desk.makerRfq(quote.desk, quote.makerRfqId)!, lookup(h));
}

function takerView(h: RfqHarness, rfq: RfqRecord) {
  const now = h.desk.takerRfq(new Set([TAKER]), rfq.blockRfqId)!;
  return rfqToWire(now, h.desk.quotesOfRfq(rfq.blockRfqId), { role: 'taker' }, lookup(h));
}

describe('quote object fields (spec 2.9)', () => {
  test("a quote names the maker-side blockRfqId, its legs' sides, and its own hedge price", () => {
    const h = new RfqHarness();
    const rfq = openRfq(h, { hedge: HEDGE });
    const id = quoteIdOf(
      h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300, { hedge: { ...HEDGE, price: 119_000 } }),
    );
    const wire = quoteWire(h, id);
    assert.equal(wire.blockRfqId, h.makerId(rfq, DESK_A), "the quote carries the desk's own maker-side id");
    assert.notEqual(wire.blockRfqId, rfq.blockRfqId, "the taker's id never reaches a maker");
    assert.deepEqual(
      wire.legs.map((leg) => [leg.instrumentName, leg.side, leg.price]),
      [
        [CALL_70, 'buy', '0.05'],
        [CALL_75, 'sell', '0.03'],
      ],
      'quote legs keep the side they were quoted with',
    );
    assert.deepEqual(
      wire.hedge,
      { instrumentName: PERP, quantity: '30', side: 'sell', price: '59500' },
      "the quote's hedge is the RFQ's hedge side and share at the maker's own hedge price",
    );
    assert.equal(wire.filledQuantity, '0', 'a fresh quote has filled nothing');
    assert.equal(wire.statusReason, null, 'an open quote has no status reason');
  });

  test('a part-filled quote shows what filled; a cancelled quote says why', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    const a = quoteIdOf(h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300));
    const b = quoteIdOf(h.quote(rfq, DESK_B, MAKER_B, 'sell', 10, 510, 300));
    h.ok({ type: 'rfq_quote_cancel', accountId: MAKER_B, desk: DESK_B, quoteId: b });
    const cancelled = quoteWire(h, b);
    assert.equal(cancelled.status, 'cancelled', 'the maker cancelled quote B');
    assert.equal(cancelled.statusReason, 'user_request', 'a cancelled quote carries its reason');
    const accepted = accept(h, rfq, 'buy', 200, { quantity: 4 });
    assert.equal(accepted.ok, true, 'the taker buys 4 of 10 lots from quote A');
    const filled = quoteWire(h, a);
    assert.equal(filled.quantity, '1', 'the quote keeps its total size');
    assert.equal(filled.filledQuantity, '0.4', 'filledQuantity is the part that traded, not the size');
  });
});

describe("the taker's view (spec 2.8)", () => {
  test('bids best (highest) first; cancelled quotes are not shown', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    quoteIdOf(h.quote(rfq, DESK_A, MAKER_A, 'buy', 4, 400, 300));
    quoteIdOf(h.quote(rfq, DESK_B, MAKER_B, 'buy', 4, 450, 300));
    quoteIdOf(h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300));
    const gone = quoteIdOf(h.quote(rfq, DESK_B, MAKER_B, 'sell', 10, 490, 300));
    h.ok({ type: 'rfq_quote_cancel', accountId: MAKER_B, desk: DESK_B, quoteId: gone });
    const view = takerView(h, rfq);
    assert.deepEqual(
      view.bids!.map((entry) => entry.price),
      ['0.015', '0.01'],
      'bids are listed from the highest price down',
    );
    assert.deepEqual(
      view.asks!.map((entry) => entry.price),
      ['0.02'],
      "desk B's cancelled ask is not on the taker's book",
    );
    assert.equal(view.includedInTakerRating, undefined, 'an open RFQ carries no includedInTakerRating');
  });

  test('a closed RFQ shows includedInTakerRating and no longer lists cancelled quotes', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300);
    h.ok({ type: 'rfq_cancel', accountId: TAKER, blockRfqId: rfq.blockRfqId });
    const view = takerView(h, rfq);
    assert.equal(view.status, 'cancelled', 'the taker cancelled the RFQ');
    assert.equal(view.includedInTakerRating, true, 'a closed RFQ of the taker carries includedInTakerRating');
    assert.equal(view.closedReason, 'user_request', 'a cancelled RFQ says why it closed');
    assert.deepEqual(view.asks, [], 'quotes cancelled with the RFQ are not shown as asks');
  });
});

describe("a maker's view (spec 2.8: makers empty for a maker; label and allocations are the taker's)", () => {
  test('a disclosed RFQ: the maker sees the taker alias, no makers list, no label, no allocations', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h, {
      makers: [DESK_A, DESK_B],
      label: 'secret-label',
      tradeAllocations: [{ amount: 3, userId: TAKER, accountId: TAKER_2 }],
    });
    const now = h.desk.takerRfq(new Set([TAKER]), rfq.blockRfqId)!;
    const taker = rfqToWire(now, [], { role: 'taker' }, lookup(h));
    assert.deepEqual(taker.makers, [DESK_A, DESK_B], 'the taker sees the makers it directed the RFQ to');
    const maker = rfqToWire(now, [], { role: 'maker', desk: DESK_A }, lookup(h));
    assert.deepEqual(maker.makers, [], 'makers is an empty array when role is maker');
    assert.equal(maker.taker, 'taker-desk', 'a disclosed RFQ names its taker to the maker');
    assert.equal(maker.label, undefined, "the taker's label is not shown to makers");
    assert.equal(maker.tradeAllocations, undefined, 'allocations are shown to the taker only');
    assert.ok(!JSON.stringify(maker).includes('secret-label'), 'no trace of the label in the maker view');
  });

  test('an anonymous RFQ hides the taker alias from makers', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h, {
      disclosed: false,
      makers: [],
      targetDesks: [DESK_A, DESK_B, 'desk-c', 'desk-d', 'desk-e'],
    });
    const now = h.desk.takerRfq(new Set([TAKER]), rfq.blockRfqId)!;
    const maker = rfqToWire(now, [], { role: 'maker', desk: DESK_A }, lookup(h));
    assert.equal(maker.disclosed, false, 'the RFQ is anonymous');
    assert.equal(maker.taker, null, 'an anonymous RFQ shows the maker no taker alias');
    assert.ok(!JSON.stringify(maker).includes('taker-desk'), 'no trace of the taker alias in the maker view');
  });
});

describe('grace period, hedge and triggers on the wire', () => {
  test("during the grace period (status created) the taker's view has no bids or asks", () => {
    const h = new RfqHarness();
    const rfq = h.callSpread();
    const quoted = h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300);
    assert.equal(quoted.ok, true, 'makers may quote during the grace period');
    const view = takerView(h, rfq);
    assert.equal(view.status, 'created', 'the RFQ is still in its grace period');
    assert.equal(view.closedReason, null, 'a live RFQ has no closedReason');
    assert.equal(view.bids, undefined, 'no bids are shown to the taker while created');
    assert.equal(view.asks, undefined, 'no asks are shown to the taker while created');
  });

  test("a maker's view of a hedged RFQ shows the hedge", () => {
    const h = new RfqHarness();
    const rfq = openRfq(h, { hedge: HEDGE });
    const now = h.desk.takerRfq(new Set([TAKER]), rfq.blockRfqId)!;
    const maker = rfqToWire(now, [], { role: 'maker', desk: DESK_A }, lookup(h));
    assert.deepEqual(
      maker.hedge,
      { instrumentName: PERP, quantity: '30', side: 'sell', price: '60000' },
      'the maker sees the hedge leg it must quote',
    );
  });

  test("a GTC accept's trigger keeps the taker's side", () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    for (const side of ['buy', 'sell'] as const) {
      const gtc = accept(h, rfq, side, 200, { timeInForce: 'good_til_cancelled' });
      assert.ok(
        gtc.ok && gtc.value.kind === 'accept' && gtc.value.trigger !== null,
        `a ${side} trigger waits`,
      );
      if (!gtc.ok || gtc.value.kind !== 'accept') throw new Error('unreachable');
      const wire = triggerToWire(gtc.value.rfq, gtc.value.trigger!, lookup(h));
      assert.deepEqual(
        [wire.side, wire.price, wire.quantity],
        [side, '0.02', '1'],
        `the ${side} trigger is shown as the taker placed it`,
      );
    }
  });
});

describe('get_trades items (spec 4.9)', () => {
  test("each trades[] item carries the taker's side, as the trade does", () => {
    for (const side of ['buy', 'sell'] as const) {
      const h = new RfqHarness();
      const rfq = openRfq(h);
      // The taker buys from an ask or sells into a bid.
      h.quote(rfq, DESK_A, MAKER_A, side === 'buy' ? 'sell' : 'buy', 10, 500, 300);
      const result = accept(h, rfq, side, 200);
      assert.ok(
        result.ok && result.value.kind === 'accept' && result.value.trade !== null,
        `the ${side} accept trades`,
      );
      if (!result.ok || result.value.kind !== 'accept') throw new Error('unreachable');
      const wire = rfqTradeToWire(result.value.trade!, lookup(h));
      assert.equal(wire.side, side, `the trade is the taker's ${side}`);
      assert.deepEqual(
        wire.trades.map((t) => [t.side, t.quantity, t.price]),
        [[side, '1', '0.02']],
        `trades[].side is the taker's ${side}, as Deribit's trades[].direction`,
      );
    }
  });
});

describe('get_trades items: markPrice and comboId', () => {
  test('a trade shows its strategy mark price and combo id', () => {
    const h = new RfqHarness();
    h.markSpread(500, 300);
    const rfq = openRfq(h);
    h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300);
    const result = accept(h, rfq, 'buy', 200);
    assert.ok(
      result.ok && result.value.kind === 'accept' && result.value.trade !== null,
      'the accept trades',
    );
    if (!result.ok || result.value.kind !== 'accept') throw new Error('unreachable');
    const wire = rfqTradeToWire(result.value.trade!, lookup(h));
    assert.equal(wire.markPrice, '0.02', 'markPrice is the strategy mark (0.05 - 0.03), as a string');
    assert.equal(wire.comboId, 'BTC-CS-27DEC26-70000_75000', 'a listed structure carries its comboId');
  });
});

test("the taker's level keys on the hedge price too: two quotes at one price with other hedge prices are two levels", () => {
  const h = new RfqHarness();
  const rfq = openRfq(h, { hedge: HEDGE });
  h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300, { hedge: { ...HEDGE, price: 119_000 } });
  h.quote(rfq, DESK_B, MAKER_B, 'sell', 10, 500, 300);
  const view = takerView(h, rfq);
  assert.deepEqual(
    view.asks!.map((entry) => [entry.price, entry.hedgePrice, entry.makers]),
    [
      ['0.02', '59500', [DESK_A]],
      ['0.02', '60000', [DESK_B]],
    ],
    "each level shows one hedge price, which the accept's hedge.price bounds",
  );
});
