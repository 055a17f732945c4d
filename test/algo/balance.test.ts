import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { roundToTicks } from '../../src/algo/pricing.ts';
import { PRICE_RETRY_MS } from '../../src/algo/timing.ts';
import type { BalanceSpec, LegSpec } from '../../src/algo/types.ts';
import { optionSpec } from '../../src/engine/testkit.ts';
import { quotePriceFromVolatility } from '../../src/market/conversions.ts';
import { defaultMarketModel, priceMarket } from '../../src/market/market-state.ts';
import {
  AlgoHarness,
  balanceSpec,
  callLeg,
  leg,
  MARKET_PRICING,
  OPTION,
  PERP,
  PERP_60K,
  PUT,
  portfolio,
  putLeg,
  T0,
} from './harness.ts';

const balance = (legs: LegSpec[], overrides: Partial<BalanceSpec> = {}) =>
  portfolio({ portfolioType: 'BALANCE', legs, balance: balanceSpec(overrides) });

/** DYNAMIC at the mid of the book, repriced every 500 ms. */
const MID_PRICING = {
  priceType: 'DYNAMIC' as const,
  price: null,
  priceIn: 'USD',
  dynamicStrategy: 'MID' as const,
  dynamicOffset: 0,
  dynamicMs: 500,
};

/** A call priority leg with 5 of its 30 lots to take at once, a put leg with all it needs. */
function pacedByPriority() {
  const h = AlgoHarness.withMarket();
  h.maker('sell', 5, 500, OPTION);
  h.maker('sell', 1000, 1000, PUT);
  const id = h.submit(balance([callLeg({ priority: true }), putLeg()]));
  return { h, id, p: h.machine.portfolio(id)! };
}

describe('BALANCE', () => {
  test('the priority leg paces the others by ratio of its filled fraction', () => {
    const { h, id, p } = pacedByPriority();
    assert.equal(p.legs[0]!.filled, 5, 'priority leg works tranche 1 (10 lots), 5 available');
    assert.equal(p.legs[1]!.filled, 10, 'the put follows: 60 × 5/30');
    h.ts += 1000;
    h.maker('sell', 5, 500, OPTION);
    assert.equal(p.legs[0]!.filled, 10);
    assert.equal(p.legs[1]!.filled, 20);
    assert.equal(p.part, 1, 'every leg reached tranche 1 → part 2 starts at once');
    assert.equal(p.parts[1]!.startedAt, T0 + 1000);
    assert.deepEqual(p.parts[1]!.targets, [20, 40]);
    assert.ok(h.messages(id).filter((m) => m === 'PART_STARTED').length === 2);
  });

  test('without a priority leg no leg runs more than one tranche ahead of the slowest', () => {
    const h = AlgoHarness.withMarket();
    h.maker('sell', 1000, 1000, PUT);
    const id = h.submit(balance([callLeg(), putLeg()]));
    const p = h.machine.portfolio(id)!;
    assert.equal(p.legs[1]!.filled, 20, 'the put fills its first tranche');
    assert.equal(p.legs[0]!.filled, 0);
    h.runUntil(T0 + 10_000);
    assert.equal(p.part, 1, 'part deadline moved to part 2; the rest rolls');
    assert.equal(p.legs[1]!.filled, 20, 'still one tranche ahead at most');
    assert.equal(h.openChildren(id).filter((o) => o.instrumentName === PUT).length, 0);
    h.maker('sell', 10, 500, OPTION);
    assert.equal(p.legs[0]!.filled, 10);
    assert.equal(p.legs[1]!.filled, 40, 'slowest at 1/3 → put may reach 20 + 20');
  });

  test('an unfilled rest rolls into the next part: a leg alone, or behind the others, works its whole target', () => {
    const h = AlgoHarness.withMarket();
    const alone = h.submit(balance([callLeg()]));
    const open = () => h.openChildren(alone).map((o) => o.amount);
    assert.deepEqual(open(), [10], 'part 1: tranche 1 of 30 lots in 3 parts');
    h.runUntil(T0 + 10_000);
    assert.deepEqual(open(), [20], 'part 2: tranches 1 and 2');
    h.runUntil(T0 + 20_000);
    assert.deepEqual(open(), [30], 'part 3: the whole leg');

    const g = AlgoHarness.withMarket();
    g.maker('sell', 1000, 1000, PUT);
    const pair = g.submit(balance([callLeg(), putLeg()]));
    g.runUntil(T0 + 10_000);
    // The put filled its first tranche (20 of 60); the call, a third behind, may catch up to its
    // part-2 target of 20 lots, and the put waits one tranche past the call.
    assert.deepEqual(
      g.openChildren(pair).map((o) => [o.instrumentName, o.amount]),
      [[OPTION, 20]],
    );
  });

  test('hedge legs follow the non-hedge filled fraction with marketable orders', () => {
    const h = AlgoHarness.withMarket();
    h.maker('buy', 1000, PERP_60K - 2);
    h.maker('sell', 10, 500, OPTION);
    const id = h.submit(
      balance([
        callLeg(),
        leg({ side: 'sell', amount: 90, hedge: true, pricing: { ...leg().pricing, price: 50_000 } }),
      ]),
    );
    const p = h.machine.portfolio(id)!;
    assert.equal(p.legs[0]!.filled, 10);
    assert.equal(p.legs[1]!.filled, 30, '90 × 10/30 by a marketable order');
    const hedgeChildren = p.children.filter((c) => c.leg === 1).map((c) => h.venue.getOrder(c.orderId)!);
    assert.deepEqual(
      hedgeChildren.map((o) => [o.orderType, o.timeInForce, o.orderState]),
      [['limit', 'immediate_or_cancel', 'filled']],
      'an immediate-or-cancel limit at the leg’s worst price, here within the band',
    );
    const band = h.venue.instrument(PERP)!.priceBand!;
    assert.equal(hedgeChildren[0]!.price, band.min, 'a sell limit below the band goes out at its min');
  });

  test('a hedge leg never trades past its own limit: it waits for a price within it, placing nothing', () => {
    const h = AlgoHarness.withMarket();
    h.maker('buy', 1000, PERP_60K - 2);
    h.maker('sell', 10, 500, OPTION);
    const hedge = leg({
      side: 'sell',
      amount: 90,
      hedge: true,
      pricing: { ...leg().pricing, price: 60_500 },
    });
    const id = h.submit(balance([callLeg(), hedge], { parts: 1, eachLimitMs: 60_000 }));
    const p = h.machine.portfolio(id)!;
    assert.equal(p.legs[0]!.filled, 10, 'the main leg fills');
    assert.equal(p.legs[1]!.filled, 0, 'the bid at 59,999 is below the hedge’s worst price of 60,500');
    assert.deepEqual(
      p.children.filter((c) => c.leg === 1),
      [],
      'no order that could not fill',
    );
    assert.equal(h.machine.nextWakeup(), T0 + PRICE_RETRY_MS, 'it looks again while the part lasts');
    h.ts = T0 + 1_000;
    h.maker('buy', 30, PERP_60K + 1_002); // 60,501
    h.runUntil(T0 + 5_000);
    assert.equal(p.legs[1]!.filled, 30, 'it takes the bid within its limit, and only that');
    assert.equal(p.legs[1]!.notional / p.legs[1]!.filled, PERP_60K + 1_002);
    assert.equal(h.replayed().machine.stateHash(), h.machine.stateHash(), 'replay decides alike');
  });

  test('a MARKET hedge leg still trades at market, bounded by the band only', () => {
    const h = AlgoHarness.withMarket();
    h.maker('buy', 1000, PERP_60K - 2);
    h.maker('sell', 10, 500, OPTION);
    const market = { ...leg().pricing, priceType: 'MARKET' as const, price: null, priceIn: null };
    const id = h.submit(
      balance([callLeg(), leg({ side: 'sell', amount: 90, hedge: true, pricing: market })]),
    );
    const p = h.machine.portfolio(id)!;
    assert.equal(p.legs[1]!.filled, 30);
    assert.ok(p.children.filter((c) => c.leg === 1).every((c) => c.market));
  });

  test('a part whose followers filled all the lead lets them ends at once, not at eachLimitMs', () => {
    // 10 option lots in 3 parts: the first target is 3 lots, which allow 30 hedge lots, under the
    // hedge's own first target of 33. A 7-lot priority leg's first target, 2 lots, allows
    // floor(10 × 2 / 7) = 2 lots of a 10-lot follower, under its first target of 3.
    const cases: Array<{ legs: LegSpec[]; filled: number[] }> = [
      {
        legs: [
          callLeg({ amount: 10 }),
          leg({ side: 'sell', amount: 100, hedge: true, pricing: { ...leg().pricing, price: 50_000 } }),
        ],
        filled: [10, 100],
      },
      {
        legs: [callLeg({ amount: 7, priority: true }), callLeg({ amount: 10 })],
        filled: [7, 10],
      },
    ];
    for (const { legs, filled } of cases) {
      const h = AlgoHarness.withMarket();
      h.maker('sell', 1000, 500, OPTION);
      h.maker('buy', 100_000, PERP_60K - 2);
      const id = h.submit(balance(legs, { totalLimitMs: 15_000 }));
      const p = h.machine.portfolio(id)!;
      h.runUntil(T0 + 30_000);
      assert.equal(p.status, 'COMPLETED', `${legs.map((l) => l.amount)}: ${p.endReason}`);
      assert.equal(p.endedAt, T0);
      assert.deepEqual(
        p.legs.map((l) => l.filled),
        filled,
      );
    }
  });

  test('a hedge leg whose market order found nothing tries again while the part lasts', () => {
    const h = AlgoHarness.withMarket();
    h.maker('sell', 30, 500, OPTION);
    const hedge = leg({
      side: 'sell',
      amount: 90,
      hedge: true,
      pricing: { ...leg().pricing, price: 50_000 },
    });
    const id = h.submit(balance([callLeg(), hedge], { parts: 1, eachLimitMs: 60_000 }));
    const p = h.machine.portfolio(id)!;
    assert.equal(p.legs[0]!.filled, 30, 'the main leg fills at once');
    assert.equal(p.legs[1]!.filled, 0, 'no bid for the hedge');
    assert.equal(h.machine.nextWakeup(), T0 + PRICE_RETRY_MS, 'not idle until the part deadline');
    h.ts = T0 + 1_000;
    h.maker('buy', 1000, PERP_60K - 2);
    h.runUntil(T0 + 59_999);
    assert.equal(p.legs[1]!.filled, 90, 'the hedge follows the main leg once a bid arrives');
    assert.equal(p.status, 'COMPLETED');
    assert.equal(p.endedAt, T0 + 2_000, 'at the first retry after the bid');
    assert.equal(h.replayed().machine.stateHash(), h.machine.stateHash(), 'replay retries alike');
  });

  test('a MARKET leg into an empty book waits for an offer within its part, without sending orders', () => {
    const h = AlgoHarness.withMarket();
    const market = { ...leg().pricing, priceType: 'MARKET' as const, price: null, priceIn: null };
    const id = h.submit(balance([leg({ amount: 30, pricing: market })], { parts: 1, eachLimitMs: 60_000 }));
    const p = h.machine.portfolio(id)!;
    h.ts = T0 + 1_000;
    h.maker('sell', 100, PERP_60K);
    assert.equal(h.childOrders(id).length, 0, 'no market order sent into the empty book');
    h.runUntil(T0 + 59_999);
    assert.equal(p.legs[0]!.filled, 30);
    assert.equal(p.status, 'COMPLETED');
    assert.equal(h.childOrders(id).length, 1);

    const never = AlgoHarness.withMarket();
    const idle = never.submit(
      balance([leg({ amount: 30, pricing: market })], { parts: 1, eachLimitMs: 60_000 }),
    );
    never.runUntil(T0 + 60_000);
    assert.equal(never.machine.portfolio(idle)!.status, 'EXPIRED', 'the part deadline still ends it');
    assert.equal(never.machine.nextWakeup(), null);
  });

  test('a BALANCE whose only leg is a hedge works it as a limit order, not with market orders', () => {
    const h = AlgoHarness.withMarket();
    h.maker('sell', 1000, PERP_60K + 1000); // offered at 60,500 USD, above the 60,000 limit
    const id = h.submit(balance([leg({ amount: 30, hedge: true })]));
    const p = h.machine.portfolio(id)!;
    assert.equal(p.status, 'WORKING');
    assert.equal(p.legs[0]!.filled, 0);
    assert.deepEqual(
      p.children.map((c) => [c.market, c.price]),
      [[false, PERP_60K]],
    );
  });

  test('a market child that filled nothing is not sent again in the same command', () => {
    const h = AlgoHarness.withMarket();
    h.maker('sell', 1000, Math.round(PERP_60K * 1.1)); // 66,000: outside the band around the mark
    const before = h.placed.length;
    const id = h.submit(
      balance([leg({ amount: 30, pricing: MARKET_PRICING })], { parts: 3, eachLimitMs: 10_000 }),
    );
    const p = h.machine.portfolio(id)!;
    assert.equal(p.legs[0]!.filled, 0);
    assert.equal(p.status, 'WORKING');
    assert.equal(h.placed.length - before, 1, 'one market order in the submit command');
  });

  test('end action 2 that fills the rest at the end: COMPLETED with endReason filled', () => {
    const h = AlgoHarness.withMarket();
    const id = h.submit(balance([leg({ amount: 30 })], { totalEndAction: 'FILL_BY_MARKET' }));
    h.maker('sell', 1000, PERP_60K + 200); // above the 60,000 limit: only the end action reaches it
    h.runUntil(h.ts + 40_000);
    const p = h.machine.portfolio(id)!;
    assert.equal(p.status, 'COMPLETED');
    assert.equal(p.legs[0]!.filled, 30);
    assert.equal(p.endReason, 'filled');
    const last = h.news.filter((e) => e.portfolioId === id).at(-1);
    assert.equal(last?.endReason, 'filled');
  });

  test('end action 1 cancels the remainder when the last part ends: EXPIRED', () => {
    const h = AlgoHarness.withMarket();
    const id = h.submit(balance([callLeg(), putLeg()]));
    h.runUntil(T0 + 29_999);
    assert.equal(h.machine.portfolio(id)!.status, 'WORKING');
    assert.equal(h.machine.portfolio(id)!.part, 2);
    h.runUntil(T0 + 30_000);
    const p = h.machine.portfolio(id)!;
    assert.equal(p.status, 'EXPIRED');
    assert.equal(p.endReason, 'parts_elapsed');
    assert.equal(h.openChildren(id).length, 0);
  });

  test('end action 2 fills the remainder with market orders: COMPLETED', () => {
    const h = AlgoHarness.withMarket();
    const id = h.submit(
      balance([callLeg(), putLeg()], { totalEndAction: 'FILL_BY_MARKET', totalLimitMs: 5_000 }),
    );
    h.runUntil(T0 + 4_000);
    h.maker('sell', 100, 600, OPTION);
    h.maker('sell', 100, 1100, PUT);
    assert.equal(h.machine.portfolio(id)!.legs[0]!.filled, 0, 'limit 0.05 does not reach 0.06');
    h.runUntil(T0 + 5_000);
    const p = h.machine.portfolio(id)!;
    assert.equal(p.status, 'COMPLETED');
    assert.equal(p.endedAt, T0 + 5_000, 'totalLimitMs cut the parts short');
    assert.deepEqual(
      p.legs.map((l) => l.filled),
      [30, 60],
    );
    assert.ok(p.children.some((c) => c.market && c.leg === 0));
  });

  test('totalLimitMs 0 disables the cap; with a cap the end reason is total_limit', () => {
    const h = AlgoHarness.withMarket();
    const capped = h.submit(balance([callLeg()], { totalLimitMs: 12_000 }));
    const uncapped = h.submit(balance([callLeg()], { totalLimitMs: 0 }));
    h.runUntil(T0 + 12_000);
    assert.equal(h.machine.portfolio(capped)!.status, 'EXPIRED');
    assert.equal(h.machine.portfolio(capped)!.endReason, 'total_limit');
    assert.equal(h.machine.portfolio(uncapped)!.status, 'WORKING');
  });

  test('the portfolio grows its own resting child as the priority leg fills; a hand edit may not', () => {
    const h = AlgoHarness.withMarket();
    h.maker('sell', 5, 500, OPTION);
    const id = h.submit(balance([callLeg({ priority: true }), putLeg()]));
    const puts = () => h.openChildren(id).filter((o) => o.instrumentName === PUT);
    const [put] = puts();
    assert.equal(put!.amount, 10, 'the put follows: 60 × 5/30, nothing to take');
    const accountId = h.machine.portfolio(id)!.spec.accountId;
    const hand = h.core({ type: 'edit_order', accountId, orderId: put!.orderId, amount: 60 });
    assert.equal(!hand.ok && hand.error.name, 'invalid_amount', 'by hand: refused');
    h.ts += 1000;
    h.maker('sell', 5, 500, OPTION);
    assert.equal(h.machine.portfolio(id)!.legs[0]!.filled, 10);
    assert.deepEqual(
      puts().map((o) => [o.orderId, o.amount]),
      [[put!.orderId, 20]],
      'the same child, amended up by the portfolio: 60 × 10/30',
    );
    assert.equal(h.machine.portfolio(id)!.status, 'WORKING');
  });

  test('DYNAMIC MID repricing amends the working child', () => {
    const h = AlgoHarness.withMarket();
    h.maker('buy', 1, PERP_60K - 100);
    h.maker('sell', 1, PERP_60K + 100);
    const id = h.submit(balance([leg({ amount: 30, pricing: MID_PRICING })]));
    const child = h.childOrders(id)[0]!;
    assert.equal(child.price, PERP_60K);
    h.maker('buy', 1, PERP_60K - 50);
    h.runUntil(T0 + 500);
    assert.equal(child.price, PERP_60K + 25);
    assert.equal(h.venue.getOrder(child.orderId)!.replaced, true);
    assert.equal(h.childOrders(id).length, 1, 'amended, not replaced by a new child');
    assert.equal(h.venue.book(PERP)!.bestBid, PERP_60K + 25);
    void PERP;
  });

  test('priceIn IV converts through Black-76 with the forward and expiry of the model', () => {
    const h = AlgoHarness.withMarket();
    const id = h.submit(balance([callLeg({ pricing: { ...callLeg().pricing, price: 25, priceIn: 'IV' } })]));
    const spec = optionSpec();
    const state = priceMarket(h.ts, { BTC: 60_000 }, [spec], defaultMarketModel());
    const mark = state.mark(OPTION)!;
    const quote = quotePriceFromVolatility(
      {
        optionType: 'call',
        marginKind: 'inverse',
        strike: 70_000,
        forward: mark.underlyingPrice,
        index: 60_000,
        timeToExpiry: mark.timeToExpiry!,
      },
      0.25,
    );
    const instrument = h.venue.instrument(OPTION)!.instrument;
    assert.equal(h.childOrders(id)[0]!.price, roundToTicks(instrument, 'buy', quote));
  });

  test('end action 2 sends market orders only for legs with lots left: a filled leg is skipped', () => {
    const h = AlgoHarness.withMarket();
    h.maker('sell', 100, 500, OPTION); // the call fills at its 0.05 limit
    h.maker('sell', 100, 1100, PUT); // above the put's 0.1 limit: only the end action reaches it
    const id = h.submit(
      balance([callLeg(), putLeg()], { parts: 1, eachLimitMs: 10_000, totalEndAction: 'FILL_BY_MARKET' }),
    );
    const p = h.machine.portfolio(id)!;
    assert.deepEqual(
      p.legs.map((l) => l.filled),
      [30, 0],
    );
    h.runUntil(T0 + 10_000);
    assert.equal(p.status, 'COMPLETED', `${p.endReason}: ${p.endMessage}`);
    assert.deepEqual(
      p.legs.map((l) => l.filled),
      [30, 60],
    );
    assert.deepEqual(
      p.children.filter((c) => c.market).map((c) => c.leg),
      [1],
      'one market child, for the put only',
    );
  });

  test('end action 2: a market order the engine refuses fails the portfolio, it does not end as if it ran', () => {
    const h = AlgoHarness.withMarket();
    const POOR = 4;
    h.core({ type: 'create_account', accountId: POOR });
    // Enough for the resting 1-tick limit child, far from enough for 30 calls bought at 0.06.
    h.core({ type: 'deposit', accountId: POOR, currency: 'BTC', amount: 1_000_000 });
    h.maker('sell', 100, 600, OPTION);
    const id = h.submit({
      ...balance([callLeg({ pricing: { ...callLeg().pricing, price: 0.0001 } })], {
        parts: 1,
        eachLimitMs: 10_000,
        totalEndAction: 'FILL_BY_MARKET',
      }),
      accountId: POOR,
    });
    const p = h.machine.portfolio(id)!;
    assert.equal(p.status, 'WORKING', `${p.endReason}: ${p.endMessage}`);
    assert.equal(h.openChildren(id).length, 1, 'the limit child rests');
    h.runUntil(T0 + 10_000);
    assert.equal(p.status, 'FAILED', `${p.endReason}: ${p.endMessage}`);
    assert.equal(p.endReason, 'child_rejected');
    assert.match(p.endMessage ?? '', /not_enough_funds/);
    assert.equal(h.openChildren(id).length, 0);
  });

  test('a part started early by its fills gets its own eachLimitMs from its start, not from the schedule', () => {
    const { h, p } = pacedByPriority();
    h.ts = T0 + 1000;
    h.maker('sell', 5, 500, OPTION);
    assert.equal(p.part, 1, 'part 2 started at once, at T0 + 1 s');
    assert.equal(p.parts[1]!.startedAt, T0 + 1000);
    assert.equal(p.partDeadline, T0 + 11_000, 'eachLimitMs from the part’s own start');
    h.runUntil(T0 + 11_000);
    assert.equal(p.part, 2, 'part 3 at T0 + 11 s');
    assert.equal(p.parts[2]!.startedAt, T0 + 11_000);
  });

  test('a DYNAMIC MID leg on a one-sided book prices at the mark', () => {
    const h = AlgoHarness.withMarket();
    h.maker('buy', 1, PERP_60K - 100); // a bid, no ask: no mid
    const id = h.submit(balance([leg({ amount: 30, pricing: MID_PRICING })]));
    const children = h.childOrders(id);
    assert.equal(children.length, 1, 'placed at once, not waiting for a second side');
    assert.equal(children[0]!.price, PERP_60K, 'the mark: 60,000 USD');
  });
});
