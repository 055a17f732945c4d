import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { CoreEvent } from '../core/events.ts';
import { buildCatalogue } from '../market/catalogue.ts';
import { type ComboRequest, createCombo } from '../market/combos.ts';
import { type ComboBook, comboLegsProblem, comboPriceRange, type LegTerms, legPrices } from './combo-legs.ts';
import {
  comboLegSpecs,
  comboSpec,
  FUTURE,
  FUTURE_SPREAD,
  HIGH_CALL,
  LOW_CALL,
  listCombos,
  PERP,
  PUT,
  SPREAD,
  STRADDLE,
} from './combo-testkit.ts';
import { Harness } from './testkit.ts';

/** A venue with the legs listed and marked, accounts 1–3 funded, and `combo` listed. */
function venue(combo: string): Harness {
  const h = new Harness();
  listCombos(h, [combo]);
  for (const a of [1, 2, 3]) h.account(a);
  h.ok({
    type: 'update_prices',
    indexPrices: [{ currency: 'BTC', price: 60_000 }],
    markPrices: [
      { instrumentName: 'BTC-PERPETUAL', markPrice: 120_010 }, // 60,005 USD
      { instrumentName: FUTURE, markPrice: 24_200 }, // 60,500 USD
      { instrumentName: LOW_CALL, markPrice: 500 }, // 0.05 BTC
      { instrumentName: HIGH_CALL, markPrice: 300 },
      { instrumentName: PUT, markPrice: 900 },
    ],
  });
  return h;
}

function trades(events: readonly CoreEvent[]) {
  return events.flatMap((event) => (event.type === 'trade' ? [event.trade] : []));
}

/** Plain legs of one tick each, for the cases where ticks do not matter. */
function plain(...legs: [1 | -1, number | null][]): LegTerms[] {
  return legs.map(([ratio, reference]) => ({ ratio, step: 1, reference }));
}

/** A combo book of the given ratios and leg ticks (units), for comboPriceRange. */
function book(legs: [1 | -1, number][], step = 1): ComboBook {
  return {
    legs: legs.map(([ratio, legStep]) => ({ ratio, step: legStep, instrument: undefined as never })),
    step,
  };
}

describe('legPrices', () => {
  test('legs stay at their references when they already net to the price', () => {
    assert.deepEqual(legPrices(200, plain([1, 500], [-1, 300])), [500, 300]);
  });

  test('the dearest leg absorbs the difference; a sold leg moves the other way', () => {
    assert.deepEqual(legPrices(250, plain([1, 500], [-1, 300])), [550, 300]);
    assert.deepEqual(legPrices(250, plain([1, 300], [-1, 500])), [300, 50]);
  });

  test('a leg that would go below one tick stops there and another one moves', () => {
    assert.deepEqual(legPrices(-600, plain([1, 500], [-1, 300])), [1, 601]);
    assert.deepEqual(legPrices(3, plain([1, 500], [1, 900])), [2, 1]);
  });

  test('the finest-ticked leg absorbs, so every leg stays on its own grid', () => {
    // A future spread on the perpetual: the dated future ticks by 2.5 USD (5 units of 0.5).
    const spread = (perp: number) => [
      { ratio: 1 as const, step: 5, reference: 121_000 },
      { ratio: -1 as const, step: 1, reference: perp },
    ];
    assert.deepEqual(legPrices(1_000, spread(120_011)), [121_000, 120_000]);
    // Bought legs only, the fine one at its floor: the coarse one falls in whole ticks.
    assert.deepEqual(
      legPrices(12, [
        { ratio: 1, step: 5, reference: 50 },
        { ratio: 1, step: 1, reference: 40 },
      ]),
      [10, 2],
    );
  });

  test('bought legs only: no split below one tick per leg', () => {
    assert.deepEqual(
      comboPriceRange(
        book([
          [1, 1],
          [1, 1],
        ]),
      ),
      { min: 2, max: Number.POSITIVE_INFINITY },
    );
    assert.deepEqual(
      comboPriceRange(
        book(
          [
            [1, 5],
            [1, 1],
          ],
          5,
        ),
      ),
      { min: 2, max: Number.POSITIVE_INFINITY },
    );
    assert.deepEqual(
      comboPriceRange(
        book([
          [1, 1],
          [-1, 1],
        ]),
      ),
      {
        min: Number.NEGATIVE_INFINITY,
        max: Number.POSITIVE_INFINITY,
      },
    );
    assert.deepEqual(
      comboPriceRange(
        book([
          [-1, 1],
          [-1, 1],
          [-1, 1],
        ]),
      ),
      { min: Number.NEGATIVE_INFINITY, max: -3 },
    );
    assert.equal(legPrices(1, plain([1, 5], [1, null])), null);
  });

  test('property: on each leg grid, at least one tick, netting exactly, or null exactly outside the range', () => {
    const leg = fc.record({
      ratio: fc.constantFrom<1 | -1>(1, -1),
      step: fc.constantFrom(1, 5),
      reference: fc.option(fc.integer({ min: -10, max: 200_000 }), { nil: null }),
    });
    fc.assert(
      fc.property(
        fc.array(leg, { minLength: 2, maxLength: 4 }),
        fc.integer({ min: -500_000, max: 500_000 }),
        (drawn, price) => {
          // References are whole ticks of their legs; one leg has the finest tick (the unit).
          const legs: LegTerms[] = drawn.map((l, i) => ({
            ratio: l.ratio,
            step: i === 0 ? 1 : l.step,
            reference: l.reference === null ? null : l.reference * (i === 0 ? 1 : l.step),
          }));
          const prices = legPrices(price, legs);
          const range = comboPriceRange(book(legs.map((l) => [l.ratio, l.step])));
          if (price < range.min || price > range.max) return prices === null;
          assert.ok(prices !== null, 'splits inside the range');
          for (const [i, p] of prices.entries()) {
            assert.ok(
              Number.isSafeInteger(p) && p >= legs[i]!.step && p % legs[i]!.step === 0,
              `leg ${i} at ${p}`,
            );
          }
          assert.equal(
            legs.reduce((sum, l, i) => sum + l.ratio * prices[i]!, 0),
            price,
          );
          // When the dearest finest-ticked leg can take the whole net, no other leg moves.
          const start = legs.map((l) => Math.max(l.step, l.reference ?? l.step));
          let absorber = -1;
          for (const [i, l] of legs.entries())
            if (l.step === 1 && (absorber < 0 || start[i]! > start[absorber]!)) absorber = i;
          const alone =
            legs[absorber]!.ratio *
            (price - legs.reduce((sum, l, i) => (i === absorber ? sum : sum + l.ratio * start[i]!), 0));
          if (alone >= 1)
            assert.deepEqual(
              prices.filter((_, i) => i !== absorber),
              start.filter((_, i) => i !== absorber),
            );
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

  test('future spread: legs on their own grids, PnL booked on the legs when closed', () => {
    const h = venue('BTC-FS-27DEC26_PERP');
    const combo = 'BTC-FS-27DEC26_PERP';
    h.order(1, 'sell', 100, 198, { instrumentName: combo }); // a 495 USD spread (2.5 USD ticks), 1,000 USD
    const opened = trades(h.order(2, 'buy', 100, 198, { instrumentName: combo }).events)[0]!;
    assert.deepEqual(
      opened.legs!.map((l) => [l.instrumentName, l.price, l.taker.side]),
      [
        [FUTURE, 24_200, 'buy'],
        ['BTC-PERPETUAL', 120_010, 'sell'],
      ],
    );
    assert.equal(h.venue.position(2, FUTURE)!.size, 100);
    assert.equal(h.venue.position(2, 'BTC-PERPETUAL')!.size, -100);
    // Closing at a wider spread: the legs realise the profit.
    h.order(1, 'buy', 100, 202, { instrumentName: combo });
    const closed = trades(h.order(2, 'sell', 100, 202, { instrumentName: combo }).events)[0]!;
    // The perpetual (the finer tick) absorbs the wider spread: 60,500 − 505 USD.
    assert.deepEqual(
      closed.legs!.map((l) => l.price),
      [24_200, 119_990],
    );
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
    // At the legs' net mark (198 ticks, 495 USD): the unmarked combo is banded around it.
    const result = h.order(1, 'sell', 100, 198, { instrumentName: 'BTC-FS-27DEC26_PERP' });
    assert.ok(result.ok, JSON.stringify(result));
    const reserved = free - h.venue.accountSummary(1, 'BTC')!.availableFunds;
    assert.ok(reserved > 0, `reserved ${reserved}`);
  });

  test('a combo order that closes leg positions reserves no margin, but only once', () => {
    const h = venue('BTC-FS-27DEC26_PERP');
    const combo = 'BTC-FS-27DEC26_PERP';
    h.order(1, 'sell', 100, 198, { instrumentName: combo });
    h.order(2, 'buy', 100, 198, { instrumentName: combo });
    // Account 2: long 100 lots of the future, short 100 of the perpetual.
    const available = () => h.venue.accountSummary(2, 'BTC')!.availableFunds;
    const before = available();
    assert.ok(h.order(2, 'sell', 100, 200, { instrumentName: combo }).ok);
    const closing = before - available();
    // A second order closing the same legs is no longer reducing: it reserves the legs' margin.
    assert.ok(h.order(2, 'sell', 100, 200, { instrumentName: combo }).ok);
    const opening = before - closing - available();
    assert.ok(opening > 10 * closing, `closing ${closing}, opening ${opening}`);
    // So does an order on a leg itself, once combo orders claim the position.
    const legBefore = available();
    assert.ok(h.order(2, 'sell', 100, 24_400, { instrumentName: FUTURE }).ok);
    assert.ok(legBefore - available() > closing);
    h.venue.validate();
  });

  test('reduce-only is refused on a combo, which holds no position, on placing and on an edit', () => {
    const h = venue('BTC-CS-27DEC26-70000_75000');
    const combo = 'BTC-CS-27DEC26-70000_75000';
    const placed = h.order(1, 'sell', 10, 250, { instrumentName: combo, reduceOnly: true });
    assert.ok(!placed.ok);
    assert.equal(placed.error.name, 'invalid_arguments');
    assert.equal(placed.error.data.field, 'reduceOnly');
    assert.match(placed.error.message, /combo holds no position/);
    const resting = h.order(1, 'sell', 10, 250, { instrumentName: combo });
    assert.ok(resting.ok);
    const edit = h.run({
      type: 'edit_order',
      accountId: 1,
      orderId: resting.order!.orderId,
      price: 260,
      reduceOnly: true,
    });
    assert.ok(!edit.ok);
    assert.equal(edit.error.data.field, 'reduceOnly');
    assert.equal(h.venue.getOrder(resting.order!.orderId)!.price, 250, 'the refused edit changed nothing');
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
    const resting = h.order(1, 'sell', 100, 198, { instrumentName: combo });
    assert.ok(resting.ok);
    const settled = h.ok({ type: 'settle_instrument', instrumentName: FUTURE, settlementPrice: 24_200 });
    assert.ok(
      settled.events.some(
        (e) =>
          e.type === 'order' &&
          e.order.orderId === resting.order!.orderId &&
          e.order.cancelReason === 'settlement',
      ),
    );
    const refused = h.order(2, 'buy', 100, 198, { instrumentName: combo });
    assert.ok(!refused.ok);
    assert.equal(refused.error.name, 'instrument_expired');
    assert.match(refused.error.message, /BTC-27DEC26/);
  });

  test('every combo the catalogue can build is listed: spreads, straddles and future spreads, inverse and linear', () => {
    const now = Date.UTC(2026, 10, 22, 6);
    const specs = buildCatalogue(now, { BTC: 65_000, ETH: 3_200 });
    const byName = new Map(specs.map((spec) => [spec.name, spec]));
    const futures = specs.filter((spec) => spec.kind === 'future' && spec.marginKind === 'inverse');
    const requests: ComboRequest[] = [];
    for (const currency of ['BTC', 'ETH']) {
      const dated = futures
        .filter((spec) => spec.baseCurrency === currency && spec.expiration !== null)
        .map((spec) => spec.expiration!)
        .sort((a, b) => a - b);
      requests.push({ kind: 'future_spread', currency, longExpiration: dated[1]!, shortExpiration: null });
      requests.push({
        kind: 'future_spread',
        currency,
        longExpiration: dated[1]!,
        shortExpiration: dated[0]!,
      });
      for (const linear of [false, true]) {
        const calls = specs.filter(
          (spec) =>
            spec.kind === 'option' &&
            spec.optionType === 'call' &&
            spec.baseCurrency === currency &&
            (spec.marginKind === 'linear') === linear,
        );
        const expiration = calls[0]!.expiration!;
        const strikes = calls
          .filter((spec) => spec.expiration === expiration)
          .map((spec) => Number(spec.strike))
          .sort((a, b) => a - b);
        const [longStrike, shortStrike] = [strikes[0]!, strikes[1]!];
        requests.push({ kind: 'call_spread', currency, linear, expiration, longStrike, shortStrike });
        requests.push({
          kind: 'put_spread',
          currency,
          linear,
          expiration,
          longStrike: shortStrike,
          shortStrike: longStrike,
        });
        requests.push({ kind: 'straddle', currency, linear, expiration, strike: longStrike });
      }
    }
    for (const request of requests) {
      const created = createCombo(request, (name) => byName.get(name), now);
      assert.ok(created.ok, JSON.stringify(request));
      assert.equal(
        comboLegsProblem(created.spec, (name) => byName.get(name)),
        null,
        created.spec.name,
      );
    }
  });

  test('a combo whose legs cannot carry its trades is not listed', () => {
    const h = new Harness();
    listCombos(h, []);
    const spec = comboSpec(FUTURE_SPREAD, comboLegSpecs(), h.ts);
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

describe('a combo with no mark of its own yet is banded around its legs’ net mark', () => {
  test('a fresh future spread cannot be crossed far from the legs (a leg printed 9,000 USD off its mark)', () => {
    const h = venue(FUTURE_SPREAD);
    h.account(4);
    // Net of the legs: 60,500 − 60,005 = 495 USD = 198 ticks of 2.5; ±5%, at least 10 ticks.
    assert.deepEqual(h.venue.instrument(FUTURE_SPREAD)!.priceBand, { min: 188, max: 208 });
    assert.ok(h.order(4, 'buy', 10, 118_000).ok, 'a perpetual bid at 59,000');
    assert.ok(
      h.order(1, 'sell', 5, null, { orderType: 'stop_market', trigger: 'last_price', triggerPrice: 114_000 })
        .ok,
    );
    // Two accounts cross the spread at 50,000 USD: the perpetual leg would print at 10,500.
    assert.ok(h.order(2, 'sell', 1, 20_000, { instrumentName: FUTURE_SPREAD }).ok);
    const crossed = h.order(3, 'buy', 1, 20_000, { instrumentName: FUTURE_SPREAD });
    assert.ok(!crossed.ok, 'it traded before, and fired the stop on the perpetual');
    assert.equal(crossed.error.name, 'price_too_high');
    assert.equal(crossed.error.data.maxPrice, '520');
    const sell = h.order(3, 'sell', 1, 100, { instrumentName: FUTURE_SPREAD });
    assert.ok(!sell.ok);
    assert.equal(sell.error.name, 'price_too_low');
    assert.equal(sell.error.data.minPrice, '470');
    assert.equal(h.venue.instrument(PERP)!.lastPrice, null, 'no leg traded');
  });

  test('an option combo takes the options’ band around its legs’ net; its own mark replaces it', () => {
    const h = venue(STRADDLE);
    // 0.05 + 0.09 = 0.14 BTC, ±50%.
    assert.deepEqual(h.venue.instrument(STRADDLE)!.priceBand, { min: 700, max: 2_100 });
    h.ok({ type: 'update_prices', markPrices: [{ instrumentName: STRADDLE, markPrice: 1_000 }] });
    assert.deepEqual(h.venue.instrument(STRADDLE)!.priceBand, { min: 500, max: 1_500 });
  });

  test('without a mark on every leg there is no band, as before the first mark', () => {
    const h = new Harness();
    listCombos(h, [SPREAD]);
    h.ok({ type: 'update_prices', markPrices: [{ instrumentName: LOW_CALL, markPrice: 500 }] });
    assert.equal(h.venue.instrument(SPREAD)!.priceBand, null);
  });
});
