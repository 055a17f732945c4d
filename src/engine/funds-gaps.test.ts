/**
 * Gaps of the funds check that the chaos property over triggers and linked orders found
 * (chaos-advanced.property.test.ts): each test takes an account to the edge and checks that the
 * command leaves its available funds at zero or above.
 * - An edit that grows an order re-enters its claim queues at its number: only the orders from it
 *   on are reviewed, not the older ones (claim-queues.ts `noteEntryOn`), which keep their reserve as a
 *   mark move leaves it.
 * - With no mark, lots that close a position at a loss against its cost reserve that loss (risk.ts
 *   `costLoss`): placed, grown and reviewed, as a maker whose closing lots fill first (matching.ts
 *   `fill`), as a taker that closes lots an older order claims (claim-queues.ts `closingExtra`),
 *   as a younger maker that fills before the older orders claiming the position (risk.ts
 *   `plainReserve`: the worse of filling in claim order and filling first), and freed from an
 *   older order's reserve when a younger fill closed its lots (claim-queues.ts `reviewSide`).
 * - With no mark, a crossing limit order reserves at the worse of its limit and the touch
 *   (trading.ts `limitTerms`): it can fill at a better price that needs more margin.
 * - A maker's fill that closes lots an older order of its account claimed leaves that order
 *   opening: it is cancelled (`risk_mitigation`) when the account cannot fund it (matching.ts
 *   `cancelUnfunded`), and kept, reserving for opening, when it can.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { VenueState } from './state.ts';
import { Harness, linearPerpetualSpec, orderCommand, perpetualSpec } from './testkit.ts';

const PERP = 'BTC-PERPETUAL';
const LINEAR = 'BTC_USDC-PERPETUAL';

function stateOf(h: Harness): VenueState {
  return (h.venue as unknown as { state: VenueState }).state;
}

const available = (h: Harness, id: number, currency: string) =>
  h.venue.accountSummary(id, currency)!.availableFunds;

/** The linear perpetual with no mark yet; account 1 with `usdc` minor units, account 2 rich. */
function unmarkedLinear(usdc: number): Harness {
  const h = new Harness();
  h.list(linearPerpetualSpec());
  h.account(1, { USDC: usdc });
  h.account(2, { USDC: 100_000_000_000 });
  return h;
}

/** Account 1 buys `lots` from account 2 at 120,000 ticks (60,000 USDC). */
function buyLong(h: Harness, lots: number): void {
  h.ok(orderCommand(2, 'sell', lots, 120_000, { instrumentName: LINEAR }));
  h.ok(orderCommand(1, 'buy', lots, 120_000, { instrumentName: LINEAR }));
}

describe('funds check gaps', () => {
  test('an edit that grows an order does not re-reserve older orders at the mark', () => {
    const h = new Harness();
    h.list(perpetualSpec());
    h.account(1);
    h.account(2);
    h.markPerpetual();
    h.ok(orderCommand(2, 'sell', 5, 100_000));
    h.ok(orderCommand(1, 'buy', 5, 100_000));
    // Older: 5 of its 10 lots open a short below the mark (a loss against it, reserved).
    const older = h.ok(orderCommand(1, 'sell', 10, 99_000)).order!.orderId;
    const younger = h.ok(orderCommand(1, 'sell', 10, 102_000)).order!.orderId;
    h.ok({ type: 'update_prices', markPrices: [{ instrumentName: PERP, markPrice: 103_000 }] });
    const reserved = stateOf(h).orders.get(older)!.reserved;
    h.ok({ type: 'edit_order', accountId: 1, orderId: younger, amount: 20, price: 102_000 });
    assert.equal(stateOf(h).orders.get(older)!.reserved, reserved);
  });

  test('with no mark, a market sell closing a long at a loss reserves the loss', () => {
    const h = unmarkedLinear(400_000_000);
    buyLong(h, 10);
    // A bid at a tenth of the price.
    h.ok(orderCommand(2, 'buy', 10, 12_000, { instrumentName: LINEAR }));
    const before = available(h, 1, 'USDC');
    assert.ok(before >= 0);
    const result = h.run(orderCommand(1, 'sell', 10, null, { instrumentName: LINEAR }));
    assert.ok(
      available(h, 1, 'USDC') >= 0,
      `available ${available(h, 1, 'USDC')} (was ${before}), ok ${result.ok}`,
    );
    assert.equal(result.ok, false);
  });

  test('with no mark, a limit sell closing a long at a loss reserves the loss', () => {
    const h = unmarkedLinear(400_000_000);
    buyLong(h, 10);
    h.ok(orderCommand(2, 'buy', 10, 12_000, { instrumentName: LINEAR }));
    const result = h.run(orderCommand(1, 'sell', 10, 12_000, { instrumentName: LINEAR }));
    assert.ok(available(h, 1, 'USDC') >= 0, `available ${available(h, 1, 'USDC')}, ok ${result.ok}`);
    assert.equal(result.ok, false);
  });

  test('with no mark, a crossing linear limit sell reserves at the touch above its limit', () => {
    const h = unmarkedLinear(400_000_000);
    h.ok(orderCommand(2, 'buy', 100, 240_000, { instrumentName: LINEAR }));
    const result = h.run(orderCommand(1, 'sell', 100, 12_000, { instrumentName: LINEAR }));
    assert.ok(available(h, 1, 'USDC') >= 0, `available ${available(h, 1, 'USDC')}, ok ${result.ok}`);
  });
  test('with no mark, a maker closing at a loss keeps the reserve its remaining lots need', () => {
    const h = unmarkedLinear(195_000_000);
    buyLong(h, 3);
    // 3 of its 18 lots close the long at a loss (reserved), and fill first.
    h.ok(orderCommand(1, 'sell', 18, 12_000, { instrumentName: LINEAR }));
    assert.ok(available(h, 1, 'USDC') >= 0);
    for (let i = 0; i < 4; i++) {
      h.ok(orderCommand(2, 'buy', 1, 12_000, { instrumentName: LINEAR }));
      assert.ok(available(h, 1, 'USDC') >= 0, `fill ${i}: available ${available(h, 1, 'USDC')}`);
    }
  });

  test('with no mark, a taker closing lots an older reduce-only order claims pays the loss', () => {
    const h = unmarkedLinear(100_000_000);
    buyLong(h, 3);
    h.ok(orderCommand(1, 'sell', 3, 200_000, { instrumentName: LINEAR, reduceOnly: true }));
    h.ok(orderCommand(2, 'buy', 3, 12_000, { instrumentName: LINEAR }));
    // Reserved as opening (the reduce-only order claims the long), it closes it when it fills.
    const result = h.run(orderCommand(1, 'sell', 3, null, { instrumentName: LINEAR }));
    assert.ok(available(h, 1, 'USDC') >= 0, `available ${available(h, 1, 'USDC')}, ok ${result.ok}`);
    assert.equal(result.ok, false);
  });
  test('with no mark, the review of a grown closing order keeps the loss it closes at', () => {
    const h = unmarkedLinear(200_000_000);
    buyLong(h, 3);
    const sell = h.ok(orderCommand(1, 'sell', 3, 12_000, { instrumentName: LINEAR })).order!.orderId;
    // Grown, it re-enters its claim queue and is reviewed there.
    h.ok({ type: 'edit_order', accountId: 1, orderId: sell, amount: 10, price: 12_000 });
    // The 3 lots that close the long lose 54 USDC each against their cost: still reserved.
    const orderMargin = h.venue.accountSummary(1, 'USDC')!.orderMargin;
    assert.ok(orderMargin >= 3 * 54_000_000, `order margin ${orderMargin}`);
    h.ok(orderCommand(2, 'buy', 10, 12_000, { instrumentName: LINEAR }));
    assert.ok(available(h, 1, 'USDC') >= 0, `available ${available(h, 1, 'USDC')}`);
  });

  test('with no mark, a younger maker at a better price that fills first reserves the loss of the lots it closes', () => {
    const h = unmarkedLinear(30_000_000);
    buyLong(h, 1);
    // The older sell claims the long (at a gain); the younger one, cheaper, fills first.
    h.ok(orderCommand(1, 'sell', 1, 130_000, { instrumentName: LINEAR }));
    const younger = h.run(orderCommand(1, 'sell', 1, 12_000, { instrumentName: LINEAR }));
    h.run(orderCommand(2, 'buy', 1, 12_000, { instrumentName: LINEAR }));
    assert.ok(available(h, 1, 'USDC') >= 0, `available ${available(h, 1, 'USDC')}, ok ${younger.ok}`);
    assert.equal(younger.ok, false);
  });

  test('with no mark, an older order frees the loss it reserved for lots a younger fill closed', () => {
    const h = unmarkedLinear(400_000_000);
    buyLong(h, 4);
    const older = h.ok(orderCommand(1, 'sell', 4, 12_000, { instrumentName: LINEAR })).order!.orderId;
    const loss = 54_000_000; // per lot closed at 12,000 ticks against its cost
    assert.ok(stateOf(h).orders.get(older)!.reserved >= 4 * loss, 'the 4 lots it closes');
    h.ok(orderCommand(1, 'sell', 1, 11_996, { instrumentName: LINEAR }));
    h.ok(orderCommand(2, 'buy', 1, 11_996, { instrumentName: LINEAR }));
    // Booked by that fill, the loss of the lot it closed leaves the older order's reserve.
    const reserved = stateOf(h).orders.get(older)!.reserved;
    assert.ok(reserved >= 3 * loss && reserved < 4 * loss, `older reserves ${reserved}`);
  });

  test("with no mark, a maker's partial fill never raises the reserve of what is left above what it held", () => {
    const h = new Harness();
    h.list(perpetualSpec());
    for (const id of [1, 2, 3]) h.account(id);
    h.ok(orderCommand(2, 'sell', 2, 100_000));
    h.ok(orderCommand(1, 'buy', 2, 100_000));
    // The older sell only reduces the long (its fee); the younger one opens (full margin).
    const older = h.ok(orderCommand(1, 'sell', 2, 100_000)).order!.orderId;
    h.ok(orderCommand(1, 'sell', 2, 120_000));
    const reserved = stateOf(h).orders.get(older)!.reserved;
    const orderMargin = h.venue.accountSummary(1, 'BTC')!.orderMargin;
    // Its lot left still reduces what is left of the long: placed now it would open, behind the younger.
    h.ok(orderCommand(3, 'buy', 1, 100_000));
    const after = stateOf(h).orders.get(older)!;
    assert.equal(after.amount - after.filled, 1);
    assert.ok(after.reserved <= reserved, `reserved ${after.reserved}, held ${reserved}`);
    assert.ok(h.venue.accountSummary(1, 'BTC')!.orderMargin <= orderMargin);
  });

  describe('a maker fill uncovering an older order of its account', () => {
    /**
     * Account 1 short 100 on the inverse perpetual, an older bid far below the market (it closes
     * the short, so it reserves next to nothing) and a younger bid near it (reserved for opening,
     * as the older claims the short). Account 2 hits the younger: it closes the short, and the
     * older bid now opens a long at a tenth of the price, which needs ten times the coin.
     */
    function uncovered(funds: number) {
      const h = new Harness();
      h.list(perpetualSpec());
      h.account(1, { BTC: funds });
      h.account(2);
      h.markPerpetual();
      h.ok(orderCommand(1, 'sell', 100, 100_000));
      h.ok(orderCommand(2, 'buy', 100, 100_000));
      const older = h.ok(orderCommand(1, 'buy', 100, 10_000)).order!.orderId;
      h.ok(orderCommand(1, 'buy', 100, 99_000));
      assert.ok(available(h, 1, 'BTC') >= 0);
      const hit = h.ok(orderCommand(2, 'sell', 100, 99_000));
      const order = stateOf(h).orders.get(older);
      return { h, hit, older, order };
    }

    test('the older order is cancelled when the account cannot fund it', () => {
      const { h, hit, older } = uncovered(500_000);
      assert.ok(available(h, 1, 'BTC') >= 0, `available ${available(h, 1, 'BTC')}`);
      const cancelled = hit.events.find((e) => e.type === 'order' && e.order.orderId === older);
      assert.ok(cancelled?.type === 'order');
      assert.equal(cancelled.order.orderState, 'cancelled');
      assert.equal(cancelled.order.cancelReason, 'risk_mitigation');
      assert.equal(h.venue.openOrders({ accountId: 1 }).length, 0);
    });

    test('the older order keeps resting, reserved for opening, when the account can fund it', () => {
      const { h, order } = uncovered(2_000_000);
      assert.equal(order?.state, 'open');
      assert.ok(order!.reserved > 500_000, `reserved ${order!.reserved}`);
      assert.ok(available(h, 1, 'BTC') >= 0, `available ${available(h, 1, 'BTC')}`);
    });

    test('the older order keeps resting when it leaves exactly zero available funds', () => {
      const rich = uncovered(2_000_000);
      const { h, order } = uncovered(2_000_000 - available(rich.h, 1, 'BTC'));
      assert.equal(order?.state, 'open');
      assert.equal(available(h, 1, 'BTC'), 0);
    });

    test('of two uncovered older orders the newest is cancelled first, the other kept once funds suffice', () => {
      const h = new Harness();
      h.list(perpetualSpec());
      h.account(1, { BTC: 600_000 });
      h.account(2);
      h.markPerpetual();
      h.ok(orderCommand(1, 'sell', 100, 100_000));
      h.ok(orderCommand(2, 'buy', 100, 100_000));
      // Two older bids far below the market claim the short; the account can fund one of them.
      const oldest = h.ok(orderCommand(1, 'buy', 50, 10_000)).order!.orderId;
      const newer = h.ok(orderCommand(1, 'buy', 50, 20_000)).order!.orderId;
      h.ok(orderCommand(1, 'buy', 100, 99_000));
      h.ok(orderCommand(2, 'sell', 100, 99_000));
      const state = (id: string) => {
        const order = h.venue.getOrder(id)!;
        return [order.orderState, order.cancelReason];
      };
      assert.deepEqual(state(newer), ['cancelled', 'risk_mitigation']);
      assert.deepEqual(state(oldest), ['open', null]);
      assert.ok(available(h, 1, 'BTC') >= 0, `available ${available(h, 1, 'BTC')}`);
    });
  });
});
