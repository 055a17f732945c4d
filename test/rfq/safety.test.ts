/**
 * Who may trade what through the desk, with the real engine: allocations stay within the taker's
 * user, prices are positive, an accept books all of its quantity or nothing, a user never
 * trades with itself, RFQs meet the block minimum, quote hedges restate the RFQ's hedge, and
 * refusals speak wire units and real fields.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { leastFundsTaken, optionSpec, orderCommand } from '../../src/engine/testkit.ts';
import type { RfqRecord } from '../../src/rfq/types.ts';
import {
  accept,
  CALL_70,
  CALL_75,
  DESK_A,
  DESK_B,
  type DeskResult,
  MAKER_A,
  MAKER_B,
  PERP,
  quoteIdOf,
  RfqHarness,
  spreadLegs,
  TAKER,
  TAKER_2,
} from './harness.ts';

function refusal(result: DeskResult): { name: string; data: Record<string, unknown> } {
  assert.equal(result.ok, false, 'expected a refusal');
  if (result.ok) throw new Error('unreachable');
  return { name: result.error.name, data: result.error.data };
}

function acceptAll(h: RfqHarness, rfq: RfqRecord, accountId: number, price: number) {
  return h.run({
    type: 'rfq_accept',
    accountId,
    blockRfqId: rfq.blockRfqId,
    side: 'buy',
    price,
    quantity: null,
    timeInForce: 'fill_or_kill',
  });
}

describe('trade allocations', () => {
  test("only the taker's own user: another user's account is refused, naming the field", () => {
    const h = new RfqHarness();
    const result = h.run(
      h.createCommand({
        tradeAllocations: [
          { amount: 2, userId: TAKER, accountId: TAKER_2 },
          { amount: 5, userId: MAKER_B, accountId: MAKER_B },
        ],
      }),
    );
    assert.deepEqual(refusal(result), {
      name: 'account_not_owned',
      data: { field: 'tradeAllocations[1].userId' },
    });
    // Broker (clientInfo) allocations are booked to the taker, as before.
    const rfq = h.callSpread({
      tradeAllocations: [{ amount: 3, clientInfo: { clientId: 1, clientLinkId: 2 } }],
    });
    h.at(h.now + 5_000);
    h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300);
    assert.ok(acceptAll(h, rfq, TAKER, 200).ok);
    assert.equal(h.size(TAKER, CALL_70), 10);
    assert.equal(h.size(MAKER_B, CALL_70), 0);
  });
});

describe('prices', () => {
  test('quote leg prices must be positive; the field is the quote own leg', () => {
    const h = new RfqHarness();
    const rfq = h.callSpread();
    for (const price of [-100, 0]) {
      const legs = [...spreadLegs(500, price)].reverse();
      assert.deepEqual(refusal(h.run({ ...h.quoteCommand(rfq), legs })), {
        name: 'invalid_price',
        data: { field: 'legs[0].price' },
      });
    }
    assert.equal(h.desk.quotesOfRfq(rfq.blockRfqId).length, 0);
  });

  test('a negative strategy price is fine: it is the signed sum of positive legs', () => {
    const h = new RfqHarness();
    const rfq = h.callSpread();
    h.at(h.now + 5_000);
    const id = quoteIdOf(h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 300, 500));
    assert.equal(h.desk.quote(id)!.price, -200);
    const result = acceptAll(h, rfq, TAKER, -200);
    assert.ok(result.ok);
    const fees = h.engineEvents.flatMap((e) =>
      e.type === 'trade' ? [e.trade.taker.fee, e.trade.maker.fee] : [],
    );
    assert.equal(fees.length, 4);
    assert.ok(fees.every((fee) => fee >= 0));
  });

  test('hedge prices must be positive at create_rfq and create_quote', () => {
    const h = new RfqHarness();
    for (const price of [-130_000, 0]) {
      assert.throws(
        () => h.callSpread({ hedge: { instrumentName: PERP, side: 'sell', amount: 1_000, price } }),
        /hedge price must be positive/,
      );
    }
    const rfq = h.callSpread({
      hedge: { instrumentName: PERP, side: 'sell', amount: 1_000, price: 130_000 },
    });
    const hedge = { instrumentName: PERP, side: 'sell' as const, amount: 1_000, price: -100 };
    assert.deepEqual(refusal(h.run({ ...h.quoteCommand(rfq), hedge })), {
      name: 'invalid_price',
      data: { field: 'hedge.price' },
    });
  });
});

describe('accept is atomic', () => {
  /** A taker (account 6, its own user) who can pay for 0.5 BTC of the call but not for 1 BTC. */
  function poorTaker(h: RfqHarness): RfqRecord {
    h.engine.account(6, { BTC: 3_000_000 });
    const rfq = h.callSpread({
      accountId: 6,
      userId: 6,
      legs: [{ instrumentName: CALL_70, side: 'buy', amount: 10 }],
    });
    h.at(h.now + 5_000);
    const legs = [{ instrumentName: CALL_70, side: 'buy' as const, ratio: 1, price: 500 }];
    quoteIdOf(h.quote(rfq, DESK_A, MAKER_A, 'sell', 5, 500, 300, { legs }));
    quoteIdOf(h.quote(rfq, DESK_B, MAKER_B, 'sell', 5, 500, 300, { legs }));
    return rfq;
  }

  test('FOK over two makers: the taker cannot pay the second block, so nothing trades', () => {
    const h = new RfqHarness();
    const rfq = poorTaker(h);
    const refused = refusal(acceptAll(h, rfq, 6, 500));
    assert.equal(refused.name, 'not_enough_funds');
    // The accept's own field and wire decimals, not the engine command's account field and units.
    assert.equal(refused.data.field, 'quantity');
    assert.equal(refused.data.available, '0.03');
    assert.equal(typeof refused.data.required, 'string');
    assert.equal(h.size(6, CALL_70), 0);
    assert.equal(h.size(MAKER_A, CALL_70), 0);
    assert.equal(h.size(MAKER_B, CALL_70), 0);
    assert.ok(!h.engineEvents.some((e) => e.type === 'trade'));
    const after = h.desk.takerRfq(new Set([6]), rfq.blockRfqId)!;
    assert.equal(after.status, 'open');
    assert.equal(after.filledQuantity, 0);
    assert.deepEqual(
      h.desk.quotesOfRfq(rfq.blockRfqId).map((q) => [q.status, q.filledQuantity]),
      [
        ['open', 0],
        ['open', 0],
      ],
    );
    assert.equal(h.desk.trades().length, 0);
  });

  test('GTC and partial quantities are atomic too', () => {
    const h = new RfqHarness();
    const rfq = poorTaker(h);
    const gtc = h.run({
      type: 'rfq_accept',
      accountId: 6,
      blockRfqId: rfq.blockRfqId,
      side: 'buy',
      price: 500,
      quantity: 8,
      timeInForce: 'good_til_cancelled',
    });
    assert.equal(refusal(gtc).name, 'not_enough_funds');
    assert.ok(!h.engineEvents.some((e) => e.type === 'trade'));
    assert.equal(h.desk.takerRfq(new Set([6]), rfq.blockRfqId)!.triggers.length, 0);
    // What the taker can pay trades in one go.
    const small = h.run({
      type: 'rfq_accept',
      accountId: 6,
      blockRfqId: rfq.blockRfqId,
      side: 'buy',
      price: 500,
      quantity: 5,
      timeInForce: 'fill_or_kill',
    });
    assert.ok(small.ok);
    assert.equal(h.size(6, CALL_70), 5);
  });

  test('a maker short of funds in a multi-maker batch is dropped and the accept re-planned', () => {
    const h = new RfqHarness();
    h.engine.account(9, { BTC: 1_000 });
    const rfq = h.callSpread();
    h.at(h.now + 5_000);
    const broke = quoteIdOf(h.quote(rfq, DESK_A, 9, 'sell', 5, 495, 300));
    const first = quoteIdOf(h.quote(rfq, DESK_B, MAKER_B, 'sell', 5, 500, 300));
    const second = quoteIdOf(h.quote(rfq, DESK_B, MAKER_B, 'sell', 5, 505, 300));
    const result = acceptAll(h, rfq, TAKER, 205);
    assert.ok(result.ok && result.value.kind === 'accept');
    assert.deepEqual(
      result.value.trade!.fills.map((f) => f.quoteId),
      [first, second],
    );
    assert.equal(h.desk.quote(broke)!.statusReason, 'trade_refused');
    assert.equal(h.size(9, CALL_70), 0);
    assert.equal(h.size(TAKER, CALL_70), 10);
  });
});

describe('self-match prevention', () => {
  test("a desk may not quote an RFQ of its own user, from any of the user's accounts", () => {
    const h = new RfqHarness();
    const rfq = h.callSpread();
    const own = h.run({ ...h.quoteCommand(rfq), accountId: TAKER_2, userId: TAKER });
    assert.deepEqual(refusal(own), { name: 'order_overlap', data: { field: 'blockRfqId' } });
    assert.ok(h.run(h.quoteCommand(rfq)).ok, 'another user quotes');
  });
});

describe('block minimum', () => {
  const CALL_80 = 'BTC-27DEC26-80000-C';

  function realistic(h: RfqHarness, amount: number) {
    return h.run(
      h.createCommand({
        legs: [{ instrumentName: CALL_80, side: 'buy', amount }],
        targetDesks: [DESK_A, DESK_B],
      }),
    );
  }

  test('RFQs, quotes and accepts are at least the block minimum (25 BTC of options)', () => {
    const h = new RfqHarness();
    h.engine.list(optionSpec({ name: CALL_80, strike: '80000' }));
    assert.deepEqual(refusal(realistic(h, 10)), {
      name: 'qty_too_low',
      data: { field: 'legs[0].quantity', min: '25' },
    });
    const created = realistic(h, 400);
    assert.ok(created.ok && created.value.kind === 'rfq');
    const rfq = created.value.rfq;
    assert.equal(rfq.minTradeAmount, 250);
    h.at(h.now + 5_000);
    const legs = [{ instrumentName: CALL_80, side: 'buy' as const, ratio: 1, price: 100 }];
    const small = h.run({ ...h.quoteCommand(rfq), quantity: 100, legs });
    assert.deepEqual(refusal(small), {
      name: 'qty_too_low',
      data: { field: 'quantity', minTradeAmount: '25' },
    });
    quoteIdOf(h.run({ ...h.quoteCommand(rfq), quantity: 400, legs }));
    const accept = h.run({
      type: 'rfq_accept',
      accountId: TAKER,
      blockRfqId: rfq.blockRfqId,
      side: 'buy',
      price: 100,
      quantity: 249,
      timeInForce: 'fill_or_kill',
    });
    assert.deepEqual(refusal(accept), {
      name: 'qty_too_low',
      data: { field: 'quantity', minTradeAmount: '25' },
    });
    assert.ok(acceptAll(h, rfq, TAKER, 100).ok);
    assert.equal(h.size(TAKER, CALL_80), 400);
  });

  test("each maker's fill is a block of at least the minimum: a partial quote is not cut below it", () => {
    const h = new RfqHarness();
    h.engine.list(optionSpec({ name: CALL_80, strike: '80000' }));
    const created = realistic(h, 600);
    assert.ok(created.ok && created.value.kind === 'rfq');
    const rfq = created.value.rfq;
    h.at(h.now + 5_000);
    const legs = [{ instrumentName: CALL_80, side: 'buy' as const, ratio: 1, price: 100 }];
    quoteIdOf(h.run({ ...h.quoteCommand(rfq), quantity: 250, legs, executionInstruction: 'all_or_none' }));
    quoteIdOf(
      h.run({
        ...h.quoteCommand(rfq),
        accountId: MAKER_B,
        userId: MAKER_B,
        desk: DESK_B,
        blockRfqId: h.makerId(rfq, DESK_B),
        quantity: 600,
        legs,
      }),
    );
    const accept = (quantity: number) =>
      h.run({
        type: 'rfq_accept',
        accountId: TAKER,
        blockRfqId: rfq.blockRfqId,
        side: 'buy',
        price: 100,
        quantity,
        timeInForce: 'fill_or_kill',
      });
    // 30 BTC: the AON quote takes 25 and would leave desk B a 5 BTC block; nothing trades.
    assert.equal(refusal(accept(300)).name, 'not_fully_filled');
    assert.equal(h.size(TAKER, CALL_80), 0);
    const traded = accept(500);
    assert.ok(traded.ok && traded.value.kind === 'accept');
    assert.deepEqual(
      traded.value.trade!.fills.map((f) => [f.desk, f.quantity]),
      [
        [DESK_A, 250],
        [DESK_B, 250],
      ],
    );
  });
});

describe('future prices near the mark', () => {
  test('hedge prices and future leg prices lie within 5% of the mark; option legs are free', () => {
    const h = new RfqHarness();
    h.core({ type: 'update_prices', markPrices: [{ instrumentName: PERP, markPrice: 130_000 }] });
    const hedged = (price: number) =>
      h.run(
        h.createCommand({
          targetDesks: [DESK_A, DESK_B],
          legs: [
            { instrumentName: CALL_70, side: 'buy', amount: 10 },
            { instrumentName: CALL_75, side: 'sell', amount: 10 },
          ],
          hedge: { instrumentName: PERP, side: 'sell', amount: 1_000, price },
        }),
      );
    assert.deepEqual(refusal(hedged(100_000)), {
      name: 'invalid_price',
      data: { field: 'hedge.price', minPrice: '61750', maxPrice: '68250' },
    });
    const created = hedged(131_000);
    assert.ok(created.ok && created.value.kind === 'rfq');
    const rfq = created.value.rfq;
    h.at(h.now + 5_000);
    // A maker's hedge price is outside the strategy price the taker bounds: $10 would move
    // thousands of BTC to the maker on an accept at a fair strategy price.
    const hedge = { instrumentName: PERP, side: 'sell' as const, amount: 1_000, price: 20 };
    assert.deepEqual(refusal(h.run({ ...h.quoteCommand(rfq), hedge })), {
      name: 'invalid_price',
      data: { field: 'hedge.price', minPrice: '61750', maxPrice: '68250' },
    });
    const quoted = quoteIdOf(h.run({ ...h.quoteCommand(rfq), hedge: { ...hedge, price: 129_000 } }));
    const edit = h.run({
      ...h.quoteCommand(rfq),
      type: 'rfq_quote_edit',
      quoteId: quoted,
      hedge: { ...hedge, price: 140_000 },
    });
    assert.equal(refusal(edit).data.field, 'hedge.price');

    // A perpetual leg: its price enters the taker's PnL as 1/price, beyond the strategy price.
    const perpRfq = h.run(
      h.createCommand({
        targetDesks: [DESK_A],
        legs: [{ instrumentName: PERP, side: 'buy', amount: 20_000 }],
      }),
    );
    assert.ok(perpRfq.ok && perpRfq.value.kind === 'rfq');
    const perp = perpRfq.value.rfq;
    const legs = (price: number) => [{ instrumentName: PERP, side: 'buy' as const, ratio: 1, price }];
    const perpQuote = (price: number) =>
      h.run({ ...h.quoteCommand(perp), quantity: perp.quantity, legs: legs(price) });
    assert.equal(refusal(perpQuote(20)).data.field, 'legs[0].price');
    quoteIdOf(perpQuote(130_500));
  });
});

describe('a quote the mark has since left', () => {
  /**
   * The taker long 20,000 lots of the perpetual bought at its 120,000 mark, an RFQ to desk A bid at
   * 120,000 for all of them, then the mark 12% up: the bid closes the long 10.7% under it. The
   * taker's available funds are taken to 0, `funds` deposited, and the bid accepted.
   */
  function closeAfterMarkMove(funds: number) {
    const h = new RfqHarness();
    const mark = (price: number) =>
      h.core({
        type: 'update_prices',
        indexPrices: [{ currency: 'BTC', price: 60_000 }],
        markPrices: [{ instrumentName: PERP, markPrice: price }],
      });
    mark(120_000);
    h.core(orderCommand(MAKER_B, 'sell', 20_000, 120_000));
    assert.ok(h.core(orderCommand(TAKER, 'buy', 20_000, 120_000)).ok);
    const created = h.ok(h.createCommand({ legs: [{ instrumentName: PERP, side: 'buy', amount: 20_000 }] }));
    if (created.kind !== 'rfq') throw new Error('not an RFQ');
    const rfq = created.rfq;
    h.at(h.now + 5_000);
    const legs = [{ instrumentName: PERP, side: 'buy' as const, ratio: 1, price: 120_000 }];
    quoteIdOf(h.run({ ...h.quoteCommand(rfq), side: 'buy', quantity: rfq.quantity, legs }));
    mark(134_400);
    const available = () => h.venue.accountSummary(TAKER, 'BTC')!.availableFunds;
    h.core({ type: 'withdraw', accountId: TAKER, currency: 'BTC', amount: available() });
    if (funds > 0) h.core({ type: 'deposit', accountId: TAKER, currency: 'BTC', amount: funds });
    const accepted = accept(h, rfq, 'sell', 120_000, { quantity: rfq.quantity });
    if (!accepted.ok) {
      assert.equal(accepted.error.name, 'not_enough_funds');
      assert.equal(h.size(TAKER, PERP), 20_000, 'nothing booked');
    } else {
      assert.equal(h.size(TAKER, PERP), 0);
    }
    return { taken: accepted.ok, available: available() };
  }

  test('an accept closing a long through it must afford its loss against the mark: never overdrawn', () => {
    const { funds, available } = leastFundsTaken(closeAfterMarkMove, 100_000_000);
    assert.ok(available >= 0, `taken with ${funds} sat, ${available} available after`);
  });
});

describe('quote hedge', () => {
  test("restates the RFQ's hedge: instrument, side and quantity (whole or the quote's share)", () => {
    const h = new RfqHarness();
    const rfq = h.callSpread({
      hedge: { instrumentName: PERP, side: 'sell', amount: 1_000, price: 130_000 },
    });
    const hedge = { instrumentName: PERP, side: 'sell' as const, amount: 1_000, price: 130_010 };
    const quote = (more: object, quantity = 10) =>
      h.run({ ...h.quoteCommand(rfq), quantity, hedge: { ...hedge, ...more } });
    assert.deepEqual(refusal(quote({ side: 'buy', amount: 500 })), {
      name: 'invalid_arguments',
      data: { field: 'hedge.side' },
    });
    assert.deepEqual(refusal(quote({ amount: 500 })), {
      name: 'invalid_amount',
      data: { field: 'hedge.quantity' },
    });
    assert.deepEqual(refusal(quote({ instrumentName: 'BTC-27DEC26' })), {
      name: 'invalid_arguments',
      data: { field: 'hedge.instrumentName' },
    });
    assert.equal(h.desk.quote(quoteIdOf(quote({})))!.hedgePrice, 130_010);
    // A quote for 4 of the 10 lots may restate its own share (400) of the hedge.
    h.ok({ type: 'rfq_quote_cancel_all', accountId: MAKER_A, desk: DESK_A, blockRfqId: null });
    assert.ok(quote({ amount: 400 }, 4).ok);
  });
});

describe('refusal details', () => {
  test('not_fully_filled reports the available quantity as the wire decimal', () => {
    const h = new RfqHarness();
    const rfq = h.callSpread();
    h.at(h.now + 5_000);
    h.quote(rfq, DESK_A, MAKER_A, 'sell', 2, 500, 300);
    assert.deepEqual(refusal(acceptAll(h, rfq, TAKER, 200)), {
      name: 'not_fully_filled',
      data: { field: 'price', available: '0.2' },
    });
  });

  test('a maker listed twice is refused; the open-RFQ limit names no request field', () => {
    const h = new RfqHarness();
    assert.throws(() => h.callSpread({ makers: [DESK_A, DESK_A], targetDesks: [DESK_A] }), /listed twice/);
    const legs = [{ instrumentName: CALL_75, side: 'buy' as const, amount: 10 }];
    const twice = h.run(
      h.createCommand({ makers: [DESK_B, DESK_A, DESK_B], targetDesks: [DESK_A, DESK_B], legs }),
    );
    assert.deepEqual(refusal(twice), { name: 'invalid_arguments', data: { field: 'makers[2]' } });
    for (let i = 0; i < h.desk.config.maxOpenRfqsPerTaker; i++) h.callSpread();
    const over = h.run(h.createCommand({ legs }));
    assert.deepEqual(refusal(over), { name: 'too_many_open_block_rfqs', data: { max: 20 } });
  });
});
