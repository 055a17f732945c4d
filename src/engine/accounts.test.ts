import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { Instrument } from '../domain/instrument.ts';
import { applyFill, exactShare, OpenOrders, Position } from './accounts.ts';
import { Economics } from './economics.ts';
import { Order } from './order.ts';
import { linearPerpetualSpec, perpetualSpec } from './testkit.ts';

const position = (spec = perpetualSpec()) => new Position(1, 0, new Economics(new Instrument(0, spec)));

describe('positions and realised PnL', () => {
  test('linear long: open, add, close at a profit', () => {
    const p = position(linearPerpetualSpec());
    assert.equal(applyFill(p, 1, 10, 100_000), 0); // 0.01 BTC at 50,000
    assert.equal(applyFill(p, 1, 10, 102_000), 0); // 0.01 BTC at 51,000
    assert.equal(p.size, 20);
    assert.equal(p.toView().averagePrice, 101_000);
    const pnl = applyFill(p, -1, 20, 104_000); // out at 52,000
    assert.equal(pnl, 30_000_000); // 0.02 × 52,000 − (500 + 510) = 30 USDC
    assert.equal(p.size, 0);
    assert.equal(p.openCost, 0);
    assert.equal(p.realisedPnl, 30_000_000);
  });
  test('inverse long gains coin as the price rises: qty × (1/entry − 1/exit)', () => {
    const p = position();
    applyFill(p, 1, 10, 100_000); // 100 USD at 50,000 → 0.002 BTC
    const pnl = applyFill(p, -1, 10, 200_000); // out at 100,000 → 0.001 BTC
    assert.equal(pnl, 100_000);
  });
  test('inverse short gains coin as the price falls', () => {
    const p = position();
    applyFill(p, -1, 10, 200_000);
    assert.equal(applyFill(p, 1, 10, 100_000), 100_000);
  });
  test('a fill through zero closes the old side and opens the new one at the fill price', () => {
    const p = position(linearPerpetualSpec());
    applyFill(p, 1, 10, 100_000);
    const pnl = applyFill(p, -1, 15, 90_000);
    assert.equal(pnl, -50_000_000); // 0.01 BTC × −5,000
    assert.equal(p.size, -5);
    assert.equal(p.openCost, -225_000_000); // 0.005 × 45,000
  });
  test('the average entry price is exact, not derived from the cost rounded to minor units', () => {
    const p = position();
    applyFill(p, 1, 10, 130_001); // 100 USD at 65,000.5: 153,845.97… sat, booked as 153,846
    assert.equal(p.toView().averagePrice, 130_001);
    applyFill(p, 1, 10, 130_003); // another 100 USD at 65,001.5
    const harmonic = 20 / (10 / 130_001 + 10 / 130_003);
    assert.ok(Math.abs(p.toView().averagePrice - harmonic) < 1e-6);
    applyFill(p, -1, 7, 140_000); // a partial close leaves the average as it was
    assert.ok(Math.abs(p.toView().averagePrice - harmonic) < 1e-6);
    applyFill(p, -1, 20, 120_000); // through zero: short 7 at the fill price
    assert.equal(p.toView().averagePrice, 120_000);
  });

  test('a position restored without its entry value shows the average of its cost', () => {
    const p = position();
    applyFill(p, 1, 10, 130_001);
    const exact = p.toView().averagePrice;
    p.entryValue = Number.NaN;
    assert.ok(Math.abs(p.toView().averagePrice - exact) < 1, 'within a tick');
    applyFill(p, 1, 10, 130_001);
    assert.ok(Number.isNaN(p.entryValue), 'unknown until the position closes or flips');
  });

  test('partial closes remove cost pro rata, rounding half away from zero', () => {
    const p = position(linearPerpetualSpec());
    applyFill(p, 1, 3, 100_001); // cost 150.0015 USDC → 150,001,500
    applyFill(p, -1, 1, 100_001);
    assert.equal(p.openCost, 100_001_000);
    assert.equal(p.realisedPnl, 0);
  });
});

describe('a fill moves exactly opposite amounts on its two sides', () => {
  /** What a fill books for a position: pnl − dir × ΔopenCost, summed over its fills. */
  const booked = (p: Position) => p.realisedPnl - p.economics.direction * p.openCost;

  test('an inverse flip books value(lots) in one piece, as the counterparty does', () => {
    // 10 USD at 60,000.5 USD is 16,666.53 sat (16,667) and 20 USD 33,333.06 (33,333): closing 1
    // and opening 1 separately would book 33,334 against the buyer's 33,333.
    const seller = position();
    const buyer = position();
    const third = position();
    applyFill(seller, 1, 1, 120_000); // long 1, bought from the third account
    applyFill(third, -1, 1, 120_000);
    applyFill(seller, -1, 2, 120_001); // sells 2 to a flat buyer: short 1
    applyFill(buyer, 1, 2, 120_001);
    assert.equal(seller.size, -1);
    assert.equal(seller.openCost, -(33_333 - 16_667));
    assert.equal(booked(seller) + booked(buyer) + booked(third), 0);
  });

  test('property: over random fills among three accounts, flips included, nothing is made or lost', () => {
    // Three accounts, so that one side of a fill can flip while the other does not.
    const fill = fc.record({
      buyer: fc.nat(2),
      seller: fc.nat(1),
      lots: fc.integer({ min: 1, max: 40 }),
      price: fc.integer({ min: 100_000, max: 140_000 }),
    });
    for (const spec of [perpetualSpec(), linearPerpetualSpec()]) {
      fc.assert(
        fc.property(fc.array(fill, { minLength: 1, maxLength: 30 }), (fills) => {
          const positions = [position(spec), position(spec), position(spec)];
          for (const { buyer, seller, lots, price } of fills) {
            applyFill(positions[buyer]!, 1, lots, price);
            applyFill(positions[seller >= buyer ? seller + 1 : seller]!, -1, lots, price);
            assert.equal(
              positions.reduce((sum, p) => sum + p.size, 0),
              0,
            );
            // All started flat, so what they booked sums to 0 after every fill.
            assert.equal(
              positions.reduce((sum, p) => sum + booked(p), 0),
              0,
            );
          }
        }),
        { numRuns: 300 },
      );
    }
  });
});

describe('exactShare', () => {
  const reference = (cost: number, part: number, whole: number): number => {
    const big = BigInt(cost) * BigInt(part);
    const magnitude = big < 0n ? -big : big;
    let q = magnitude / BigInt(whole);
    if ((magnitude % BigInt(whole)) * 2n >= BigInt(whole)) q += 1n;
    return Number(big < 0n ? -q : q);
  };
  test('equals the exact BigInt rounding, also beyond 2^53', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.maxSafeInteger(), fc.integer({ min: -1e12, max: 1e12 })),
        fc.integer({ min: 1, max: 1e9 }),
        fc.integer({ min: 0, max: 1e9 }),
        (cost, whole, partSeed) => {
          const part = 1 + (partSeed % whole);
          assert.equal(exactShare(cost, part, whole) + 0, reference(cost, part, whole));
        },
      ),
      { numRuns: 5000 },
    );
  });
});

describe('OpenOrders', () => {
  const order = (n: number) =>
    new Order(
      `BTC-${n}`,
      n,
      1,
      0,
      'BTC-PERPETUAL',
      'BTC',
      'buy',
      'limit',
      1,
      1,
      'good_til_cancelled',
      0,
      '',
      null,
      0,
    );
  test('keeps insertion order like a Set under random adds and deletes', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 7 })), { maxLength: 80 }),
        (ops) => {
          const orders = Array.from({ length: 8 }, (_, i) => order(i));
          const list = new OpenOrders();
          const model = new Set<Order>();
          for (const [add, i] of ops) {
            const o = orders[i]!;
            if (add) {
              list.add(o);
              model.add(o);
            } else assert.equal(list.delete(o), model.delete(o));
            assert.equal(list.size, model.size);
            assert.deepEqual(
              [...list].map((x) => x.number),
              [...model].map((x) => x.number),
            );
            for (const x of orders) assert.equal(list.has(x), model.has(x));
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
