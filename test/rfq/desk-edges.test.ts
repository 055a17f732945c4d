/**
 * Edges of the Block RFQ desk that no other test reached: the open timer's wakeup and stamp, quote
 * edits across sides and into a waiting trigger, accepts above the RFQ quantity, refused and
 * closed triggers, trade order at one timestamp, allocations (zero, used up at a quote boundary)
 * and quote legs on the wrong side.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  accept,
  CALL_70,
  DESK_A,
  DESK_B,
  MAKER_A,
  MAKER_B,
  openRfq,
  quoteIdOf,
  RfqHarness,
  spreadLegs,
  T0,
  TAKER,
  TAKER_2,
} from './harness.ts';

describe('RFQ desk edges: timers', () => {
  test('a created RFQ asks for a wakeup at its openAt (end of the grace period), not at its expiry', () => {
    const h = new RfqHarness();
    const rfq = h.callSpread();
    assert.equal(rfq.openAt, T0 + 5_000);
    assert.equal(h.desk.nextWakeup(), T0 + 5_000);
  });

  test('an RFQ opened by a late timer is stamped at its openAt, not at the timer', () => {
    const h = new RfqHarness();
    const rfq = h.callSpread();
    h.at(T0 + 12_345);
    const after = h.desk.takerRfq(new Set([TAKER]), rfq.blockRfqId)!;
    assert.equal(after.status, 'open');
    assert.equal(after.lastUpdatedAt, T0 + 5_000);
  });
});

describe('RFQ desk edges: quote edits', () => {
  test('an edit that moves a quote to the other side does not cross the quote it replaces', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    const id = quoteIdOf(h.quote(rfq, DESK_A, MAKER_A, 'buy', 10, 500, 300)); // bid 200
    // Ask 180, below the desk's old bid 200: that bid is this very quote, replaced by the edit.
    const edited = h.ok({
      ...h.quoteCommand(rfq),
      type: 'rfq_quote_edit',
      quoteId: id,
      side: 'sell',
      legs: spreadLegs(480, 300),
    } as never);
    assert.equal(edited.kind === 'quote' && edited.quote.side, 'sell');
    assert.equal(h.desk.quote(id)?.price, 180);
  });

  test('editing a quote into the limit fires a waiting GTC trigger', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    const id = quoteIdOf(h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 520, 300)); // ask 220
    const gtc = accept(h, rfq, 'buy', 200, { timeInForce: 'good_til_cancelled' });
    assert.ok(gtc.ok && gtc.value.kind === 'accept' && gtc.value.trade === null, 'GTC waits');
    const edit = h.run({
      ...h.quoteCommand(rfq),
      type: 'rfq_quote_edit',
      quoteId: id,
      legs: spreadLegs(500, 300), // ask 200: meets the trigger
    } as never);
    assert.ok(edit.ok, 'edit accepted');
    assert.ok(
      edit.events.some((e) => e.type === 'rfq_traded'),
      'the edit fires the trigger',
    );
    assert.equal(h.size(TAKER, CALL_70), 10);
    assert.equal(h.desk.takerRfq(new Set([TAKER]), rfq.blockRfqId)?.status, 'filled');
    assert.equal(h.desk.quote(id)?.status, 'filled');
  });
});

describe('RFQ desk edges: what an edit keeps', () => {
  test('an edit without expiresAt or label keeps them; a journaled null expiresAt still removes the expiry', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    const created = h.ok({ ...h.quoteCommand(rfq), expiresAt: T0 + 60_000, label: 'mine' });
    const id = created.kind === 'quote' ? created.quote.quoteId : '';
    const { expiresAt: _e, label: _l, ...withoutBoth } = h.quoteCommand(rfq);
    h.ok({ ...withoutBoth, type: 'rfq_quote_edit', quoteId: id, legs: spreadLegs(490, 300) } as never);
    assert.equal(h.desk.quote(id)?.expiresAt, T0 + 60_000, 'the expiry is kept');
    assert.equal(h.desk.quote(id)?.label, 'mine', 'the label is kept');
    assert.equal(h.desk.quote(id)?.price, 190, 'the price is replaced');
    // Commands journaled before keep-on-omit carry null and '' explicitly: replay must clear both.
    h.ok({ ...h.quoteCommand(rfq), type: 'rfq_quote_edit', quoteId: id } as never);
    assert.equal(h.desk.quote(id)?.expiresAt, null, 'an explicit null removes the expiry');
    assert.equal(h.desk.quote(id)?.label, '', 'an explicit empty label clears the label');
  });
});

describe('RFQ desk edges: accept quantity', () => {
  test('an accept above the RFQ quantity is refused even when the quotes could cover it', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    assert.ok(h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300).ok);
    assert.ok(h.quote(rfq, DESK_B, MAKER_B, 'sell', 10, 500, 300).ok);
    const result = accept(h, rfq, 'buy', 200, { quantity: 11 });
    assert.equal(result.ok, false, 'accept of 11 lots on a 10-lot RFQ must be refused');
    if (!result.ok) assert.equal(result.error.name, 'invalid_amount');
    assert.equal(h.size(TAKER, CALL_70), 0);
    assert.equal(h.desk.takerRfq(new Set([TAKER]), rfq.blockRfqId)?.status, 'open');
  });
});

describe('RFQ desk edges: triggers', () => {
  test('a trigger whose trade is refused (taker short of funds) is withdrawn, not kept', () => {
    const h = new RfqHarness();
    h.engine.account(6, { BTC: 3_000_000 }); // pays for 0.5 BTC of the call, not 1 BTC
    const rfq = h.callSpread({
      accountId: 6,
      userId: 6,
      legs: [{ instrumentName: CALL_70, side: 'buy', amount: 10 }],
    });
    h.at(h.now + 5_000);
    const gtc = h.run({
      type: 'rfq_accept',
      accountId: 6,
      blockRfqId: rfq.blockRfqId,
      side: 'buy',
      price: 500,
      quantity: null,
      timeInForce: 'good_til_cancelled',
    });
    assert.ok(gtc.ok && gtc.value.kind === 'accept' && gtc.value.trigger !== null, 'GTC waits');
    const legs = [{ instrumentName: CALL_70, side: 'buy' as const, ratio: 1, price: 500 }];
    const quote = h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300, { legs });
    assert.ok(quote.ok, 'the quote itself is accepted');
    assert.equal(h.size(6, CALL_70), 0, 'nothing traded');
    const after = h.desk.takerRfq(new Set([6]), rfq.blockRfqId)!;
    assert.equal(after.status, 'open');
    assert.deepEqual(after.triggers, [], 'the refused trigger is withdrawn');
  });
});

describe('RFQ desk edges: closing an RFQ', () => {
  test('cancelling an RFQ withdraws its waiting triggers', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    assert.ok(accept(h, rfq, 'buy', 200, { timeInForce: 'good_til_cancelled' }).ok);
    assert.equal(h.desk.takerRfq(new Set([TAKER]), rfq.blockRfqId)!.triggers.length, 1);
    h.ok({ type: 'rfq_cancel', accountId: TAKER, blockRfqId: rfq.blockRfqId });
    const after = h.desk.takerRfq(new Set([TAKER]), rfq.blockRfqId)!;
    assert.equal(after.status, 'cancelled');
    assert.deepEqual(after.triggers, []);
    h.refused(
      { type: 'rfq_trigger_cancel', accountId: TAKER, blockRfqId: rfq.blockRfqId, side: null },
      'not_found',
    );
  });
});

describe('RFQ desk edges: trade order', () => {
  test('trades at one timestamp are kept in RFQ-number order, whichever trades first', () => {
    const h = new RfqHarness();
    const first = h.callSpread();
    const second = h.callSpread();
    const third = h.callSpread();
    h.at(h.now + 5_000);
    for (const rfq of [first, second, third])
      assert.ok(h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300).ok);
    // Same virtual timestamp: second, then first, then third.
    for (const rfq of [second, first, third]) assert.ok(accept(h, rfq, 'buy', 200).ok);
    assert.deepEqual(
      h.desk.trades().map((t) => t.blockRfqId),
      [first.blockRfqId, second.blockRfqId, third.blockRfqId],
    );
  });
});

describe('RFQ desk edges: allocations', () => {
  test('a zero allocation amount is refused by the desk, naming the amount', () => {
    const h = new RfqHarness();
    const result = h.run(h.createCommand({ tradeAllocations: [{ amount: 0, userId: TAKER }] }));
    assert.equal(result.ok, false, 'zero allocation must be refused');
    if (!result.ok) {
      assert.equal(result.error.name, 'invalid_amount');
      assert.equal(result.error.data.field, 'tradeAllocations[0].amount');
    }
  });
});

describe('RFQ desk edges: allocation split', () => {
  test('an allocation used up exactly by one quote adds no empty block to the next quote', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h, { tradeAllocations: [{ amount: 5, userId: TAKER, accountId: TAKER_2 }] });
    assert.ok(h.quote(rfq, DESK_A, MAKER_A, 'sell', 5, 500, 300).ok);
    assert.ok(h.quote(rfq, DESK_B, MAKER_B, 'sell', 5, 505, 300).ok);
    const result = accept(h, rfq, 'buy', 205);
    assert.ok(result.ok, result.ok ? '' : `${result.error.name}: ${result.error.message}`);
    assert.ok(result.value.kind === 'accept' && result.value.trade !== null);
    if (result.value.kind !== 'accept' || result.value.trade === null) return;
    assert.deepEqual(
      result.value.trade.fills.map((f) => [f.desk, f.takerAccountId, f.quantity]),
      [
        [DESK_A, TAKER_2, 5],
        [DESK_B, TAKER, 5],
      ],
    );
    assert.equal(h.size(TAKER_2, CALL_70), 5);
    assert.equal(h.size(TAKER, CALL_70), 5);
  });
});

describe('RFQ desk edges: quote legs', () => {
  test("a quote leg with the wrong side is refused, naming the leg's side", () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    const legs = spreadLegs(500, 300).map((leg, i) => (i === 0 ? { ...leg, side: 'sell' as const } : leg));
    const result = h.run({ ...h.quoteCommand(rfq), legs });
    assert.equal(result.ok, false, 'a leg side other than the RFQ leg side must be refused');
    if (!result.ok) {
      assert.equal(result.error.name, 'invalid_arguments');
      assert.equal(result.error.data.field, 'legs[0].side');
    }
  });
});
