import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { CoreEvent } from '../core/events.ts';
import type { InstrumentSpec } from '../domain/instrument.ts';
import { createCombo } from '../market/combos.ts';
import { comboPriceRange, legPrices } from './combo-legs.ts';
import { Harness, optionSpec, perpetualSpec } from './testkit.ts';

const EXPIRY = Date.UTC(2026, 11, 27, 8);
const FUTURE = 'BTC-27DEC26';
const LOW_CALL = 'BTC-27DEC26-70000-C';
const HIGH_CALL = 'BTC-27DEC26-75000-C';
const PUT = 'BTC-27DEC26-70000-P';

function specs(): Map<string, InstrumentSpec> {
  const list = [
    perpetualSpec(),
    perpetualSpec({ name: FUTURE, settlementPeriod: 'month', expiration: EXPIRY }),
    optionSpec({ name: LOW_CALL }),
    optionSpec({ name: HIGH_CALL, strike: '75000' }),
    optionSpec({ name: PUT, optionType: 'put' }),
  ];
  return new Map(list.map((spec) => [spec.name, spec]));
}

/** A venue with the legs listed and marked, accounts 1–3 funded, and `combo` listed. */
function venue(combo: string): Harness {
  const h = new Harness();
  const legs = specs();
  for (const spec of legs.values()) h.list(spec);
  for (const a of [1, 2, 3]) h.account(a);
  h.ok({
    type: 'update_prices',
    indexPrices: [{ currency: 'BTC', price: 60_000 }],
    markPrices: [
      { instrumentName: 'BTC-PERPETUAL', markPrice: 120_010 }, // 60,005 USD
      { instrumentName: FUTURE, markPrice: 121_000 }, // 60,500 USD
      { instrumentName: LOW_CALL, markPrice: 500 }, // 0.05 BTC
      { instrumentName: HIGH_CALL, markPrice: 300 },
      { instrumentName: PUT, markPrice: 900 },
    ],
  });
  const request = {
    'BTC-CS-27DEC26-70000_75000': {
      kind: 'call_spread',
      currency: 'BTC',
      linear: false,
      expiration: EXPIRY,
      longStrike: 70_000,
      shortStrike: 75_000,
    },
    'BTC-STRD-27DEC26-70000': {
      kind: 'straddle',
      currency: 'BTC',
      linear: false,
      expiration: EXPIRY,
      strike: 70_000,
    },
    'BTC-FS-27DEC26_PERP': {
      kind: 'future_spread',
      currency: 'BTC',
      longExpiration: EXPIRY,
      shortExpiration: null,
    },
  } as const;
  const created = createCombo(request[combo as keyof typeof request], (name) => legs.get(name), h.ts);
  assert.ok(created.ok);
  h.list(created.spec);
  return h;
}

function trades(events: readonly CoreEvent[]) {
  return events.flatMap((event) => (event.type === 'trade' ? [event.trade] : []));
}

describe('legPrices', () => {
  test('legs stay at their references when they already net to the price', () => {
    assert.deepEqual(
      legPrices(200, [
        { ratio: 1, reference: 500 },
        { ratio: -1, reference: 300 },
      ]),
      [500, 300],
    );
  });

  test('the dearest leg absorbs the difference; a sold leg moves the other way', () => {
    assert.deepEqual(
      legPrices(250, [
        { ratio: 1, reference: 500 },
        { ratio: -1, reference: 300 },
      ]),
      [550, 300],
    );
    assert.deepEqual(
      legPrices(250, [
        { ratio: 1, reference: 300 },
        { ratio: -1, reference: 500 },
      ]),
      [300, 50],
    );
  });

  test('a leg that would go below one tick stops there and the next one takes the rest', () => {
    assert.deepEqual(
      legPrices(-600, [
        { ratio: 1, reference: 500 },
        { ratio: -1, reference: 300 },
      ]),
      [1, 601],
    );
    assert.deepEqual(
      legPrices(3, [
        { ratio: 1, reference: 500 },
        { ratio: 1, reference: 900 },
      ]),
      [2, 1],
    );
  });

  test('bought legs only: no split below one tick per leg', () => {
    assert.deepEqual(comboPriceRange([1, 1]), { min: 2, max: Number.POSITIVE_INFINITY });
    assert.deepEqual(comboPriceRange([1, -1]), {
      min: Number.NEGATIVE_INFINITY,
      max: Number.POSITIVE_INFINITY,
    });
    assert.deepEqual(comboPriceRange([-1, -1, -1]), { min: Number.NEGATIVE_INFINITY, max: -3 });
    assert.equal(
      legPrices(1, [
        { ratio: 1, reference: 5 },
        { ratio: 1, reference: null },
      ]),
      null,
    );
  });

  test('property: whole ticks ≥ 1 netting exactly to the price, or null exactly outside the range', () => {
    const leg = fc.record({
      ratio: fc.constantFrom<1 | -1>(1, -1),
      reference: fc.option(fc.integer({ min: -10, max: 1_000_000 }), { nil: null }),
    });
    fc.assert(
      fc.property(
        fc.array(leg, { minLength: 2, maxLength: 4 }),
        fc.integer({ min: -2_000_000, max: 2_000_000 }),
        (legs, price) => {
          const prices = legPrices(price, legs);
          const range = comboPriceRange(legs.map((l) => l.ratio));
          if (price < range.min || price > range.max) return prices === null;
          assert.ok(prices !== null);
          assert.ok(prices.every((p) => Number.isSafeInteger(p) && p >= 1));
          assert.equal(
            legs.reduce((sum, l, i) => sum + l.ratio * prices[i]!, 0),
            price,
          );
          // Only the net moves legs off their references: the moves add up to exactly it.
          const start = legs.map((l) => Math.max(1, l.reference ?? 1));
          const net = price - legs.reduce((sum, l, i) => sum + l.ratio * start[i]!, 0);
          const moves = prices.reduce((sum, p, i) => sum + Math.abs(p - start[i]!), 0);
          assert.equal(moves, Math.abs(net));
          return true;
        },
      ),
    );
  });
});

describe('a trade on a combo book is booked on its legs', () => {
  test('call spread: leg trades net to the combo price; positions and cash on the legs', () => {
    const h = venue('BTC-CS-27DEC26-70000_75000');
    const combo = 'BTC-CS-27DEC26-70000_75000';
    const before = [1, 2].map((a) => h.venue.accountSummary(a, 'BTC')!.balance);
    h.order(1, 'sell', 10, 250, { instrumentName: combo });
    const result = h.order(2, 'buy', 10, 250, { instrumentName: combo });
    assert.ok(result.ok);
    const [trade] = trades(result.events);
    assert.ok(trade !== undefined && trade.legs !== undefined);
    assert.equal(trades(result.events).length, 1, 'one trade event per combo trade');
    assert.equal(trade.instrumentName, combo);
    assert.deepEqual(
      trade.legs.map((l) => [
        l.instrumentName,
        l.price,
        l.amount,
        l.taker.side,
        l.maker.side,
        l.comboId,
        l.comboTradeId,
      ]),
      [
        [LOW_CALL, 550, 10, 'buy', 'sell', combo, trade.tradeId],
        [HIGH_CALL, 300, 10, 'sell', 'buy', combo, trade.tradeId],
      ],
    );
    assert.equal(trade.comboId, undefined);
    assert.equal(trade.taker.fee, trade.legs[0]!.taker.fee + trade.legs[1]!.taker.fee);
    assert.ok(trade.taker.fee > 0);
    // Positions live on the legs; the combo has none.
    assert.equal(h.venue.position(2, LOW_CALL)!.size, 10);
    assert.equal(h.venue.position(2, HIGH_CALL)!.size, -10);
    assert.equal(h.venue.position(1, LOW_CALL)!.size, -10);
    assert.equal(h.venue.position(1, HIGH_CALL)!.size, 10);
    assert.equal(h.venue.position(2, combo)?.size ?? 0, 0);
    assert.deepEqual(
      h.venue
        .positions(2)
        .map((p) => p.instrumentName)
        .sort(),
      [LOW_CALL, HIGH_CALL],
    );
    // Premium: the buyer pays 0.025 BTC × 1 BTC of spread; the seller gets it; both pay fees.
    const [seller, buyer] = [1, 2].map((a, i) => h.venue.accountSummary(a, 'BTC')!.balance - before[i]!);
    assert.equal(buyer, -2_500_000 - trade.taker.fee);
    assert.equal(seller, 2_500_000 - trade.maker.fee);
    // Each leg trade has its own id and sequence on its own instrument; the combo counts its own.
    assert.equal(new Set([trade.tradeId, ...trade.legs.map((l) => l.tradeId)]).size, 3);
    assert.equal(trade.tradeSeq, 1);
    assert.deepEqual(
      trade.legs.map((l) => l.tradeSeq),
      [1, 1],
    );
    assert.equal(h.venue.recentTrades(LOW_CALL).length, 1);
  });

  test('future spread: the perpetual leg stays at its mark, PnL is booked on the legs when closed', () => {
    const h = venue('BTC-FS-27DEC26_PERP');
    const combo = 'BTC-FS-27DEC26_PERP';
    h.order(1, 'sell', 100, 990, { instrumentName: combo }); // 495 USD spread, 1,000 USD
    const opened = trades(h.order(2, 'buy', 100, 990, { instrumentName: combo }).events)[0]!;
    assert.deepEqual(
      opened.legs!.map((l) => [l.instrumentName, l.price, l.taker.side]),
      [
        [FUTURE, 121_000, 'buy'],
        ['BTC-PERPETUAL', 120_010, 'sell'],
      ],
    );
    assert.equal(h.venue.position(2, FUTURE)!.size, 100);
    assert.equal(h.venue.position(2, 'BTC-PERPETUAL')!.size, -100);
    // Closing at a wider spread: the legs realise the profit.
    h.order(1, 'buy', 100, 1_010, { instrumentName: combo });
    const closed = trades(h.order(2, 'sell', 100, 1_010, { instrumentName: combo }).events)[0]!;
    assert.equal(h.venue.position(2, FUTURE)?.size ?? 0, 0);
    assert.equal(h.venue.position(2, 'BTC-PERPETUAL')?.size ?? 0, 0);
    assert.equal(
      closed.taker.profitLoss,
      closed.legs![0]!.taker.profitLoss + closed.legs![1]!.taker.profitLoss,
    );
    assert.ok(closed.taker.profitLoss > 0);
  });

  test('a combo order reserves its legs’ margin (a future spread reserved nothing before)', () => {
    const h = venue('BTC-FS-27DEC26_PERP');
    const free = h.venue.accountSummary(1, 'BTC')!.availableFunds;
    const result = h.order(1, 'sell', 100, -20, { instrumentName: 'BTC-FS-27DEC26_PERP' });
    assert.ok(result.ok, JSON.stringify(result));
    const reserved = free - h.venue.accountSummary(1, 'BTC')!.availableFunds;
    assert.ok(reserved > 0, `reserved ${reserved}`);
  });

  test('a straddle below one tick per leg is refused, naming the price', () => {
    const h = venue('BTC-STRD-27DEC26-70000');
    h.ok({
      type: 'update_prices',
      markPrices: [{ instrumentName: 'BTC-STRD-27DEC26-70000', markPrice: 1 }],
    });
    const result = h.order(1, 'sell', 10, 1, { instrumentName: 'BTC-STRD-27DEC26-70000' });
    assert.ok(!result.ok);
    assert.equal(result.error.name, 'invalid_price');
    assert.equal(result.error.data.field, 'price');
    assert.equal(result.error.data.minPrice, '0.0002');
  });

  test('a leg that expires cancels the resting combo orders, and the combo takes no new ones', () => {
    const h = venue('BTC-FS-27DEC26_PERP');
    const combo = 'BTC-FS-27DEC26_PERP';
    const resting = h.order(1, 'sell', 100, 990, { instrumentName: combo });
    assert.ok(resting.ok);
    const settled = h.ok({ type: 'settle_instrument', instrumentName: FUTURE, settlementPrice: 121_000 });
    assert.ok(
      settled.events.some(
        (e) =>
          e.type === 'order' &&
          e.order.orderId === resting.order!.orderId &&
          e.order.cancelReason === 'settlement',
      ),
    );
    const refused = h.order(2, 'buy', 100, 990, { instrumentName: combo });
    assert.ok(!refused.ok);
    assert.equal(refused.error.name, 'instrument_expired');
    assert.match(refused.error.message, /BTC-27DEC26/);
  });

  test('a combo whose legs cannot carry its trades is not listed', () => {
    const h = new Harness();
    const legs = specs();
    for (const spec of legs.values()) h.list(spec);
    const created = createCombo(
      { kind: 'future_spread', currency: 'BTC', longExpiration: EXPIRY, shortExpiration: null },
      (name) => legs.get(name),
      h.ts,
    );
    assert.ok(created.ok);
    const spec = created.spec;
    const doubled = h.run({
      type: 'list_instrument',
      spec: { ...spec, legs: [spec.legs![0]!, { ...spec.legs![1]!, ratio: -2 }] },
    });
    assert.ok(!doubled.ok);
    assert.equal(doubled.error.data.field, 'spec.legs');
    const unlisted = h.run({
      type: 'list_instrument',
      spec: { ...spec, legs: [spec.legs![0]!, { instrumentName: 'BTC-27MAR27', ratio: -1 }] },
    });
    assert.ok(!unlisted.ok);
    assert.match(unlisted.error.message, /BTC-27MAR27 is not listed/);
  });
});
