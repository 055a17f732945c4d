import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_PLACEMENTS_PER_COMMAND, PRICE_RETRY_MS } from '../../src/algo/steps.ts';
import { portfolioInfoToWire } from '../../src/api/portfolios/wire.ts';
import {
  AlgoHarness,
  balanceSpec,
  callLeg,
  leg,
  MARKET_PRICING,
  OPTION,
  PERP,
  PERP_60K,
  portfolio,
  T0,
} from './harness.ts';

describe('placement budget and price waits', () => {
  test('BALANCE: a budget spent in a command goes on at once, even when another leg waits for a price', () => {
    const h = AlgoHarness.withMarket();
    h.maker('sell', 10_000, PERP_60K);
    // Exactly enough call lots for the legs to leapfrog, one lot per part each, until the
    // budget is spent: the last placement of the command takes the last call lot.
    const callLots = MAX_PLACEMENTS_PER_COMMAND / 2;
    h.maker('sell', callLots, 500, OPTION);
    const id = h.submit(
      portfolio({
        portfolioType: 'BALANCE',
        // Leg 0 (perpetual, limit) is reconciled before leg 1 (call, market): the budget runs
        // out on leg 0, then leg 1 finds no ask and waits PRICE_RETRY_MS for liquidity.
        legs: [leg({ amount: 100 }), callLeg({ amount: 100, pricing: MARKET_PRICING })],
        balance: balanceSpec({ parts: 100 }),
      }),
    );
    const p = h.machine.portfolio(id)!;
    assert.equal(p.children.length, MAX_PLACEMENTS_PER_COMMAND, 'the submit placed its whole budget');
    assert.deepEqual(
      p.legs.map((l) => l.filled),
      [callLots, callLots],
    );
    assert.equal(h.venue.book(OPTION)!.asks.length, 0, 'no call ask left: leg 1 waits for a price');
    assert.equal(p.part, callLots, 'leg 0 has lots it may still trade in this part');
    assert.equal(
      h.machine.nextWakeup(),
      T0,
      'the spent budget goes on at once (next command), not PRICE_RETRY_MS later',
    );

    h.runUntil(T0);
    assert.equal(p.legs[0]!.filled, callLots + 1, 'leg 0 placed its next lot at the immediate wakeup');
    assert.equal(p.children.length, MAX_PLACEMENTS_PER_COMMAND + 1);
    assert.equal(p.children.at(-1)!.placedAt, T0);
    assert.equal(p.legs[1]!.filled, callLots);
    assert.equal(h.machine.nextWakeup(), T0 + PRICE_RETRY_MS, 'then only the price wait is left');
  });
});

describe('child parts', () => {
  test('info: each TWAP child reports the slice it was placed in', () => {
    const h = AlgoHarness.withMarket();
    // No seller: every slice's child rests, is cancelled at the next slice and its rest rolls on.
    const id = h.submit(
      portfolio({
        portfolioType: 'TWAP',
        legs: [leg({ amount: 30, pricing: { ...leg().pricing, price: 59_000 } })],
        twap: { startTimestamp: null, durationMs: 3_000, frequencyMs: 1_000 },
      }),
    );
    h.runUntil(T0 + 2_000);
    const lookup = (name: string) => h.venue.instrument(name)?.instrument;
    const info = portfolioInfoToWire(h.machine.portfolio(id)!, lookup);
    assert.deepEqual(
      info.childOrders.map((c) => [c.instrument, c.part, c.placedTimestamp - T0, c.quantity, c.open]),
      [
        [PERP, 0, 0, '100', false],
        [PERP, 1, 1_000, '150', false],
        [PERP, 2, 2_000, '300', true],
      ],
    );
    assert.equal(info.currentPart, 2);
  });

  test('info: each BALANCE child reports the part it was placed in', () => {
    const h = AlgoHarness.withMarket();
    h.maker('sell', 10, PERP_60K);
    // Part 0's child fills at once; each later part's child is placed when the part before it
    // is reached and rests until the next seller.
    const id = h.submit(
      portfolio({ portfolioType: 'BALANCE', legs: [leg({ amount: 30 })], balance: balanceSpec() }),
    );
    h.ts += 1_000;
    h.maker('sell', 10, PERP_60K);
    h.ts += 1_000;
    h.maker('sell', 10, PERP_60K);
    const lookup = (name: string) => h.venue.instrument(name)?.instrument;
    const info = portfolioInfoToWire(h.machine.portfolio(id)!, lookup);
    assert.equal(info.portfolioStatus, 'COMPLETED');
    assert.deepEqual(
      info.childOrders.map((c) => [c.part, c.placedTimestamp - T0, c.filledQuantity]),
      [
        [0, 0, '100'],
        [1, 0, '100'],
        [2, 1_000, '100'],
      ],
    );
  });
});
