/**
 * The Block RFQ desk with the real engine: lifecycle, competing makers, AON vs partial,
 * virtual-clock expiry, cancel races, allocations, wrong-role/wrong-id refusals, snapshots.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { tradeToWire } from '../../src/api/wire/orders.ts';
import { rfqToWire, rfqTradeToWire } from '../../src/api/wire/rfq.ts';
import { pageTrades } from '../../src/rfq/trades.ts';
import {
  accept,
  CALL_70,
  CALL_75,
  DESK_A,
  DESK_B,
  DESK_C,
  MAKER_A,
  MAKER_B,
  MAKER_C,
  openRfq,
  PERP,
  PUT_70,
  quoteIdOf,
  RfqHarness,
  spreadLegs,
  T0,
  TAKER,
  TAKER_2,
} from './harness.ts';

describe('create_rfq', () => {
  test('derives ratios, quantity grid, combo id and per-desk maker ids', () => {
    const h = new RfqHarness();
    const rfq = h.callSpread();
    assert.equal(rfq.status, 'created');
    assert.deepEqual(
      rfq.legs.map((l) => [l.instrumentName, l.side, l.ratio, l.lotsPerUnit]),
      [
        [CALL_70, 'buy', 1, 1],
        [CALL_75, 'sell', 1, 1],
      ],
    );
    assert.equal(rfq.quantity, 10);
    assert.equal(rfq.quantityStep, '0.1');
    assert.equal(rfq.comboId, 'BTC-CS-27DEC26-70000_75000');
    assert.equal(rfq.expiresAt - rfq.createdAt, 300_000);
    const ids = rfq.makerRecords.map((r) => r.blockRfqId);
    assert.equal(
      new Set([rfq.blockRfqId, ...ids]).size,
      3,
      'maker ids differ from the taker id and each other',
    );
  });

  test('gcd normalisation: 0.3 and 0.6 BTC give ratios 1:2 at quantity 0.3', () => {
    const h = new RfqHarness();
    const rfq = h.callSpread({
      legs: [
        { instrumentName: CALL_70, side: 'buy', amount: 3 },
        { instrumentName: PUT_70, side: 'buy', amount: 6 },
      ],
    });
    assert.deepEqual(
      rfq.legs.map((l) => l.ratio),
      [1, 2],
    );
    assert.equal(rfq.quantity, 3);
    assert.equal(rfq.comboId, null);
  });

  test('straddle and future-spread combo ids; mixed quote currencies are refused', () => {
    const h = new RfqHarness();
    const straddle = h.callSpread({
      legs: [
        { instrumentName: CALL_70, side: 'sell', amount: 10 },
        { instrumentName: PUT_70, side: 'sell', amount: 10 },
      ],
    });
    assert.equal(straddle.comboId, 'BTC-STRD-27DEC26-70000');
    h.refused(
      {
        type: 'rfq_create',
        accountId: TAKER,
        userId: TAKER,
        takerAlias: null,
        makers: [],
        targetDesks: [DESK_A],
        disclosed: true,
        label: '',
        legs: [
          { instrumentName: CALL_70, side: 'buy', amount: 10 },
          { instrumentName: PERP, side: 'sell', amount: 10 },
        ],
        hedge: null,
        tradeAllocations: [],
      },
      'invalid_arguments',
    );
  });

  test('refuses unknown instruments, duplicate legs, two many legs, long labels, over-allocation', () => {
    const h = new RfqHarness();
    const base = {
      type: 'rfq_create' as const,
      accountId: TAKER,
      userId: TAKER,
      takerAlias: null,
      makers: [],
      targetDesks: [DESK_A],
      disclosed: true,
      label: '',
      legs: [{ instrumentName: CALL_70, side: 'buy' as const, amount: 10 }],
      hedge: null,
      tradeAllocations: [],
    };
    h.refused(
      { ...base, legs: [{ instrumentName: 'BTC-1JAN27-1-C', side: 'buy', amount: 1 }] },
      'invalid_instrument',
    );
    h.refused({ ...base, legs: [base.legs[0]!, base.legs[0]!] }, 'invalid_arguments');
    h.refused({ ...base, legs: Array.from({ length: 21 }, () => base.legs[0]!) }, 'invalid_arguments');
    h.refused({ ...base, label: 'x'.repeat(65) }, 'invalid_arguments');
    h.refused({ ...base, tradeAllocations: [{ amount: 11, userId: TAKER }] }, 'invalid_amount');
    h.refused({ ...base, tradeAllocations: [{ amount: 1 }] }, 'invalid_arguments');
    const ok = h.ok({
      ...base,
      tradeAllocations: [
        { amount: 4, userId: TAKER },
        { amount: 6, clientInfo: { clientId: 1, clientLinkId: 2 } },
      ],
    });
    assert.equal(ok.kind === 'rfq' && ok.rfq.tradeAllocations.length, 2);
  });
});

describe('lifecycle', () => {
  test('grace period: accept refused while created, open after 5 s', () => {
    const h = new RfqHarness();
    const rfq = h.callSpread();
    assert.ok(
      h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300).ok,
      'makers may quote during the grace period',
    );
    assert.equal(accept(h, rfq, 'buy', 200).ok, false);
    h.at(T0 + 4_999);
    assert.equal(h.desk.takerRfq(new Set([TAKER]), rfq.blockRfqId)?.status, 'created');
    h.at(T0 + 5_000);
    assert.equal(h.desk.takerRfq(new Set([TAKER]), rfq.blockRfqId)?.status, 'open');
    assert.equal(h.desk.nextWakeup(), T0 + 300_000);
  });

  test('expires after 5 minutes by virtual clock; open quotes are cancelled; quote expiresAt', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    const short = quoteIdOf(h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300, { expiresAt: T0 + 60_000 }));
    const long = quoteIdOf(h.quote(rfq, DESK_B, MAKER_B, 'sell', 10, 505, 300));
    assert.equal(h.desk.nextWakeup(), T0 + 60_000);
    h.at(T0 + 60_000);
    assert.equal(h.desk.quote(short)?.status, 'expired');
    h.at(T0 + 299_999);
    assert.equal(h.desk.takerRfq(new Set([TAKER]), rfq.blockRfqId)?.status, 'open');
    h.at(T0 + 300_000);
    const after = h.desk.takerRfq(new Set([TAKER]), rfq.blockRfqId)!;
    assert.equal(after.status, 'expired');
    assert.equal(after.closedReason, 'expired');
    assert.equal(h.desk.quote(long)?.status, 'cancelled');
    assert.equal(h.desk.quote(long)?.statusReason, 'rfq_expired');
    assert.equal(h.desk.nextWakeup(), null);
    h.refused({ type: 'rfq_cancel', accountId: TAKER, blockRfqId: rfq.blockRfqId }, 'rfq_not_open');
  });

  test('an expired quote is stamped at its expiresAt, not at the next command', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    const expiresAt = h.now + 10_000;
    const id = quoteIdOf(h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300, { expiresAt }));
    h.at(expiresAt + 7_000);
    const quote = h.desk.quote(id)!;
    assert.equal(quote.status, 'expired');
    assert.equal(quote.lastUpdatedAt, expiresAt);
  });

  test('a quote whose expiresAt is now is refused', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    const result = h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300, { expiresAt: h.now });
    assert.equal(!result.ok && result.error.name, 'invalid_arguments');
    assert.equal(!result.ok && result.error.data.field, 'expiresAt');
  });

  test('cancel_rfq by the taker', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    const value = h.ok({ type: 'rfq_cancel', accountId: TAKER, blockRfqId: rfq.blockRfqId });
    assert.equal(value.kind === 'rfq' && value.rfq.status, 'cancelled');
    h.refused(h.quoteCommand(rfq), 'rfq_not_open');
  });

  test('cancel_rfq cancels every open quote of the RFQ with reason rfq_cancelled', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    const a = quoteIdOf(h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300));
    const b = quoteIdOf(h.quote(rfq, DESK_B, MAKER_B, 'buy', 5, 400, 300));
    h.ok({ type: 'rfq_cancel', accountId: TAKER, blockRfqId: rfq.blockRfqId });
    for (const id of [a, b]) {
      const quote = h.desk.quote(id);
      assert.equal(quote?.status, 'cancelled', `quote ${id} is cancelled with its RFQ`);
      assert.equal(quote?.statusReason, 'rfq_cancelled', `quote ${id} carries the RFQ cancel reason`);
    }
  });

  test('a quote on a filled RFQ is refused rfq_not_open and never stored', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300);
    const result = accept(h, rfq, 'buy', 200);
    assert.equal(result.ok, true, 'the accept fills the whole RFQ');
    assert.equal(h.desk.takerRfq(new Set([TAKER]), rfq.blockRfqId)?.status, 'filled', 'the RFQ is filled');
    const late = h.quote(rfq, DESK_B, MAKER_B, 'sell', 10, 500, 300);
    assert.equal(late.ok, false, 'a quote on a filled RFQ is refused');
    assert.equal(!late.ok && late.error.name, 'rfq_not_open', 'refused as rfq_not_open');
    assert.equal(!late.ok && late.error.data.status, 'filled', 'the refusal names the RFQ status');
  });
});

describe('quotes', () => {
  test('price must equal the legs; edits set replaced; own quotes may not cross', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    h.refused({ ...h.quoteCommand(rfq), price: 201 }, 'invalid_price');
    h.refused(
      { ...h.quoteCommand(rfq), legs: spreadLegs(500, 300).map((l) => ({ ...l, ratio: 2 })) },
      'invalid_arguments',
    );
    h.refused({ ...h.quoteCommand(rfq), legs: spreadLegs(500, 300).slice(0, 1) }, 'invalid_arguments');
    h.refused({ ...h.quoteCommand(rfq), quantity: 11 }, 'invalid_amount');
    const id = quoteIdOf(h.run({ ...h.quoteCommand(rfq), price: 200 }));
    const quote = h.desk.quote(id)!;
    assert.equal(quote.status, 'open');
    assert.equal(quote.replaced, false);
    assert.equal(quote.filledQuantity, 0);
    assert.equal(quote.price, 200);
    h.refused({ ...h.quoteCommand(rfq), side: 'buy', legs: spreadLegs(505, 300) }, 'quote_crossed');
    const edited = h.ok({
      ...h.quoteCommand(rfq),
      type: 'rfq_quote_edit',
      quoteId: id,
      legs: spreadLegs(510, 300),
    } as never);
    assert.equal(edited.kind === 'quote' && edited.quote.replaced, true);
    assert.equal(h.desk.quote(id)?.price, 210);
  });

  test('wrong ids: taker id, undirected desk, foreign quote', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    h.refused({ ...h.quoteCommand(rfq), blockRfqId: rfq.blockRfqId }, 'not_found');
    h.refused({ ...h.quoteCommand(rfq), desk: DESK_C, accountId: MAKER_C }, 'not_found');
    const id = quoteIdOf(h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300));
    h.refused({ type: 'rfq_quote_cancel', accountId: MAKER_B, desk: DESK_B, quoteId: id }, 'not_found');
    h.refused({ type: 'rfq_cancel', accountId: MAKER_A, blockRfqId: rfq.blockRfqId }, 'not_found');
    h.refused(
      {
        type: 'rfq_accept',
        accountId: MAKER_A,
        blockRfqId: rfq.blockRfqId,
        side: 'buy',
        price: 1000,
        quantity: null,
        timeInForce: 'fill_or_kill',
      },
      'not_found',
    );
    h.refused({ type: 'rfq_quote_cancel', accountId: TAKER, desk: DESK_A, quoteId: '999' }, 'not_found');
  });

  test('cancel_all_quotes counts the desk own open quotes only', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300);
    h.quote(rfq, DESK_A, MAKER_A, 'buy', 10, 400, 300);
    const b = quoteIdOf(h.quote(rfq, DESK_B, MAKER_B, 'sell', 10, 500, 300));
    const value = h.ok({ type: 'rfq_quote_cancel_all', accountId: MAKER_A, desk: DESK_A, blockRfqId: null });
    assert.equal(value.kind === 'count' && value.count, 2);
    assert.equal(h.desk.quote(b)?.status, 'open');
  });

  test('an own bid at the price of the desk own ask is refused as crossed', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    assert.ok(h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300).ok, 'ask at 200');
    const bid = h.quote(rfq, DESK_A, MAKER_A, 'buy', 10, 500, 300);
    assert.equal(!bid.ok && bid.error.name, 'quote_crossed');
  });

  test('an edit renews time priority: equal prices, A edits, B fills first', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    const a = quoteIdOf(h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300));
    const b = quoteIdOf(h.quote(rfq, DESK_B, MAKER_B, 'sell', 10, 500, 300));
    h.ok({
      type: 'rfq_quote_edit',
      accountId: MAKER_A,
      desk: DESK_A,
      quoteId: a,
      side: 'sell',
      quantity: 9,
      price: null,
      legs: spreadLegs(500, 300),
      hedge: null,
      executionInstruction: 'any_part_of',
      expiresAt: null,
      label: '',
    });
    const result = accept(h, rfq, 'buy', 200, { quantity: 5 });
    assert.ok(result.ok && result.value.kind === 'accept', 'accept trades');
    assert.deepEqual(
      result.value.trade!.fills.map((f) => f.quoteId),
      [b],
    );
  });

  test('cancel_all_quotes with a blockRfqId cancels only that RFQ', () => {
    const h = new RfqHarness();
    const rfq1 = h.callSpread();
    const rfq2 = h.callSpread();
    h.at(h.now + 5_000);
    const q1 = quoteIdOf(h.quote(rfq1, DESK_A, MAKER_A, 'sell', 10, 500, 300));
    const q2 = quoteIdOf(h.quote(rfq2, DESK_A, MAKER_A, 'sell', 10, 500, 300));
    const value = h.ok({
      type: 'rfq_quote_cancel_all',
      accountId: MAKER_A,
      desk: DESK_A,
      blockRfqId: h.makerId(rfq1, DESK_A),
    });
    assert.equal(value.kind === 'count' && value.count, 1);
    assert.equal(h.desk.quote(q1)?.status, 'cancelled');
    assert.equal(h.desk.quote(q2)?.status, 'open');
  });

  test("the taker's asks: one level per price, its makers in time priority, whatever order the quotes come in", () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300);
    h.quote(rfq, DESK_B, MAKER_B, 'sell', 4, 500, 300);
    const current = h.desk.takerRfqs(new Set([TAKER])).find((r) => r.blockRfqId === rfq.blockRfqId)!;
    const quotes = h.desk.quotesOfRfq(rfq.blockRfqId);
    const lookup = (name: string) => h.venue.instrument(name)?.instrument;
    for (const order of [quotes, [...quotes].reverse()]) {
      const asks = rfqToWire(current, order, { role: 'taker' }, lookup).asks;
      assert.deepEqual(
        asks?.map((a) => [a.price, a.quantity, a.makers]),
        [['0.02', '1.4', [DESK_A, DESK_B]]],
        'both quotes at 0.02 are one level of 1.4, the earlier desk first',
      );
    }
  });

  test("the taker's levels: all-or-none apart from and before any-part-of at one price, earliest expiry, latest update", () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300, { expiresAt: T0 + 90_000 });
    h.at(T0 + 6_000);
    h.quote(rfq, DESK_B, MAKER_B, 'sell', 10, 500, 300, {
      executionInstruction: 'all_or_none',
      expiresAt: T0 + 80_000,
    });
    h.at(T0 + 7_000);
    h.quote(rfq, DESK_B, MAKER_B, 'sell', 5, 500, 300, { expiresAt: T0 + 70_000 });
    h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 510, 300);
    const current = h.desk.takerRfqs(new Set([TAKER])).find((r) => r.blockRfqId === rfq.blockRfqId)!;
    const lookup = (name: string) => h.venue.instrument(name)?.instrument;
    const asks = rfqToWire(current, h.desk.quotesOfRfq(rfq.blockRfqId), { role: 'taker' }, lookup).asks!;
    assert.deepEqual(
      asks.map((a) => [a.price, a.executionInstruction, a.quantity, a.makers, a.expiresAt, a.lastUpdatedAt]),
      [
        ['0.02', 'all_or_none', '1', [DESK_B], T0 + 80_000, T0 + 6_000],
        ['0.02', 'any_part_of', '1.5', [DESK_A, DESK_B], T0 + 70_000, T0 + 7_000],
        ['0.021', 'any_part_of', '1', [DESK_A], null, T0 + 7_000],
      ],
      'the accept fills AON first at a price, so the taker sees that level first',
    );
  });
});

describe('accept', () => {
  test('competing makers: best price wins, trades book one trade per leg to both accounts', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    const a = quoteIdOf(h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 510, 300));
    const b = quoteIdOf(h.quote(rfq, DESK_B, MAKER_B, 'sell', 10, 500, 300));
    const result = accept(h, rfq, 'buy', 210);
    assert.ok(result.ok && result.value.kind === 'accept', 'the accept trades');
    const trade = result.value.trade!;
    assert.equal(trade.fills.length, 1);
    assert.equal(trade.fills[0]!.quoteId, b);
    assert.equal(trade.fills[0]!.price, 200);
    assert.equal(h.size(TAKER, CALL_70), 10);
    assert.equal(h.size(TAKER, CALL_75), -10);
    assert.equal(h.size(MAKER_B, CALL_70), -10);
    assert.equal(h.size(MAKER_B, CALL_75), 10);
    assert.equal(h.size(MAKER_A, CALL_70), 0);
    const trades = h.engineEvents.flatMap((e) => (e.type === 'trade' ? [e.trade] : []));
    assert.equal(trades.length, 2);
    for (const t of trades) {
      assert.equal(t.blockRfqId, rfq.blockRfqId);
      assert.equal(t.blockRfqQuoteId, b);
      assert.equal(t.blockTradeId, trade.fills[0]!.blockTradeId);
      assert.equal(t.taker.accountId, TAKER);
    }
    assert.deepEqual(
      trades.map((t) => [t.instrumentName, t.price, t.amount]),
      [
        [CALL_70, 500, 10],
        [CALL_75, 300, 10],
      ],
    );
    assert.equal(h.desk.rfqIdForAccount(rfq.blockRfqId, MAKER_B), h.makerId(rfq, DESK_B));
    assert.equal(h.desk.rfqIdForAccount(rfq.blockRfqId, TAKER), rfq.blockRfqId);
    const after = h.desk.takerRfq(new Set([TAKER]), rfq.blockRfqId)!;
    assert.equal(after.status, 'filled');
    assert.equal(h.desk.quote(b)?.status, 'filled');
    assert.equal(h.desk.quote(a)?.status, 'cancelled');
    assert.equal(h.desk.quote(a)?.statusReason, 'rfq_closed');
  });

  test('partial quotes from two makers combine; the taker sells into bids', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    h.quote(rfq, DESK_A, MAKER_A, 'buy', 6, 500, 300);
    h.quote(rfq, DESK_B, MAKER_B, 'buy', 10, 495, 300);
    const result = accept(h, rfq, 'sell', 195);
    assert.ok(result.ok && result.value.kind === 'accept', 'the accept trades');
    assert.deepEqual(
      result.value.trade!.fills.map((f) => [f.desk, f.quantity, f.price]),
      [
        [DESK_A, 6, 200],
        [DESK_B, 4, 195],
      ],
    );
    assert.equal(h.size(TAKER, CALL_70), -10);
    assert.equal(h.size(MAKER_A, CALL_70), 6);
    assert.equal(h.size(MAKER_B, CALL_70), 4);
  });

  test('all_or_none has priority at the same price and never trades in part', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    const partial = quoteIdOf(h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300));
    const aon = quoteIdOf(
      h.quote(rfq, DESK_B, MAKER_B, 'sell', 10, 500, 300, { executionInstruction: 'all_or_none' }),
    );
    // 5 lots: the AON quote (10) cannot fill in part, so the partial quote trades.
    const small = accept(h, rfq, 'buy', 200, { quantity: 5 });
    assert.ok(small.ok && small.value.kind === 'accept', 'the small accept trades');
    assert.equal(small.value.trade!.fills[0]!.quoteId, partial);
    assert.equal(h.desk.takerRfq(new Set([TAKER]), rfq.blockRfqId)?.status, 'traded');

    const h2 = new RfqHarness();
    const rfq2 = openRfq(h2);
    quoteIdOf(h2.quote(rfq2, DESK_A, MAKER_A, 'sell', 10, 500, 300));
    const aon2 = quoteIdOf(
      h2.quote(rfq2, DESK_B, MAKER_B, 'sell', 10, 500, 300, { executionInstruction: 'all_or_none' }),
    );
    const full = accept(h2, rfq2, 'buy', 200);
    assert.ok(full.ok && full.value.kind === 'accept', 'the full accept trades');
    assert.equal(full.value.trade!.fills[0]!.quoteId, aon2);
    assert.equal(h.desk.quote(aon)?.filledQuantity, 0);
  });

  test('FOK that cannot fill is refused and nothing trades; GTC leaves a trigger that fires on a quote', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 520, 300);
    const fok = accept(h, rfq, 'buy', 200);
    assert.equal(fok.ok, false);
    if (!fok.ok) assert.equal(fok.error.name, 'not_fully_filled');
    assert.equal(h.size(TAKER, CALL_70), 0);
    const gtc = accept(h, rfq, 'buy', 200, { timeInForce: 'good_til_cancelled' });
    assert.ok(
      gtc.ok && gtc.value.kind === 'accept' && gtc.value.trigger !== null && gtc.value.trade === null,
      'the GTC accept leaves a trigger and trades nothing',
    );
    const quote = h.quote(rfq, DESK_B, MAKER_B, 'sell', 10, 500, 300);
    assert.ok(quote.ok, 'the quote is accepted');
    assert.equal(h.size(TAKER, CALL_70), 10);
    assert.equal(h.desk.takerRfq(new Set([TAKER]), rfq.blockRfqId)?.status, 'filled');
    assert.ok(
      quote.events.some((e) => e.type === 'rfq_traded'),
      'the quote fires the waiting trigger',
    );
  });

  test('a waiting trigger is withdrawn by side or whole, only by its taker, and then never fires', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    assert.ok(accept(h, rfq, 'buy', 200, { timeInForce: 'good_til_cancelled' }).ok);
    assert.ok(accept(h, rfq, 'sell', 900, { timeInForce: 'good_til_cancelled' }).ok);
    const cancel = (accountId: number, side: 'buy' | 'sell' | null) =>
      h.run({ type: 'rfq_trigger_cancel', accountId, blockRfqId: rfq.blockRfqId, side });
    const foreign = cancel(MAKER_A, null);
    assert.equal(!foreign.ok && foreign.error.name, 'not_found');
    const sell = cancel(TAKER, 'sell');
    assert.ok(sell.ok && sell.value.kind === 'rfq', 'the sell trigger is withdrawn');
    assert.deepEqual(
      sell.value.rfq.triggers.map((t) => t.side),
      ['buy'],
    );
    const again = cancel(TAKER, 'sell');
    assert.equal(!again.ok && again.error.name, 'not_found');
    assert.equal(!again.ok && again.error.data.field, 'side');
    assert.ok(cancel(TAKER, null).ok, 'side null withdraws the remaining trigger');
    const none = cancel(TAKER, null);
    assert.equal(!none.ok && none.error.data.field, 'blockRfqId');
    // A quote that would have crossed the withdrawn buy trigger trades nothing.
    assert.ok(h.quote(rfq, DESK_B, MAKER_B, 'sell', 10, 500, 300).ok);
    assert.equal(h.size(TAKER, CALL_70), 0);
    assert.equal(h.desk.takerRfq(new Set([TAKER]), rfq.blockRfqId)?.status, 'open');
  });

  test('a trigger cancel without a side withdraws both waiting triggers', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    const buy = accept(h, rfq, 'buy', 200, { timeInForce: 'good_til_cancelled' });
    assert.equal(buy.ok, true, 'the buy GTC accept waits');
    const sell = accept(h, rfq, 'sell', 900, { timeInForce: 'good_til_cancelled' });
    assert.equal(sell.ok, true, 'the sell GTC accept waits');
    const result = h.run({
      type: 'rfq_trigger_cancel',
      accountId: TAKER,
      blockRfqId: rfq.blockRfqId,
      side: null,
    });
    assert.equal(
      result.ok,
      true,
      `side null cancels the triggers, got ${result.ok ? 'ok' : result.error.name}`,
    );
    assert.deepEqual(
      result.ok && result.value.kind === 'rfq' ? result.value.rfq.triggers : 'no rfq value',
      [],
      'no trigger is left',
    );
    assert.deepEqual(
      h.desk.takerRfq(new Set([TAKER]), rfq.blockRfqId)?.triggers,
      [],
      'the stored RFQ has none',
    );
  });

  test('a new GTC accept replaces the waiting trigger on the same side', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    assert.ok(accept(h, rfq, 'buy', 250, { timeInForce: 'good_til_cancelled' }).ok, 'first GTC accept');
    assert.ok(accept(h, rfq, 'buy', 150, { timeInForce: 'good_til_cancelled' }).ok, 'second GTC accept');
    const triggers = h.desk.takerRfq(new Set([TAKER]), rfq.blockRfqId)!.triggers;
    assert.deepEqual(
      triggers.map((t) => [t.side, t.price]),
      [['buy', 150]],
    );
    // A maker quote at 200 would have crossed the replaced 250 trigger, not the 150 one.
    assert.ok(h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300).ok, 'quote at 200 accepted');
    assert.equal(h.size(TAKER, CALL_70), 0);
    const after = h.desk.takerRfq(new Set([TAKER]), rfq.blockRfqId)!;
    assert.equal(after.status, 'open');
    assert.equal(after.filledQuantity, 0);
  });

  test('the trade mark price is the signed sum of the leg marks', () => {
    const h = new RfqHarness();
    h.markSpread(500, 300);
    const rfq = openRfq(h);
    h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300);
    const result = accept(h, rfq, 'buy', 200);
    assert.ok(result.ok && result.value.kind === 'accept', 'accept trades');
    assert.equal(result.value.trade!.markPrice, 200, 'buy 70 call (500) minus sell 75 call (300)');
  });

  test('cancel race: a quote cancelled before the accept never trades', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    const id = quoteIdOf(h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300));
    h.ok({ type: 'rfq_quote_cancel', accountId: MAKER_A, desk: DESK_A, quoteId: id });
    const result = accept(h, rfq, 'buy', 1000);
    assert.equal(result.ok, false);
    assert.equal(h.size(MAKER_A, CALL_70), 0);
    assert.equal(h.desk.quote(id)?.filledQuantity, 0);
    h.refused({ type: 'rfq_quote_cancel', accountId: MAKER_A, desk: DESK_A, quoteId: id }, 'quote_not_open');
  });

  test('a maker the engine refuses is skipped and the rest re-planned', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    h.engine.ok({ type: 'create_account', accountId: 9 });
    const broke = quoteIdOf(h.quote(rfq, DESK_A, 9, 'sell', 10, 495, 300));
    const good = quoteIdOf(h.quote(rfq, DESK_B, MAKER_B, 'sell', 10, 500, 300));
    const result = accept(h, rfq, 'buy', 200);
    assert.ok(result.ok && result.value.kind === 'accept', 'the accept trades');
    assert.equal(result.value.trade!.fills[0]!.quoteId, good);
    assert.equal(h.desk.quote(broke)?.statusReason, 'trade_refused');
    assert.equal(h.size(9, CALL_70), 0);
  });

  test('hedge leg trades pro rata with the structure at the quote hedge price', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h, { hedge: { instrumentName: PERP, side: 'sell', amount: 1000, price: 120000 } });
    h.quote(rfq, DESK_A, MAKER_A, 'sell', 4, 500, 300, {
      hedge: { instrumentName: PERP, side: 'sell', amount: 400, price: 120010 },
    });
    h.quote(rfq, DESK_B, MAKER_B, 'sell', 6, 505, 300);
    const result = accept(h, rfq, 'buy', 205);
    assert.ok(result.ok && result.value.kind === 'accept', 'the accept trades');
    assert.deepEqual(
      result.value.trade!.fills.map((f) => [f.quantity, f.hedgeAmount, f.hedgePrice]),
      [
        [4, 400, 120010],
        [6, 600, 120000],
      ],
    );
    assert.equal(h.size(TAKER, PERP), -10_000 / 10);
    // As on Deribit, the structure's leg trades carry the combo the legs form; the hedge's do not.
    assert.equal(rfq.comboId, 'BTC-CS-27DEC26-70000_75000');
    for (const name of [CALL_70, CALL_75]) {
      const trades = h.venue.recentTrades(name);
      assert.ok(
        trades.length > 0 && trades.every((t) => t.comboId === rfq.comboId && t.comboTradeId === undefined),
        `every ${name} trade carries the RFQ combo id`,
      );
    }
    assert.ok(
      h.venue.recentTrades(PERP).every((t) => t.comboId === undefined),
      'the hedge trades carry no combo id',
    );
  });

  test('allocations: listed shares are booked to their accounts, the rest to the taker', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h, {
      tradeAllocations: [
        { amount: 3, userId: TAKER, accountId: TAKER_2 },
        { amount: 2, clientInfo: { clientId: 7, clientLinkId: 8 } },
      ],
    });
    assert.deepEqual(rfq.tradeAllocations[0], {
      amount: 3,
      userId: TAKER,
      accountId: TAKER_2,
      clientInfo: null,
    });
    h.quote(rfq, DESK_A, MAKER_A, 'sell', 2, 500, 300);
    h.quote(rfq, DESK_B, MAKER_B, 'sell', 8, 505, 300);
    const result = accept(h, rfq, 'buy', 205);
    assert.ok(result.ok && result.value.kind === 'accept', 'the accept trades');
    assert.deepEqual(
      result.value.trade!.fills.map((f) => [f.desk, f.takerAccountId, f.quantity]),
      [
        [DESK_A, TAKER_2, 2],
        [DESK_B, TAKER_2, 1],
        [DESK_B, TAKER, 7],
      ],
    );
    assert.equal(h.size(TAKER_2, CALL_70), 3);
    assert.equal(h.size(TAKER, CALL_70), 7);
    assert.equal(h.size(MAKER_B, CALL_75), 8);
    assert.equal(h.desk.quote(result.value.trade!.fills[1]!.quoteId)?.filledQuantity, 8);
    // Every trade booked records the RFQ's list as its taker view shows it, whichever taker-side
    // account it went to; only the taker's side of a trade shows it.
    const listed = [
      { amount: '0.3', userId: TAKER },
      { amount: '0.2', clientInfo: { clientId: 7, clientLinkId: 8, name: null } },
    ];
    const lookup = (name: string) => h.venue.instrument(name)?.instrument;
    const booked = h.engineEvents.flatMap((e) =>
      e.type === 'trade' && e.trade.blockRfqId === rfq.blockRfqId ? [e.trade] : [],
    );
    assert.equal(booked.length, 6);
    assert.deepEqual(new Set(booked.map((t) => t.taker.accountId)), new Set([TAKER, TAKER_2]));
    for (const trade of booked) {
      assert.deepEqual(trade.tradeAllocations, listed);
      const instrument = h.venue.instrument(trade.instrumentName)!.instrument;
      assert.deepEqual(tradeToWire(trade, trade.taker, instrument, lookup).tradeAllocations, listed);
      assert.equal('tradeAllocations' in tradeToWire(trade, trade.maker, instrument, lookup), false);
    }
    assert.deepEqual(rfqToWire(rfq, [], { role: 'taker' }, lookup).tradeAllocations, listed);
    // get_trades lists one trade per quote filled: the allocation split stays the taker's.
    const wire = rfqTradeToWire(result.value.trade!, (name) => h.venue.instrument(name)?.instrument);
    assert.deepEqual(
      wire.trades.map((t) => [t.quantity, t.price]),
      [
        ['0.2', '0.02'],
        ['0.8', '0.0205'],
      ],
    );
  });
});

describe('allocations rest', () => {
  test('lots beyond the listed allocations are booked to the taker account', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h, { tradeAllocations: [{ amount: 3, userId: TAKER, accountId: TAKER_2 }] });
    h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300);
    const result = accept(h, rfq, 'buy', 200);
    assert.equal(result.ok, true, 'the accept trades');
    const fills = result.ok && result.value.kind === 'accept' ? (result.value.trade?.fills ?? []) : [];
    assert.deepEqual(
      fills.map((f) => [f.takerAccountId, f.quantity]),
      [
        [TAKER_2, 3],
        [TAKER, 7],
      ],
      'three lots to the allocated account, the other seven to the taker',
    );
    assert.equal(h.size(TAKER_2, CALL_70), 3, 'allocated account holds 3 lots');
    assert.equal(h.size(TAKER, CALL_70), 7, 'taker holds the unallocated 7 lots');
    assert.equal(h.size(MAKER_A, CALL_70), -10, 'the maker sold all 10 lots');
  });
});

describe('trades, snapshots', () => {
  test('get_trades pages newest first without duplicates', () => {
    const h = new RfqHarness();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const rfq = openRfq(h);
      h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300);
      assert.ok(accept(h, rfq, 'buy', 200).ok);
      ids.push(rfq.blockRfqId);
      if (i % 2 === 0) h.at(h.now + 1);
    }
    const seen: string[] = [];
    let continuation: string | null = null;
    do {
      const page = pageTrades(h.desk.trades(), { currency: 'any', now: h.now, continuation, count: 3 });
      seen.push(...page.results.map((t) => t.blockRfqId));
      continuation = page.continuation;
    } while (continuation !== null);
    assert.deepEqual(seen, [...ids].reverse());
    assert.equal(
      pageTrades(h.desk.trades(), { currency: 'ETH', now: h.now, continuation: null, count: 3 }).results
        .length,
      0,
    );
    assert.equal(
      pageTrades(h.desk.trades(), {
        currency: 'BTC',
        now: h.now + 8 * 86_400_000,
        continuation: null,
        count: 3,
      }).results.length,
      0,
    );
  });

  test('snapshot/restore reproduces the state hash and behaviour', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300);
    const snapshot = JSON.parse(JSON.stringify(h.desk.snapshot()));
    const hash = h.desk.stateHash();
    h.desk.restore(snapshot);
    assert.equal(h.desk.stateHash(), hash);
    assert.ok(accept(h, rfq, 'buy', 200).ok);
    assert.notEqual(h.desk.stateHash(), hash);
  });

  test('an expiring leg instrument closes the RFQ', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    h.core({ type: 'settle_instrument', instrumentName: CALL_75, settlementPrice: 0 });
    const after = h.desk.takerRfq(new Set([TAKER]), rfq.blockRfqId)!;
    assert.equal(after.status, 'closed');
    assert.equal(after.closedReason, 'instrument_expired');
    assert.equal(CALL_70.length > 0, true);
  });
});
