import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { START_TOLERANCE_MS } from '../../src/algo/machine.ts';
import { PRICE_RETRY_MS } from '../../src/algo/steps.ts';
import type { CommandResult } from '../../src/core/events.ts';
import { orderCommand } from '../../src/engine/testkit.ts';
import { AlgoHarness, leg, MAKER, OPTION, PERP, PERP_60K, portfolio, T0, TRADER } from './harness.ts';

/** A LIMIT option price in BTC. */
const optionAt = (price: number) => ({ ...leg().pricing, price, priceIn: 'BTC' });

const twap = (overrides: Partial<Parameters<typeof portfolio>[0]> = {}) =>
  portfolio({
    portfolioType: 'TWAP',
    twap: { startTimestamp: null, durationMs: 10_000, frequencyMs: 2_000 },
    ...overrides,
  });

/** The timestamps of the edit commands the venue runs from now on (the algorithm's amends). */
function recordEdits(h: AlgoHarness): number[] {
  const edits: number[] = [];
  const execute = h.venue.execute.bind(h.venue);
  h.venue.execute = (command) => {
    if (command.type === 'edit_order') edits.push(command.ts);
    return execute(command);
  };
  return edits;
}

/** A post-only TWAP buy of 5 in one slice, pegged to the ask plus `offset` USD, repriced every 100 ms. */
const peggedToAsk = (offset: number) =>
  twap({
    twap: { startTimestamp: null, durationMs: 60_000, frequencyMs: 60_000 },
    legs: [
      leg({
        amount: 5,
        postOnly: true,
        pricing: {
          priceType: 'DYNAMIC',
          price: null,
          priceIn: 'USD',
          dynamicStrategy: 'ASK',
          dynamicOffset: offset,
          dynamicMs: 100,
        },
      }),
    ],
  });

/**
 * A pegged child resting at `restsAt` is left alone through fifty reprices; once `nearest` (the
 * order it rests against) leaves, one amend moves it to `then`, and none follows.
 */
function restsUntilTouchLeaves(
  h: AlgoHarness,
  edits: number[],
  child: { readonly orderId: string },
  nearest: CommandResult,
  then: number,
): void {
  h.runUntil(T0 + 5_000);
  assert.deepEqual(edits, [], 'fifty reprices found it where the engine would put it again');
  assert.equal(h.venue.getOrder(child.orderId)!.lastUpdatedAt, T0);
  h.core({ type: 'cancel_order', accountId: MAKER, orderId: nearest.order!.orderId });
  h.runUntil(T0 + 5_100);
  assert.equal(edits.length, 1, 'the order it rested against left: one amend');
  assert.equal(h.venue.getOrder(child.orderId)!.price, then, 'one tick inside the new touch');
  h.runUntil(T0 + 10_000);
  assert.equal(edits.length, 1, 'and none after it');
}

describe('TWAP', () => {
  test('N = ceil(duration/frequency) slices at start + k·frequency, each remaining/slices-left', () => {
    const h = AlgoHarness.withMarket();
    h.maker('sell', 1000, PERP_60K);
    const id = h.submit(
      twap({
        legs: [leg({ amount: 100 })],
        twap: { startTimestamp: null, durationMs: 9_000, frequencyMs: 2_000 },
      }),
    );
    h.runUntil(T0 + 20_000);
    const p = h.machine.portfolio(id)!;
    assert.deepEqual(
      p.parts.map((part) => [part.startedAt - T0, part.targets[0]]),
      [
        [0, 20],
        [2000, 20],
        [4000, 20],
        [6000, 20],
        [8000, 20],
      ],
    );
    assert.equal(p.status, 'COMPLETED');
    assert.equal(p.legs[0]!.filled, 100);
    assert.equal(p.endReason, 'filled');
  });

  test('unfilled rest is cancelled at the next slice and rolled forward; shortfall rounds down', () => {
    const h = AlgoHarness.withMarket();
    h.maker('sell', 7, PERP_60K);
    const id = h.submit(twap({ legs: [leg({ amount: 100 })] }));
    const p = h.machine.portfolio(id)!;
    assert.equal(p.legs[0]!.filled, 7);
    const first = p.children[0]!;
    assert.equal(first.amount, 20);
    assert.equal(first.open, true);
    h.runUntil(T0 + 2_000);
    assert.equal(first.open, false, 'slice 0 rest cancelled');
    assert.equal(h.venue.getOrder(first.orderId)!.orderState, 'cancelled');
    // 93 left over 4 slices → 23 (rounded down); shortfall rolls forward.
    assert.equal(p.parts[1]!.targets[0], 23);
    assert.equal(p.children[1]!.amount, 23);
    assert.equal(h.openChildren(id).length, 1, 'one working child per leg');
  });

  test('ends EXPIRED with the rest cancelled when not filled by the end', () => {
    const h = AlgoHarness.withMarket();
    const id = h.submit(twap({ legs: [leg({ amount: 100 })] }));
    h.runUntil(T0 + 10_000);
    const p = h.machine.portfolio(id)!;
    assert.equal(p.status, 'EXPIRED');
    assert.equal(p.endReason, 'duration_elapsed');
    assert.equal(p.endedAt, T0 + 10_000);
    assert.equal(h.openChildren(id).length, 0);
    assert.deepEqual(h.messages(id).slice(0, 3), [
      'PORTFOLIO_SUBMITTED',
      'PORTFOLIO_WORKING',
      'PART_STARTED',
    ]);
    assert.equal(h.messages(id).at(-1), 'PORTFOLIO_EXPIRED');
  });

  test('a limit past the price band goes out at the band’s edge instead of failing the portfolio', () => {
    const h = AlgoHarness.withMarket();
    h.maker('buy', 100, PERP_60K - 2);
    const band = h.venue.instrument(PERP)!.priceBand!;
    // A sell with a worst price of 50,000 USD and a buy with one of 80,000: both past the band.
    const id = h.submit(
      twap({
        legs: [
          leg({ side: 'sell', amount: 20, pricing: { ...leg().pricing, price: 50_000 } }),
          leg({
            instrumentName: OPTION,
            instrumentType: 'OPTION',
            side: 'buy',
            amount: 10,
            pricing: optionAt(1),
          }),
        ],
      }),
    );
    const p = h.machine.portfolio(id)!;
    assert.equal(p.status, 'WORKING', String(p.endMessage));
    assert.equal(p.legs[0]!.filled, 4, 'the first slice sells into the bid within the band');
    const optionBand = h.venue.instrument(OPTION)!.priceBand!;
    assert.deepEqual(
      h.openChildren(id).map((o) => [o.instrumentName, o.side, o.price]),
      [[OPTION, 'buy', optionBand.max]],
      'the option buy rests at the band’s max, not at 1 BTC',
    );
    assert.ok(band.min > 100_000, 'the perpetual’s band min is above the 50,000 asked');
  });

  test('legs advance together: every leg slices at the same instants', () => {
    const h = AlgoHarness.withMarket();
    const id = h.submit(
      twap({
        legs: [
          leg({ amount: 50 }),
          leg({
            instrumentName: OPTION,
            instrumentType: 'OPTION',
            amount: 10,
            pricing: { ...leg().pricing, price: 0.05, priceIn: 'BTC' },
          }),
        ],
      }),
    );
    h.runUntil(T0 + 4_000);
    const placedAt = (legIndex: number) =>
      h
        .childOrders(id)
        .filter((c) => c.leg === legIndex)
        .map((c) => c.placedAt - T0);
    assert.deepEqual(placedAt(0), [0, 2000, 4000]);
    assert.deepEqual(placedAt(1), [0, 2000, 4000]);
  });

  test('a future startTimestamp waits in PENDING; a past one beyond tolerance is refused', () => {
    const h = AlgoHarness.withMarket();
    const id = h.submit(
      twap({ twap: { startTimestamp: T0 + 5_000, durationMs: 4_000, frequencyMs: 2_000 } }),
    );
    assert.equal(h.machine.portfolio(id)!.status, 'PENDING');
    assert.equal(h.machine.nextWakeup(), T0 + 5_000);
    assert.equal(h.childOrders(id).length, 0);
    h.runUntil(T0 + 5_000);
    assert.equal(h.machine.portfolio(id)!.status, 'WORKING');
    assert.equal(h.childOrders(id)[0]!.placedAt, T0 + 5_000);

    const refused = h.algo({
      type: 'submit_portfolio',
      portfolio: twap({ twap: { startTimestamp: h.ts - 15_001, durationMs: 4_000, frequencyMs: 2_000 } }),
    } as never);
    assert.equal(refused.ok, false);
    assert.equal(!refused.ok && refused.error.data.field, 'twapTrade.startTimestamp');
    const tolerated = h.submit(
      twap({ twap: { startTimestamp: h.ts - 10_000, durationMs: 4_000, frequencyMs: 2_000 } }),
    );
    assert.equal(h.machine.portfolio(tolerated)!.status, 'WORKING');
  });

  test('a tolerated past startTimestamp starts the slices at submit time', () => {
    const h = AlgoHarness.withMarket();
    h.ts = T0 + 100_000;
    h.maker('sell', 1000, PERP_60K);
    const id = h.submit(
      twap({
        legs: [leg({ amount: 120 })],
        twap: { startTimestamp: h.ts - 10_000, durationMs: 60_000, frequencyMs: 5_000 },
      }),
    );
    const p = h.machine.portfolio(id)!;
    assert.equal(p.startAt, T0 + 100_000);
    assert.equal(p.endAt, T0 + 160_000);
    assert.equal(p.parts[0]!.index, 0);
    assert.equal(p.legs[0]!.filled, 10, 'first of 12 slices');
  });

  test('hidden legs rest without showing in public depth', () => {
    const h = AlgoHarness.withMarket();
    const id = h.submit(
      twap({ legs: [leg({ amount: 100, hidden: true, pricing: { ...leg().pricing, price: 59_000 } })] }),
    );
    const child = h.venue.getOrder(h.childOrders(id)[0]!.orderId)!;
    assert.equal(child.hidden, true);
    assert.equal(child.owner, String(id));
    assert.equal(h.venue.book(PERP)!.bestBid, null);
  });

  test('DYNAMIC legs are repriced every dynamicMs when the reference moves a tick, within the worst price', () => {
    const h = AlgoHarness.withMarket();
    h.maker('buy', 10, PERP_60K - 20);
    const dynamic = {
      priceType: 'DYNAMIC' as const,
      price: 60_005,
      priceIn: 'USD',
      dynamicStrategy: 'BID' as const,
      dynamicOffset: 1,
      dynamicMs: 100,
    };
    const id = h.submit(twap({ legs: [leg({ amount: 100, pricing: dynamic })] }));
    const child = h.childOrders(id)[0]!;
    assert.equal(child.price, PERP_60K - 18, 'bid + 1 USD');
    h.ts += 50;
    h.maker('buy', 10, PERP_60K - 10);
    assert.equal(child.price, PERP_60K - 18, 'not before dynamicMs');
    h.runUntil(T0 + 100);
    assert.equal(child.price, PERP_60K - 8);
    assert.equal(h.venue.getOrder(child.orderId)!.price, PERP_60K - 8);
    h.maker('buy', 10, PERP_60K + 20);
    h.runUntil(T0 + 200);
    assert.equal(child.price, PERP_60K + 10, 'capped at the worst acceptable price 60,005');
  });

  test('a post-only DYNAMIC child whose reference crosses rests inside the touch and is not amended again until the touch moves', () => {
    const h = AlgoHarness.withMarket();
    const nearAsk = h.maker('sell', 10, PERP_60K + 20);
    h.maker('sell', 10, PERP_60K + 30);
    const edits = recordEdits(h);
    const id = h.submit(peggedToAsk(1000));
    const child = h.childOrders(id)[0]!;
    assert.equal(child.price, PERP_60K + 19, 'the engine rests it one tick below the ask');
    restsUntilTouchLeaves(h, edits, child, nearAsk, PERP_60K + 29);
    assert.equal(child.price, PERP_60K + 29, 'the portfolio knows where it rests');
  });

  test('a post-only DYNAMIC child whose reference is exactly the touch rests inside it and is not amended at every reprice', () => {
    const h = AlgoHarness.withMarket();
    h.maker('sell', 10, PERP_60K + 20);
    const edits = recordEdits(h);
    const id = h.submit(peggedToAsk(0));
    const child = h.childOrders(id)[0]!;
    assert.equal(child.price, PERP_60K + 19, 'a reference equal to the ask crosses: one tick below it');
    h.runUntil(T0 + 5_000);
    assert.deepEqual(edits, [], 'a reference at the touch is where the engine rests it already');
    assert.equal(h.venue.getOrder(child.orderId)!.lastUpdatedAt, T0);
  });

  test('a post-only child crossing a hidden ask rests one tick inside it and is not amended again until that order leaves', () => {
    const h = AlgoHarness.withMarket();
    const hidden = h.core(orderCommand(MAKER, 'sell', 10, PERP_60K + 15, { label: 'maker', hidden: true }));
    h.maker('sell', 10, PERP_60K + 20);
    const edits = recordEdits(h);
    const id = h.submit(peggedToAsk(1000));
    const child = h.childOrders(id)[0]!;
    assert.equal(child.price, PERP_60K + 14, 'the engine rests it one tick below the hidden ask');
    restsUntilTouchLeaves(h, edits, child, hidden, PERP_60K + 19);
  });

  test('repricing a partly filled DYNAMIC child keeps its filled lots: the amend sizes filled + open', () => {
    const h = AlgoHarness.withMarket();
    h.maker('sell', 10, PERP_60K + 40);
    const below = {
      priceType: 'DYNAMIC' as const,
      price: null,
      priceIn: 'USD',
      dynamicStrategy: 'ASK' as const,
      dynamicOffset: -10,
      dynamicMs: 100,
    };
    const id = h.submit(
      twap({
        twap: { startTimestamp: null, durationMs: 60_000, frequencyMs: 60_000 },
        legs: [leg({ amount: 10, pricing: below })],
      }),
    );
    const child = h.childOrders(id)[0]!;
    const first = child.price!;
    h.maker('sell', 4, first);
    assert.equal(h.machine.portfolio(id)!.legs[0]!.filled, 4);
    h.maker('sell', 10, PERP_60K + 30);
    h.runUntil(T0 + 500);
    assert.notEqual(child.price, first, 'repriced to the lower ask');
    const order = h.venue.getOrder(child.orderId)!;
    assert.equal(order.amount, 10, 'filled 4 + open 6');
    assert.equal(order.amount - order.filledAmount, 6);
  });

  test("a TWAP limit child is good-til-cancelled whatever the leg's timeInForce (only COMMON keeps it)", () => {
    const h = AlgoHarness.withMarket();
    const id = h.submit(
      twap({
        twap: { startTimestamp: null, durationMs: 60_000, frequencyMs: 60_000 },
        legs: [
          leg({
            amount: 5,
            timeInForce: 'immediate_or_cancel',
            pricing: { ...leg().pricing, priceType: 'LIMIT', price: 59_000, priceIn: 'USD' },
          }),
        ],
      }),
    );
    const child = h.childOrders(id)[0]!;
    const order = h.venue.getOrder(child.orderId)!;
    assert.equal(order.timeInForce, 'good_til_cancelled');
    assert.equal(child.open, true, 'it rests');
  });

  test('a DYNAMIC child that took the best level waits dynamicMs before following it (no walking the book)', () => {
    const h = AlgoHarness.withMarket();
    h.maker('sell', 2, PERP_60K + 2);
    h.maker('sell', 100, PERP_60K + 10);
    const dynamic = {
      priceType: 'DYNAMIC' as const,
      price: null,
      priceIn: 'USD',
      dynamicStrategy: 'ASK' as const,
      dynamicOffset: 0,
      dynamicMs: 1000,
    };
    const id = h.submit(
      twap({
        twap: { startTimestamp: null, durationMs: 10_000, frequencyMs: 10_000 },
        legs: [leg({ amount: 20, pricing: dynamic })],
      }),
    );
    const p = h.machine.portfolio(id)!;
    const child = h.childOrders(id)[0]!;
    assert.equal(p.legs[0]!.filled, 2, 'only the best ask level at submit');
    assert.equal(child.price, PERP_60K + 2, 'the child keeps its price after its own fill');
    assert.equal(h.machine.nextWakeup(), T0 + 1000);
    h.runUntil(T0 + 999);
    assert.equal(p.legs[0]!.filled, 2);
    h.runUntil(T0 + 1000);
    assert.equal(child.price, PERP_60K + 10, 'repriced to the next ask one dynamicMs later');
    assert.equal(p.status, 'COMPLETED');
  });

  test('each DYNAMIC leg reprices on its own dynamicMs, not on the shortest of the portfolio', () => {
    const h = AlgoHarness.withMarket();
    h.maker('buy', 10, PERP_60K - 20);
    h.maker('buy', 1, 400, OPTION);
    const bid = (dynamicMs: number, priceIn: string) => ({
      priceType: 'DYNAMIC' as const,
      price: null,
      priceIn,
      dynamicStrategy: 'BID' as const,
      dynamicOffset: 0,
      dynamicMs,
    });
    const id = h.submit(
      twap({
        twap: { startTimestamp: null, durationMs: 10_000, frequencyMs: 10_000 },
        legs: [
          leg({ amount: 100, pricing: bid(100, 'USD') }),
          leg({ instrumentName: OPTION, instrumentType: 'OPTION', amount: 10, pricing: bid(1000, 'BTC') }),
        ],
      }),
    );
    const [perp, option] = h.childOrders(id);
    assert.equal(perp!.price, PERP_60K - 20);
    assert.equal(option!.price, 400);
    h.ts += 50;
    h.maker('buy', 10, PERP_60K - 10);
    h.maker('buy', 1, 450, OPTION);
    h.runUntil(T0 + 100);
    assert.equal(perp!.price, PERP_60K - 10, 'the 100 ms leg follows at 100 ms');
    assert.equal(option!.price, 400, 'the 1000 ms leg does not');
    h.runUntil(T0 + 999);
    assert.equal(option!.price, 400);
    h.runUntil(T0 + 1000);
    assert.equal(option!.price, 450);
  });

  test('a child cancelled from outside mid-slice is placed again for the slice’s rest after the hold', () => {
    const h = AlgoHarness.withMarket();
    h.maker('buy', 10, PERP_60K - 20);
    h.maker('sell', 10, PERP_60K + 20);
    const id = h.submit(
      twap({
        twap: { startTimestamp: null, durationMs: 10_000, frequencyMs: 10_000 },
        legs: [leg({ amount: 100, pricing: { ...leg().pricing, price: 60_005 } })],
      }),
    );
    assert.equal(h.openChildren(id)[0]!.amount, 100);
    h.ts += 100;
    // The same account sells below the child's bid by hand: self-trade prevention cancels the child.
    h.limit(TRADER, 'sell', 10, PERP_60K, 'hand');
    assert.equal(h.openChildren(id).length, 0);
    h.runUntil(T0 + 100 + PRICE_RETRY_MS);
    const again = h.openChildren(id);
    assert.equal(again.length, 1, 'the slice is worked again, not left idle until the end');
    assert.equal(again[0]!.amount, 100);
    assert.equal(again[0]!.price, PERP_60K - 1, 'one tick below the own sell');
  });

  test('MARKET slices take liquidity as market orders', () => {
    const h = AlgoHarness.withMarket();
    h.maker('sell', 1000, PERP_60K + 2);
    const id = h.submit(
      twap({
        legs: [
          leg({ amount: 40, pricing: { ...leg().pricing, priceType: 'MARKET', price: null, priceIn: null } }),
        ],
      }),
    );
    assert.equal(h.machine.portfolio(id)!.legs[0]!.filled, 8);
    assert.equal(h.childOrders(id)[0]!.market, true);
    h.runUntil(T0 + 10_000);
    assert.equal(h.machine.portfolio(id)!.status, 'COMPLETED');
  });

  test('a startTimestamp exactly the clock tolerance in the past is accepted; one ms more is refused', () => {
    const h = AlgoHarness.withMarket();
    h.ts += 60_000;
    const atTolerance = h.submit(
      twap({ twap: { startTimestamp: h.ts - START_TOLERANCE_MS, durationMs: 4_000, frequencyMs: 2_000 } }),
    );
    assert.equal(h.machine.portfolio(atTolerance)!.status, 'WORKING');
    assert.equal(h.machine.portfolio(atTolerance)!.startAt, h.ts, 'the slices start at submit time');
    const refused = h.algo({
      type: 'submit_portfolio',
      portfolio: twap({
        twap: { startTimestamp: h.ts - START_TOLERANCE_MS - 1, durationMs: 4_000, frequencyMs: 2_000 },
      }),
    } as never);
    assert.equal(refused.ok, false);
  });
});
