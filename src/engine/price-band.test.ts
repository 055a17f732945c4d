/**
 * The price band's edges are prices an order may have (risk.ts `priceBand`): on the tick grid at
 * their level, and above zero for an instrument whose prices must be positive (every single
 * instrument; combos may go to zero or below). Which prices the band lets through is unchanged:
 * the properties compare with the band as it was built before (mark ± width, unrounded).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { CommandResult } from '../core/events.ts';
import type { Instrument } from '../domain/instrument.ts';
import { FUTURE_SPREAD, listCombos } from './combo-testkit.ts';
import { DEFAULT_ENGINE_CONFIG } from './config.ts';
import { Harness, optionSpec } from './testkit.ts';

const PUT = 'BTC-28NOV26-61000-P';
const PERP = 'BTC-PERPETUAL';
const INSTRUMENTS = [PUT, PERP, FUTURE_SPREAD] as const;
type Name = (typeof INSTRUMENTS)[number];

function venue(): Harness {
  const h = new Harness();
  listCombos(h, [FUTURE_SPREAD]);
  h.list(
    optionSpec({
      name: PUT,
      optionType: 'put',
      strike: '61000',
      expiration: Date.UTC(2026, 10, 28, 8),
    }),
  );
  for (const a of [1, 2]) h.account(a, { BTC: 1_000_000_000_000 });
  h.ok({
    type: 'update_prices',
    indexPrices: [{ currency: 'BTC', price: 60_000 }],
    markPrices: [
      { instrumentName: PERP, markPrice: 120_010 },
      { instrumentName: 'BTC-27DEC26', markPrice: 24_200 },
      { instrumentName: 'BTC-27DEC26-70000-C', markPrice: 500 },
      { instrumentName: 'BTC-27DEC26-75000-C', markPrice: 300 },
      { instrumentName: 'BTC-27DEC26-70000-P', markPrice: 900 },
    ],
  });
  return h;
}

function mark(h: Harness, name: string, markPrice: number): void {
  h.ok({ type: 'update_prices', markPrices: [{ instrumentName: name, markPrice }] });
}

function tool(h: Harness, name: string): Instrument {
  return h.venue.instrument(name)!.instrument;
}

/** The band as it was built before: mark ± width, off the grid and below zero as it fell. */
function referenceBand(name: Name, markPrice: number): { min: number; max: number } {
  const config = DEFAULT_ENGINE_CONFIG;
  // The put takes the options' band; the perpetual and the future spread the futures'.
  const bps = name === PUT ? config.optionBandBps : config.futureBandBps;
  const width = Math.max(Math.floor((Math.abs(markPrice) * bps) / 10_000), config.minBandTicks);
  return { min: markPrice - width, max: markPrice + width };
}

/** The nearest price on the instrument's grid at or beyond `ticks`, going `direction` (±1). */
function toGrid(instrument: Instrument, ticks: number, direction: 1 | -1): number {
  let price = ticks;
  while (!instrument.isOnTick(price)) price += direction;
  return price;
}

const isBandRefusal = (result: CommandResult) =>
  !result.ok && (result.error.name === 'price_too_high' || result.error.name === 'price_too_low');

describe('the price band shows prices an order may have', () => {
  test('an option marked at 0.0004 has a positive minimum on the grid, and a market sell shows it', () => {
    const h = venue();
    mark(h, PUT, 4);
    // ±50% of 4 ticks is under the 10-tick minimum width: −6 to 14 before.
    assert.deepEqual(h.venue.instrument(PUT)!.priceBand, { min: 1, max: 14 });
    assert.ok(h.order(1, 'buy', 10, 2, { instrumentName: PUT }).ok);
    const sold = h.order(2, 'sell', 10, null, { instrumentName: PUT, timeInForce: 'immediate_or_cancel' });
    assert.ok(sold.ok);
    assert.equal(sold.order!.orderState, 'filled');
    assert.deepEqual(
      sold.trades!.map((t) => t.price),
      [2],
    );
    assert.equal(sold.order!.price, 1, 'the band edge it could trade to: 0.0001, not −0.0006');
    assert.equal(tool(h, PUT).formatPrice(sold.order!.price), '0.0001');
  });

  test('an off-grid maximum becomes the grid price below it, a minimum the grid price above', () => {
    const h = venue();
    mark(h, PUT, 2_018);
    // 0.2018 ± 0.1009: 0.3027 and 0.1009 are off the 0.0005 tick above 0.005.
    const band = h.venue.instrument(PUT)!.priceBand!;
    assert.deepEqual(band, { min: 1_010, max: 3_025 });
    const put = tool(h, PUT);
    assert.equal(put.formatPrice(band.max), '0.3025');
    assert.equal(put.formatPrice(band.min), '0.101');
    // A client sending the band edges is not refused off_grid, and beyond them gets them back.
    assert.equal(put.parsePrice(put.formatPrice(band.max)), band.max);
    assert.ok(h.order(1, 'buy', 1, band.max, { instrumentName: PUT, timeInForce: 'immediate_or_cancel' }).ok);
    assert.ok(
      h.order(1, 'sell', 1, band.min, { instrumentName: PUT, timeInForce: 'immediate_or_cancel' }).ok,
    );
    const high = h.order(1, 'buy', 1, 3_030, { instrumentName: PUT });
    assert.ok(!high.ok);
    assert.equal(high.error.name, 'price_too_high');
    assert.equal(high.error.data.maxPrice, '0.3025');
    const low = h.order(1, 'sell', 1, 1_005, { instrumentName: PUT });
    assert.ok(!low.ok);
    assert.equal(low.error.name, 'price_too_low');
    assert.equal(low.error.data.minPrice, '0.101');
  });

  test('a future spread keeps a minimum at or below zero (its prices may be)', () => {
    const h = venue();
    mark(h, FUTURE_SPREAD, 4);
    assert.deepEqual(h.venue.instrument(FUTURE_SPREAD)!.priceBand, { min: -6, max: 14 });
    mark(h, FUTURE_SPREAD, -200);
    assert.deepEqual(h.venue.instrument(FUTURE_SPREAD)!.priceBand, { min: -210, max: -190 });
  });
});

const markArb = (name: Name) =>
  name === PUT
    ? fc.oneof(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 1, max: 30_000 }))
    : name === PERP
      ? fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 400_000 }))
      : fc.integer({ min: -3_000, max: 3_000 });

/** A case: an instrument, its mark, and offsets from the reference band's edges. */
const caseArb = fc.constantFrom(...INSTRUMENTS).chain((name) =>
  fc.record({
    name: fc.constant(name),
    markPrice: markArb(name),
    offsets: fc.array(
      fc.record({ low: fc.boolean(), delta: fc.integer({ min: -25, max: 25 }), up: fc.boolean() }),
      { minLength: 1, maxLength: 8 },
    ),
  }),
);

/** On-grid prices near the reference band's edges (where rounding could matter). */
function gridPrices(
  instrument: Instrument,
  reference: { min: number; max: number },
  offsets: readonly { low: boolean; delta: number; up: boolean }[],
): number[] {
  return offsets.map(({ low, delta, up }) =>
    toGrid(instrument, (low ? reference.min : reference.max) + delta, up ? 1 : -1),
  );
}

describe('rounding the band changes no decision', () => {
  test('an on-grid price is accepted exactly when the unrounded band accepted it', () => {
    const h = venue();
    fc.assert(
      fc.property(caseArb, ({ name, markPrice, offsets }) => {
        mark(h, name, markPrice);
        const instrument = tool(h, name);
        const reference = referenceBand(name, markPrice);
        const band = h.venue.instrument(name)!.priceBand!;
        assert.ok(instrument.isOnTick(band.min) && instrument.isOnTick(band.max), `${band.min} ${band.max}`);
        if (name !== FUTURE_SPREAD) assert.ok(band.min > 0, `min ${band.min}`);
        for (const price of gridPrices(instrument, reference, offsets)) {
          for (const side of ['buy', 'sell'] as const) {
            const before = side === 'buy' ? price <= reference.max : price >= reference.min;
            const after = side === 'buy' ? price <= band.max : price >= band.min;
            const result = h.order(1, side, 1, price, {
              instrumentName: name,
              timeInForce: 'immediate_or_cancel',
            });
            // Below one tick a single instrument's price is refused before the band (invalid_price).
            const valid = name === FUTURE_SPREAD || price > 0;
            if (valid) {
              assert.equal(after, before, `${name} mark ${markPrice} ${side} ${price}`);
              assert.equal(result.ok, before, `${name} mark ${markPrice} ${side} ${price}`);
              assert.equal(isBandRefusal(result), !before);
            } else {
              assert.ok(!result.ok && result.error.name === 'invalid_price');
            }
          }
        }
      }),
      { numRuns: Number(process.env.BAND_RUNS ?? 300) },
    );
  });

  test('a market order trades exactly the levels the unrounded band let it reach', () => {
    fc.assert(
      fc.property(caseArb, fc.boolean(), ({ name, markPrice, offsets }, buying) => {
        const h = venue();
        mark(h, name, markPrice);
        const instrument = tool(h, name);
        const reference = referenceBand(name, markPrice);
        const band = h.venue.instrument(name)!.priceBand!;
        // Resting orders on the side the market order takes, wherever they may rest.
        const makerSide = buying ? 'sell' : 'buy';
        const resting: number[] = [];
        for (const price of gridPrices(instrument, reference, offsets)) {
          const placed = h.order(1, makerSide, 1, price, { instrumentName: name });
          if (placed.ok && placed.order!.orderState === 'open') resting.push(price);
        }
        const reach = resting
          .filter((price) => (buying ? price <= reference.max : price >= reference.min))
          .sort((a, b) => (buying ? a - b : b - a));
        // More than every resting lot (at most 8), not so much that a perpetual at a few USD runs out of funds.
        const taken = h.order(2, buying ? 'buy' : 'sell', 10, null, {
          instrumentName: name,
          timeInForce: 'immediate_or_cancel',
        });
        assert.ok(taken.ok, `${name} mark ${markPrice}`);
        // A combo's trade comes with its legs' trades: only the combo's own prices count here.
        assert.deepEqual(
          taken.trades!.filter((t) => t.instrumentName === name).map((t) => t.price),
          reach,
          `${name} mark ${markPrice} ${buying ? 'buy' : 'sell'}`,
        );
        // The order shows the band edge (a market order at 0 shows null: order.ts's "no price").
        const shown = taken.order!.price ?? 0;
        assert.equal(shown, buying ? band.max : band.min);
        assert.ok(instrument.isOnTick(shown) && (name === FUTURE_SPREAD || shown > 0), `shown ${shown}`);
        h.venue.validate();
      }),
      { numRuns: Number(process.env.BAND_RUNS ?? 200) },
    );
  });
});
