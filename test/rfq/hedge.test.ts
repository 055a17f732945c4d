/**
 * The hedge leg of an accept, with the real engine: each quote's fill books exactly the hedge
 * its quote shows (its share of the RFQ's hedge, never the rounding remainder of another
 * fill), and the taker bounds the hedge price it trades at with the accept's `hedge`, as it
 * bounds the strategy price with `price`.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { quoteToWire, rfqToWire, rfqTradeToWire } from '../../src/api/wire/rfq.ts';
import { perpetualSpec } from '../../src/engine/testkit.ts';
import type { AcceptHedgeInput, RfqRecord } from '../../src/rfq/types.ts';
import {
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
  TAKER,
  TAKER_2,
} from './harness.ts';

/** 10 RFQ lots of the call spread, hedged by selling 3 lots (30 USD) of the perpetual. */
const HEDGE = { instrumentName: PERP, side: 'sell' as const, amount: 3, price: 120_000 };

function openRfq(h: RfqHarness, more: Parameters<RfqHarness['callSpread']>[0] = {}): RfqRecord {
  const rfq = h.callSpread({ hedge: HEDGE, ...more });
  h.at(h.now + 5_000);
  return rfq;
}

function accept(
  h: RfqHarness,
  rfq: RfqRecord,
  side: 'buy' | 'sell',
  price: number,
  hedge: AcceptHedgeInput | null = null,
  more: { timeInForce?: 'fill_or_kill' | 'good_til_cancelled'; quantity?: number | null } = {},
): DeskResult {
  return h.run({
    type: 'rfq_accept',
    accountId: TAKER,
    blockRfqId: rfq.blockRfqId,
    side,
    price,
    quantity: more.quantity ?? null,
    timeInForce: more.timeInForce ?? 'fill_or_kill',
    ...(hedge === null ? {} : { hedge }),
  });
}

function traded(result: DeskResult) {
  assert.ok(result.ok, result.ok ? '' : `${result.error.name}: ${result.error.message}`);
  assert.equal(result.value.kind, 'accept');
  if (result.value.kind !== 'accept') throw new Error('unreachable');
  return result.value;
}

function refusal(result: DeskResult): { name: string; data: Record<string, unknown> } {
  assert.equal(result.ok, false, 'expected a refusal');
  if (result.ok) throw new Error('unreachable');
  return { name: result.error.name, data: result.error.data };
}

const lookup = (h: RfqHarness) => (name: string) => h.venue.instrument(name)?.instrument;

function takerView(h: RfqHarness, rfq: RfqRecord) {
  const now = h.desk.takerRfq(new Set([TAKER]), rfq.blockRfqId)!;
  return rfqToWire(now, h.desk.quotesOfRfq(rfq.blockRfqId), { role: 'taker' }, lookup(h));
}

/** Every account's perpetual position sums to zero, and each maker holds what its fills booked. */
function assertHedgeConserved(h: RfqHarness, accounts: readonly number[]): void {
  const sizes = accounts.map((account) => h.size(account, PERP));
  assert.equal(
    sizes.reduce((sum, size) => sum + size, 0),
    0,
    `perpetual positions ${sizes} are not equal and opposite`,
  );
}

describe('hedge booked per quote', () => {
  test('each fill books the hedge its quote shows; the remainder is booked to no maker', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    // Each quote is for 5 of the 10 lots: its share of the 3-lot hedge is floor(1.5) = 1 lot.
    // Maker A restates that share, maker B the whole hedge: both show (and book) 1 lot.
    const a = quoteIdOf(
      h.quote(rfq, DESK_A, MAKER_A, 'sell', 5, 500, 300, { hedge: { ...HEDGE, amount: 1 } }),
    );
    const b = quoteIdOf(h.quote(rfq, DESK_B, MAKER_B, 'sell', 5, 505, 300, { hedge: HEDGE }));
    const shown = [a, b].map((id) => {
      const quote = h.desk.quote(id)!;
      const makerRfq = h.desk.makerRfq(quote.desk, quote.makerRfqId)!;
      return quoteToWire(quote, makerRfq, lookup(h)).hedge?.quantity;
    });
    assert.deepEqual(shown, ['10', '10']);

    const value = traded(accept(h, rfq, 'buy', 205));
    assert.deepEqual(
      value.trade!.fills.map((f) => [f.desk, f.quantity, f.hedgeAmount]),
      [
        [DESK_A, 5, 1],
        [DESK_B, 5, 1],
      ],
    );
    // The makers bought the hedge the taker sold, no more than their quotes showed.
    assert.equal(h.size(MAKER_A, PERP), 1);
    assert.equal(h.size(MAKER_B, PERP), 1);
    assert.equal(h.size(TAKER, PERP), -2);
    assertHedgeConserved(h, [TAKER, MAKER_A, MAKER_B]);
    // get_trades and pushes show what was booked.
    const wire = rfqTradeToWire(value.trade!, lookup(h));
    assert.deepEqual(
      wire.trades.map((t) => t.hedgeQuantity),
      ['10', '10'],
    );
    assert.equal(wire.hedge?.quantity, '20');
  });

  test('a quote filling the whole RFQ books the whole hedge', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300, { hedge: HEDGE });
    const value = traded(accept(h, rfq, 'buy', 200));
    assert.deepEqual(
      value.trade!.fills.map((f) => f.hedgeAmount),
      [3],
    );
    assert.equal(h.size(TAKER, PERP), -3);
    assertHedgeConserved(h, [TAKER, MAKER_A]);
  });

  test("a quote's fill split over allocation accounts books the quote's share in total", () => {
    const h = new RfqHarness();
    const rfq = openRfq(h, { tradeAllocations: [{ amount: 3, userId: TAKER, accountId: TAKER_2 }] });
    h.quote(rfq, DESK_A, MAKER_A, 'sell', 5, 500, 300);
    h.quote(rfq, DESK_B, MAKER_B, 'sell', 5, 505, 300);
    const value = traded(accept(h, rfq, 'buy', 205));
    assert.deepEqual(
      value.trade!.fills.map((f) => [f.desk, f.takerAccountId, f.quantity, f.hedgeAmount]),
      [
        [DESK_A, TAKER_2, 3, 0],
        [DESK_A, TAKER, 2, 1],
        [DESK_B, TAKER, 5, 1],
      ],
    );
    assert.equal(h.size(MAKER_A, PERP), 1);
    assert.equal(h.size(MAKER_B, PERP), 1);
    assertHedgeConserved(h, [TAKER, TAKER_2, MAKER_A, MAKER_B]);
    assert.deepEqual(
      rfqTradeToWire(value.trade!, lookup(h)).trades.map((t) => t.hedgeQuantity),
      ['10', '10'],
    );
  });
});

describe('hedge price on the taker view and the accept', () => {
  test("the taker's bids and asks show each quote's hedge price, only when the RFQ has a hedge", () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300, { hedge: { ...HEDGE, price: 119_000 } });
    h.quote(rfq, DESK_B, MAKER_B, 'buy', 10, 450, 300);
    const view = takerView(h, rfq);
    assert.deepEqual(
      view.asks?.map((e) => [e.price, e.hedgePrice]),
      [['0.02', '59500']],
    );
    // Without a hedge of its own the quote trades the RFQ's hedge price.
    assert.deepEqual(
      view.bids?.map((e) => [e.price, e.hedgePrice]),
      [['0.015', '60000']],
    );
    const plain = h.callSpread();
    h.at(h.now + 5_000);
    h.quote(plain, DESK_A, MAKER_A, 'sell', 10, 500, 300);
    const bare = takerView(h, plain);
    assert.equal(bare.asks?.length, 1);
    assert.equal('hedgePrice' in bare.asks![0]!, false);
  });

  test('quotes whose hedge price is worse than the accept hedge price are passed over', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    // The taker buys the structure, so it sells the hedge: a lower hedge price is worse for it.
    const cheapHedge = quoteIdOf(
      h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300, { hedge: { ...HEDGE, price: 119_000 } }),
    );
    const good = quoteIdOf(
      h.quote(rfq, DESK_B, MAKER_B, 'sell', 10, 505, 300, { hedge: { ...HEDGE, price: 120_500 } }),
    );
    // FOK with only the cheap-hedge quote in reach of the strategy price: nothing crosses.
    assert.deepEqual(refusal(accept(h, rfq, 'buy', 200, { ...HEDGE, price: 120_000 })), {
      name: 'not_fully_filled',
      data: { field: 'price', available: '0' },
    });
    const value = traded(accept(h, rfq, 'buy', 205, { ...HEDGE, price: 120_000 }));
    assert.deepEqual(
      value.trade!.fills.map((f) => [f.quoteId, f.hedgePrice]),
      [[good, 120_500]],
    );
    assert.equal(h.desk.quote(cheapHedge)?.filledQuantity, 0);
  });

  test('a taker selling the structure buys the hedge: a higher hedge price is worse', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    h.quote(rfq, DESK_A, MAKER_A, 'buy', 10, 460, 300, { hedge: { ...HEDGE, price: 121_000 } });
    const good = quoteIdOf(
      h.quote(rfq, DESK_B, MAKER_B, 'buy', 10, 455, 300, { hedge: { ...HEDGE, price: 119_500 } }),
    );
    const value = traded(accept(h, rfq, 'sell', 155, { ...HEDGE, price: 120_000 }));
    assert.deepEqual(
      value.trade!.fills.map((f) => f.quoteId),
      [good],
    );
    assert.equal(h.size(TAKER, PERP), 3);
    assertHedgeConserved(h, [TAKER, MAKER_A, MAKER_B]);
  });

  test("the accept's hedge restates the RFQ's hedge at a positive price", () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300);
    const cases: [Partial<AcceptHedgeInput>, string, string][] = [
      [{ instrumentName: 'BTC-27DEC26' }, 'invalid_arguments', 'hedge.instrumentName'],
      [{ side: 'buy' }, 'invalid_arguments', 'hedge.side'],
      [{ amount: 2 }, 'invalid_amount', 'hedge.quantity'],
      [{ price: 0 }, 'invalid_price', 'hedge.price'],
    ];
    for (const [more, name, field] of cases) {
      assert.deepEqual(refusal(accept(h, rfq, 'buy', 200, { ...HEDGE, ...more })), { name, data: { field } });
    }
    // The share of a partial accept (5 of 10 lots: 1 of 3) is accepted as the quantity too.
    traded(accept(h, rfq, 'buy', 200, { ...HEDGE, amount: 1 }, { quantity: 5 }));

    const plain = h.callSpread();
    h.at(h.now + 5_000);
    assert.deepEqual(refusal(accept(h, plain, 'buy', 200, HEDGE)), {
      name: 'invalid_arguments',
      data: { field: 'hedge' },
    });
  });

  test('a GTC trigger keeps the hedge limit: a quote with a worse hedge price does not fire it', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    const waiting = traded(
      accept(h, rfq, 'buy', 200, { ...HEDGE, price: 120_000 }, { timeInForce: 'good_til_cancelled' }),
    );
    assert.deepEqual(waiting.trigger, {
      side: 'buy',
      price: 200,
      quantity: 10,
      createdAt: h.now,
      hedgePrice: 120_000,
    });
    const view = rfqToWire(waiting.rfq, [], { role: 'taker' }, lookup(h));
    assert.equal(view.tradeTriggers?.[0]?.hedgePrice, '60000');
    h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300, { hedge: { ...HEDGE, price: 119_000 } });
    assert.equal(h.desk.takerRfq(new Set([TAKER]), rfq.blockRfqId)?.status, 'open');
    const good = quoteIdOf(
      h.quote(rfq, DESK_B, MAKER_B, 'sell', 10, 500, 300, { hedge: { ...HEDGE, price: 120_000 } }),
    );
    assert.equal(h.desk.takerRfq(new Set([TAKER]), rfq.blockRfqId)?.status, 'filled');
    assert.equal(h.desk.quote(good)?.status, 'filled');
    assert.equal(h.size(MAKER_B, CALL_70), -10);
  });
});

describe('trade prices over several makers (get_trades)', () => {
  /** 10 RFQ lots hedged by selling 5 perpetual lots: a 4-lot quote books 2, a 6-lot quote 3. */
  const HEDGE_5 = { ...HEDGE, amount: 5 };

  test('legs and hedge show the amount-weighted average of the fills, exactly', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h, { hedge: HEDGE_5 });
    // A: 4 lots at 0.05/0.03 (strategy 0.02), hedge 59500; B: 6 lots at 0.051/0.0305 (0.0205),
    // hedge 60000.5. B's quote is worse, so A fills first.
    h.quote(rfq, DESK_A, MAKER_A, 'sell', 4, 500, 300, { hedge: { ...HEDGE_5, price: 119_000 } });
    h.quote(rfq, DESK_B, MAKER_B, 'sell', 6, 510, 305, { hedge: { ...HEDGE_5, price: 120_001 } });
    const value = traded(accept(h, rfq, 'buy', 205));
    assert.deepEqual(
      value.trade!.fills.map((f) => [f.desk, f.quantity, f.hedgeAmount, f.hedgePrice]),
      [
        [DESK_A, 4, 2, 119_000],
        [DESK_B, 6, 3, 120_001],
      ],
    );
    const wire = rfqTradeToWire(value.trade!, lookup(h));
    // Legs: (4 × 500 + 6 × 510) / 10 = 506 ticks, (4 × 300 + 6 × 305) / 10 = 303 ticks (averages,
    // off the 0.0005 grid); their strategy sum is the average of the trades' prices,
    // (4 × 0.02 + 6 × 0.0205) / 10 = 0.0203.
    assert.deepEqual(
      wire.legs.map((leg) => [leg.instrumentName, leg.price]),
      [
        [CALL_70, '0.0506'],
        [CALL_75, '0.0303'],
      ],
    );
    // Hedge: weighted by the hedge lots each fill booked, (2 × 119000 + 3 × 120001) / 5 ticks.
    assert.deepEqual(wire.hedge, {
      instrumentName: PERP,
      quantity: '50',
      side: 'sell',
      price: '59800.3',
    });
    assert.deepEqual(
      wire.trades.map((t) => [t.quantity, t.price, t.hedgeQuantity]),
      [
        ['0.4', '0.02', '20'],
        ['0.6', '0.0205', '30'],
      ],
    );
    // The read store keeps the record as JSON (rfq_trades.view): it renders the same.
    assert.deepEqual(rfqTradeToWire(JSON.parse(JSON.stringify(value.trade!)), lookup(h)), wire);
  });

  test('an average off the decimal grid is truncated at 8 places beyond the tick', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h, { hedge: HEDGE_5 });
    h.quote(rfq, DESK_A, MAKER_A, 'sell', 3, 500, 300);
    h.quote(rfq, DESK_B, MAKER_B, 'sell', 7, 505, 300);
    // 9 of 10 lots: A fills 3, B 6. Leg 1: (3 × 500 + 6 × 505) / 9 = 503.333… ticks of 0.0001.
    const value = traded(accept(h, rfq, 'buy', 205, null, { quantity: 9 }));
    const wire = rfqTradeToWire(value.trade!, lookup(h));
    assert.deepEqual(
      wire.legs.map((leg) => leg.price),
      ['0.050333333333', '0.03'],
    );
    // Both quotes trade the RFQ's hedge price, so the hedge shows it as it is.
    assert.equal(wire.hedge?.price, '60000');
  });

  test('one maker: the legs and hedge show its quote as they are', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h, { tradeAllocations: [{ amount: 3, userId: TAKER, accountId: TAKER_2 }] });
    h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 505, 305, { hedge: { ...HEDGE, price: 120_001 } });
    const value = traded(accept(h, rfq, 'buy', 200));
    assert.equal(value.trade!.fills.length, 2, 'split over the allocation account and the taker');
    const wire = rfqTradeToWire(value.trade!, lookup(h));
    assert.deepEqual(
      wire.legs.map((leg) => leg.price),
      ['0.0505', '0.0305'],
    );
    assert.equal(wire.hedge?.price, '60000.5');
    assert.equal(wire.hedge?.quantity, '30');
  });
});

describe('hedge instrument expiry', () => {
  test('settling the hedge future closes the RFQ instrument_expired', () => {
    const FUT = 'BTC-26JUN26';
    const h = new RfqHarness();
    h.engine.list(
      perpetualSpec({
        name: FUT,
        settlementPeriod: 'month',
        expiration: Date.UTC(2026, 5, 26, 8),
        tickSize: '2.5',
      }),
    );
    h.core({
      type: 'update_prices',
      indexPrices: [{ currency: 'BTC', price: 60_000 }],
      markPrices: [{ instrumentName: FUT, markPrice: 24_000 }],
    });
    const rfq = openRfq(h, { hedge: { instrumentName: FUT, side: 'sell', amount: 3, price: 24_000 } });
    assert.equal(h.desk.takerRfq(new Set([TAKER]), rfq.blockRfqId)?.status, 'open');
    h.core({ type: 'settle_instrument', instrumentName: FUT, settlementPrice: 24_000 });
    const after = h.desk.takerRfq(new Set([TAKER]), rfq.blockRfqId)!;
    assert.equal(after.status, 'closed');
    assert.equal(after.closedReason, 'instrument_expired');
    assert.equal(h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300).ok, false);
  });
});

describe('hedge limit bound', () => {
  test('a quote whose hedge price equals the accept hedge limit trades', () => {
    const h = new RfqHarness();
    const rfq = openRfq(h);
    h.quote(rfq, DESK_A, MAKER_A, 'buy', 10, 460, 300, { hedge: { ...HEDGE, price: 119_500 } });
    const value = traded(accept(h, rfq, 'sell', 160, { ...HEDGE, price: 119_500 }));
    assert.deepEqual(
      value.trade!.fills.map((f) => [f.quantity, f.hedgePrice]),
      [[10, 119_500]],
    );
  });
});
