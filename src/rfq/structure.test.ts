import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Instrument } from '../domain/instrument.ts';
import { linearPerpetualSpec, optionSpec, perpetualSpec } from '../engine/testkit.ts';
import { deriveStructure, futurePriceOutsideBand, type RfqMarket, strategyPrice } from './structure.ts';

const specs = [
  optionSpec(),
  optionSpec({ name: 'BTC-27DEC26-75000-C', strike: '75000' }),
  optionSpec({ name: 'BTC-27DEC26-70000-P', optionType: 'put' }),
  perpetualSpec(),
  perpetualSpec({ name: 'BTC-27DEC26', settlementPeriod: 'month', expiration: Date.UTC(2026, 11, 27, 8) }),
  perpetualSpec({ name: 'ETH-PERPETUAL', baseCurrency: 'ETH', minTradeAmount: '1', tickSize: '0.05' }),
  linearPerpetualSpec(),
];
const byName = new Map(specs.map((spec, i) => [spec.name, new Instrument(i + 1, spec)]));
const market: RfqMarket = {
  instrument: (name) => byName.get(name),
  isActive: (name) => byName.has(name),
  markPrice: () => null,
  priceBand: () => null,
};

describe('deriveStructure', () => {
  test('ratios by gcd and an RFQ lot that puts every leg on its grid', () => {
    const result = deriveStructure(
      [
        { instrumentName: 'BTC-27DEC26-70000-C', side: 'buy', amount: 500 },
        { instrumentName: 'BTC-27DEC26-75000-C', side: 'sell', amount: 750 },
      ],
      null,
      market,
      20,
    );
    assert.ok(result.ok);
    const s = result.structure;
    assert.deepEqual(
      s.legs.map((l) => l.ratio),
      [2, 3],
    );
    assert.equal(s.quantityStep, '0.1');
    assert.equal(s.quantity, 250);
    // 25 BTC (the block minimum) of the 2-ratio leg is 12.5 structures: 125 RFQ lots.
    assert.equal(s.minTradeAmount, 125);
    assert.deepEqual(
      s.legs.map((l) => l.lotsPerUnit),
      [2, 3],
    );
    assert.equal(s.comboId, null, '2:3 is not a listed combo');
    assert.equal(strategyPrice(s.legs, s.legTickUnits, [500, 300]), 2 * 500 - 3 * 300);
  });

  test('the block minimum rounds up to whole RFQ lots', () => {
    // Ratios 3:4 at 0.1 BTC: 25 BTC of the 3-ratio leg is 83.3 structures, so 84 RFQ lots (83 would
    // book 24.9 BTC of it, under the minimum).
    const result = deriveStructure(
      [
        { instrumentName: 'BTC-27DEC26-70000-C', side: 'buy', amount: 300 },
        { instrumentName: 'BTC-27DEC26-75000-C', side: 'sell', amount: 400 },
      ],
      null,
      market,
      20,
    );
    assert.ok(result.ok);
    assert.equal(result.structure.minTradeAmount, 84);
  });

  test('future spread with the perpetual is named after its dated leg', () => {
    const result = deriveStructure(
      [
        { instrumentName: 'BTC-PERPETUAL', side: 'buy', amount: 20_000 },
        { instrumentName: 'BTC-27DEC26', side: 'sell', amount: 20_000 },
      ],
      null,
      market,
      20,
    );
    assert.ok(result.ok);
    assert.equal(result.structure.comboId, 'BTC-FS-27DEC26_PERP');
    assert.equal(result.structure.quantityStep, '10');
  });

  test('refusals: mixed currencies, a hedge that is an option or a leg, expired legs', () => {
    const leg = { instrumentName: 'BTC-PERPETUAL', side: 'buy' as const, amount: 20_000 };
    const mixed = deriveStructure(
      [leg, { instrumentName: 'ETH-PERPETUAL', side: 'buy', amount: 1 }],
      null,
      market,
      20,
    );
    assert.equal(mixed.ok || mixed.error.name, 'invalid_arguments');
    const optionHedge = deriveStructure(
      [leg],
      { instrumentName: 'BTC-27DEC26-70000-C', side: 'buy', amount: 1, price: 1 },
      market,
      20,
    );
    assert.equal(optionHedge.ok || optionHedge.error.name, 'invalid_arguments');
    const sameHedge = deriveStructure([leg], { ...leg, price: 1 }, market, 20);
    assert.equal(sameHedge.ok || sameHedge.error.name, 'invalid_arguments');
    const expired = deriveStructure([leg], null, { ...market, isActive: () => false }, 20);
    assert.equal(expired.ok || expired.error.name, 'instrument_expired');
  });

  test('every leg reaches its block minimum: smaller RFQs are refused naming the leg', () => {
    const small = deriveStructure(
      [
        { instrumentName: 'BTC-27DEC26-70000-C', side: 'buy', amount: 250 },
        { instrumentName: 'BTC-27DEC26-75000-C', side: 'sell', amount: 10 },
      ],
      null,
      market,
      20,
    );
    assert.equal(small.ok, false);
    if (small.ok) return;
    assert.equal(small.error.name, 'qty_too_low');
    assert.deepEqual(small.error.data, { field: 'legs[1].quantity', min: '25' });
    const enough = deriveStructure(
      [{ instrumentName: 'BTC-27DEC26-70000-C', side: 'buy', amount: 250 }],
      null,
      market,
      20,
    );
    assert.ok(enough.ok);
    assert.equal(enough.structure.minTradeAmount, enough.structure.quantity);
  });

  test('the hedge is a future settled like the legs, at a positive price', () => {
    const legs = [{ instrumentName: 'BTC-27DEC26-70000-C', side: 'buy' as const, amount: 250 }];
    const hedge = { instrumentName: 'BTC-PERPETUAL', side: 'sell' as const, amount: 1_000, price: 130_000 };
    assert.ok(deriveStructure(legs, hedge, market, 20).ok);
    const linear = deriveStructure(legs, { ...hedge, instrumentName: 'BTC_USDC-PERPETUAL' }, market, 20);
    assert.equal(linear.ok, false);
    if (!linear.ok) assert.equal(linear.error.data.field, 'hedge.instrumentName');
    for (const price of [0, -130_000]) {
      const refused = deriveStructure(legs, { ...hedge, price }, market, 20);
      assert.equal(refused.ok, false);
      if (!refused.ok) {
        assert.equal(refused.error.name, 'invalid_price');
        assert.equal(refused.error.data.field, 'hedge.price');
      }
    }
  });
});

describe('futurePriceOutsideBand', () => {
  // The perpetual's band: 57,000 to 63,000 USD (ticks of 0.5 USD).
  const banded: RfqMarket = { ...market, priceBand: () => ({ min: 114_000, max: 126_000 }) };

  test('both ends of the band are inside it; a tick past either is refused naming the field and the band', () => {
    assert.equal(
      futurePriceOutsideBand(banded, 'BTC-PERPETUAL', 114_000, 'hedge.price'),
      null,
      'the band minimum',
    );
    assert.equal(
      futurePriceOutsideBand(banded, 'BTC-PERPETUAL', 126_000, 'hedge.price'),
      null,
      'the band maximum',
    );
    for (const price of [113_999, 126_001]) {
      assert.deepEqual(futurePriceOutsideBand(banded, 'BTC-PERPETUAL', price, 'legs[1].price'), {
        name: 'invalid_price',
        message: 'legs[1].price must be within the BTC-PERPETUAL price band around its mark (57000 to 63000)',
        data: { field: 'legs[1].price', minPrice: '57000', maxPrice: '63000' },
      });
    }
  });

  test('options and instruments without a band are not checked', () => {
    assert.equal(
      futurePriceOutsideBand(banded, 'BTC-27DEC26-70000-C', 1, 'legs[0].price'),
      null,
      'an option',
    );
    assert.equal(futurePriceOutsideBand(market, 'BTC-PERPETUAL', 1, 'hedge.price'), null, 'no band yet');
  });
});
